#!/usr/bin/env bash
# The systemd unit's sandbox, judged by systemd's own scorer, and the capability set the unit and
# the DaemonSet grant:
#   exposure            `systemd-analyze security --offline=true` rates deploy/systemd/dimctl.service
#                       at most MAX_EXPOSURE (default 3.0)
#   exposure_can_fail   a copy without the sandbox (capabilities and NoNewPrivileges only) rates
#                       above the bound: the check above can fail
#   ambient_is_bounding AmbientCapabilities= equals CapabilityBoundingSet=
#   daemonset_same_caps the DaemonSet's capabilities.add are the unit's set (CAP_ dropped), it
#                       drops ALL, and the set holds no CAP_SYS_ADMIN
# Without systemd-analyze the exposure checks are skipped with the reason, and fail when CI=true.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
UNIT=${UNIT:-$ROOT/deploy/systemd/dimctl.service}
DS=$ROOT/deploy/kubernetes/daemonset.yaml
MAX_EXPOSURE=${MAX_EXPOSURE:-3.0}
passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# exposure UNIT_FILE: the overall level systemd-analyze prints ("→ Overall exposure level for
# x.service: 2.2 OK"), empty when it printed none. The file is copied under the unit's name: the
# scorer reads the name's suffix.
exposure() {
  local d
  d=$(mktemp -d "$tmp/u.XXXXXX")
  cp "$1" "$d/dimctl.service"
  systemd-analyze security --offline=true --no-pager "$d/dimctl.service" 2>"$d/err" |
    sed -nE 's/.*Overall exposure level for [^:]+: ([0-9]+\.[0-9]+).*/\1/p'
}
# above A B: A > B (decimals).
above() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

if ! command -v systemd-analyze >/dev/null; then
  if [ "${CI:-}" = true ]; then
    fail exposure "systemd-analyze not installed (CI=true: the unit must be scored)"
  else
    echo "SKIP exposure: systemd-analyze not installed (Debian: systemd)"
    skipped=1
  fi
else
  level=$(exposure "$UNIT")
  if [ -z "$level" ]; then
    fail exposure "systemd-analyze printed no exposure level: $(systemd-analyze security --offline=true --no-pager "$UNIT" 2>&1 | tail -n 5)"
  elif above "$level" "$MAX_EXPOSURE"; then
    fail exposure "$level is above $MAX_EXPOSURE; the settings that cost most:
$(systemd-analyze security --offline=true --no-pager "$UNIT" 2>/dev/null | grep '✗' | sort -t' ' -k1 | tail -n 12)"
  else
    pass "exposure ($level <= $MAX_EXPOSURE)"
  fi
  # The same unit stripped of its sandbox: only [Unit], ExecStart and the capability lines.
  grep -E '^(\[|Description|ExecStart=|CapabilityBoundingSet|AmbientCapabilities|NoNewPrivileges|RuntimeDirectory=)' \
    "$UNIT" >"$tmp/bare.service"
  bare=$(exposure "$tmp/bare.service")
  if [ -n "$bare" ] && above "$bare" "$MAX_EXPOSURE"; then
    pass "exposure_can_fail (unsandboxed copy: $bare)"
  else
    fail exposure_can_fail "the unsandboxed copy rated '$bare', not above $MAX_EXPOSURE"
  fi
fi

# set_of KEY: the unit's capability list for KEY, sorted, one per line.
set_of() { sed -nE "s/^$1=(.*)/\1/p" "$UNIT" | tr ' ' '\n' | grep . | sort; }
bounding=$(set_of CapabilityBoundingSet)
words() { tr '\n' ' ' <<<"$1" | sed 's/ *$//'; }
if [ -n "$bounding" ] && [ "$bounding" = "$(set_of AmbientCapabilities)" ]; then
  pass ambient_is_bounding
else
  fail ambient_is_bounding "CapabilityBoundingSet [$(words "$bounding")] vs AmbientCapabilities [$(set_of AmbientCapabilities | xargs)]"
fi

ds_add=$(sed -nE 's/^ *add: \[(.*)\].*/\1/p' "$DS" | tr -d '" ' | tr ',' '\n' | grep . | sed 's/^/CAP_/' | sort)
ds_drop=$(sed -nE 's/^ *drop: \[(.*)\].*/\1/p' "$DS" | tr -d '" ')
if [ "$ds_add" != "$bounding" ]; then
  fail daemonset_same_caps "DaemonSet adds [$(words "$ds_add")], the unit grants [$(words "$bounding")]"
elif [ "$ds_drop" != ALL ]; then
  fail daemonset_same_caps "DaemonSet drops [$ds_drop], expected ALL"
elif grep -q CAP_SYS_ADMIN <<<"$bounding"; then
  fail daemonset_same_caps "CAP_SYS_ADMIN granted: Linux >= 5.8 does not need it (docs/SECURITY.md)"
else
  pass "daemonset_same_caps ($(words "$bounding"))"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
exit 0
