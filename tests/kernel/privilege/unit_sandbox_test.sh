#!/usr/bin/env bash
# The hardened systemd unit (deploy/systemd/dimctl.service) still lets dimctl work. systemd is
# not PID 1 on every test host (containers, CI runners), so `systemd-run -p ...` cannot apply the
# unit there; this test applies what it can and traces the rest:
#   applied: the capability set (CapabilityBoundingSet= via setpriv, no inheritable or ambient
#            extras), the state directory as the one writable place (ReadWritePaths=)
#   traced:  `dimctl check-config` (ExecStartPre), `dimctl run` in enforce (a tap with ethtool, a
#            veth NAPI with napi-set where the kernel has it; its HTTP endpoints scraped) through a
#            SIGHUP reload and SIGTERM,
#            then a SIGKILLed run and `dimctl restore` (ExecStopPost), all under strace -f; every
#            system call must be one SystemCallFilter= allows (its groups expanded by
#            `systemd-analyze syscall-filter`), every socket a RestrictAddressFamilies= family,
#            no writable+executable mapping (MemoryDenyWriteExecute=), no namespace created or
#            entered (RestrictNamespaces=), no device node but PrivateDevices='s opened, no file
#            opened for writing outside the state directory (ProtectSystem=strict)
# The seccomp filter itself is not installed here: a call the list misses is found by the trace,
# not by EPERM. Checks: unit_sandbox_works (devices written and restored under the set),
# syscalls_allowed, address_families, no_wx_mappings, no_namespaces, devices, writes_confined.
# Skips (77) without root, setpriv, strace, systemd-analyze or tun.
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: unit_sandbox_test.sh path/to/dimctl}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
UNIT=${UNIT:-$ROOT/deploy/systemd/dimctl.service}

skip_unless_root "the sandbox test needs root (netns, tun, BPF)"
for tool in setpriv strace systemd-analyze ip ethtool jq curl; do
  command -v "$tool" >/dev/null || skip "$tool not installed"
done
[ -c /dev/net/tun ] || skip "no /dev/net/tun"

kernel_test_start usb DAEMON_PID TRAFFIC_PID
PORT=$((20000 + ($$ + 8111) % 20000))
DAEMON_PID="" TRAFFIC_PID=""
FAIL_LOG=$WORK/daemon.log FAIL_LOG_LINES=10

# --- The unit's settings.
unit_value() { sed -nE "s/^$1=(.*)/\1/p" "$UNIT"; }
CAPS=$(unit_value CapabilityBoundingSet | tr ' ' '\n' | grep . | sed 's/^CAP_//' | tr '[:upper:]' '[:lower:]' | paste -sd, -)
FAMILIES=$(unit_value RestrictAddressFamilies)
# expand TOKEN: the system calls of a name or @group, nested groups expanded.
expand() {
  case "$1" in
    @*)
      systemd-analyze syscall-filter --no-pager "$1" 2>/dev/null | sed -E 's/^ +//' |
        grep -vE '^(#|$|@'"${1#@}"'$)' | while read -r t; do expand "$t"; done
      ;;
    *) echo "$1" ;;
  esac
}
: >"$WORK/allowed"
while read -r line; do
  if [[ "$line" == "~"* ]]; then
    for t in ${line#\~}; do expand "$t"; done | sort -u >"$WORK/deny"
    grep -vxF -f "$WORK/deny" "$WORK/allowed" >"$WORK/allowed.new"
    mv "$WORK/allowed.new" "$WORK/allowed"
  else
    for t in $line; do expand "$t"; done >>"$WORK/allowed"
    sort -u -o "$WORK/allowed" "$WORK/allowed"
  fi
done < <(unit_value SystemCallFilter)
if [ ! -s "$WORK/allowed" ] || [ -z "$CAPS" ]; then
  fail unit_parse "no SystemCallFilter= or CapabilityBoundingSet= read from $UNIT"
  print_summary
  exit 1
fi
echo "unit: capabilities $CAPS; $(wc -l <"$WORK/allowed") system calls allowed; families $FAMILIES"

# --- Devices: a tap (ethtool) and a veth receiver (napi-set where the kernel has it).
netns_add "$NS" "$NS2"
nsx ip tuntap add dev us-tap0 mode tap
nsx ip link set us-tap0 up
nsx ethtool -C us-tap0 rx-frames 16
veth_pair "$NS2" us-s0 10.221.1.1 "$NS" us-r0 10.221.1.2
METHOD=ethtool
nsx "$DIMCTL" napi show --json us-r0 2>/dev/null | jq -e 'length > 0' >/dev/null && METHOD=napi
ip netns exec "$NS2" bash -c 'while :; do for i in 1 2 3 4 5; do echo x >/dev/udp/10.221.1.2/9; done 2>/dev/null; sleep 0.02; done' &
# shellcheck disable=SC2034 # read by the cleanup trap (kernel_test_start's PID_VARs)
TRAFFIC_PID=$!
STATE_DIR=$WORK/run-dimctl  # stands for /run/dimctl (RuntimeDirectory=, ReadWritePaths=)
write_config() {
  cat >"$WORK/dimctl.yaml" <<CFG
mode: shadow
interval: 20ms
state_file: $STATE_DIR/state.json
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 100ms
collectors:
  rdma: false
devices:
  - name: tap
    match:
      interface: ["us-tap0"]
    mode: enforce
    algorithm: static:$1
    rate_limit: 10ms
  - name: veth
    match:
      interface: ["us-r0"]
    mode: enforce
    method: $METHOD
    algorithm: static:$1
    rate_limit: 10ms
CFG
}
rx_frames() { nsx ethtool -c us-tap0 | awk '/^rx-frames:/ {print $2}'; }
napi_cfg() { nsx "$DIMCTL" napi show --json us-r0 2>/dev/null | jq -r '.[0] | "\(.defer_hard_irqs) \(.gro_flush_timeout_ns)"'; }
frames_are() { [ "$(rx_frames)" = "$1" ]; }
napi_is() { [ "$(napi_cfg)" = "$1" ]; }
# dimctl itself: strace's child (strace passes no signal on).
dimctl_pid() { pgrep -P "$DAEMON_PID" | head -n 1; }
# "${SANDBOXED[@]}" TRACE CMD...: CMD in $NS with exactly the unit's capabilities, under strace
# -f (an array, not a function: a backgrounded function would be a subshell, and $! its pid).
SANDBOXED=(ip netns exec "$NS" setpriv --inh-caps=-all --ambient-caps=-all
  --bounding-set="-all,+${CAPS//,/,+}" -- strace -f -qq -s 256 -o)

write_config 3
ok=1 why=""
"${SANDBOXED[@]}" "$WORK/check.trace" "$DIMCTL" check-config "$WORK/dimctl.yaml" >/dev/null 2>&1 || { ok=0; why="check-config failed"; }
"${SANDBOXED[@]}" "$WORK/run.trace" "$DIMCTL" run --config "$WORK/dimctl.yaml" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
wait_for 20 frames_are 64 || { ok=0; why="$why; tap not written ($(rx_frames))"; }
if [ "$METHOD" = napi ]; then
  wait_for 20 napi_is "1 128000" || { ok=0; why="$why; NAPI not written ($(napi_cfg))"; }
fi
# The HTTP side too: a scrape, the state API, the health paths.
for path in metrics api/v1/state healthz readyz; do
  nsx curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$PORT/$path" || { ok=0; why="$why; GET /$path failed"; }
done
write_config 1
kill -HUP "$(dimctl_pid)"
wait_for 10 grep -q 'reload: .* loaded' "$WORK/daemon.log" || { ok=0; why="$why; no reload"; }
sleep 0.5
# dimctl is strace's child: signalled itself, and strace exits with its status.
kill -TERM "$(dimctl_pid)" 2>/dev/null
rc=0
if poll 150 not_running "$DAEMON_PID"; then
  wait "$DAEMON_PID" 2>/dev/null || rc=$?
else
  rc=timeout
  kill -KILL $(pgrep -P "$DAEMON_PID") 2>/dev/null
  kill -KILL "$DAEMON_PID"
fi
DAEMON_PID=""
[ "$rc" = 0 ] || { ok=0; why="$why; exit $rc after SIGTERM"; }
[ "$(rx_frames)" = 16 ] || { ok=0; why="$why; tap not restored ($(rx_frames))"; }
# A crash, then ExecStopPost's restore.
write_config 3
"${SANDBOXED[@]}" "$WORK/run2.trace" "$DIMCTL" run --config "$WORK/dimctl.yaml" >"$WORK/daemon2.log" 2>&1 &
DAEMON_PID=$!
wait_for 20 frames_are 64 || { ok=0; why="$why; second run did not write"; }
kill -KILL "$(dimctl_pid)" 2>/dev/null  # the crash
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=""
"${SANDBOXED[@]}" "$WORK/restore.trace" "$DIMCTL" restore --state-file "$STATE_DIR/state.json" >"$WORK/restore.log" 2>&1 ||
  { ok=0; why="$why; restore failed: $(head -n 2 "$WORK/restore.log")"; }
[ "$(rx_frames)" = 16 ] || { ok=0; why="$why; not restored after the crash ($(rx_frames))"; }
if [ "$METHOD" = napi ] && [ "$(napi_cfg)" != "0 0" ]; then ok=0; why="$why; NAPI not restored ($(napi_cfg))"; fi
if [ "$ok" = 1 ]; then pass "unit_sandbox_works (capabilities $CAPS; tap ethtool, veth $METHOD)"; else fail unit_sandbox_works "${why#; }"; fi

cat "$WORK"/check.trace "$WORK"/run.trace "$WORK"/run2.trace "$WORK"/restore.trace >"$WORK/all.trace"
# System calls: "PID name(" starts a call (complete or unfinished).
sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' "$WORK/all.trace" | sort -u >"$WORK/used"
# execve of the traced command itself happens before systemd's filter would apply to it: no.
outside=$(grep -vxF -f "$WORK/allowed" "$WORK/used" | xargs)
if [ -z "$outside" ]; then
  pass "syscalls_allowed ($(wc -l <"$WORK/used") distinct calls, all in SystemCallFilter=)"
else
  fail syscalls_allowed "calls SystemCallFilter= would refuse: $outside"
fi
fams=$(sed -nE 's/^[0-9]+ +socket\((AF_[A-Z0-9]+),.*/\1/p' "$WORK/all.trace" | sort -u | xargs)
bad_fams=""
for f in $fams; do grep -qw "$f" <<<"$FAMILIES" || bad_fams="$bad_fams $f"; done
if [ -z "$bad_fams" ]; then pass "address_families ($fams)"; else fail address_families "sockets outside RestrictAddressFamilies=:$bad_fams"; fi
wx=$(grep -E '^[0-9]+ +(mmap|mprotect|pkey_mprotect)\(.*PROT_WRITE.*PROT_EXEC|^[0-9]+ +(mmap|mprotect|pkey_mprotect)\(.*PROT_EXEC.*PROT_WRITE' "$WORK/all.trace" | head -n 2)
if [ -z "$wx" ]; then pass no_wx_mappings; else fail no_wx_mappings "$wx"; fi
ns=$(grep -E '^[0-9]+ +(unshare|setns)\(|^[0-9]+ +clone3?\(.*CLONE_NEW' "$WORK/all.trace" | head -n 2)
if [ -z "$ns" ]; then pass no_namespaces; else fail no_namespaces "$ns"; fi
devs=$(sed -nE 's/^[0-9]+ +open(at)?\((AT_FDCWD, )?"(\/dev\/[^"]*)".*/\3/p' "$WORK/all.trace" | sort -u |
  grep -vxE '/dev/(null|zero|full|random|urandom|tty|ptmx|pts/.*|shm/.*|log)' | xargs)
if [ -z "$devs" ]; then pass "devices (none beyond PrivateDevices=)"; else fail devices "device nodes opened: $devs"; fi
# Files opened for writing (or created, renamed, removed) outside the state directory.
writes=$(grep -E '^[0-9]+ +(open(at)?\(.*(O_WRONLY|O_RDWR|O_CREAT)|mkdir(at)?\(|rename(at2?)?\(|unlink(at)?\()' "$WORK/all.trace" |
  grep -oE '"[^"]*"' | tr -d '"' | grep -v "^$STATE_DIR" | grep -vxE '/dev/null|/dev/pts/.*' | sort -u | head -n 5 | xargs)
if [ -z "$writes" ]; then pass "writes_confined (only $STATE_DIR)"; else fail writes_confined "written outside the state directory: $writes"; fi

print_summary
