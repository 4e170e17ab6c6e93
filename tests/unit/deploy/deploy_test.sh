#!/usr/bin/env bash
# Deployment artefacts stay valid: every manifest passes yamllint, the config embedded in the
# ConfigMap and every shipped config pass `dimctl check-config`, and the systemd unit passes
# `systemd-analyze verify` where available.
set -uo pipefail
DIMCTL=${1:?usage: deploy_test.sh path/to/dimctl}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if ! command -v yamllint >/dev/null; then
  fail yamllint "yamllint not installed (scripts/deps.sh installs it)"
else
  out=$(yamllint -d '{extends: default, rules: {line-length: {max: 110}, document-start: disable, comments: {min-spaces-from-content: 1}}}' \
        "$ROOT"/deploy/kubernetes/*.yaml "$ROOT"/deploy/config/*.yaml 2>&1)
  if [ $? -eq 0 ]; then pass yamllint; else fail yamllint "$out"; fi
fi

# The ConfigMap's dimctl.yaml block, de-indented.
awk '/^  dimctl.yaml: \|/{on=1; next} on && /^    /{sub(/^    /, ""); print; next} on && !/^\s*$/{on=0}' \
  "$ROOT/deploy/kubernetes/configmap.yaml" >"$tmp/cm.yaml"
if [ ! -s "$tmp/cm.yaml" ]; then
  fail configmap_config "no dimctl.yaml found in the ConfigMap"
elif out=$("$DIMCTL" check-config "$tmp/cm.yaml" 2>&1); then
  pass configmap_config
else
  fail configmap_config "$out"
fi

for f in "$ROOT"/deploy/config/*.yaml "$ROOT"/deploy/config/examples/*.yaml; do
  [ -f "$f" ] || continue
  if out=$("$DIMCTL" check-config "$f" 2>&1); then pass "config $(basename "$f")"; else fail "config $(basename "$f")" "$out"; fi
done

# A broken config must be refused (exit 2): proves the loop above can fail.
printf 'mode: turbo\n' >"$tmp/bad.yaml"
"$DIMCTL" check-config "$tmp/bad.yaml" >/dev/null 2>&1; rc=$?
if [ "$rc" -eq 2 ]; then pass bad_config_refused; else fail bad_config_refused "exit $rc, expected 2"; fi

if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify "$ROOT/deploy/systemd/dimctl.service" 2>&1 | grep -v 'Command /usr/local/bin/dimctl is not executable' | grep -iE 'error|unknown|invalid')
  if [ -z "$out" ]; then pass systemd_unit; else fail systemd_unit "$out"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
