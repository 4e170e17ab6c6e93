#!/bin/bash
# Scenario q: queue -> NAPI -> IRQ as the kernel's netdev netlink family gives it. Ground truth
# is netdev_gnl.py (queue-get and napi-get dumps over a raw generic netlink socket, no dimctl
# code); /proc/interrupts names each vector (igb0-rx-K / igb0-TxRx-K). Asserted: every RX queue
# of igb0 that queue-get links to a NAPI appears in `dimctl list --json` with that NAPI id and
# the IRQ napi-get reports, that IRQ is the vector /proc/interrupts names for the queue, and
# `dimctl napi show --json igb0` lists exactly napi-get's NAPIs of igb0 with the same IRQs.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
t0=$(now)
DSTS=$NET.2,$NET.3,$NET.4,$NET.5,$NET.6,$NET.7,$NET.8,$NET.9
/usr/bin/python3 "$NET_GUEST_DIR/netdev_gnl.py" >"$WORK/gnl-q.json" 2>"$WORK/gnl-q.err" ||
  { report FAIL queue-napi-irq "netdev_gnl.py: $(tail -n 2 "$WORK/gnl-q.err")"; exit 0; }
cp "$WORK/gnl-q.json" "$LAB_OUT/"
ifx=$(cat /sys/class/net/$RX/ifindex)
# dimctl lists the NAPIs that polled in its window: 16 flows (distinct addresses and source
# ports: RSS spreads them over the queues) of 10 datagrams each.
UDP_SOCKETS=2 send_start q "$DSTS" 10 || { report FAIL queue-napi-irq "sender did not start: $(cat "$WORK/q.out")"; exit 0; }
snap "$RX" "$WORK/q.before"
list_start q 5 || { report FAIL queue-napi-irq "dimctl list did not attach: $(tail -n 2 "$WORK/list-q.err")"; exit 0; }
send_go q
send_wait q || { report FAIL queue-napi-irq "sender: $SENT"; exit 0; }
list_wait q || { report FAIL queue-napi-irq "$LIST_ERR"; exit 0; }
snap "$RX" "$WORK/q.after"
declare -A RXP
while read -r q p0 _ _ && read -r _ p1 _ _ <&3; do RXP[$q]=$((p1 - p0)); done <"$WORK/q.before" 3<"$WORK/q.after"
"$DIMCTL" napi show --json "$RX" >"$WORK/napi-q.json" 2>"$WORK/napi-q.err" ||
  { report FAIL queue-napi-irq "dimctl napi show: $(tail -n 2 "$WORK/napi-q.err")"; exit 0; }
cp "$WORK/napi-q.json" "$LAB_OUT/"
declare -A VEC
while read -r irq name; do VEC[$name]=$irq; done < <(igb_vectors "$RX")
why="" map=""
nrxq=0
while read -r q napi irq; do
  nrxq=$((nrxq + 1))
  [ "$napi" != null ] || { why+="queue-get gives rx queue $q no NAPI; "; continue; }
  [ "${RXP[$q]:-0}" -gt 0 ] || why+="rx queue $q received none of the 16 flows (RSS); "
  pv=${VEC[$RX-rx-$q]:-${VEC[$RX-TxRx-$q]:-none}}
  [ "$irq" = "$pv" ] || why+="napi-get: NAPI $napi irq $irq, /proc/interrupts names $pv for rx queue $q; "
  read -r dn dirq < <(jq -r --argjson q "$q" '[.queues[] | select(.device == "igb0" and .queue == $q)][0] | "\(.napi_id) \(.irq)"' "$WORK/list-q.json")
  [ "$dn" = "$napi" ] && [ "$dirq" = "$irq" ] || why+="rx queue $q: dimctl list napi $dn irq $dirq, netlink napi $napi irq $irq; "
  map+="rxq$q->napi$napi->irq$irq "
done < <(jq -r --argjson i "$ifx" '(.napis | map({(.id|tostring): .irq}) | add) as $irq |
  .queues[] | select(.ifindex == $i and .type == "rx") | "\(.id) \(.napi_id // "null") \($irq[(.napi_id // 0)|tostring] // "none")"' "$WORK/gnl-q.json")
[ "$nrxq" -gt 1 ] || why+="igb0 has $nrxq RX queue(s) in queue-get, expected several; "
want=$(jq -c --argjson i "$ifx" '[.napis[] | select(.ifindex == $i) | [.id, .irq]] | sort' "$WORK/gnl-q.json")
got=$(jq -c '[.[] | [.napi_id, .irq]] | sort' "$WORK/napi-q.json")
[ "$want" = "$got" ] || why+="dimctl napi show $got, napi-get $want; "
if [ -z "$why" ]; then
  report PASS queue-napi-irq "$map; napi-get of igb0 (NAPI, IRQ) $want = dimctl napi show; (netdev_gnl.py, /proc/interrupts); $(elapsed "$t0")s"
else
  report FAIL queue-napi-irq "$why"
fi
true
