#!/bin/bash
# Scenario e: enforcing rx-usecs on igb through ethtool netlink. igb's coalescing is device-wide
# (no per-queue ETHTOOL_PERQUEUE, no adaptive-rx flag, no rx-frames) and its rx-usecs has
# special values (drivers/net/ethernet/intel/igb/igb_ethtool.c, igb_set_coalesce):
#   0 -> no throttling; 1 -> dynamic ITR ("1 = dynamic"); 2 -> EINVAL; 3 -> dynamic conservative
#   (the default); 4..9 -> EINVAL; 10..10000 -> fixed, EITR = usecs << 2, read back exactly.
# dimctl maps a profile's usec 1..9 on igb to the nearest time igb takes as a time (0 or 10,
# controller/coalesce_mapping.h driver_rx_usecs), never to a dynamic mode or a refused value. Steps, each checked with `ethtool -c` (the driver) against dimctl's
# /api/v1/state (requested vs applied):
#  1. custom rx_profile with igb-valid values, static:2 (50 us): written and read back 50;
#     SIGTERM restores the original (3).
#  2. the kernel's default EQE table, static:0 (1 us): written as 0 (no throttling, not igb's
#     dynamic mode 1), read back 0; static:1 (8 us): written as 10 (igb refuses 4..9 with
#     EINVAL), read back 10, no failed apply.
#  3. static:3 (250 us), SIGKILL: the value stays; `dimctl restore` brings back the original.
#  4. under a UDP flood over 8 flows, the busiest vector's interrupt rate with the most
#     batching profile of the table (static:4, 5000 us) falls below 70 % of its rate with
#     static:0 (0: no throttling) and its packets per interrupt grow at least 1.5 times (the
#     offered load under TCG varies between floods); and EITR caps it: <= 200/s + 10 %.
#     250 us (the kernel table's top) is not asserted: under TCG the guest itself batches
#     (~4 packets per interrupt at ~700/s, far below 250 us's 4000/s), and qemu's throttle
#     moved the rate by -20 % to -55 % between runs (docs/LAB.md).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
t0=$(now)
PORT=9981
PROF='[{usec: 0, pkts: 0}, {usec: 10, pkts: 0}, {usec: 50, pkts: 0}, {usec: 250, pkts: 0}, {usec: 5000, pkts: 0}]'
orig=$(rx_usecs "$RX")
[ -n "$orig" ] || { report FAIL ethtool-enforce "ethtool -c $RX prints no rx-usecs"; exit 0; }
rm -f /run/dimctl/state-igb.json
why="" steps=""
applied() { jq -r --arg d "$RX" '.devices[] | select(.name == $d) | "\(.requested.rx_usecs // "null") \(.applied.rx_usecs // "null") \(.applies_failed_total) \(.last_error)"' "$WORK/state-e.json"; }
# enforce ALG PROFILE WANT : starts dimctl, waits until igb0 holds WANT (or 20 s)
enforce() {
  igb_config "$WORK/e.yaml" $PORT "$1" "${2:-}"
  run_start e "$WORK/e.yaml" $PORT || { why+="$1: dimctl run did not serve its state: $(tail -n 2 "$WORK/run-e.log" | tr '\n' ' '); "; return 1; }
  wait_for 20 bash -c "[ \"\$(ethtool -c $RX | awk '/^rx-usecs:/ {print \$2}')\" = $3 ]"
  sleep 0.5; state_get e $PORT
}

# 1. custom table, 50 us, SIGTERM
if enforce static:2 "$PROF" 50; then
  now_v=$(rx_usecs "$RX"); read -r req app fails err < <(applied)
  [ "$now_v" = 50 ] || why+="static:2 (50 us): ethtool -c rx-usecs $now_v; "
  [ "$req" = 50 ] && [ "$app" = "$now_v" ] || why+="static:2: dimctl requested $req applied $app, ethtool $now_v; "
  run_stop TERM
  after=$(rx_usecs "$RX")
  [ "$after" = "$orig" ] || why+="SIGTERM did not restore rx-usecs: $after, original $orig; "
  steps+="50 us written/read back (dimctl applied $app), SIGTERM -> $after; "
fi
# 2. default EQE table: 1 us -> 0 (no throttling), 8 us -> 10 (igb's shortest fixed interval)
if enforce static:0 "" 0; then
  now_v=$(rx_usecs "$RX"); read -r req app fails err < <(applied)
  [ "$now_v" = 0 ] && [ "$app" = 0 ] || why+="static:0 of the EQE table: ethtool $now_v, dimctl applied $app (expected 0: 1 us on igb is no throttling, not dynamic mode 1); "
  run_stop TERM
  steps+="EQE profile 0 (1 us) -> rx-usecs 0 (dimctl applied $app); "
fi
if enforce static:1 "" 10; then
  now_v=$(rx_usecs "$RX"); read -r req app fails err < <(applied)
  [ "$now_v" = 10 ] && [ "$app" = 10 ] || why+="static:1 of the EQE table: ethtool $now_v, dimctl applied $app (expected 10: 8 us on igb is its shortest fixed interval); "
  [ "${fails:-0}" = 0 ] || why+="static:1 (8 us -> 10): $fails failed applies: ${err:0:80}; "
  run_stop TERM
  steps+="EQE profile 1 (8 us) -> rx-usecs 10 (dimctl applied $app, $fails failed applies); "
fi
# 3. SIGKILL + dimctl restore
if enforce static:3 "$PROF" 250; then
  run_stop KILL
  k=$(rx_usecs "$RX")
  [ "$k" = 250 ] || why+="after SIGKILL rx-usecs $k, expected 250 (left as written); "
  "$DIMCTL" restore --state-file /run/dimctl/state-igb.json >"$WORK/restore-e.log" 2>&1 ||
    why+="dimctl restore failed: $(tail -n 2 "$WORK/restore-e.log" | tr '\n' ' '); "
  r=$(rx_usecs "$RX")
  [ "$r" = "$orig" ] || why+="dimctl restore left rx-usecs $r, original $orig; "
  steps+="SIGKILL at 250 us, dimctl restore -> $r; "
fi
cp "$WORK"/run-e.log "$WORK"/restore-e.log "$LAB_OUT/" 2>/dev/null
if [ -z "$why" ]; then
  report PASS ethtool-enforce "original rx-usecs $orig; $steps$(elapsed "$t0")s"
else
  report FAIL ethtool-enforce "$why| $steps"
fi

# 4. interrupt rate under load: no throttling vs a batching profile
t1=$(now)
rate_with() { # PROFILE_INDEX WANT -> busiest vector's interrupts per second over 4 s of flood
  local ix=$1 want=$2 best=0 bestp=0 q p irq c0 c1
  enforce "static:$ix" "$PROF" "$want" || return 1
  UDP_SOCKETS=2 send_start "f$ix" "$NET.2,$NET.3,$NET.4,$NET.5" 0 6 || return 1
  send_go "f$ix"; sleep 1
  snap "$RX" "$WORK/f$ix.a"; local ta=$EPOCHREALTIME
  sleep 4
  snap "$RX" "$WORK/f$ix.b"; local tb=$EPOCHREALTIME
  send_wait "f$ix"
  run_stop TERM
  RATES=""
  while read -r q p irq c0 && read -r _ p1 _ c1 <&3; do
    local r; r=$(awk -v a="$c0" -v b="$c1" -v ta="$ta" -v tb="$tb" 'BEGIN{printf "%d", (b-a)/(tb-ta)}')
    local pr; pr=$(awk -v a="$p" -v b="$p1" -v ta="$ta" -v tb="$tb" 'BEGIN{printf "%d", (b-a)/(tb-ta)}')
    RATES+="q$q $r irq/s $pr pkt/s; "
    [ "$r" -gt "$best" ] && best=$r bestp=$pr
  done <"$WORK/f$ix.a" 3<"$WORK/f$ix.b"
  echo "$best $bestp" >"$WORK/f$ix.best"
}
why=""
rate_with 0 0 || why+="flood with profile 0 failed: $(tail -n 2 "$WORK/run-e.log" "$WORK/f0.out" | tr '\n' ' '); "
read -r r0 p0 <"$WORK/f0.best" 2>/dev/null || r0=0 p0=0; rates0=${RATES:-}
rate_with 4 5000 || why+="flood with profile 4 failed: $(tail -n 2 "$WORK/run-e.log" "$WORK/f4.out" | tr '\n' ' '); "
read -r r4 p4 <"$WORK/f4.best" 2>/dev/null || r4=0 p4=0; rates4=${RATES:-}
if [ -z "$why" ]; then
  # and not because less arrived: packets per interrupt grow at least 1.5 times
  if [ "$r0" -gt 0 ] && [ "$r4" -gt 0 ] && [ $((r4 * 100)) -lt $((r0 * 70)) ] && [ $((p4 * r0 * 2)) -ge $((p0 * r4 * 3)) ]; then
    report PASS irq-rate-batching "busiest igb0 vector: $r0 irq/s ($p0 pkt/s) at rx-usecs 0 -> $r4 irq/s ($p4 pkt/s) at 5000 us ($rates0| $rates4); $(elapsed "$t1")s"
  else
    report FAIL irq-rate-batching "busiest vector $r0 irq/s ($p0 pkt/s) at rx-usecs 0, $r4 irq/s ($p4 pkt/s) at 5000 us: rate not below 70 % or packets per interrupt not 1.5 times ($rates0| $rates4)"
  fi
  if [ "$r4" -le 222 ]; then
    report PASS irq-rate-cap "rx-usecs 5000: busiest igb0 vector $r4 irq/s <= 200/s + 10 % (EITR interval 5 ms)"
  else
    report FAIL irq-rate-cap "rx-usecs 5000: busiest igb0 vector $r4 irq/s ($p4 pkt/s), EITR allows 200/s ($rates4)"
  fi
else
  report FAIL irq-rate-batching "$why"
fi
r=$(rx_usecs "$RX"); [ "$r" = "$orig" ] || "$DIMCTL" restore --state-file /run/dimctl/state-igb.json >/dev/null 2>&1
true
