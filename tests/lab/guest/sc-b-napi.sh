#!/bin/bash
# Scenario b: the napi collector counts exactly on the 6.1 kernel. A veth pair, sender end in
# netns labtx (TSO off), receiver end lab-rx in this namespace with GRO on (which puts veth into
# NAPI mode). N UDP datagrams are sent within dimctl's window; the receiver's veth NAPI must
# report exactly N packets; tracefs napi:napi_poll (hist on dev_name) is the ground truth for
# polls. IPv6 is disabled and the sender has a static neighbour entry: no ND/ARP/MLD packets.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/platform.sh"
N=${LAB_B_PACKETS:-1000}
t0=$(now)

setup() {
  net_quiet
  ip netns add labtx || return 1
  ip netns exec labtx sh -c 'for f in all default; do echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6; done' || return 1
  ip link add lab-rx type veth peer name lab-tx netns labtx || return 1
  echo 1 >/proc/sys/net/ipv6/conf/lab-rx/disable_ipv6
  ip netns exec labtx sh -c 'echo 1 >/proc/sys/net/ipv6/conf/lab-tx/disable_ipv6' || return 1
  ip addr add "$NAPI_NET.2/24" dev lab-rx
  ethtool -K lab-rx gro on || return 1
  ip link set lab-rx up || return 1
  ip -n labtx addr add "$NAPI_NET.1/24" dev lab-tx
  ip netns exec labtx ethtool -K lab-tx tso off gso off || return 1
  ip -n labtx link set lab-tx up || return 1
  ip -n labtx link set lo up
  ip -n labtx neigh replace "$NAPI_NET.2" lladdr "$(cat /sys/class/net/lab-rx/address)" dev lab-tx nud permanent
  ip neigh replace "$NAPI_NET.1" lladdr "$(ip netns exec labtx cat /sys/class/net/lab-tx/address)" dev lab-rx nud permanent
}
log "b: veth setup"
if ! err=$(setup 2>&1); then
  report FAIL napi-counts "veth setup: $(echo "$err" | tail -n 2 | tr '\n' ' ')"
  exit 0
fi

HN='hist:keys=dev_name:vals=hitcount,work:sort=dev_name:size=256'
rx0=$(cat /sys/class/net/lab-rx/statistics/rx_packets)
rm -f "$WORK/b.ready" "$WORK/b.go"
/usr/bin/python3 "$(dirname "$0")/udp_burst.py" labtx "$NAPI_NET.1" "$NAPI_NET.2" 9999 "$N" \
  "$WORK/b.ready" "$WORK/b.go" >"$WORK/b.out" 2>&1 &
ppid=$!
log "b: sender starting"
wait_for 60 test -e "$WORK/b.ready" || { report FAIL napi-counts "udp sender did not start: $(cat "$WORK/b.out")"; exit 0; }
echo "$HN" >"$T/events/napi/napi_poll/trigger"
have_list=0
if dimctl_has list; then
  have_list=1
  "$DIMCTL" list --json --interval "${LAB_B_INTERVAL:-6}" >"$WORK/list-b.json" 2>"$WORK/list-b.err" &
  lpid=$!
  log "b: dimctl list started"
  if ! wait_sampled $lpid 60 >/dev/null; then
    report FAIL napi-counts "dimctl list did not attach and sample within 60 s: $(tail -n 2 "$WORK/list-b.err" | tr '\n' ' ')"
    kill $lpid $ppid 2>/dev/null; echo "!$HN" >>"$T/events/napi/napi_poll/trigger"; exit 0
  fi
fi
log "b: go ($N datagrams)"
touch "$WORK/b.go"
wait $ppid; prc=$?
late=0
if [ $have_list -eq 1 ]; then
  kill -0 $lpid 2>/dev/null || late=1
  wait $lpid; lrc=$?
else
  sleep 1
fi
log "b: burst done (rc $prc), dimctl done"
echo "$HN:pause" >>"$T/events/napi/napi_poll/trigger"
cat "$T/events/napi/napi_poll/hist" >"$WORK/b.hist"
echo "!$HN" >>"$T/events/napi/napi_poll/trigger"
rx1=$(cat /sys/class/net/lab-rx/statistics/rx_packets)
mc=$(cat /sys/class/net/lab-rx/statistics/multicast)
txdrop=$(ip netns exec labtx cat /sys/class/net/lab-tx/statistics/tx_dropped)
# { dev_name: lab-rx } hitcount: 17 work: 1000
read -r tpolls twork < <(awk '/dev_name: *lab-rx /{for(i=1;i<=NF;i++){if($i=="hitcount:")h=$(i+1); if($i=="work:")w=$(i+1)}} END{print h+0, w+0}' "$WORK/b.hist")
sent=$(cat "$WORK/b.out")
truth="tracefs napi_poll on lab-rx: $tpolls polls, $twork packets; rx_packets +$((rx1 - rx0)); lab-tx tx_dropped $txdrop; lab-rx multicast total $mc; $sent"
if [ $prc -ne 0 ]; then
  report FAIL napi-counts "udp sender failed: $sent"
elif [ "$twork" -ne "$N" ] || [ $((rx1 - rx0)) -ne "$N" ]; then
  report FAIL napi-counts "the guest did not deliver exactly N=$N packets through lab-rx's NAPI: $truth"
elif [ $have_list -eq 0 ]; then
  report SKIP napi-counts "dimctl list missing; $truth"
elif [ $late -eq 1 ]; then
  report FAIL napi-counts "dimctl's interval ended before the burst finished"
elif [ "${lrc:-1}" -ne 0 ]; then
  report FAIL napi-counts "dimctl list failed: $(tail -n 3 "$WORK/list-b.err" | tr '\n' ' ')"
else
  read -r dq dpolls dpk < <(jq -r '[.queues[] | select(.device == "lab-rx")] | "\(length) \(map(.polls) | add // 0) \(map(.packets) | add // 0)"' "$WORK/list-b.json")
  napi_att=$(jq -r '[.programs[] | select(.name | startswith("napi:")) | "\(.name)=\(.attached)/\(.attach_type)"] | join(",")' "$WORK/list-b.json")
  if [ "$dpk" -eq "$N" ] && [ "$dpolls" -eq "$tpolls" ]; then
    report PASS napi-counts "dimctl lab-rx: $dq queue(s), $dpk packets (= N), $dpolls polls (= tracefs); $truth; programs $napi_att; $(elapsed "$t0")s"
  else
    report FAIL napi-counts "dimctl lab-rx: $dq queue(s), packets=$dpk polls=$dpolls; expected packets=$N polls=$tpolls ($truth); programs $napi_att"
  fi
fi
cp "$WORK/list-b.json" "$WORK/list-b.err" "$LAB_OUT/" 2>/dev/null
ip netns del labtx 2>/dev/null
ip link del lab-rx 2>/dev/null
true
