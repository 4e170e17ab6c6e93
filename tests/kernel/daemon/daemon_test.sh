#!/usr/bin/env bash
# Kernel tests of the whole daemon (`dimctl run`) on real devices, as root, in a private network
# namespace (never eth0):
#   enforce_tun            enforce mode writes rx-frames over ethtool netlink to the allowlisted
#                          tap, the read-back (clamped by the driver) is exported, and a tap not
#                          in the allowlist is never written
#   sighup_hands_back      a reload out of enforce restores the device at once; back to enforce
#                          records and writes it again
#   sigterm_restores       SIGTERM restores the original and removes the state file
#   sigkill_then_restore   after SIGKILL the change stays; `dimctl restore` puts the original back
#   stale_state_at_start   `dimctl run` finds a stale state file and restores before starting
#   shadow_veth_decisions  veth traffic produces DIM decisions in shadow mode; nothing written
#   shadow_veth_compare    a rule with algorithm model and compare: dim on the veth exports both
#                          policies' picks (dimctl_compare_profile_index) and the model's state
#   sighup_live_and_restart_keys  a reload applies mode, interval, metrics.publish_interval and
#                          the series caps (state, loop rate, /healthz allowance,
#                          dimctl_series_limit) and logs metrics.listen as taking effect after a
#                          restart, still serving on the old address only
#   listen_all_addresses   metrics.listen ":PORT" serves on IPv4 and IPv6 loopback (dual-stack)
#   sighup_skb_bytes_reselect  a reload from one collectors.skb_bytes list to another re-selects
#                          the byte counter's devices live; to [] needs a restart
# Prints one PASS/FAIL line per case and "N passed, N failed".
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: daemon_test.sh path/to/dimctl}")

skip_unless_root "daemon kernel tests need root (BPF, netns, ethtool netlink)"

kernel_test_start daemon DAEMON_PID
PORT=$((20000 + $$ % 20000))
DAEMON_PID=""
FAIL_LOG=$WORK/daemon.log FAIL_LOG_LINES=25  # printed under every FAIL

rx_frames() { nsx ethtool -c "$1" | sed -n 's/^rx-frames:[[:space:]]*//p'; }
# frames_are DEV N: a predicate for wait_for (re-reads the device on every call).
frames_are() { [ "$(rx_frames "$1")" = "$2" ]; }
metrics() { nsx curl -s --max-time 2 "http://127.0.0.1:$PORT/metrics"; }
state_field_is() { [ "$(state_field "$1")" = "$2" ]; }
# reloads APPLIED RESTART: SIGHUP to the daemon, then up to 10 s for its summary line of the
# reload ("loaded: APPLIED change(s) applied, RESTART need a restart").
reloads() {
  kill -HUP "$DAEMON_PID"
  wait_for 10 grep -q "loaded: $1 change(s) applied, $2 need a restart" "$WORK/daemon.log"
}

netns_add "$NS"
nsx ip tuntap add dev dimtap0 mode tap
nsx ip tuntap add dev dimtap1 mode tap
nsx ethtool -C dimtap0 rx-frames 16
nsx ethtool -C dimtap1 rx-frames 8

write_config() {  # write_config MODE_FOR_RULE EXTRA
  cat >"$WORK/dimctl.yaml" <<CFG
mode: shadow
interval: 20ms
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
devices:
  - name: lab-tap
    match:
      interface: ["dimtap0"]
    mode: $1
    algorithm: static:3
    rate_limit: 10ms
CFG
}

# --- enforce_tun: static profile 3 = 256 frames requested; tap clamps to 64 (NAPI weight).
write_config enforce
start_daemon
if wait_for 15 frames_are dimtap0 64; then
  m=$(metrics)
  if [ "$(rx_frames dimtap1)" != 8 ]; then
    fail enforce_tun "dimtap1 (not allowlisted) changed to $(rx_frames dimtap1)"
  elif ! grep -q '^dimctl_coalesce_rx_frames{.*device="dimtap0".*source="applied".*} 64' <<<"$m"; then
    fail enforce_tun "applied rx frames 64 not exported; got: $(grep rx_frames <<<"$m" | head -n 4)"
  elif ! grep -q '^dimctl_coalesce_rx_frames{.*device="dimtap0".*source="requested".*} 256' <<<"$m"; then
    fail enforce_tun "requested rx frames 256 not exported"
  elif [ ! -s "$WORK/state.json" ] || ! grep -q dimtap0 "$WORK/state.json"; then
    fail enforce_tun "original of dimtap0 not recorded in the state file"
  else
    pass enforce_tun
  fi
else
  fail enforce_tun "dimtap0 rx-frames is $(rx_frames dimtap0), expected 64"
fi

# --- sighup_hands_back: a reload that takes dimtap0 out of enforce restores it at once (not at
# exit) and empties the state file; enforcing it again by another reload writes it again.
if [ -n "$DAEMON_PID" ]; then
  write_config shadow
  kill -HUP "$DAEMON_PID"
  if ! wait_for 15 frames_are dimtap0 16; then
    fail sighup_hands_back "dimtap0 rx-frames $(rx_frames dimtap0) after the reload to shadow, original 16"
  elif ! kill -0 "$DAEMON_PID" 2>/dev/null; then
    fail sighup_hands_back "daemon exited on the reload"
  elif [ -e "$WORK/state.json" ]; then
    fail sighup_hands_back "state file still lists what was handed back: $(cat "$WORK/state.json")"
  else
    write_config enforce
    kill -HUP "$DAEMON_PID"
    if ! wait_for 15 frames_are dimtap0 64; then
      fail sighup_hands_back "not written again after the reload back to enforce ($(rx_frames dimtap0))"
    elif ! grep -q dimtap0 "$WORK/state.json" 2>/dev/null; then
      fail sighup_hands_back "original not recorded again after the reload back to enforce"
    else
      pass sighup_hands_back
    fi
  fi
fi

# --- sigterm_restores
if [ -n "$DAEMON_PID" ]; then
  stop_daemon TERM; rc=$?
  if [ "$rc" -ne 0 ]; then
    fail sigterm_restores "dimctl run exited $rc on SIGTERM"
  elif [ "$(rx_frames dimtap0)" != 16 ]; then
    fail sigterm_restores "dimtap0 rx-frames $(rx_frames dimtap0) after SIGTERM, original 16"
  elif [ -e "$WORK/state.json" ]; then
    fail sigterm_restores "state file left behind after a clean restore"
  else
    pass sigterm_restores
  fi
fi

# --- sigkill_then_restore
start_daemon
if wait_for 15 frames_are dimtap0 64; then
  stop_daemon KILL
  if [ "$(rx_frames dimtap0)" != 64 ] || [ ! -s "$WORK/state.json" ]; then
    fail sigkill_then_restore "expected the change and the state file to survive SIGKILL"
  else
    nsx "$DIMCTL" restore --state-file "$WORK/state.json" >"$WORK/restore.log" 2>&1; rc=$?
    if [ "$rc" -ne 0 ]; then
      fail sigkill_then_restore "dimctl restore exited $rc: $(cat "$WORK/restore.log")"
    elif [ "$(rx_frames dimtap0)" != 16 ]; then
      fail sigkill_then_restore "rx-frames $(rx_frames dimtap0) after restore, original 16"
    elif [ -e "$WORK/state.json" ]; then
      fail sigkill_then_restore "state file left behind after restore"
    else
      pass sigkill_then_restore
    fi
  fi
else
  fail sigkill_then_restore "daemon never applied (rx-frames $(rx_frames dimtap0))"
  [ -n "$DAEMON_PID" ] && stop_daemon KILL
fi

# --- stale_state_at_start: SIGKILL, change the config to shadow, start again: the stale state
# must be restored at start (and shadow then writes nothing). Each step is checked directly, not
# only through wait_for: the killed run must have left dimctl's value and a state file naming
# the device, and the new run must say that it restored them.
start_daemon
if wait_for 15 frames_are dimtap0 64; then
  stop_daemon KILL
  if ! frames_are dimtap0 64 || ! grep -q dimtap0 "$WORK/state.json" 2>/dev/null; then
    stale=$(cat "$WORK/state.json" 2>/dev/null || echo none)
    fail stale_state_at_start "nothing left to restore: rx-frames $(rx_frames dimtap0), state $stale"
  else
    write_config shadow
    start_daemon
    if wait_for 10 frames_are dimtap0 16; then
      sleep 1
      if [ "$(rx_frames dimtap0)" != 16 ]; then
        fail stale_state_at_start "shadow mode wrote dimtap0 after the stale restore"
      elif ! grep -q "found state from a previous run" "$WORK/daemon.log"; then
        fail stale_state_at_start "rx-frames back to 16 without the stale-state restore"
      else
        pass stale_state_at_start
      fi
    else
      fail stale_state_at_start "stale state not restored at start (rx-frames $(rx_frames dimtap0))"
    fi
  fi
  [ -n "$DAEMON_PID" ] && stop_daemon TERM
else
  fail stale_state_at_start "daemon never applied"
  [ -n "$DAEMON_PID" ] && stop_daemon KILL
fi

# --- shadow_veth_decisions: veth pair across two namespaces, TSO off on the sender and GRO on
# the receiver so the receiver's own NAPI runs; traffic; DIM windows are evaluated and exported.
netns_add "$NS2"
veth_pair "$NS2" dkt-s 10.213.0.1 "$NS" dkt-r 10.213.0.2
write_config shadow
start_daemon
if wait_for 15 sh -c "ip netns exec $NS curl -s --max-time 1 http://127.0.0.1:$PORT/readyz >/dev/null"; then
  # Bounded UDP burst: 40000 datagrams in a few seconds, to the receiver only.
  udp_burst "$NS2" 10.213.0.2 40000
  # The view behind /metrics is rebuilt once per metrics.publish_interval (1 s by default), so
  # a scrape right after the burst may predate it: scrape until it shows the burst (at most 5 s),
  # then judge the last scrape.
  veth_counted() {
    local m
    m=$(metrics)
    dec=$(grep '^dimctl_dim_decisions_total{.*device="dkt-r"' <<<"$m" | awk '{s += $NF} END {print s + 0}')
    pk=$(grep '^dimctl_napi_packets_total{.*device="dkt-r"' <<<"$m" | awk '{s += $NF} END {print s + 0}')
    [ "${dec%.*}" -ge 1 ] && [ "${pk%.*}" -ge 40000 ]
  }
  dec=0 pk=0
  wait_for 5 veth_counted
  # A driver without coalescing (ethtool -c fails) is exported as such and is no error in
  # shadow mode (a host of veths must not raise one per device).
  m=$(metrics)
  want_coal=1
  ip netns exec "$NS" ethtool -c dkt-r >/dev/null 2>&1 || want_coal=0
  coal=$(sed -n 's/^dimctl_device_coalescing{device="dkt-r"} //p' <<<"$m")
  derr=$(sed -n 's/^dimctl_device_error{device="dkt-r"} //p' <<<"$m")
  if [ "${dec%.*}" -lt 1 ]; then
    fail shadow_veth_decisions "no DIM decisions for dkt-r (packets seen: $pk)"
  elif [ "${pk%.*}" -lt 40000 ]; then
    fail shadow_veth_decisions "dkt-r packets $pk < 40000 sent"
  elif [ "$coal" != "$want_coal" ]; then
    fail shadow_veth_decisions "dimctl_device_coalescing for dkt-r is '$coal', ethtool -c says $want_coal"
  elif [ "$derr" != 0 ]; then
    fail shadow_veth_decisions "dimctl_device_error for dkt-r is '$derr' in shadow mode: $(nsx "$DIMCTL" status --address "127.0.0.1:$PORT" 2>&1 | grep dkt-r)"
  else
    pass shadow_veth_decisions
  fi
else
  fail shadow_veth_decisions "daemon not ready"
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- shadow_veth_compare: the same veth under a rule running dimctl's cost model with kernel-
# identical DIM compared beside it (shadow: nothing is written either way).
cat >"$WORK/dimctl.yaml" <<CFG
mode: shadow
interval: 20ms
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
devices:
  - name: veth-compare
    match:
      interface: ["dkt-r"]
    algorithm: model
    compare: dim
CFG
start_daemon
if wait_for 15 ready; then
  udp_burst "$NS2" 10.213.0.2 20000
  compared() {
    m=$(metrics)
    grep -q '^dimctl_compare_profile_index{.*device="dkt-r".*policy="model"' <<<"$m" &&
      grep -q '^dimctl_compare_profile_index{.*device="dkt-r".*policy="dim"' <<<"$m" &&
      grep -q '^dimctl_compare_profile_changes_total{.*device="dkt-r".*policy="model"' <<<"$m"
  }
  m=""
  if ! wait_for 5 compared; then
    fail shadow_veth_compare "no dimctl_compare_profile_index{policy=dim|model} for dkt-r"
  elif ! grep -q '^dimctl_dim_profile_index{.*device="dkt-r".*source="dim"' <<<"$m"; then
    fail shadow_veth_compare "the model's own profile index is not exported"
  elif grep -q '^dimctl_dim_tune_state{.*device="dkt-r"' <<<"$m"; then
    fail shadow_veth_compare "a DIM tune state is exported for a queue on the cost model"
  elif ! grep -q '^dimctl_device_info{.*device="dkt-r".*algorithm="model"' <<<"$m"; then
    fail shadow_veth_compare "dimctl_device_info does not say algorithm model"
  elif [ "$(state_field '.devices[] | select(.name == "dkt-r") | .compare')" != true ]; then
    fail shadow_veth_compare "/api/v1/state does not say the device compares"
  elif [ "$(state_field '[.queues[] | select(.device == "dkt-r") | .compare | select(. != null)] | length')" -lt 1 ]; then
    fail shadow_veth_compare "no queues[].compare for dkt-r in /api/v1/state"
  else
    pass shadow_veth_compare
  fi
else
  fail shadow_veth_compare "daemon not ready"
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- sighup_live_and_restart_keys: one reload changes mode, interval, metrics.publish_interval,
# metrics.max_queue_series / max_cq_series (applied live) and metrics.listen (needs a restart, in
# the new ":PORT" form).
PORT2=$((PORT + 1))
# series_limit KIND: the exporter's cap as /metrics reports it.
series_limit() { metrics | sed -n "s/^dimctl_series_limit{kind=\"$1\"} //p"; }
reload_config() {  # reload_config MODE INTERVAL PUBLISH_INTERVAL LISTEN [MAX_QUEUES [MAX_CQS]]
  cat >"$WORK/dimctl.yaml" <<CFG
mode: $1
interval: $2
state_file: $WORK/state.json
metrics:
  listen: "$4"
  publish_interval: $3
  max_queue_series: ${5:-4096}
  max_cq_series: ${6:-4096}
CFG
}
reload_config shadow 20ms 250ms "127.0.0.1:$PORT"
start_daemon
if ! wait_for 15 ready; then
  fail sighup_live_and_restart_keys "daemon not ready"
elif [ "$(series_limit queue)" != 4096 ] || [ "$(series_limit cq)" != 4096 ]; then
  fail sighup_live_and_restart_keys "series limits $(series_limit queue)/$(series_limit cq) before the reload, expected 4096/4096"
else
  reload_config observe 100ms 1s ":$PORT2" 3 2
  log=$WORK/daemon.log
  if ! reloads 5 1; then
    fail sighup_live_and_restart_keys "no reload summary line (5 applied, 1 restart)"
  elif ! grep -q 'reload: interval: 20ms -> 100ms (applied)' "$log" ||
       ! grep -q 'reload: metrics.publish_interval: 250ms -> 1s (applied)' "$log" ||
       ! grep -q 'reload: mode: shadow -> observe (applied)' "$log" ||
       ! grep -q 'reload: metrics.max_queue_series: 4096 -> 3 (applied)' "$log" ||
       ! grep -q 'reload: metrics.max_cq_series: 4096 -> 2 (applied)' "$log"; then
    fail sighup_live_and_restart_keys "an applied key is not logged as applied"
  elif grep -q 'max_.*_series.*takes effect after a restart' "$log"; then
    fail sighup_live_and_restart_keys "a series cap is logged as needing a restart"
  elif [ "$(series_limit queue)" != 3 ] || [ "$(series_limit cq)" != 2 ]; then
    # The summary line is logged after the caps are set: the next scrape must show them.
    fail sighup_live_and_restart_keys "series limits $(series_limit queue)/$(series_limit cq) after the reload, expected 3/2"
  elif [ "$(metrics | grep -c '^dimctl_queue_info{')" -gt 3 ]; then
    fail sighup_live_and_restart_keys "more than 3 queues exported under max_queue_series 3"
  elif ! grep -q "\[warning\] reload: metrics.listen: 127.0.0.1:$PORT -> :$PORT2 takes effect after a restart; keeping 127.0.0.1:$PORT" "$log"; then
    fail sighup_live_and_restart_keys "no warning naming metrics.listen as needing a restart"
  elif ! wait_for 5 state_field_is .default_mode observe; then
    fail sighup_live_and_restart_keys "default_mode $(state_field .default_mode) after the reload to observe"
  else
    # The loop now runs every 100 ms (10 a second; at 20 ms it would be 50) and publishes every
    # second: /healthz must allow that (3 publish intervals), at every probe. The rate is over
    # the probes' measured wall time: on a loaded host 12 probes take longer than 3 s.
    l0=$(state_field .loops_total)
    t0=$(date +%s%N)
    bad_health=0
    for i in $(seq 12); do
      [ "$(http_code "http://127.0.0.1:$PORT/healthz")" = 200 ] || bad_health=$((bad_health + 1))
      sleep 0.25
    done
    l1=$(state_field .loops_total)
    ms=$((($(date +%s%N) - t0) / 1000000))
    loops=$((l1 - l0))
    # Loops per 10 s: 100 at interval 100ms; 500 at the old 20ms.
    per10s=$((loops * 10000 / (ms > 0 ? ms : 1)))
    if [ "$per10s" -gt 200 ] || [ "$per10s" -lt 30 ]; then
      fail sighup_live_and_restart_keys "$loops loops in $ms ms ($per10s per 10 s) after the reload to interval 100ms (expected ~100)"
    elif [ "$bad_health" -ne 0 ]; then
      fail sighup_live_and_restart_keys "/healthz failed $bad_health of 12 probes at publish_interval 1s"
    elif ! ready; then
      fail sighup_live_and_restart_keys "no longer serving on the old address 127.0.0.1:$PORT"
    elif [ "$(http_code "http://127.0.0.1:$PORT2/readyz")" != 000 ]; then
      fail sighup_live_and_restart_keys "something answers on the new address :$PORT2 before a restart"
    elif ! kill -0 "$DAEMON_PID" 2>/dev/null; then
      fail sighup_live_and_restart_keys "daemon exited"
    else
      pass sighup_live_and_restart_keys
    fi
  fi
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- listen_all_addresses: the config's ":PORT" is --web.listen-address's ":PORT": every IPv4
# and IPv6 address on one dual-stack socket (IPv4 only when the kernel has no IPv6).
reload_config shadow 20ms 250ms ":$PORT"
start_daemon
if ! wait_for 15 ready; then
  fail listen_all_addresses "not serving on 127.0.0.1:$PORT with listen \":$PORT\""
elif [ -e /proc/net/if_inet6 ] && nsx ip -6 addr show dev lo | grep -q '::1' &&
     [ "$(http_code "http://[::1]:$PORT/readyz")" != 200 ]; then
  fail listen_all_addresses "not serving on [::1]:$PORT with listen \":$PORT\""
elif ! grep -q "metrics on http://:$PORT/metrics\|metrics on http://0.0.0.0:$PORT/metrics" "$WORK/daemon.log"; then
  fail listen_all_addresses "start-up line does not name :$PORT (or the IPv4 fallback)"
else
  pass listen_all_addresses
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

# --- sighup_skb_bytes_reselect
bytes_config() {  # bytes_config GLOBS
  cat >"$WORK/dimctl.yaml" <<CFG
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
collectors:
  skb_bytes: $1
CFG
}
bytes_config '["dimtap0"]'
start_daemon
log=$WORK/daemon.log
if ! wait_for 15 ready; then
  fail sighup_skb_bytes_reselect "daemon not ready"
elif ! grep -q 'per-skb byte counter on \[dimtap0\]' "$log"; then
  fail sighup_skb_bytes_reselect "byte counter not on dimtap0 at start"
else
  bytes_config '["dimtap1", "nosuchdev*"]'
  if ! reloads 1 0; then
    fail sighup_skb_bytes_reselect "reload to [dimtap1, nosuchdev*] not applied live"
  elif ! grep -q 'collectors.skb_bytes \[dimtap1, nosuchdev\*\]: per-skb byte counter on \[dimtap1\]$' "$log"; then
    fail sighup_skb_bytes_reselect "byte counter not moved to dimtap1"
  else
    bytes_config '[]'
    if ! reloads 0 1; then
      fail sighup_skb_bytes_reselect "reload to [] not reported as needing a restart"
    elif ! grep -q '\[warning\] reload: collectors.skb_bytes: \[dimtap1, nosuchdev\*\] -> \[\] takes effect after a restart' "$log"; then
      fail sighup_skb_bytes_reselect "no warning naming collectors.skb_bytes"
    else
      pass sighup_skb_bytes_reselect
    fi
  fi
fi
[ -n "$DAEMON_PID" ] && stop_daemon TERM

print_summary
