# shellcheck shell=bash
# Helpers shared by the kernel-facing scripts (tests/kernel/*/*_test.sh, bench/sim/record-veth.sh):
# the common start (names, work directory, cleanup trap), skip reporting, PASS/FAIL accounting,
# polling, private network namespaces and veth pairs, the daemon in the background. Functions
# only: sourcing it sets nothing, and every function is safe under `set -euo pipefail`. Source it
# relative to the script, never the working directory:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# Globals, set by kernel_test_start or by the caller, where it uses the functions that read them:
#   NS, NS2               the script's namespaces (nsx runs in NS); deleted at exit
#   WORK                  the work directory, removed at exit (kept with KEEP_WORK=1)
#   PORT                  the daemon's metrics port on 127.0.0.1 (ready, state_field)
#   DIMCTL                the binary (start_daemon)
#   passed, failed        the counters pass, fail and print_summary keep
#   FAIL_LOG [LINES]      a log whose last FAIL_LOG_LINES (default 25) lines fail prints, if set
#   DAEMON_PID            set by start_daemon, cleared by stop_daemon
# The lab's guest scripts (tests/lab/guest/lib.sh) run inside qemu and have their own helpers.

# kernel_test_start TAG [PID_VAR...]: the start every kernel script shares, after its own skip
# check: NS=dimctl-TAG-PID and NS2=dimctl-TAG2-PID (names only: netns_add creates them), WORK (a
# new /tmp/dimctl-TAG.XXXXXX), passed=0 failed=0, and the cleanup trap (cleanup_on_exit with the
# PID_VARs). TAG is the script's own, so that two scripts never share a namespace; the PID keeps
# two runs of one script apart.
kernel_test_start() {
  local tag=$1
  shift
  NS=dimctl-$tag-$$
  NS2=dimctl-${tag}2-$$
  WORK=$(mktemp -d "/tmp/dimctl-$tag.XXXXXX")
  passed=0 failed=0
  cleanup_on_exit "$@"
}
# cleanup_on_exit [PID_VAR...]: at the script's exit (INT and TERM exit 130 through it): SIGKILL
# to the pid each named variable holds then (empty ones skipped), the script's own on_cleanup if
# it defines one, netns_del of $NS and $NS2 (every device in them goes too), and $WORK removed,
# or kept and its path printed when KEEP_WORK=1.
cleanup_on_exit() {
  _cleanup_pid_vars="$*"
  trap _cleanup_at_exit EXIT
  trap 'exit 130' INT TERM
}
_cleanup_at_exit() {
  local v
  for v in ${_cleanup_pid_vars:-}; do kill_quiet KILL "${!v:-}"; done
  if declare -F on_cleanup >/dev/null; then on_cleanup || true; fi
  netns_del "${NS:-}" "${NS2:-}"
  if [ -n "${WORK:-}" ]; then
    if [ "${KEEP_WORK:-0}" = 1 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
  fi
}

# skip REASON: "SKIP: REASON" and exit 77 (CTest's SKIP_RETURN_CODE).
skip() {
  echo "SKIP: $1"
  exit 77
}
# skip_unless_root REASON: skip REASON when not root.
skip_unless_root() {
  if [ "$(id -u)" -ne 0 ]; then skip "$1"; fi
}

# pass NAME / fail NAME REASON: one PASS or FAIL line per check, counted for print_summary.
pass() {
  echo "PASS $1"
  passed=$((${passed:-0} + 1))
}
fail() {
  echo "FAIL $1: $2"
  failed=$((${failed:-0} + 1))
  if [ -n "${FAIL_LOG:-}" ] && [ -f "$FAIL_LOG" ]; then show_log "$FAIL_LOG" "${FAIL_LOG_LINES:-25}"; fi
}
# print_summary: "N passed, N failed"; succeeds only when nothing failed (the script's last line).
print_summary() {
  echo "${passed:-0} passed, ${failed:-0} failed"
  [ "${failed:-0}" -eq 0 ]
}
# show_log FILE LINES: the last LINES lines of FILE, indented as "    log: ".
show_log() { sed 's/^/    log: /' "$1" | tail -n "$2"; }

# wait_for SECONDS CMD...: polls CMD every 100 ms until it succeeds or SECONDS (of $SECONDS, whole
# seconds) are up, then runs it a last time: its status is CMD's.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  while [ "$SECONDS" -lt "$deadline" ]; do
    "$@" && return 0
    sleep 0.1
  done
  "$@"
}
# poll TRIES CMD...: runs CMD up to TRIES times, 100 ms apart, until it succeeds, then a last
# time: its status is CMD's. A bound in attempts, not in time (a slow CMD makes it longer).
poll() {
  local tries=$1 i
  shift
  for ((i = 0; i < tries; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  "$@"
}
# not_running PID: a predicate for poll (the process is gone, or was never started).
not_running() { ! kill -0 "$1" 2>/dev/null; }
# kill_quiet SIGNAL PID...: signals each PID given (empty ones skipped), ignoring the gone.
kill_quiet() {
  local sig=$1 p
  shift
  for p in "$@"; do
    [ -z "$p" ] || kill -"$sig" "$p" 2>/dev/null || true
  done
}

# netns_add [--no-ipv6] NS...: private namespaces with lo up; --no-ipv6 turns IPv6 off in them so
# that no router solicitation or DAD packet crosses a link (the exact-count tests need that).
netns_add() {
  local noipv6=0 ns
  if [ "${1:-}" = --no-ipv6 ]; then
    noipv6=1
    shift
  fi
  for ns in "$@"; do
    ip netns add "$ns"
    if [ "$noipv6" = 1 ]; then
      ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
    fi
    ip -n "$ns" link set lo up
  done
}
# netns_del NS...: deletes them (and every device in them, veth peers included), empty names
# skipped; never fails.
netns_del() {
  local ns
  for ns in "$@"; do
    [ -z "$ns" ] || ip netns del "$ns" 2>/dev/null || true
  done
}
# nsx CMD...: CMD in $NS. Not for `&`: a backgrounded function is a subshell, and $! its pid.
nsx() { ip netns exec "$NS" "$@"; }
# mac NS DEV: DEV's MAC address.
mac() { ip -n "$1" link show dev "$2" | awk '/link\/ether/ {print $2}'; }

# veth_pair [--static-neigh] SEND_NS SEND_DEV SEND_IP RECV_NS RECV_DEV RECV_IP: a veth pair
# across two namespaces, /24 addresses, up. TSO/GSO off on the sender and GRO on on the receiver:
# only then does veth poll its own NAPI (the receiver's). --static-neigh: permanent neighbours
# both ways, so that no ARP crosses the link.
veth_pair() {
  local static=0
  if [ "$1" = --static-neigh ]; then
    static=1
    shift
  fi
  local sns=$1 sdev=$2 sip=$3 rns=$4 rdev=$5 rip=$6
  ip link add "$sdev" netns "$sns" type veth peer name "$rdev" netns "$rns"
  ip -n "$sns" addr add "$sip/24" dev "$sdev"
  ip -n "$rns" addr add "$rip/24" dev "$rdev"
  ip netns exec "$sns" ethtool -K "$sdev" tso off gso off >/dev/null 2>&1 || true
  ip netns exec "$rns" ethtool -K "$rdev" gro on >/dev/null
  if [ "$static" = 1 ]; then
    ip -n "$sns" neigh replace "$rip" lladdr "$(mac "$rns" "$rdev")" dev "$sdev" nud permanent
    ip -n "$rns" neigh replace "$sip" lladdr "$(mac "$sns" "$sdev")" dev "$rdev" nud permanent
  fi
  ip -n "$sns" link set "$sdev" up
  ip -n "$rns" link set "$rdev" up
}
# udp_burst NS IP COUNT: COUNT one-byte UDP datagrams from NS to IP port 9, as fast as bash goes
# (one `echo` each); refused sends are not counted or reported.
udp_burst() {
  ip netns exec "$1" bash -c "for i in \$(seq $3); do echo x >/dev/udp/$2/9; done" 2>/dev/null
}

# http_code URL: the status code from inside $NS, 000 when nothing answers.
http_code() { nsx curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1"; }
# ready: the daemon on 127.0.0.1:$PORT in $NS answers /readyz with 200.
ready() { [ "$(http_code "http://127.0.0.1:$PORT/readyz")" = 200 ]; }
# state_field JQ_FILTER [PORT]: jq -r of the daemon's /api/v1/state.
state_field() { nsx curl -s --max-time 2 "http://127.0.0.1:${2:-$PORT}/api/v1/state" | jq -r "$1"; }

# start_daemon: `dimctl run --config $WORK/dimctl.yaml` in $NS, in the background, output to
# $WORK/daemon.log; sets DAEMON_PID.
start_daemon() {
  ip netns exec "$NS" "$DIMCTL" run --config "$WORK/dimctl.yaml" >"$WORK/daemon.log" 2>&1 &
  DAEMON_PID=$!
}
# stop_process CHECK WHAT SIGNAL PID [POLLS]: signals PID (a background child of the script) and
# gives it POLLS polls of 0.1 s (default 100, ~10 s) to exit. One still running then fails CHECK
# ("WHAT ... still running"), with its threads' stacks, and is killed: a hang at exit shows as
# that, not as the whole script running into CTest's timeout. Returns its exit status (137 when
# it had to be killed).
stop_process() {
  local polls="${5:-100}"
  kill -"$3" "$4" 2>/dev/null || true
  if ! poll "$polls" not_running "$4"; then
    fail "$1" "$2 (pid $4) still running $((polls / 10)) s after SIG$3; its threads, then SIGKILL"
    show_stacks "$4"
    kill -KILL "$4" 2>/dev/null || true
  fi
  local rc=0
  wait "$4" 2>/dev/null || rc=$?
  return "$rc"
}
# stop_daemon SIGNAL: stop_process for the daemon (check daemon_exit); returns its exit status and
# clears DAEMON_PID.
stop_daemon() {
  local rc=0
  stop_process daemon_exit "dimctl run" "$1" "$DAEMON_PID" || rc=$?
  DAEMON_PID=""
  return "$rc"
}
# show_stacks PID: each thread's name and kernel wait channel, and gdb's backtraces when gdb is
# there, indented as "    stack: ".
show_stacks() {
  local t
  for t in /proc/"$1"/task/*; do
    echo "    stack: thread $(basename "$t") $(cat "$t/comm" 2>/dev/null) waits in $(cat "$t/wchan" 2>/dev/null)"
  done
  if command -v gdb >/dev/null; then
    timeout 30 gdb -p "$1" -batch -ex 'thread apply all bt' 2>/dev/null |
      grep -E '^(Thread |#[0-9])' | head -n 120 | sed 's/^/    stack: /'
  fi
}
