#!/bin/bash
# Scenario f: the cost model under `objective: efficiency` enforcing igb0's rx-usecs (ethtool,
# device-wide). Direction only (TCG's timing is no host's): under TCG igb0 takes 1-3k packets/s
# at 0.3-0.5 ms of CPU each, where the kernel's EQE table (up to 256 us) batches almost nothing,
# so the rule's table reaches igb's range (0, 10, 250, 1000, 5000 us) and its budget is 3 ms. The
# costs are told (an interrupt 300 us, a packet 50 us): measured under TCG, nearly all the CPU
# is the packet's softirq time (the handler is tens of us), and with the wake-up folded into the
# packet while every period has one batch the model is shown no saving (the measured estimate is
# printed beside the result). A UDP flood over 8 flows for LAB_F_SECONDS (12) moves the
# device off no moderation (ethtool -c reads rx-usecs above 0 at some read during the flood), and
# once the flood ends, idle brings it back to 0 within 15 s.
# The reads (ethtool every 0.5 s) and, at the last flood read, the model's exported trade, the
# cores' measured costs and whether igb0's queues report bytes (netdev qstats: net DIM compares
# bytes first) are printed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
t0=$(now)
PORT=9985
SECS=${LAB_F_SECONDS:-12}
igb_config "$WORK/f.yaml" $PORT model \
  '[{usec: 0, pkts: 0}, {usec: 10, pkts: 0}, {usec: 250, pkts: 0}, {usec: 1000, pkts: 0}, {usec: 5000, pkts: 0}]'
cat >>"$WORK/f.yaml" <<YAML
    model:
      objective: efficiency
      latency_budget: 3ms
      costs: defaults
      interrupt_cost: 300us
      completion_cost: 50us
YAML
"$DIMCTL" check-config "$WORK/f.yaml" >"$WORK/f-check.log" 2>&1 ||
  { report FAIL efficiency "check-config rejects the rule: $(head -n 2 "$WORK/f-check.log" | tr '\n' ' ')"; exit 0; }
ethtool -C "$RX" rx-usecs 0 2>/dev/null
UDP_SOCKETS=2 send_start f "$NET.2,$NET.3,$NET.4,$NET.5,$NET.6,$NET.7,$NET.8,$NET.9" 0 "$SECS" ||
  { report FAIL efficiency "sender did not start: $(cat "$WORK/f.out")"; exit 0; }
run_start f "$WORK/f.yaml" $PORT ||
  { report FAIL efficiency "dimctl run did not serve its state: $(tail -n 2 "$WORK/run-f.log" | tr '\n' ' ')"; kill $SEND_PID; exit 0; }
trade() {
  curl -sf --max-time 3 "http://127.0.0.1:$PORT/api/v1/state" |
    jq -c '{qstats_bytes: ([.queues[]? | select(.device == "'"$RX"'") | .has_bytes] | any), trade: ([.queues[]? | select(.model_trade != null) | .model_trade | {chosen_ix, chosen_us: (.chosen_added_delay_ns / 1000 | floor), chosen_cpu_ns: (.chosen_cpu_per_completion_ns | floor), none_cpu_ns: (.none_cpu_per_completion_ns | floor)}] | .[0] // {}), measured: [.cores[]? | select(.confidence != "defaults") | {cpu, confidence, irq_ns: (.estimate.interrupt_ns | floor), completion_ns: (.estimate.completion_ns | floor)}]}'
}
send_go f
flood="" top=0 last_trade=""
ta=$EPOCHSECONDS
while [ $(( EPOCHSECONDS - ta )) -lt "$SECS" ]; do
  sleep 0.5
  v=$(rx_usecs "$RX")
  flood+="$v "
  [ "${v:-0}" -gt "$top" ] 2>/dev/null && top=$v
  last_trade=$(trade)
done
send_wait f
idle="" back=0
for _ in $(seq 30); do
  sleep 0.5
  v=$(rx_usecs "$RX")
  idle+="$v "
  if [ "$v" = 0 ]; then back=1; break; fi
done
run_stop TERM
cp "$WORK/run-f.log" "$LAB_OUT/" 2>/dev/null
detail="flood reads: $flood| idle reads: $idle| state at the flood's last read: $last_trade; $SENT"
if [ "$top" -le 0 ]; then
  report FAIL efficiency "a flood left $RX unmoderated (rx-usecs never above 0) | $detail"
elif [ "$back" -ne 1 ]; then
  report FAIL efficiency "idle did not bring rx-usecs back to 0 within 15 s | $detail"
else
  report PASS efficiency "off no moderation under the flood (up to rx-usecs $top) and back at idle | $detail; $(elapsed "$t0")s"
fi
true
