#!/bin/bash
# Scenario r: several flows -> several RX queues, each with its own DIM state. `dimctl run`
# (shadow: nothing written) with net DIM on igb0 while 16 UDP flows (distinct addresses and
# source ports, hashed by RSS on the 4-tuple) flood it for a few seconds. Ground truth: igb's
# per-queue rx_queue_K_packets. Asserted: at least two RX queues received packets (RSS); each
# of them appears in dimctl's /api/v1/state as its own queue (its NAPI id, its IRQ) with its own
# DIM instance that ran (verdicts counted) and its cumulative packets, which cannot exceed the
# driver's count for that queue over the whole run and are at least half of it (dimctl's state
# is published every 200 ms: the tail of the flood may be missing); queues the driver saw no
# packets on have none in dimctl either.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
t0=$(now)
PORT=9982
cat >"$WORK/r.yaml" <<YAML
version: 1
mode: shadow
interval: 20ms
state_file: /run/dimctl/state-rss.json
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 200ms
collectors:
  napi: true
  rdma: false
devices:
  - name: lab-igb
    match:
      interface: ["$RX"]
    mode: shadow
    algorithm: net-eqe
YAML
UDP_SOCKETS=2 send_start r "$NET.2,$NET.3,$NET.4,$NET.5,$NET.6,$NET.7,$NET.8,$NET.9" 0 "${LAB_R_SECONDS:-5}" ||
  { report FAIL rss-dim-state "sender did not start: $(cat "$WORK/r.out")"; exit 0; }
snap "$RX" "$WORK/r.before"
run_start r "$WORK/r.yaml" $PORT || { report FAIL rss-dim-state "dimctl run did not serve its state: $(tail -n 2 "$WORK/run-r.log" | tr '\n' ' ')"; kill $SEND_PID; exit 0; }
send_go r
send_wait r
sleep 1
state_get r $PORT
run_stop TERM
snap "$RX" "$WORK/r.after"
cp "$WORK/state-r.json" "$WORK/run-r.log" "$LAB_OUT/" 2>/dev/null
why="" detail="" busy=0
declare -A seen_napi
while read -r q p0 irq _ && read -r _ p1 _ _ <&3; do
  dp=$((p1 - p0))
  read -r n dn dirq dpk verdicts prof < <(jq -r --argjson q "$q" --arg d "$RX" '[.queues[] | select(.device == $d and .queue == $q)] |
    "\(length) \(.[0].napi_id // 0) \(.[0].irq // -1) \(.[0].packets // 0) \((.[0].dim.verdicts_total // {}) | [.[]] | add // 0) \(.[0].dim.profile_ix // -1)"' "$WORK/state-r.json")
  detail+="rxq$q: driver $dp pkts; dimctl napi $dn irq $dirq $dpk pkts, dim profile $prof, $verdicts verdicts; "
  if [ "$dp" -eq 0 ]; then
    [ "$dpk" -eq 0 ] || why+="rx queue $q: driver 0 packets, dimctl $dpk; "
    continue
  fi
  busy=$((busy + 1))
  [ "$n" -eq 1 ] || { why+="rx queue $q: $n entries in dimctl's state, expected 1; "; continue; }
  [ "$dirq" -eq "$irq" ] || why+="rx queue $q: dimctl irq $dirq, vector $irq; "
  [ -z "${seen_napi[$dn]:-}" ] || why+="rx queues ${seen_napi[$dn]} and $q share NAPI $dn in dimctl; "
  seen_napi[$dn]=$q
  [ "$dpk" -le "$dp" ] && [ $((dpk * 2)) -ge "$dp" ] || why+="rx queue $q: dimctl $dpk packets vs driver $dp; "
  [ "$verdicts" -gt 0 ] || why+="rx queue $q: its DIM made no decision; "
done <"$WORK/r.before" 3<"$WORK/r.after"
[ "$busy" -ge 2 ] || why+="only $busy RX queue(s) received packets from 16 flows (RSS); "
if [ -z "$why" ]; then
  report PASS rss-dim-state "$busy queues busy, each its own NAPI, IRQ and DIM: $detail$SENT; $(elapsed "$t0")s"
else
  report FAIL rss-dim-state "$why| $detail$SENT"
fi
true
