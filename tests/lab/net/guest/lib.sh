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

# ethtool_rxq DEV : "QUEUE PACKETS" per RX queue (ethtool -S rx_queue_N_packets).
ethtool_rxq() {
  ethtool -S "$1" | awk -F'[_: ]+' '/^ *rx_queue_[0-9]+_packets:/ {print $4, $NF}'
}
# snap DEV OUT : per RX queue "QUEUE PACKETS IRQ IRQCOUNT" (driver counters and the queue's
# vector in /proc/interrupts: DEV-rx-Q or DEV-TxRx-Q).
snap() {
  local q p irq name
  declare -A vec
  while read -r irq name; do vec[${name##*-}:${name%-*}]=$irq; done < <(igb_vectors "$1")
  while read -r q p; do
    irq=${vec[$q:$1-rx]:-${vec[$q:$1-TxRx]:--1}}
    echo "$q $p $irq $([ "$irq" -ge 0 ] && irq_count "$irq" || echo 0)"
  done < <(ethtool_rxq "$1") >"$2"
}
# send_start NAME DSTS N [SECONDS] : the gated UDP sender (udp_send.py) from $NS; waits until
# its sockets are up. send_go NAME starts it; send_wait NAME waits, sets SENT to its result
# (call it in the shell that started it, not in a $(...) subshell).
send_start() {
  rm -f "$WORK/$1.ready" "$WORK/$1.go"
  /usr/bin/python3 "$NET_GUEST_DIR/udp_send.py" "$NS" "$NET.1" "$2" 9999 "$3" \
    "$WORK/$1.ready" "$WORK/$1.go" ${4:-} >"$WORK/$1.out" 2>&1 &
  SEND_PID=$!
  wait_for 60 test -e "$WORK/$1.ready"
}
send_go() { touch "$WORK/$1.go"; }
send_wait() { wait "$SEND_PID"; local rc=$?; SENT=$(<"$WORK/$1.out"); return $rc; }
# list_start NAME SECONDS : `dimctl list --json` for one interval, started and sampled (its
# window has begun) before it returns; list_wait NAME waits for it (in the same shell), sets
# LIST_ERR when it failed.
list_start() {
  "$DIMCTL" list --json --interval "$2" >"$WORK/list-$1.json" 2>"$WORK/list-$1.err" &
  LIST_PID=$!
  wait_sampled "$LIST_PID" 60 >/dev/null
}
list_wait() {
  local late=0; kill -0 "$LIST_PID" 2>/dev/null || late=1
  wait "$LIST_PID"; local rc=$?
  cp "$WORK/list-$1.json" "$WORK/list-$1.err" "$LAB_OUT/" 2>/dev/null
  LIST_ERR=""
  [ $rc -eq 0 ] || { LIST_ERR="dimctl list failed (rc $rc): $(tail -n 2 "$WORK/list-$1.err" | tr '\n' ' ')"; return 1; }
  [ $late -eq 0 ] || { LIST_ERR="dimctl's interval ended before the traffic did"; return 1; }
}

rx_usecs() { ethtool -c "$1" 2>/dev/null | awk '/^rx-usecs:/ {print $2}'; }
# igb_config FILE PORT ALGORITHM [RX_PROFILE] : a dimctl config enforcing ALGORITHM on igb0
# only, metrics/state API on 127.0.0.1:PORT.
igb_config() {
  cat >"$1" <<YAML
version: 1
mode: shadow
interval: 20ms
state_file: /run/dimctl/state-igb.json
metrics:
  listen: 127.0.0.1:$2
  publish_interval: 200ms
collectors:
  napi: true
  rdma: false
devices:
  - name: lab-igb
    match:
      interface: ["$RX"]
    mode: enforce
    algorithm: $3
    rate_limit: 20ms
YAML
  [ -z "${4:-}" ] || echo "    rx_profile: $4" >>"$1"
}
# run_start NAME CONFIG PORT : `dimctl run`, waits until its state API answers (RUN_PID).
run_start() {
  "$DIMCTL" run --config "$2" >"$WORK/run-$1.log" 2>&1 &
  RUN_PID=$!
  wait_for 60 curl -sf --max-time 3 -o "$WORK/state-$1.json" "http://127.0.0.1:$3/api/v1/state"
}
state_get() { curl -sf --max-time 3 -o "$WORK/state-$1.json" "http://127.0.0.1:$2/api/v1/state"; }
# run_stop SIGNAL : stops RUN_PID, sets RUN_RC.
run_stop() {
  kill -"$1" "$RUN_PID" 2>/dev/null
  wait_for 20 bash -c "! kill -0 $RUN_PID" || kill -KILL "$RUN_PID"
  wait "$RUN_PID"; RUN_RC=$?
}
