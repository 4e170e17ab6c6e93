#!/usr/bin/env bash
# Least privilege, measured: `dimctl run` as root under a reduced capability bounding set
# (setpriv: bounding, inheritable and ambient sets cut, so the process holds exactly the listed
# capabilities), in a private network namespace with a tap (written with ethtool) and a veth
# receiver (written per NAPI with netdev napi-set, where the kernel has it).
# Measured with --no-capability-check (the kernel alone refuses), one line per row of the table
# in docs/SECURITY.md:
#   measure_bpf_<set>       the napi:napi_poll program attaches with <set> (or does not)
#   measure_other_programs  the per-skb byte counter and the cost model's cpu_time programs attach
#                           with CAP_BPF + CAP_PERFMON
#   measure_shadow          shadow mode with CAP_BPF + CAP_PERFMON only: decisions, no error
#   reload_needs_capabilities  that daemon reloaded to enforce: refused naming CAP_NET_ADMIN, the
#                           shadow config keeps running, nothing written
#   measure_ethtool         enforce, method ethtool: refused (EPERM) without CAP_NET_ADMIN
#   measure_napi            enforce, method napi: refused (EPERM) without CAP_NET_ADMIN
#   measure_restore         `dimctl restore` without CAP_NET_ADMIN fails and keeps the file
# The daemon's own check (what ships):
#   enforce_documented_set  enforce on both devices with exactly the unit's CapabilityBoundingSet
#                           (deploy/systemd/dimctl.service): both written, SIGTERM restores, exit 0
#   missing_<CAP>           the same without CAP: exit 2 at start, "missing capability CAP,
#                           needed by ..." naming the feature, nothing written
#   stale_state_needs_net_admin  a shadow config (no NET_ADMIN needed) with a crashed run's state
#                           file: exit 2 naming the file, nothing restored by half
# Skips (77) without root, setpriv or tun.
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: privilege_test.sh path/to/dimctl}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
UNIT=$ROOT/deploy/systemd/dimctl.service

skip_unless_root "capability tests need root (netns, tun, BPF)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
for tool in ip ethtool jq curl; do
  command -v "$tool" >/dev/null || skip "$tool not installed"
done

kernel_test_start priv DAEMON_PID TRAFFIC_PID
PORT=$((20000 + ($$ + 6007) % 20000))
DAEMON_PID="" TRAFFIC_PID=""
FAIL_LOG=$WORK/daemon.log FAIL_LOG_LINES=8

netns_add "$NS" "$NS2"
nsx ip tuntap add dev pv-tap0 mode tap
nsx ip link set pv-tap0 up
nsx ethtool -C pv-tap0 rx-frames 16
veth_pair "$NS2" pv-s0 10.219.1.1 "$NS" pv-r0 10.219.1.2
HAVE_NAPI=0
nsx "$DIMCTL" napi show --json pv-r0 2>/dev/null | jq -e 'length > 0' >/dev/null && HAVE_NAPI=1
ip netns exec "$NS2" bash -c 'while :; do for i in 1 2 3 4 5; do echo x >/dev/udp/10.219.1.2/9; done 2>/dev/null; sleep 0.02; done' &
# shellcheck disable=SC2034 # read by the cleanup trap (kernel_test_start's PID_VARs)
TRAFFIC_PID=$!

# The unit's set, e.g. "bpf,perfmon,net_admin".
UNIT_CAPS=$(sed -nE 's/^CapabilityBoundingSet=(.*)/\1/p' "$UNIT")
to_setpriv() { tr ' ' '\n' <<<"$1" | grep . | sed 's/^CAP_//' | tr '[:upper:]' '[:lower:]' | paste -sd, -; }
rx_frames() { nsx ethtool -c pv-tap0 | awk '/^rx-frames:/ {print $2}'; }
napi_cfg() { nsx "$DIMCTL" napi show --json pv-r0 2>/dev/null | jq -r '.[0] | "\(.defer_hard_irqs) \(.gro_flush_timeout_ns)"'; }
frames_are() { [ "$(rx_frames)" = "$1" ]; }
napi_is() { [ "$(napi_cfg)" = "$1" ]; }
metrics() { nsx curl -s --max-time 2 "http://127.0.0.1:$PORT/metrics"; }
attached() { metrics | grep -q '^dimctl_bpf_program_attached{program="napi:napi_poll"} 1'; }
# The program's gauge is exported (attached or not): the collector has decided.
decided() { metrics | grep -q '^dimctl_bpf_program_attached{program="napi:napi_poll"} [01]'; }

# write_config MODE: pv-tap0 (ethtool) and pv-r0 (napi) in MODE with static:3.
write_config() {
  local veth_rule=""
  if [ "$HAVE_NAPI" = 1 ]; then
    veth_rule="  - name: veth-napi
    match:
      interface: [\"pv-r0\"]
    mode: $1
    method: napi
    algorithm: static:3
    rate_limit: 10ms"
  fi
  cat >"$WORK/dimctl.yaml" <<CFG
mode: shadow
interval: 20ms
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 100ms
collectors:
  rdma: false
devices:
  - name: tap-ethtool
    match:
      interface: ["pv-tap0"]
    mode: $1
    algorithm: static:3
    rate_limit: 10ms
$veth_rule
CFG
}
# run_with CAPS [ARGS...]: the daemon in $NS holding exactly CAPS ("a,b" setpriv names; "" none).
run_with() {
  local caps=$1
  shift
  local bset="-all"
  [ -n "$caps" ] && bset="-all,+${caps//,/,+}"
  ip netns exec "$NS" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set="$bset" -- \
    "$DIMCTL" run --config "$WORK/dimctl.yaml" "$@" >"$WORK/daemon.log" 2>&1 &
  DAEMON_PID=$!
}
table() { echo "info: | $1 | $2 |"; }

# --- What the kernel refuses (the daemon's check off).
write_config observe
for caps in "" bpf perfmon bpf,perfmon sys_admin; do
  run_with "$caps" --no-capability-check
  ok=0
  # Decided, then a little longer: under load the first view can come before the attach.
  wait_for 8 decided && wait_for 2 attached && ok=1
  name=${caps:-none}
  why=$(grep -m1 -oE 'collector: .*|load BPF object.*' "$WORK/daemon.log" | cut -c1-150)
  table "observe, napi:napi_poll attached, caps ${name}" "$([ $ok = 1 ] && echo yes || echo "no: ${why:-?}")"
  case "$caps" in
    bpf,perfmon | sys_admin)
      if [ $ok = 1 ]; then pass "measure_bpf_${name/,/_}"; else fail "measure_bpf_${name/,/_}" "program not attached"; fi ;;
    *)
      if [ $ok = 0 ]; then pass "measure_bpf_${name} (refused)"; else fail "measure_bpf_${name}" "attached without CAP_BPF+CAP_PERFMON"; fi ;;
  esac
  stop_daemon TERM >/dev/null
done

# Every other BPF program with the same two: the per-skb byte counter and the cost model's
# cpu_time programs (rdma_core:* need ib_core, absent here).
cat >"$WORK/programs.yaml" <<CFG
mode: shadow
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
collectors:
  skb_bytes: ["pv-r0"]
devices:
  - name: cost
    match:
      interface: ["pv-r0"]
    algorithm: model
CFG
ip netns exec "$NS" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all,+bpf,+perfmon -- \
  "$DIMCTL" run --config "$WORK/programs.yaml" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
all_attached() {
  local m
  m=$(metrics)
  for p in net:netif_receive_skb irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry \
    irq:softirq_exit sched:sched_switch; do
    grep -q "^dimctl_bpf_program_attached{program=\"$p\"} 1" <<<"$m" || return 1
  done
}
if wait_for 10 all_attached; then
  pass "measure_other_programs (skb byte counter, cpu_time programs: CAP_BPF + CAP_PERFMON)"
  table "skb_bytes and model (cpu_time) programs attached, caps bpf,perfmon" yes
else
  fail measure_other_programs "not all attached: $(metrics | grep '^dimctl_bpf_program_attached' | grep -v rdma_core | tr '\n' ' ')"
fi
stop_daemon TERM >/dev/null

write_config shadow
run_with bpf,perfmon
if wait_for 8 attached && sleep 1 && ! grep -qiE 'operation not permitted|\[error\]' "$WORK/daemon.log"; then
  pass measure_shadow
  # A reload to enforce needs CAP_NET_ADMIN, which this daemon lacks: refused, the shadow config
  # keeps running, nothing written.
  write_config enforce
  kill -HUP "$DAEMON_PID"
  wait_for 5 grep -q 'keeping the running config' "$WORK/daemon.log"
  sleep 0.5
  line=$(grep -m1 'reload: missing capability CAP_NET_ADMIN, needed by rule' "$WORK/daemon.log")
  stop_daemon TERM
  rc=$?
  if [ -n "$line" ] && grep -q 'keeping the running config' "$WORK/daemon.log" && [ "$rc" -eq 0 ] &&
    [ "$(rx_frames)" = 16 ] && ! grep -q 'Operation not permitted' "$WORK/daemon.log"; then
    pass reload_needs_capabilities
  else
    fail reload_needs_capabilities "exit $rc, rx-frames $(rx_frames), message: ${line:-none}"
  fi
else
  fail measure_shadow "not attached, or an error without CAP_NET_ADMIN: $(grep -iE 'not permitted|error' "$WORK/daemon.log" | head -n 2)"
  stop_daemon KILL >/dev/null
fi

write_config enforce
run_with bpf,perfmon --no-capability-check
wait_for 8 attached
sleep 1.5
eperm_ethtool=$(grep -c 'pv-tap0.*Operation not permitted' "$WORK/daemon.log")
eperm_napi=$(grep -c 'pv-r0.*Operation not permitted' "$WORK/daemon.log")
frames=$(rx_frames) napi=$(napi_cfg)
stop_daemon KILL >/dev/null
table "enforce ethtool (tap) without CAP_NET_ADMIN" "rx-frames $frames, $eperm_ethtool EPERM line(s)"
if [ "$frames" = 16 ] && [ "$eperm_ethtool" -gt 0 ]; then
  pass "measure_ethtool (EPERM without CAP_NET_ADMIN)"
else
  fail measure_ethtool "rx-frames $frames, $eperm_ethtool EPERM lines: $(grep -i pv-tap0 "$WORK/daemon.log" | tail -n 2)"
fi
if [ "$HAVE_NAPI" = 1 ]; then
  table "enforce napi (veth) without CAP_NET_ADMIN" "napi $napi, $eperm_napi EPERM line(s)"
  if [ "$eperm_napi" -gt 0 ] && [ "$napi" = "0 0" ]; then
    pass "measure_napi (EPERM without CAP_NET_ADMIN)"
  else
    fail measure_napi "napi $napi, $eperm_napi EPERM lines: $(grep -i pv-r0 "$WORK/daemon.log" | tail -n 2)"
  fi
else
  echo "info: no napi-set on this kernel: measure_napi not run"
fi
# The kill left a state file if any original was recorded; write one for the restore test anyway.
rm -f "$WORK/state.json"

# --- The shipped check with exactly the unit's set.
caps=$(to_setpriv "$UNIT_CAPS")
run_with "$caps"
ok=1
wait_for 10 attached || ok=0
wait_for 10 frames_are 64 || ok=0
if [ "$HAVE_NAPI" = 1 ]; then wait_for 10 napi_is "1 128000" || ok=0; fi
written="rx-frames $(rx_frames), napi $(napi_cfg)"
stop_daemon TERM
rc=$?
if [ "$ok" = 1 ] && [ "$rc" -eq 0 ] && [ "$(rx_frames)" = 16 ] && { [ "$HAVE_NAPI" = 0 ] || [ "$(napi_cfg)" = "0 0" ]; }; then
  pass "enforce_documented_set ($UNIT_CAPS)"
else
  fail enforce_documented_set "with $UNIT_CAPS: written: $written; exit $rc; after: rx-frames $(rx_frames), napi $(napi_cfg)"
fi

for cap in $UNIT_CAPS; do
  rest=$(to_setpriv "$(tr ' ' '\n' <<<"$UNIT_CAPS" | grep -vx "$cap" | xargs)")
  run_with "$rest"
  rc=0
  if poll 50 not_running "$DAEMON_PID"; then
    wait "$DAEMON_PID" 2>/dev/null
    rc=$?
    DAEMON_PID=""
  else
    stop_daemon KILL >/dev/null
    rc=running
  fi
  line=$(grep -m1 "missing capability $cap, needed by" "$WORK/daemon.log")
  if [ "$rc" = 2 ] && [ -n "$line" ] && [ "$(rx_frames)" = 16 ] && [ ! -e "$WORK/state.json" ]; then
    pass "missing_$cap"
    echo "info: ${line#*] }"
  else
    fail "missing_$cap" "exit $rc, rx-frames $(rx_frames), message: ${line:-none}"
  fi
done

# --- A crashed run's originals need CAP_NET_ADMIN even when the config does not.
cat >"$WORK/state.json" <<JSON
{"version": 1, "net": {"pv-tap0": {"device": {"rx_max_frames": 16}}}, "rdma": {}}
JSON
nsx ethtool -C pv-tap0 rx-frames 32
write_config shadow
run_with bpf,perfmon
if poll 50 not_running "$DAEMON_PID"; then
  wait "$DAEMON_PID" 2>/dev/null
  rc=$?
else
  rc=running
  kill -KILL "$DAEMON_PID"
fi
DAEMON_PID=""
if [ "$rc" = 2 ] && grep -q "missing capability CAP_NET_ADMIN, needed by restoring the originals a previous run left in $WORK/state.json" "$WORK/daemon.log" &&
  [ -e "$WORK/state.json" ] && [ "$(rx_frames)" = 32 ]; then
  pass stale_state_needs_net_admin
else
  fail stale_state_needs_net_admin "exit $rc, rx-frames $(rx_frames), state file $([ -e "$WORK/state.json" ] && echo kept || echo gone)"
fi

# `dimctl restore` itself: the kernel refuses without CAP_NET_ADMIN, the file stays.
ip netns exec "$NS" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
  "$DIMCTL" restore --state-file "$WORK/state.json" >"$WORK/restore.log" 2>&1
rc=$?
table "dimctl restore without CAP_NET_ADMIN" "exit $rc, $(grep -c 'not permitted' "$WORK/restore.log") EPERM line(s)"
if [ "$rc" = 1 ] && [ -e "$WORK/state.json" ] && [ "$(rx_frames)" = 32 ] && grep -q 'not permitted' "$WORK/restore.log"; then
  pass "measure_restore (EPERM without CAP_NET_ADMIN, file kept)"
else
  fail measure_restore "exit $rc, rx-frames $(rx_frames): $(head -n 3 "$WORK/restore.log")"
fi
ip netns exec "$NS" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all,+net_admin -- \
  "$DIMCTL" restore --state-file "$WORK/state.json" >"$WORK/restore.log" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ "$(rx_frames)" = 16 ]; then
  pass "measure_restore_net_admin (CAP_NET_ADMIN alone restores)"
else
  fail measure_restore_net_admin "exit $rc, rx-frames $(rx_frames): $(head -n 3 "$WORK/restore.log")"
fi

print_summary
