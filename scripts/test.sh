#!/usr/bin/env bash
# Runs every test tier and prints CTest's summary per tier plus one total line. Unit tests run
# in parallel; kernel, e2e and lab tests touch shared kernel state (namespaces, tracefs,
# bpf_stats, qemu) and run one at a time.
set -uo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then
  mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
  mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
fi

rc=0 passed=0 failed=0
log=$(mktemp)
for label in unit kernel e2e lab; do
  echo "== $label tests"
  jobs=1
  [ "$label" = unit ] && jobs=$(nproc)
  ctest --test-dir "$BUILD" -L "^${label}\$" --output-on-failure -j "$jobs" --no-tests=ignore 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  # "100% tests passed, 0 tests failed out of 42"
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
    t=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
    passed=$((passed + t - f)) failed=$((failed + f))
  fi
done
rm -f "$log"
echo "== total"
echo "tests: $passed passed, $failed failed"
exit $rc
