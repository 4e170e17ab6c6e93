#!/usr/bin/env bash
# Kernel tests of software moderation per NAPI (`method: napi`) under the whole daemon, as root,
# on veth pairs across two private namespaces (never eth0). The receivers (dnc-r0, dnc-r1) and the
# daemon are in $NS, the senders in $NS2.
#   napi_enforce_readback  enforce with static:3 (128 us): napi-get (`dimctl napi show --json`)
#                          reads back defer-hard-irqs 1, gro-flush-timeout 128000 ns; exported
#   napi_not_allowlisted   the NAPI of dnc-r1, which no rule names, keeps its settings
#   napi_sigterm_restores  SIGTERM puts the original back and removes the state file
#   napi_sigkill_restore   after SIGKILL the profile stays; `dimctl restore` puts the original back
#   napi_churn             GRO off/on and link down/up (new NAPI ids) under the daemon: the new
#                          NAPIs are written, the state file holds live NAPIs only, no error loop;
#                          all restored at exit
#   napi_netns_deleted     the senders' namespace deleted (the receiver goes with it): the daemon
#                          carries on and exits 0
#   napi_outside_set_drift another writer's napi-set is reported as drift (state, metric) and is
#                          neither overwritten nor restored over
#   napi_model_takeover    enforce with `algorithm: model`: a NAPI the daemon has seen polled once
#                          keeps the setting it had (nothing written, nothing recorded) until a
#                          period measures traffic on it; traffic makes the model write it, and
#                          SIGTERM puts the setting back
#   napi_efficiency_flood  `model.objective: efficiency` with told costs (a poll 20x a packet): a
#                          flood moves the NAPI off no moderation (the deferral table's choice),
#                          and idle brings it back to none; the exported trade names the choice
#   napi_cost_probe        efficiency with measured costs: the bounded cost probe writes a
#                          moderated profile under steady traffic and puts none back
# Skips (77) without root or without napi-set (Linux >= 6.13), saying why.
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: napi_test.sh path/to/dimctl path/to/dimctl_napi_set}")
NAPI_SET=$(readlink -f "${2:?usage: napi_test.sh path/to/dimctl path/to/dimctl_napi_set}")

skip_unless_root "napi daemon tests need root (BPF, netns, netdev netlink)"

kernel_test_start dnc DAEMON_PID
PORT=$((20000 + ($$ + 7919) % 20000))
DAEMON_PID=""
FAIL_LOG=$WORK/daemon.log FAIL_LOG_LINES=25

netns_add "$NS" "$NS2"
veth_pair "$NS2" dnc-s0 10.213.7.1 "$NS" dnc-r0 10.213.7.2
veth_pair "$NS2" dnc-s1 10.213.8.1 "$NS" dnc-r1 10.213.8.2
# veth has a NAPI only with GRO on, and napi-get needs napi-set's kernel.
if ! out=$(nsx "$DIMCTL" napi show --json 2>&1); then
  skip "no per-NAPI software moderation here: $out"
fi

# napi_of DEV: "ID DEFER TIMEOUT" of the device's (first) NAPI, empty when it has none.
napi_of() {
  nsx "$DIMCTL" napi show --json "$1" 2>/dev/null |
    jq -r '.[0] // empty | "\(.napi_id) \(.defer_hard_irqs) \(.gro_flush_timeout_ns)"'
}
napi_is() { [ "$(napi_of "$1" | cut -d' ' -f2-)" = "$2" ]; }
metrics() { nsx curl -s --max-time 2 "http://127.0.0.1:$PORT/metrics"; }
traffic() { udp_burst "$NS2" 10.213.7.2 "${1:-2000}"; udp_burst "$NS2" 10.213.8.2 "${1:-2000}"; }
# Traffic until the daemon wrote dnc-r0's NAPI (the collector must see it polled first).
written() {
  traffic 500
  napi_is dnc-r0 "1 128000"
}
# ready_or_fail TEST: the daemon answers /readyz within 15 s, else TEST fails saying so.
ready_or_fail() {
  wait_for 15 ready && return 0
  fail "$1" "daemon not ready: $(tail -n 5 "$WORK/daemon.log")"
  return 1
}
state_napis() { jq -r '.napi // {} | .["dnc-r0"] // {} | keys[]' "$WORK/state.json" 2>/dev/null | sort; }

# write_config [ALGORITHM]: dnc-r0 in enforce, method napi, static:3 unless told otherwise.
write_config() {
  cat >"$WORK/dimctl.yaml" <<CFG
mode: shadow
interval: 20ms
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 200ms
devices:
  - name: demo-napi
    match:
      interface: ["dnc-r0"]
    mode: enforce
    method: napi
    algorithm: ${1:-static:3}
    rate_limit: 10ms
CFG
}
write_config

# --- napi_enforce_readback, napi_not_allowlisted
start_daemon
# The view is published every 200 ms: the write is exported with the next one, not at once.
applied_exported() {
  metrics | grep -q '^dimctl_napi_defer_hard_irqs{.*device="dnc-r0".*source="applied".*} 1$'
}
if wait_for 20 written; then
  wait_for 5 applied_exported || true
  m=$(metrics)
  if ! grep -q '^dimctl_napi_defer_hard_irqs{.*device="dnc-r0".*source="applied".*} 1$' <<<"$m"; then
    fail napi_enforce_readback "applied defer-hard-irqs not exported: $(grep napi_defer <<<"$m" | head -n 3)"
  elif ! grep -q '^dimctl_device_method{device="dnc-r0",method="napi"} 1$' <<<"$m"; then
    fail napi_enforce_readback "dimctl_device_method napi not exported for dnc-r0"
  else
    pass napi_enforce_readback
  fi
  if napi_is dnc-r1 "0 0"; then
    pass napi_not_allowlisted
  else
    fail napi_not_allowlisted "dnc-r1's NAPI changed: $(napi_of dnc-r1)"
  fi
else
  fail napi_enforce_readback "dnc-r0's NAPI never written: $(napi_of dnc-r0)"
fi

# --- napi_sigterm_restores
if [ -n "$DAEMON_PID" ]; then
  stop_daemon TERM
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail napi_sigterm_restores "dimctl run exited $rc"
  elif ! napi_is dnc-r0 "0 0"; then
    fail napi_sigterm_restores "dnc-r0 not restored: $(napi_of dnc-r0)"
  elif [ -e "$WORK/state.json" ]; then
    fail napi_sigterm_restores "state file left: $(cat "$WORK/state.json")"
  else
    pass napi_sigterm_restores
  fi
fi

# --- napi_sigkill_restore
start_daemon
if wait_for 20 written; then
  kill -KILL "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null
  DAEMON_PID=""
  if ! napi_is dnc-r0 "1 128000" || [ ! -e "$WORK/state.json" ]; then
    fail napi_sigkill_restore "the profile and the state file should survive SIGKILL"
  else
    nsx "$DIMCTL" restore --state-file "$WORK/state.json" >"$WORK/restore.log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
      fail napi_sigkill_restore "dimctl restore exited $rc: $(cat "$WORK/restore.log")"
    elif ! napi_is dnc-r0 "0 0"; then
      fail napi_sigkill_restore "dnc-r0 after restore: $(napi_of dnc-r0)"
    elif [ -e "$WORK/state.json" ]; then
      fail napi_sigkill_restore "state file left behind after restore"
    else
      pass napi_sigkill_restore
    fi
  fi
else
  fail napi_sigkill_restore "dnc-r0's NAPI never written: $(napi_of dnc-r0)"
  [ -n "$DAEMON_PID" ] && stop_daemon KILL
fi

# --- napi_churn: each change replaces the NAPI (a new id, the defaults); the daemon writes the
# new one; the old one's record goes at exit at the latest, nothing is left behind.
start_daemon
churn_ok=1
if ! wait_for 20 written; then
  fail napi_churn "dnc-r0's NAPI never written: $(napi_of dnc-r0)"
  churn_ok=0
fi
for change in "gro" "link" "gro" "link"; do
  [ "$churn_ok" = 1 ] || break
  before=$(napi_of dnc-r0 | cut -d' ' -f1)
  if [ "$change" = gro ]; then
    nsx ethtool -K dnc-r0 gro off >/dev/null
    nsx ethtool -K dnc-r0 gro on >/dev/null
  else
    nsx ip link set dnc-r0 down
    nsx ip link set dnc-r0 up
  fi
  after=$(napi_of dnc-r0 | cut -d' ' -f1)
  if [ -z "$after" ] || [ "$after" = "$before" ]; then
    fail napi_churn "$change off/on: NAPI id $before -> '$after', expected a new one"
    churn_ok=0
  elif ! wait_for 15 written; then
    fail napi_churn "$change off/on: new NAPI $after never written: $(napi_of dnc-r0)"
    churn_ok=0
  fi
done
if [ "$churn_ok" = 1 ]; then
  live=$(napi_of dnc-r0 | cut -d' ' -f1)
  # The replaced NAPIs' records are kept while they might come back with their id (drivers
  # with per-NAPI config do that after link down/up; veth never does) and forgotten after
  # forget_gone_ns (60 s) or at exit. So the state file holds the live NAPI, and every other
  # record in it is of a NAPI that no longer exists.
  all_ids=$(nsx "$DIMCTL" napi show --json 2>/dev/null | jq -r '.[].napi_id' | sort)
  stale=""
  for id in $(state_napis); do
    [ "$id" = "$live" ] && continue
    grep -qx "$id" <<<"$all_ids" && stale+="$id "
  done
  if ! state_napis | grep -qx "$live"; then
    fail napi_churn "state file holds NAPIs [$(state_napis | tr '\n' ' ')], not the live one: $live"
  elif [ -n "$stale" ]; then
    fail napi_churn "state file holds records of NAPIs that still exist but are not dnc-r0's: $stale"
  elif [ "$(grep -c 'napi' "$WORK/daemon.log")" -gt 60 ]; then
    fail napi_churn "log flooded: $(grep -c napi "$WORK/daemon.log") lines about NAPIs"
  else
    stop_daemon TERM
    rc=$?
    if [ "$rc" -ne 0 ]; then
      fail napi_churn "dimctl run exited $rc after the churn"
    elif ! napi_is dnc-r0 "0 0" || [ -e "$WORK/state.json" ]; then
      fail napi_churn "not all restored at exit: $(napi_of dnc-r0), state file $([ -e "$WORK/state.json" ] && echo left || echo gone)"
    else
      pass napi_churn
    fi
  fi
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- napi_outside_set_drift: another writer sets the NAPI; the daemon sees it within its read-back
# interval, stops writing the device and leaves the value at exit.
start_daemon
if wait_for 20 written; then
  id=$(napi_of dnc-r0 | cut -d' ' -f1)
  nsx "$NAPI_SET" "$id" 5 7000 >/dev/null
  drifted() { [ "$(state_field '.devices[] | select(.name == "dnc-r0") | .drifted')" = true ]; }
  if ! wait_for 5 drifted; then
    fail napi_outside_set_drift "not reported as drift: $(state_field '.devices[] | select(.name == "dnc-r0")')"
  elif ! grep -q '^dimctl_drift_total{device="dnc-r0"} 1$' <<<"$(metrics)"; then
    fail napi_outside_set_drift "dimctl_drift_total{dnc-r0} not 1: $(metrics | grep drift_total)"
  else
    traffic 500
    sleep 1
    if ! napi_is dnc-r0 "5 7000"; then
      fail napi_outside_set_drift "overwritten: $(napi_of dnc-r0)"
    else
      stop_daemon TERM
      if ! napi_is dnc-r0 "5 7000"; then
        fail napi_outside_set_drift "restored over the other writer: $(napi_of dnc-r0)"
      else
        pass napi_outside_set_drift
      fi
    fi
  fi
else
  fail napi_outside_set_drift "dnc-r0's NAPI never written: $(napi_of dnc-r0)"
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- napi_model_takeover: the model writes nothing before it has measured traffic on the NAPI.
# The NAPI becomes known to the daemon with its first poll, and that first period has no deltas
# (the slot starts from the counters it is found with): one datagram makes the NAPI known, and
# nothing may be written for it until a period measures traffic. The sender's neighbour entry is
# permanent and its IPv6 off, so that nothing but the datagrams sent here reaches the receiver.
ip netns exec "$NS2" sysctl -qw net.ipv6.conf.dnc-s0.disable_ipv6=1
ip -n "$NS2" neigh replace 10.213.7.2 lladdr "$(mac "$NS" dnc-r0)" dev dnc-s0 nud permanent
nsx "$NAPI_SET" "$(napi_of dnc-r0 | cut -d' ' -f1)" 2 50000 >/dev/null
write_config model
start_daemon
known() { [ "$(state_field '[.queues[] | select(.device == "dnc-r0")] | length')" -ge 1 ] 2>/dev/null; }
if ready_or_fail napi_model_takeover; then
  sleep 0.5
  udp_burst "$NS2" 10.213.7.2 1
  if ! wait_for 5 known; then
    fail napi_model_takeover "dnc-r0's NAPI not seen after a datagram: $(state_field '.queues')"
  else
    sleep 1 # 50 periods of 20 ms without traffic
    idle_napi=$(napi_of dnc-r0 | cut -d' ' -f2-)
    recorded=$(state_napis)
    # Traffic until the model has written the NAPI.
    moved() {
      traffic 500
      ! napi_is dnc-r0 "2 50000"
    }
    if [ "$idle_napi" != "2 50000" ]; then
      fail napi_model_takeover "written before a period measured traffic: $idle_napi (was 2 50000)"
    elif [ -n "$recorded" ]; then
      fail napi_model_takeover "an original recorded before a period measured traffic: $recorded"
    elif ! wait_for 20 moved; then
      fail napi_model_takeover "not written after traffic: $(napi_of dnc-r0)"
    elif [ -z "$(state_napis)" ]; then
      fail napi_model_takeover "written, but no original recorded in the state file"
    else
      stop_daemon TERM
      if ! napi_is dnc-r0 "2 50000"; then
        fail napi_model_takeover "not restored at exit: $(napi_of dnc-r0)"
      else
        pass napi_model_takeover
      fi
    fi
  fi
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM
write_config

# flood SECONDS: UDP to dnc-r0 as fast as one socket sends, in the background; sets FLOOD_PID.
flood() {
  ip netns exec "$NS2" python3 - "$1" <<'PY' >/dev/null 2>&1 &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for _ in range(64):
        try:
            s.sendto(b"x" * 32, ("10.213.7.2", 9))
        except OSError:
            pass
PY
  FLOOD_PID=$!
}
moderated() { napi_of dnc-r0 | awk '{ exit !($2 > 0 && $3 > 0) }'; }
unmoderated() { napi_is dnc-r0 "0 0"; }

# --- napi_efficiency_flood: told costs, so the choice is the cost model's alone.
nsx "$NAPI_SET" "$(napi_of dnc-r0 | cut -d' ' -f1)" 0 0 >/dev/null
write_config model
cat >>"$WORK/dimctl.yaml" <<CFG
    model:
      objective: efficiency
      latency_budget: 200us
      costs: defaults
      completion_cost: 1us
      interrupt_cost: 20us
CFG
start_daemon
if ready_or_fail napi_efficiency_flood; then
  flood 12
  # Moderated, and the exported trade (state JSON, published every 200 ms) names a moderated
  # choice with its predicted delay beside none's. (Whether it is predicted cheaper depends on
  # the publish interval's mean rate, which a bursty sender on a busy host keeps below the rates
  # the periods were judged at.)
  trade() {
    state_field '[.queues[] | select(.device == "dnc-r0") | .model_trade // empty |
      "\(.chosen_ix) \(.none_ix) \(.chosen_added_delay_ns) \(.none_added_delay_ns)"] | .[0] // ""'
  }
  exported() { moderated && trade | awk '{ exit !($1 > 0 && $2 == 0 && $3 > $4) }'; }
  if ! wait_for 10 moderated; then
    fail napi_efficiency_flood "a flood left dnc-r0 unmoderated: $(napi_of dnc-r0)"
  elif ! wait_for 5 exported; then
    fail napi_efficiency_flood "trade not exported while moderated: '$(trade)' $(napi_of dnc-r0)"
  else
    kill "$FLOOD_PID" 2>/dev/null
    wait "$FLOOD_PID" 2>/dev/null
    if ! wait_for 10 unmoderated; then
      fail napi_efficiency_flood "idle did not bring none back: $(napi_of dnc-r0)"
    else
      pass napi_efficiency_flood
    fi
  fi
fi
kill "$FLOOD_PID" 2>/dev/null
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- napi_cost_probe: measured costs; one datagram at a time polls once per packet, so only the
# probe can show the estimator another batch.
nsx "$NAPI_SET" "$(napi_of dnc-r0 | cut -d' ' -f1)" 0 0 >/dev/null
write_config model
cat >>"$WORK/dimctl.yaml" <<CFG
    model:
      objective: efficiency
      latency_budget: 500us
CFG
start_daemon
if ready_or_fail napi_cost_probe; then
  probed() {
    traffic 300
    moderated
  }
  if ! wait_for 20 probed; then
    fail napi_cost_probe "no probe written under steady traffic: $(napi_of dnc-r0); $(metrics | grep -E '^dimctl_(model|apply|queue_packets)[a-z_]*\{.*dnc-r0|^dimctl_model_cost_confidence' | tr '\n' ' ')"
  elif ! wait_for 10 unmoderated; then
    fail napi_cost_probe "the probe did not put none back: $(napi_of dnc-r0)"
  else
    pass napi_cost_probe
  fi
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM
write_config

# --- napi_netns_deleted: the written receiver vanishes with its peer's namespace.
nsx "$NAPI_SET" "$(napi_of dnc-r0 | cut -d' ' -f1)" 0 0 >/dev/null
start_daemon
if wait_for 20 written; then
  ip netns del "$NS2"
  sleep 3
  stop_daemon TERM
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail napi_netns_deleted "dimctl run exited $rc: $(tail -n 5 "$WORK/daemon.log")"
  elif [ -e "$WORK/state.json" ]; then
    fail napi_netns_deleted "state file left: $(cat "$WORK/state.json")"
  else
    pass napi_netns_deleted
  fi
else
  fail napi_netns_deleted "dnc-r0's NAPI never written: $(napi_of dnc-r0)"
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

print_summary
