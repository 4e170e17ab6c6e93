#!/usr/bin/env bash
# Crash torture of the originals: `dimctl run` (enforce) killed with SIGKILL at random moments,
# then put back by `dimctl restore` (or, every RESTART_EVERY-th kill, by a fresh daemon's restore
# at start), and every device's settings compared with those before the first start. Every
# CHAIN_EVERY-th kill is not followed by a restore: the next round's enforcing daemon restores
# the state file at its start, and its own kill may land in the middle of that. As root, in
# private network namespaces (never eth0): three taps written with ethtool (rx-frames) and two
# veth receivers written per NAPI (netdev napi-set; ethtool where the kernel has no napi-set),
# their originals set to non-default values first; UDP in the background so the NAPIs are polled.
# Each kill lands in one of seven phases, in turn, after a random delay (TORTURE_MAX_DELAY_MS,
# default 300):
#   startup       0..150 ms after the exec (config, capability check, BPF load, stale restore)
#   first_writes  once the state file appears (the first record), 0..30 ms later
#   steady        once every device is recorded
#   napi_churn    GRO off/on on a veth receiver (its NAPI replaced) under the daemon
#   link_flap     a tap or veth down/up under the daemon
#   reload        the config flipped between two static profiles and SIGHUP
#   shutdown      SIGTERM, then SIGKILL 0..50 ms into the exit restore
# Checks:
#   kills_restored   after every kill, the restore exits 0, leaves no state file, and every
#                    setting equals its original (mismatches listed)
#   state_file_cut   the state file of a killed run cut at every byte offset: `dimctl restore`
#                    exits 2 naming the file, and no device changes
#   state_file_junk  random bytes and well-formed files with bad values: the same
#   state_file_whole the uncut file restores every original (exit 0)
#   disk_full        a state file on a full tmpfs: the record fails, nothing is written to any
#                    device, the daemon says why (once per device, not every period), no state
#                    file is left
# Prints counts (kills per phase, devices, settings compared, mismatches) and exits 0 only when
# every check passed. Environment: TORTURE_KILLS (default 200; `make torture` runs more),
# TORTURE_SEED (default random, printed), TORTURE_KEEP=1 keeps the logs.
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: torture_test.sh path/to/dimctl}")
KILLS=${TORTURE_KILLS:-200}
SEED=${TORTURE_SEED:-$((RANDOM * 32768 + RANDOM))}
MAX_DELAY_MS=${TORTURE_MAX_DELAY_MS:-300}
RESTART_EVERY=5
CHAIN_EVERY=7
CUT_STRIDE=${TORTURE_CUT_STRIDE:-16}

if [ "${TORTURE_INNER:-0}" != 1 ]; then
  skip_unless_root "the torture needs root (BPF, netns, tun, ethtool and netdev netlink)"
  for tool in ip ethtool jq curl; do
    command -v "$tool" >/dev/null || skip "$tool not installed"
  done
  [ -c /dev/net/tun ] || skip "no /dev/net/tun"

  KEEP_WORK=${TORTURE_KEEP:-0}
  kernel_test_start tort DAEMON_PID TRAFFIC_PID
  PORT=$((20000 + ($$ + 4099) % 20000))
  DAEMON_PID="" TRAFFIC_PID=""

  TAPS=(tt-tap0 tt-tap1 tt-tap2)
  VETHS=(tt-r0 tt-r1)
  netns_add "$NS" "$NS2"
  for i in 0 1 2; do
    nsx ip tuntap add dev "${TAPS[$i]}" mode tap
    nsx ip link set "${TAPS[$i]}" up
  done
  veth_pair "$NS2" tt-s0 10.217.1.1 "$NS" tt-r0 10.217.1.2
  veth_pair "$NS2" tt-s1 10.217.2.1 "$NS" tt-r1 10.217.2.2

  # Originals that are not the defaults, so that a restore that writes defaults is caught.
  nsx ethtool -C tt-tap0 rx-frames 16
  nsx ethtool -C tt-tap1 rx-frames 5
  nsx ethtool -C tt-tap2 rx-frames 1
  VETH_METHOD=ethtool
  if nsx "$DIMCTL" napi show --json tt-r0 2>/dev/null | jq -e 'length > 0' >/dev/null; then
    VETH_METHOD=napi
    # Per device: every NAPI the device creates later (GRO toggled, link up) starts from these.
    nsx sh -c 'echo 2 >/sys/class/net/tt-r0/napi_defer_hard_irqs; echo 50000 >/sys/class/net/tt-r0/gro_flush_timeout'
    nsx sh -c 'echo 0 >/sys/class/net/tt-r1/napi_defer_hard_irqs; echo 20000 >/sys/class/net/tt-r1/gro_flush_timeout'
  else
    echo "info: no netdev napi-set here: the veths are written with method ethtool (veth has no coalescing)"
  fi

  # Light traffic to both receivers for the whole run: their NAPIs are polled, so the daemon sees
  # and writes them (a NAPI never polled is not written).
  ip netns exec "$NS2" bash -c 'while :; do for i in 1 2 3 4 5; do echo x >/dev/udp/10.217.1.2/9; echo x >/dev/udp/10.217.2.2/9; done 2>/dev/null; sleep 0.02; done' &
  TRAFFIC_PID=$!

  # The rounds run inside $NS, as one process tree: no `ip netns exec` per command (each costs a
  # mount namespace and a /sys remount), so that 200 kills fit in CI's time.
  export TORTURE_INNER=1 TORTURE_SEED=$SEED WORK PORT VETH_METHOD
  ip netns exec "$NS" bash "${BASH_SOURCE[0]}" "$DIMCTL"
  rc=$?
  kill_quiet KILL "$TRAFFIC_PID"
  wait "$TRAFFIC_PID" 2>/dev/null
  TRAFFIC_PID=""
  exit "$rc"
fi

# ---- Inside $NS from here on (TORTURE_INNER=1; the outer script owns the namespaces and WORK).
RANDOM=$SEED
passed=0 failed=0 DAEMON_PID="" TRAFFIC_PID="" FAIL_LOG=""
nsx() { "$@"; }
start_daemon() {
  "$DIMCTL" run --config "$WORK/dimctl.yaml" >"$WORK/daemon.log" 2>&1 &
  DAEMON_PID=$!
}
trap 'kill_quiet KILL "${DAEMON_PID:-}"' EXIT
TAPS=(tt-tap0 tt-tap1 tt-tap2)
VETHS=(tt-r0 tt-r1)

# snapshot: one line per setting of every device ("DEV KEY VALUE"), NAPIs by position (their ids
# change when GRO toggles or the link flaps; each new NAPI starts from the device's values).
snapshot() {
  local t
  local out
  for t in "${TAPS[@]}"; do
    out=$(ethtool -c "$t")
    [[ "$out" =~ rx-frames:[[:space:]]+([0-9]+) ]] && echo "$t rx-frames ${BASH_REMATCH[1]}"
  done
  "$DIMCTL" napi show --json "${VETHS[@]}" 2>/dev/null | jq -r 'group_by(.device)[] | to_entries[] |
    "\(.value.device) napi\(.key) defer_hard_irqs \(.value.defer_hard_irqs)",
    "\(.value.device) napi\(.key) gro_flush_timeout_ns \(.value.gro_flush_timeout_ns)"'
}

STATE=$WORK/state/state.json
# write_config PROFILE [MODE]: taps and veth receivers in enforce with static:PROFILE.
write_config() {
  cat >"$WORK/dimctl.yaml.new" <<CFG
mode: ${2:-shadow}
interval: 20ms
state_file: $STATE
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 200ms
collectors:
  rdma: false
devices:
  - name: taps
    match:
      interface: ["tt-tap*"]
    mode: enforce
    algorithm: static:$1
    rate_limit: 10ms
  - name: veths
    match:
      interface: ["tt-r*"]
    mode: enforce
    method: $VETH_METHOD
    algorithm: static:$1
    rate_limit: 10ms
CFG
  mv "$WORK/dimctl.yaml.new" "$WORK/dimctl.yaml"
}
# The recovery daemon of the restart rounds: observe, no rule, no BPF (the stale-state restore
# comes before the collector opens); it restores at start only.
cat >"$WORK/observe.yaml" <<CFG
mode: observe
interval: 20ms
state_file: $STATE
metrics:
  listen: 127.0.0.1:$PORT
collectors:
  napi: false
  rdma: false
CFG

BASELINE=$(snapshot)
settings_per_round=$(wc -l <<<"$BASELINE")
if [ "$settings_per_round" -lt 3 ] || grep -q ' $' <<<"$BASELINE"; then
  fail setup "could not read the devices' settings: $BASELINE"
  print_summary
  exit 1
fi
echo "torture: $KILLS kills, seed $SEED, ${#TAPS[@]} taps (ethtool) + ${#VETHS[@]} veths ($VETH_METHOD), $settings_per_round settings per comparison, work $WORK"
while IFS= read -r line; do echo "  original: $line"; done <<<"$BASELINE"

# Sleeps without a process: a read that times out on a pipe nobody writes (the rounds' polls
# would otherwise fork /bin/sleep every 10 ms, on a CPU the daemon under test needs).
exec {NAP_FD}<> <(:)
nap() { read -rt "$1" -u "$NAP_FD" _ || true; }
ms_sleep() { nap "$(printf '0.%03d' "$1")"; }
rand_ms() { echo $((RANDOM % ($1 + 1))); }
state_exists() { [ -s "$STATE" ]; }
# Every device has a record (read in bash: this is polled every 10 ms).
all_recorded() {
  local text d
  text=$(<"$STATE") 2>/dev/null || return 1
  for d in "${TAPS[@]}" "${VETHS[@]}"; do
    [[ "$text" == *"\"$d\": {"* ]] || return 1
  done
}
alive() { kill -0 "$DAEMON_PID" 2>/dev/null; }
# wait_until TRIES CMD: polls CMD every 10 ms while the daemon lives; false when it never held.
wait_until() {
  local i
  for ((i = 0; i < $1; i++)); do
    "${@:2}" && return 0
    alive || return 1
    nap 0.01
  done
  return 1
}

PHASES=(startup first_writes steady napi_churn link_flap reload shutdown)
declare -A phase_kills=()
kills=0 compared=0 mismatches=0 restore_failures=0 restarts=0 chained=0 profile=3 rounds_with_writes=0
write_config "$profile"
start=$SECONDS
for ((k = 0; k < KILLS; k++)); do
  phase=${PHASES[$((k % ${#PHASES[@]}))]}
  t0=$EPOCHREALTIME
  start_daemon
  case "$phase" in
    startup) ms_sleep "$(rand_ms 150)" ;;
    first_writes)
      wait_until 300 state_exists
      ms_sleep "$(rand_ms 30)"
      ;;
    steady)
      wait_until 300 all_recorded
      ms_sleep "$(rand_ms "$MAX_DELAY_MS")"
      ;;
    napi_churn)
      wait_until 300 state_exists
      v=${VETHS[$((RANDOM % ${#VETHS[@]}))]}
      nsx ethtool -K "$v" gro off >/dev/null 2>&1
      ms_sleep "$(rand_ms 50)"
      nsx ethtool -K "$v" gro on >/dev/null 2>&1
      ms_sleep "$(rand_ms "$MAX_DELAY_MS")"
      ;;
    link_flap)
      wait_until 300 state_exists
      devs=("${TAPS[@]}" "${VETHS[@]}")
      d=${devs[$((RANDOM % ${#devs[@]}))]}
      nsx ip link set "$d" down
      ms_sleep "$(rand_ms 50)"
      nsx ip link set "$d" up
      ms_sleep "$(rand_ms "$MAX_DELAY_MS")"
      ;;
    reload)
      wait_until 300 state_exists
      profile=$((profile == 3 ? 1 : 3))
      write_config "$profile"
      kill -HUP "$DAEMON_PID" 2>/dev/null
      ms_sleep "$(rand_ms "$MAX_DELAY_MS")"
      ;;
    shutdown)
      wait_until 300 all_recorded
      kill -TERM "$DAEMON_PID" 2>/dev/null
      ms_sleep "$(rand_ms 50)"
      ;;
  esac
  state_exists && rounds_with_writes=$((rounds_with_writes + 1))
  kill -KILL "$DAEMON_PID" 2>/dev/null
  wait "$DAEMON_PID" 2>/dev/null
  DAEMON_PID=""
  kills=$((kills + 1))
  phase_kills[$phase]=$((${phase_kills[$phase]:-0} + 1))
  t1=$EPOCHREALTIME
  # A flapped link is back up and a toggled GRO back on before the comparison (above).
  if [ $(((k + 1) % CHAIN_EVERY)) -eq 0 ] && [ "$k" -lt $((KILLS - 1)) ]; then
    # No restore now: the next round's enforcing daemon finds this state file, restores it at
    # its start (and may be killed in the middle of that), then records and writes again.
    chained=$((chained + 1))
    continue
  fi
  if [ $(((k + 1) % RESTART_EVERY)) -eq 0 ]; then
    # A fresh daemon restores at start, then is stopped with SIGTERM.
    restarts=$((restarts + 1))
    "$DIMCTL" run --config "$WORK/observe.yaml" >"$WORK/recover.log" 2>&1 &
    DAEMON_PID=$!
    poll 100 ready >/dev/null
    stop_daemon TERM
    rc=$?
    how="restart"
    out=$WORK/recover.log
  else
    nsx "$DIMCTL" restore --state-file "$STATE" >"$WORK/restore.log" 2>&1
    rc=$?
    how="dimctl restore"
    out=$WORK/restore.log
  fi
  t2=$EPOCHREALTIME
  now=$(snapshot)
  t3=$EPOCHREALTIME
  [ "${TORTURE_DEBUG:-0}" = 1 ] && awk -v k="$k" -v p="$phase" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN { printf "debug: kill %d %s: run %.3f s, recover %.3f s, compare %.3f s\n", k, p, b - a, c - b, d - c }'
  compared=$((compared + $(wc -l <<<"$now")))
  if [ "$rc" -ne 0 ] || [ -e "$STATE" ]; then
    restore_failures=$((restore_failures + 1))
    echo "kill $k ($phase): $how exited $rc$([ -e "$STATE" ] && echo ', state file left')"
    sed 's/^/    log: /' "$out" | tail -n 8
    cp "$WORK/daemon.log" "$WORK/daemon.$k.log"
    [ -e "$STATE" ] && nsx "$DIMCTL" restore --force --state-file "$STATE" >/dev/null 2>&1
  fi
  if [ "$now" != "$BASELINE" ]; then
    n=$(diff <(echo "$BASELINE") <(echo "$now") | grep -c '^>')
    mismatches=$((mismatches + n))
    echo "kill $k ($phase, $how): $n setting(s) differ from the originals:"
    diff <(echo "$BASELINE") <(echo "$now") | grep '^[<>]' | sed 's/^/    /'
    cp "$WORK/daemon.log" "$WORK/daemon.$k.log"
    # Put the originals back by hand so that the next rounds start clean.
    for t in "${TAPS[@]}"; do
      want=$(awk -v d="$t" '$1 == d && $2 == "rx-frames" {print $3}' <<<"$BASELINE")
      nsx ethtool -C "$t" rx-frames "$want" 2>/dev/null
    done
  fi
done
elapsed=$((SECONDS - start))
temps=$(find "$WORK/state" -name '.state.json.*' 2>/dev/null | wc -l)
per_phase=""
for p in "${PHASES[@]}"; do per_phase="$per_phase $p=${phase_kills[$p]:-0}"; done
echo "torture: $kills kills in ${elapsed}s ($per_phase); restored by dimctl restore $((kills - restarts - chained)), by a fresh daemon's start $restarts, left to the next enforcing daemon's start $chained; $rounds_with_writes kills after the first record"
echo "torture: devices $(( ${#TAPS[@]} + ${#VETHS[@]} )), settings compared $compared, mismatches $mismatches, restore failures $restore_failures, temporary state files left $temps"
if [ "$mismatches" -eq 0 ] && [ "$restore_failures" -eq 0 ] && [ "$rounds_with_writes" -gt $((kills / 2)) ]; then
  pass "kills_restored ($kills kills, $compared settings compared, 0 mismatches)"
elif [ "$rounds_with_writes" -le $((kills / 2)) ]; then
  fail kills_restored "only $rounds_with_writes of $kills kills came after the first record: the daemon hardly wrote"
else
  fail kills_restored "$mismatches mismatches, $restore_failures failed restores over $kills kills (seed $SEED)"
fi

# --- The state file of a killed run, cut and spoiled.
write_config 3
start_daemon
wait_until 500 all_recorded
sleep 0.3
kill -KILL "$DAEMON_PID" 2>/dev/null
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=""
WRITTEN=$(snapshot)
if ! all_recorded || [ "$WRITTEN" = "$BASELINE" ]; then
  fail state_file_cut "no killed run with every device written to cut (state: $(head -c 300 "$STATE" 2>/dev/null))"
else
  cp "$STATE" "$WORK/real.json"
  # Without the trailing newline every strict prefix is invalid JSON.
  printf '%s' "$(cat "$WORK/real.json")" >"$WORK/trimmed.json"
  len=$(stat -c %s "$WORK/trimmed.json")
  # Every CUT_STRIDE-th offset and the last 16 through the real CLI (every offset of such a file
  # is state_unit_test's StateCutTest, against the actuator fakes: a second each way here).
  bad_cuts=0 first_bad="" cuts=0
  for ((off = 0; off < len; off++)); do
    [ $((off % CUT_STRIDE)) -eq 0 ] || [ "$off" -ge $((len - 16)) ] || continue
    cuts=$((cuts + 1))
    head -c "$off" "$WORK/trimmed.json" >"$WORK/cut.json"
    out=$(nsx "$DIMCTL" restore --state-file "$WORK/cut.json" 2>&1)
    rc=$?
    if [ "$rc" -ne 2 ] || ! grep -q "state file $WORK/cut.json" <<<"$out"; then
      bad_cuts=$((bad_cuts + 1))
      [ -z "$first_bad" ] && first_bad="offset $off: exit $rc: $(head -c 200 <<<"$out")"
    fi
  done
  now=$(snapshot)
  if [ "$bad_cuts" -ne 0 ]; then
    fail state_file_cut "$bad_cuts of $cuts cuts not refused with exit 2 and the file named; first: $first_bad"
  elif [ "$now" != "$WRITTEN" ]; then
    fail state_file_cut "a refused file changed devices: $(diff <(echo "$WRITTEN") <(echo "$now") | grep '^[<>]' | xargs)"
  else
    pass "state_file_cut ($cuts offsets of $len bytes, each refused with exit 2, no device changed)"
    echo "info: e.g. $(head -c 120 "$WORK/trimmed.json" >"$WORK/cut.json"; nsx "$DIMCTL" restore --state-file "$WORK/cut.json" 2>&1 | head -n 1)"
  fi

  bad_junk=0 junk=0 first_bad=""
  junk_case() {
    junk=$((junk + 1))
    out=$(nsx "$DIMCTL" restore --state-file "$WORK/junk.json" 2>&1)
    rc=$?
    if [ "$rc" -ne 2 ] || ! grep -q "state file $WORK/junk.json" <<<"$out"; then
      bad_junk=$((bad_junk + 1))
      [ -z "$first_bad" ] && first_bad="case $junk ($1): exit $rc: $(head -c 200 <<<"$out")"
    fi
  }
  for ((i = 0; i < 20; i++)); do
    head -c $((1 + RANDOM % 2048)) /dev/urandom >"$WORK/junk.json"
    junk_case "random bytes"
  done
  # Valid JSON, bad content: a byte flipped in a value, wrong types, a device name too long.
  jq -c '.net["tt-tap0"].device.rx_max_frames = -1' "$WORK/real.json" >"$WORK/junk.json" && junk_case "negative rx-frames"
  jq -c '.net["tt-tap0"].device.rx_max_frames = "16"' "$WORK/real.json" >"$WORK/junk.json" && junk_case "string rx-frames"
  jq -c '.net["tt-tap0-name-too-long"] = .net["tt-tap0"]' "$WORK/real.json" >"$WORK/junk.json" && junk_case "long device name"
  jq -c '.version = 2' "$WORK/real.json" >"$WORK/junk.json" && junk_case "version 2"
  jq -c '.net["tt-tap1"].device = {}' "$WORK/real.json" >"$WORK/junk.json" && junk_case "empty record"
  sed 's/"rx_max_frames"/"rx_max_framez"/' "$WORK/real.json" >"$WORK/junk.json" && junk_case "misspelled field"
  { head -c 100 "$WORK/real.json"; head -c 64 /dev/zero; tail -c +165 "$WORK/real.json"; } >"$WORK/junk.json" && junk_case "zeroed block"
  now=$(snapshot)
  if [ "$bad_junk" -ne 0 ]; then
    fail state_file_junk "$bad_junk of $junk spoiled files not refused: $first_bad"
  elif [ "$now" != "$WRITTEN" ]; then
    fail state_file_junk "a refused file changed devices: $(diff <(echo "$WRITTEN") <(echo "$now") | grep '^[<>]' | xargs)"
  else
    pass "state_file_junk ($junk spoiled files refused, no device changed)"
  fi

  out=$(nsx "$DIMCTL" restore --state-file "$WORK/real.json" 2>&1)
  rc=$?
  now=$(snapshot)
  if [ "$rc" -ne 0 ] || [ "$now" != "$BASELINE" ]; then
    fail state_file_whole "exit $rc: $(diff <(echo "$BASELINE") <(echo "$now") | grep '^[<>]' | xargs) $(head -c 300 <<<"$out")"
  else
    pass state_file_whole
  fi
fi
rm -f "$STATE"

# --- disk_full: the state file's filesystem has no room; the daemon must not write. (The tmpfs is
# mounted in `ip netns exec`'s private mount namespace: it goes away with this script.)
FULL_MNT=$WORK/full
mkdir -p "$FULL_MNT"
if mount -t tmpfs -o size=64k,mode=0700 tmpfs "$FULL_MNT"; then
  mkdir -p "$FULL_MNT/dimctl"
  dd if=/dev/zero of="$FULL_MNT/fill" bs=4k >/dev/null 2>&1 || true
  STATE=$FULL_MNT/dimctl/state.json
  write_config 3
  start_daemon
  wait_for 10 grep -q 'No space left on device' "$WORK/daemon.log"
  sleep 1
  now=$(snapshot)
  stop_daemon TERM
  if [ "$now" != "$BASELINE" ]; then
    fail disk_full "devices written without a recorded original: $(diff <(echo "$BASELINE") <(echo "$now") | grep '^[<>]' | xargs)"
  elif ! grep -q 'No space left on device' "$WORK/daemon.log"; then
    fail disk_full "the daemon did not report the full filesystem: $(grep -E 'error|warn' "$WORK/daemon.log" | tail -n 3)"
  elif [ "$(grep -c 'tt-tap0: not writing' "$WORK/daemon.log")" -gt 1 ]; then
    fail disk_full "the same failure logged $(grep -c 'tt-tap0: not writing' "$WORK/daemon.log") times for tt-tap0 (once is enough)"
  elif [ -e "$STATE" ] || [ -n "$(find "$FULL_MNT/dimctl" -type f)" ]; then
    fail disk_full "files left on the full filesystem: $(ls -A "$FULL_MNT/dimctl")"
  else
    pass disk_full
    echo "info: $(grep -m1 'No space left on device' "$WORK/daemon.log" | cut -c1-220)"
  fi
  umount "$FULL_MNT"
else
  fail disk_full "cannot mount a tmpfs on $FULL_MNT"
fi

print_summary
