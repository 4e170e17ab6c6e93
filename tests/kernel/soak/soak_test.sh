#!/usr/bin/env bash
# Churn soak of the whole daemon (`dimctl run`, enforce mode, an allowlist) as root, in a private
# network namespace (never eth0). For SOAK_SECONDS (default 120; `make soak` runs longer), while
# churn.py creates, deletes and renames taps and veth pairs, changes veth queue counts, sends
# bounded UDP over the veths (to addresses inside the namespaces only), flips the allowlisted
# taps' static profile by SIGHUP and changes allowlisted taps behind the daemon's back:
#   alive             the daemon runs throughout (checked every second)
#   healthz           /healthz answers 200 at every probe (one per second)
#   rss_flat          VmRSS at the end of the run at most +10 % of VmRSS at minute 1 (or half
#                     time, for runs under two minutes); the maximum after that point is judged
#                     (not under AddressSanitizer, whose quarantine grows RSS by design: there
#                     LeakSanitizer judges leaks at the daemon's exit)
#   queue_churn_seen  the daemon's views (/api/v1/state every 5 s) showed at least 4 NAPIs over
#                     the run, with packets and DIM verdicts
#   sigterm_exit_0    SIGTERM: exit 0
#   state_file_gone   no state file after the exit
# and from the kernel's side (check.py over coalesce_monitor.py's notifications, a listener
# started before the daemon in its namespace): allowlist_only, drift_respected, drift_detected,
# drift_exercised, daemon_wrote, restored, kernel_witness.
# Prints one PASS/FAIL line per check and "N passed, N failed" (exit 0 only when all pass).
# Environment: SOAK_SECONDS, SOAK_SEED (default: random, printed), SOAK_KEEP=1 keeps the work
# directory (logs) and prints where it is.
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: soak_test.sh path/to/dimctl}")
HERE=$(cd "$(dirname "$0")" && pwd)
SOAK_SECONDS=${SOAK_SECONDS:-120}
SOAK_SEED=${SOAK_SEED:-$((RANDOM * 32768 + RANDOM))}
PY=/usr/bin/python3
# An AddressSanitizer build (scripts/test.sh's asan tier) carries the runtime's symbols.
asan=0
grep -qa __asan_init "$DIMCTL" && asan=1

skip_unless_root "the soak needs root (BPF, netns, tun, ethtool netlink)"
for tool in ip ethtool curl jq "$PY"; do
  command -v "$tool" >/dev/null || skip "$tool not installed"
done
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
if [ "$SOAK_SECONDS" -lt 30 ]; then
  echo "SOAK_SECONDS=$SOAK_SECONDS: at least 30 (drift and reloads need time)" >&2
  exit 2
fi

# At exit, deleting the namespaces deletes every tap and veth in them (and the peers).
KEEP_WORK=${SOAK_KEEP:-0}
kernel_test_start soak CHURN_PID DAEMON_PID MON_PID
PEER=$NS2  # churn.py's veth senders
PORT=$((20000 + $$ % 20000))
DAEMON_PID="" MON_PID="" CHURN_PID=""
FAIL_LOG=""  # fail prints no log here: where one helps, the check prints it

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

echo "soak: ${SOAK_SECONDS}s, seed $SOAK_SEED, netns $NS (peer $PEER), work $WORK"
netns_add "$NS" "$PEER"

# The kernel-side witness first: every coalesce write from here on is seen.
ip netns exec "$NS" "$PY" "$HERE/coalesce_monitor.py" "$WORK/monitor.log" 2>"$WORK/monitor.err" &
MON_PID=$!
if ! poll 50 grep -qs READY "$WORK/monitor.log"; then
  fail kernel_witness "coalesce_monitor.py did not subscribe: $(cat "$WORK/monitor.err")"
  print_summary
  exit 1
fi

# The allowlisted veths are written per NAPI (method napi) where the kernel has napi-set: NAPIs
# then come and go under the daemon (flaps, channel changes, deletes), and state_file_gone says
# none of their records leaked.
if ip netns exec "$NS" "$DIMCTL" napi show --json >/dev/null 2>&1; then
  export SOAK_VETH_METHOD=napi
else
  export SOAK_VETH_METHOD=ethtool
fi
echo "soak: allowlisted veths written with method $SOAK_VETH_METHOD"
"$PY" "$HERE/churn.py" config 3 "$WORK/state.json" "$PORT" >"$WORK/dimctl.yaml"
start_daemon
if ! poll 150 ready; then
  fail alive "daemon not ready after 15 s"
  show_log "$WORK/daemon.log" 25
  print_summary
  exit 1
fi

"$PY" "$HERE/churn.py" run "$NS" "$PEER" "$SOAK_SECONDS" "$SOAK_SEED" "$WORK/dimctl.yaml" \
  "$DAEMON_PID" "$WORK/state.json" "$PORT" "$WORK/churn.log" "$WORK/final.json" \
  >"$WORK/churn.out" 2>&1 &
CHURN_PID=$!

# One probe per second while the churn runs: alive, /healthz, VmRSS.
baseline_at=$((SOAK_SECONDS < 120 ? SOAK_SECONDS / 2 : 60))
dead_at="" bad_health=0 probes=0 rss_base="" rss_max=0 health_log=""
start=$SECONDS
while kill -0 "$CHURN_PID" 2>/dev/null; do
  t=$((SECONDS - start))
  if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
    dead_at=$t
    kill -TERM "$CHURN_PID" 2>/dev/null  # ends early, still writes what the checks read
    break
  fi
  code=$(http_code "http://127.0.0.1:$PORT/healthz")
  probes=$((probes + 1))
  if [ "$code" != 200 ]; then
    bad_health=$((bad_health + 1))
    health_log="$health_log ${t}s:$code"
  fi
  if [ $((t % 5)) -eq 0 ]; then  # what the daemon sees of the queue churn, every 5 s
    state_field '.queues[] | "\(.ifindex) \(.napi_id) \(.packets) \(.dim.verdicts_total | .worse + .same + .better) \(.device)"' \
      >>"$WORK/queues.log" 2>/dev/null
  fi
  rss=$(rss_kb "$DAEMON_PID")
  if [ -n "$rss" ]; then
    echo "$t $rss" >>"$WORK/rss.log"
    if [ "$t" -ge "$baseline_at" ]; then
      [ -z "$rss_base" ] && rss_base=$rss
      [ "$rss" -gt "$rss_max" ] && rss_max=$rss
    fi
  fi
  sleep 1
done
wait "$CHURN_PID"; churn_rc=$?
CHURN_PID=""

if [ -n "$dead_at" ]; then
  wait "$DAEMON_PID"; rc=$?
  DAEMON_PID=""
  fail alive "daemon exited (status $rc) ${dead_at}s into the churn"
  show_log "$WORK/daemon.log" 25
elif [ "$churn_rc" -ne 0 ]; then
  fail alive "churn.py failed ($churn_rc): $(tail -n 5 "$WORK/churn.out")"
else
  pass alive
fi
if [ "$bad_health" -ne 0 ]; then
  fail healthz "$bad_health of $probes probes not 200:$health_log"
else
  pass healthz
fi
if [ "$asan" = 1 ]; then
  # ASan holds freed memory in its quarantine (256 MB by default) and maps shadow pages as the
  # heap is touched, so RSS grows by design. There, LeakSanitizer at the daemon's exit (reports
  # land in ASAN_OPTIONS' log_path, which scripts/test.sh's asan tier fails on) judges leaks.
  echo "info: rss_flat not judged: $DIMCTL is built with AddressSanitizer (VmRSS ${rss_base:-?} kB at ${baseline_at}s, at most ${rss_max} kB after); leaks are LeakSanitizer's at exit"
elif [ -z "$rss_base" ]; then
  fail rss_flat "no VmRSS sample after ${baseline_at}s"
elif [ $((rss_max * 100)) -gt $((rss_base * 110)) ]; then
  fail rss_flat "VmRSS ${rss_base} kB at ${baseline_at}s, up to ${rss_max} kB later (> +10 %)"
else
  pass rss_flat
  echo "info: VmRSS ${rss_base} kB at ${baseline_at}s, at most ${rss_max} kB after"
fi

# The churn must have reached the daemon: NAPIs of veths that came and went, with packets and
# DIM verdicts (the queues of the 5-second views, by (ifindex, napi id)).
if [ -s "$WORK/queues.log" ]; then
  read -r napis pkts verdicts < <(awk '{k = $1 " " $2; if ($3 > p[k]) p[k] = $3; if ($4 > v[k]) v[k] = $4}
    END {for (k in p) {n++; s += p[k]; w += v[k]}; print n + 0, s + 0, w + 0}' "$WORK/queues.log")
else
  napis=0 pkts=0 verdicts=0
fi
if [ "$napis" -lt 4 ] || [ "$pkts" -eq 0 ] || [ "$verdicts" -eq 0 ]; then
  fail queue_churn_seen "the daemon's views showed $napis NAPI(s), $pkts packets, $verdicts DIM verdicts"
else
  pass queue_churn_seen
  echo "info: the daemon saw $napis NAPIs over the run, $pkts packets, $verdicts DIM verdicts"
fi

if [ -n "$DAEMON_PID" ]; then
  # 15 s: the churned devices' restores come first.
  rc=0
  stop_process sigterm_exit_0 "dimctl run" TERM "$DAEMON_PID" 150 || rc=$?
  DAEMON_PID=""
  if [ "$rc" -ne 0 ]; then
    fail sigterm_exit_0 "dimctl run exited $rc on SIGTERM"
    grep -E '\[(error|critical)\]|restore' "$WORK/daemon.log" | tail -n 15 | sed 's/^/    log: /'
  else
    pass sigterm_exit_0
  fi
  if [ -e "$WORK/state.json" ]; then
    fail state_file_gone "state file left behind: $(tr -d '\n' <"$WORK/state.json" | head -c 400)"
  else
    pass state_file_gone
  fi
fi
sleep 0.5  # the last notifications of the exit restore reach the listener
kill -TERM "$MON_PID" 2>/dev/null
wait "$MON_PID" 2>/dev/null
MON_PID=""

"$PY" "$HERE/check.py" "$NS" "$WORK/monitor.log" "$WORK/churn.log" "$WORK/final.json" \
  "$WORK/daemon.log" >"$WORK/check.out" 2>&1
check_rc=$?
while IFS= read -r line; do
  case "$line" in
    PASS*) echo "$line"; passed=$((passed + 1)) ;;
    FAIL*) echo "$line"; failed=$((failed + 1)) ;;
    *) echo "$line" ;;
  esac
done <"$WORK/check.out"
[ "$check_rc" -ne 0 ] && fail checker "check.py exited $check_rc"
grep -o '"counts": {[^}]*}' "$WORK/churn.log" | sed 's/^/info: churn /'
echo "info: daemon log: $(grep -c '\[warning\]' "$WORK/daemon.log") warning(s), $(grep -c '\[error\]' "$WORK/daemon.log") error(s)"
[ "$failed" -ne 0 ] && echo "repeat with: SOAK_SEED=$SOAK_SEED SOAK_SECONDS=$SOAK_SECONDS SOAK_KEEP=1"
print_summary
