# Helpers of the net lab's guest scripts: the RDMA lab's lib.sh (report lines, bounded waits,
# dimctl helpers) plus the igb platform's names.
# shellcheck shell=bash
. "$LAB_REPO/tests/lab/guest/lib.sh"
NET_GUEST_DIR="$LAB_REPO/tests/lab/net/guest"
NS=digtx                 # netns holding igb1 (the far end)
RX=igb0                  # receiver, this namespace
TX=igb1                  # sender, in $NS
NET=10.78.0              # $TX .1, $RX .2 (and .3-.10 as extra RSS destinations)
nsx() { ip netns exec "$NS" "$@"; }
# irq_count IRQ : the /proc/interrupts total of one vector (sum over CPUs).
irq_count() {
  local l f s=0
  while read -r l; do
    [[ $l == "$1:"* ]] || continue
    for f in ${l#*:}; do [[ $f =~ ^[0-9]+$ ]] && s=$((s + f)) || break; done
    echo "$s"; return 0
  done </proc/interrupts
  echo 0
}
# igb_vectors DEV : "IRQ NAME" per MSI-X vector of DEV (/proc/interrupts names: DEV-rx-0,
# DEV-tx-0 or DEV-TxRx-0; DEV alone is the link/other vector).
igb_vectors() {
  local l
  while read -r l; do
    [[ $l =~ ^([0-9]+):.*[[:space:]]($1-[A-Za-z]+-[0-9]+)$ ]] && echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
  done </proc/interrupts
}
