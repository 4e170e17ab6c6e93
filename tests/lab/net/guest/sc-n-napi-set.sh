#!/bin/bash
# Scenario n: per-NAPI software moderation (netdev napi-set, Linux >= 6.13) on igb's NAPIs.
# Kernel side, checked through dimctl's reader: each RX NAPI of igb0 gets its own
# defer-hard-irqs / gro-flush-timeout (napi-set from netdev_gnl.py, no dimctl code); `dimctl
# napi show --json` must read back exactly those values per NAPI, and again after link
# down/up: igb registers its NAPIs with netif_napi_add_config, so NAPI ids and settings survive
# (a driver without it would come back with new ids and zeros). Everything is reset to 0 after.
# Daemon side: dimctl applying napi-set per rule (`method: napi`), restoring on exit.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
t0=$(now)
G="/usr/bin/python3 $NET_GUEST_DIR/netdev_gnl.py"
ifx=$(cat /sys/class/net/$RX/ifindex)
$G >"$WORK/gnl-n0.json" 2>"$WORK/gnl-n.err" || { report FAIL napi-set "netdev_gnl.py: $(tail -n 1 "$WORK/gnl-n.err")"; exit 0; }
mapfile -t napis < <(jq -r --argjson i "$ifx" '.queues[] | select(.ifindex == $i and .type == "rx") | .napi_id' "$WORK/gnl-n0.json")
[ "${#napis[@]}" -ge 2 ] || { report FAIL napi-set "igb0 has ${#napis[@]} RX NAPIs in queue-get"; exit 0; }
why="" want=""
k=0
for n in "${napis[@]}"; do
  k=$((k + 1))
  $G set "$n" $((k + 1)) $((k * 100000)) 2>>"$WORK/gnl-n.err" || why+="napi-set $n: $(tail -n 1 "$WORK/gnl-n.err"); "
  want+="$n:$((k + 1)):$((k * 100000)) "
done
# shows NAME : "id:defer:gro " per RX NAPI as dimctl reads them
shows() {
  "$DIMCTL" napi show --json "$RX" >"$WORK/napi-$1.json" 2>>"$WORK/napi-n.err" || return 1
  local n out=""
  for n in "${napis[@]}"; do
    out+=$(jq -r --argjson n "$n" '.[] | select(.napi_id == $n) | "\(.napi_id):\(.defer_hard_irqs):\(.gro_flush_timeout_ns) "' "$WORK/napi-$1.json")
  done
  echo "$out"
}
got=$(shows set) || why+="dimctl napi show failed: $(tail -n 1 "$WORK/napi-n.err"); "
[ "$got" = "$want" ] || why+="after napi-set, dimctl napi show reads '$got', set '$want'; "
ip link set "$RX" down && ip link set "$RX" up
wait_for 30 grep -q 1 "/sys/class/net/$RX/carrier" || why+="$RX: no carrier after link up; "
got2=$(shows updown) || why+="dimctl napi show failed after link down/up; "
[ "$got2" = "$want" ] || why+="after link down/up dimctl napi show reads '$got2', set '$want' (ids or values lost); "
$G >"$WORK/gnl-n1.json" 2>/dev/null
kern=$(jq -r --argjson i "$ifx" '[.napis[] | select(.ifindex == $i and .defer_hard_irqs > 0) | "\(.id):\(.defer_hard_irqs):\(.gro_flush_timeout)"] | join(" ")' "$WORK/gnl-n1.json")
for n in "${napis[@]}"; do $G set "$n" 0 0 2>/dev/null || why+="reset of NAPI $n failed; "; done
cp "$WORK"/napi-set.json "$WORK"/napi-updown.json "$LAB_OUT/" 2>/dev/null
if [ -z "$why" ]; then
  report PASS napi-set "per NAPI (id:defer:gro_ns) $want set by napi-set, read back by dimctl napi show, same after link down/up (napi-get: $kern); $(elapsed "$t0")s"
else
  report FAIL napi-set "$why"
fi

# The daemon's side: a rule with method: napi (docs/CONFIG.md "Moderation method"): static
# profile 2 of a custom software table is written to every NAPI under traffic, read back per RX
# NAPI with napi-get (netdev_gnl.py, not dimctl), still in force after link down/up, and the
# originals (0/0) are back after SIGTERM.
PORT=9983
cat >"$WORK/n.yaml" <<YAML
version: 1
mode: shadow
interval: 20ms
state_file: /run/dimctl/state-napi.json
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 200ms
collectors:
  napi: true
  rdma: false
devices:
  - name: lab-igb-napi
    match:
      interface: ["$RX"]
    mode: enforce
    method: napi
    algorithm: static:2
    software_profiles:
      - {gro_flush_timeout: 0us, defer_hard_irqs: 0}
      - {gro_flush_timeout: 20us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 50us, defer_hard_irqs: 2}
      - {gro_flush_timeout: 100us, defer_hard_irqs: 2}
      - {gro_flush_timeout: 200us, defer_hard_irqs: 2}
YAML
if ! "$DIMCTL" check-config "$WORK/n.yaml" >"$WORK/n-check.log" 2>&1; then
  report FAIL napi-set-daemon "dimctl check-config rejects a rule with 'method: napi': $(grep -m 1 -i method "$WORK/n-check.log" | cut -c1-160)"
  exit 0
fi
t1=$(now)
why=""
# rx_values : "id:defer:gro " per RX NAPI of igb0 from napi-get
rx_values() {
  $G >"$WORK/gnl-nd.json" 2>/dev/null || return 1
  local n out=""
  for n in "${napis[@]}"; do
    out+=$(jq -r --argjson n "$n" '.napis[] | select(.id == $n) | "\(.id):\(.defer_hard_irqs):\(.gro_flush_timeout) "' "$WORK/gnl-nd.json")
  done
  echo "$out"
}
want=""; for n in "${napis[@]}"; do want+="$n:2:50000 "; done
orig=""; for n in "${napis[@]}"; do orig+="$n:0:0 "; done
UDP_SOCKETS=2 send_start nd "$NET.2,$NET.3,$NET.4,$NET.5,$NET.6,$NET.7,$NET.8,$NET.9" 0 12 ||
  { report FAIL napi-set-daemon "sender did not start: $(cat "$WORK/nd.out")"; exit 0; }
run_start nd "$WORK/n.yaml" $PORT || { report FAIL napi-set-daemon "dimctl run did not serve its state: $(tail -n 2 "$WORK/run-nd.log" | tr '\n' ' ')"; kill $SEND_PID; exit 0; }
send_go nd
wait_for 20 bash -c "[ \"\$($G | jq -r --argjson i $ifx '[.napis[] | select(.ifindex == \$i and .defer_hard_irqs == 2 and .gro_flush_timeout == 50000)] | length')\" -ge ${#napis[@]} ]"
got=$(rx_values)
[ "$got" = "$want" ] || why+="while dimctl runs, napi-get reads '$got', expected '$want'; "
ip link set "$RX" down && ip link set "$RX" up
wait_for 30 grep -q 1 "/sys/class/net/$RX/carrier" || why+="$RX: no carrier after link up; "
sleep 1
got2=$(rx_values)
[ "$got2" = "$want" ] || why+="after link down/up napi-get reads '$got2', expected '$want'; "
send_wait nd
state_get nd $PORT
run_stop TERM
after=$(rx_values)
[ "$after" = "$orig" ] || why+="after SIGTERM napi-get reads '$after', originals '$orig'; "
[ "$RUN_RC" -eq 0 ] || why+="dimctl run exited $RUN_RC on SIGTERM; "
cp "$WORK/run-nd.log" "$WORK/state-nd.json" "$LAB_OUT/" 2>/dev/null
if [ -z "$why" ]; then
  report PASS napi-set-daemon "method: napi, static:2 -> (defer 2, 50 us) on every RX NAPI ($want; napi-get), kept across link down/up, originals back on SIGTERM ($after); $(elapsed "$t1")s"
else
  report FAIL napi-set-daemon "$why(log: $(tail -n 2 "$WORK/run-nd.log" | tr '\n' ' '))"
fi
true
