#!/bin/bash
# Scenario m: per-NAPI counts on a real multi-queue driver. N datagrams of one flow (one RSS
# queue) from igb1 (netns digtx) to igb0 inside one `dimctl list` window. Ground truth, read by
# the kernel and the driver independently of dimctl: per RX queue, igb's rx_queue_K_packets
# (ethtool -S) and the interrupts of the queue's MSI-X vector (/proc/interrupts).
# Asserted: for every RX queue, dimctl's packets on the NAPI it maps to that queue equal the
# driver's delta exactly, and the queues together equal the datagrams that crossed the wire
# (N less igb1's qdisc drops; nothing else crosses it: IPv4 only, static neighbours);
# the vector's interrupts lie between dimctl's events and polls: events <= interrupts <= polls,
# each within 2 for the window's edges. Why: every poll sequence starts with an interrupt and
# ends with one event (the poll that completes NAPI and re-arms the vector), so events <=
# interrupts; an interrupt that arrives while the NAPI is scheduled starts no sequence but
# makes the running one poll again (NAPIF_STATE_MISSED), so interrupts <= polls, except that
# several interrupts during one scheduled NAPI set MISSED once (qemu's igb does not hold the
# vector masked until the driver re-enables it). How many collapse depends on how long a poll
# takes in the guest's time, which TCG stretches under host load: seen 1491 interrupts for 1486
# polls (0.3 %) and 545 for 529 (3.0 %, host load 2-5), hence + 5 % there. Exact equality holds
# for neither: igb repolls without an interrupt when a poll used its budget.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
N=${LAB_M_PACKETS:-3000}
t0=$(now)
# igb1's root qdisc (mq: the sum of its queues) counts the datagrams it dropped when full;
# UDP's sendto still succeeds for those.
qdrops() { nsx tc -s qdisc show dev "$TX" | grep -m 1 -o 'dropped [0-9]*' | awk '{print $2 + 0}'; }
d0=$(qdrops)
UDP_PPS=${LAB_M_PPS:-2000} send_start m "$NET.2" "$N" || { report FAIL napi-counts "sender did not start: $(cat "$WORK/m.out")"; exit 0; }
snap "$RX" "$WORK/m.before"
list_start m "${LAB_M_INTERVAL:-8}" || { report FAIL napi-counts "dimctl list did not attach: $(tail -n 2 "$WORK/list-m.err")"; exit 0; }
send_go m
send_wait m || { report FAIL napi-counts "sender: $SENT"; exit 0; }
sent=$SENT
list_wait m || { report FAIL napi-counts "$LIST_ERR"; exit 0; }
snap "$RX" "$WORK/m.after"
d1=$(qdrops)
why="" detail="" total=0
while read -r q p0 irq i0 && read -r q1 p1 irq1 i1 <&3; do
  dp=$((p1 - p0)) di=$((i1 - i0))
  read -r dq dn dirq dpk dpo dev < <(jq -r --argjson q "$q" '[.queues[] | select(.device == "igb0" and .queue == $q)] |
    if length == 0 then "none 0 0 0 0 0" else (.[0] | "\(.queue) \(.napi_id) \(.irq) \(.packets) \(.polls) \(.events)") end' "$WORK/list-m.json")
  total=$((total + dp))
  detail+="rxq$q: driver $dp pkts, irq $irq +$di; dimctl napi $dn irq $dirq $dpk pkts $dpo polls $dev events; "
  if [ "$dq" = none ]; then
    [ "$dp" -eq 0 ] || why+="rx queue $q received $dp packets but dimctl lists no NAPI for it; "
    continue
  fi
  [ "$dpk" -eq "$dp" ] || why+="rx queue $q: dimctl $dpk packets, driver $dp; "
  [ "$dirq" -eq "$irq" ] || why+="rx queue $q: dimctl irq $dirq, /proc/interrupts vector $irq; "
  [ "$dev" -le $((di + 2)) ] && [ "$di" -le $((dpo + dpo / 20 + 2)) ] ||
    why+="rx queue $q: not events ($dev) <= interrupts ($di) <= polls ($dpo) + 5 % (+-2); "
done <"$WORK/m.before" 3<"$WORK/m.after"
# What crossed the wire is N less what igb1's qdisc dropped, and nothing else: igb0's RX queues
# together got exactly that. (igb1's tx_packets is no ground truth: it counts a descriptor when
# the TX vector's cleanup runs, seen once 2 pings late: +3002 for 3000 datagrams.)
wire=$((N - (d1 - d0)))
[ "$total" -eq "$wire" ] || why+="igb0's RX queues counted $total packets, $wire crossed the wire ($N sent, $((d1 - d0)) dropped by igb1's qdisc); "
[ "$wire" -ge $((N * 9 / 10)) ] || why+="igb1's qdisc dropped $((d1 - d0)) of $N datagrams; "
sent+=" igb1 qdisc drops $((d1 - d0))"
nq=$(jq '[.queues[] | select(.device == "igb0" and .packets > 0)] | length' "$WORK/list-m.json")
# the one CO-RE object built on the host, on this kernel: napi:napi_poll must be attached
napi_att=$(jq -r '[.programs[] | select(.name | startswith("napi:")) | "\(.name)=\(.attached)/\(.attach_type)"] | join(",")' "$WORK/list-m.json")
[[ $napi_att == *"napi:napi_poll=true/"* ]] || why+="dimctl's napi:napi_poll program is not attached ($napi_att); "
if [ -z "$why" ]; then
  report PASS napi-counts "$N datagrams, $nq busy queue(s); $detail$sent; programs $napi_att; $(elapsed "$t0")s"
else
  report FAIL napi-counts "$why| $detail$sent"
fi
true
