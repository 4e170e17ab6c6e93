#!/usr/bin/env bash
# Kernel tests of `dimctl napi show` and of `dimctl restore` with NAPI records, as root, on a
# veth pair across two private network namespaces (never eth0); the receiver dnapi-r has GRO on,
# so it has a NAPI. Skips (77) when not root or when the kernel has no napi-set (< 6.13).
#   show_json              `napi show dnapi-r --json`: one NAPI of dnapi-r, no IRQ, all three
#                          values reported
#   show_unknown_device    `napi show nosuch` exits 2 naming the device
#   restore_writes_napi    a state file recording defer 3 / gro-flush 50 us for that NAPI:
#                          `dimctl restore` says "restored", `napi show` reads them back, the
#                          file is removed
#   restore_gone_napi      a record for a NAPI id that no longer exists: "gone", exit 0, dropped
# Prints one PASS/FAIL line per case and "N passed, N failed".
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: napi_cli_test.sh path/to/dimctl}")

skip_unless_root "napi CLI kernel tests need root (netns, napi-set)"

NS=dnapi-cli-r-$$
NS2=dnapi-cli-s-$$
WORK=$(mktemp -d /tmp/dnapi-cli-test.XXXXXX)
passed=0 failed=0

cleanup() {
  netns_del "$NS" "$NS2"
  rm -rf "$WORK"
}
trap cleanup EXIT

netns_add --no-ipv6 "$NS" "$NS2"
veth_pair "$NS2" dnapi-s 10.77.24.1 "$NS" dnapi-r 10.77.24.2
udp_burst "$NS2" 10.77.24.2 8

if ! nsx "$DIMCTL" napi show dnapi-r --json >"$WORK/show.json" 2>"$WORK/show.err"; then
  if grep -q "needs Linux >= 6.13" "$WORK/show.err"; then
    echo "SKIP: $(cat "$WORK/show.err")"
    exit 77
  fi
fi

if [ "$(jq -r 'length' "$WORK/show.json")" = 1 ] &&
  [ "$(jq -r '.[0].device' "$WORK/show.json")" = dnapi-r ] &&
  [ "$(jq -r '.[0].irq' "$WORK/show.json")" = null ] &&
  [ "$(jq -r '[.[0].defer_hard_irqs, .[0].gro_flush_timeout_ns, .[0].irq_suspend_timeout_ns]
              | map(type == "number") | all' "$WORK/show.json")" = true ]; then
  pass show_json
else
  fail show_json "$(cat "$WORK/show.json" "$WORK/show.err")"
fi
ID=$(jq -r '.[0].napi_id' "$WORK/show.json")

nsx "$DIMCTL" napi show nosuch >/dev/null 2>"$WORK/err"
rc=$?
if [ "$rc" = 2 ] && grep -q 'no network device "nosuch"' "$WORK/err"; then
  pass show_unknown_device
else
  fail show_unknown_device "exit $rc: $(cat "$WORK/err")"
fi

printf '{"version": 1, "napi": {"dnapi-r": {"%s": {"defer_hard_irqs": 3, "gro_flush_timeout_ns": 50000}}}}\n' \
  "$ID" >"$WORK/state.json"
out=$(nsx "$DIMCTL" restore --state-file "$WORK/state.json" 2>&1)
rc=$?
back=$(nsx "$DIMCTL" napi show dnapi-r --json | jq -r '.[0] | "\(.defer_hard_irqs) \(.gro_flush_timeout_ns)"')
if [ "$rc" = 0 ] && grep -q "^restored dnapi-r napi $ID: defer_hard_irqs=3 gro_flush_timeout_ns=50000" <<<"$out" &&
  [ "$back" = "3 50000" ] && [ ! -e "$WORK/state.json" ]; then
  pass restore_writes_napi
else
  fail restore_writes_napi "exit $rc, reads '$back': $out"
fi

printf '{"version": 1, "napi": {"dnapi-r": {"4000000000": {"defer_hard_irqs": 1}}}}\n' >"$WORK/state.json"
out=$(nsx "$DIMCTL" restore --state-file "$WORK/state.json" 2>&1)
rc=$?
if [ "$rc" = 0 ] && grep -q "^gone     dnapi-r napi 4000000000: no longer exists" <<<"$out" &&
  [ ! -e "$WORK/state.json" ]; then
  pass restore_gone_napi
else
  fail restore_gone_napi "exit $rc: $out"
fi

print_summary
