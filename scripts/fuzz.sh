#!/usr/bin/env bash
# scripts/fuzz.sh <build-dir> <seconds-per-harness>
#
# Runs every libFuzzer harness of a DIMCTL_FUZZ=ON tree (listed in <build-dir>/fuzzers.tsv) for
# the given time against a COPY of its checked-in seed corpus (tests/fuzz/corpus/<name>, never
# written), with its dictionary and -max_len. Two harnesses run at a time (FUZZ_JOBS overrides).
# One line per harness, then `fuzz: N passed, N failed`; exit 1 on any crash, leak, timeout,
# UB or sanitizer report. A failing input is kept in <build-dir>/fuzz-artifacts/<name>/ and the
# line says how to reproduce it; the full log is in <build-dir>/fuzz-work/<name>/log.
set -euo pipefail

if [[ $# -ne 2 || ! $2 =~ ^[0-9]+$ || $2 -lt 1 ]]; then
  echo "usage: $0 <build-dir> <seconds-per-harness>" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
manifest=$build/fuzzers.tsv
if [[ ! -s $manifest ]]; then
  echo "fuzz: no $manifest: configure $build with CC=clang CXX=clang++ -DDIMCTL_FUZZ=ON" \
       "and build the 'fuzz' target (or run 'make fuzz')" >&2
  exit 2
fi
jobs=${FUZZ_JOBS:-2}
work=$build/fuzz-work
artifacts=$build/fuzz-artifacts

# UB stops the run even where it was compiled recoverable (a DIMCTL_SANITIZE tree).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# run_one <name> <binary> <max_len> <fuzz source dir>: writes $work/<name>/result.
run_one() {
  local name=$1 bin=$2 max_len=$3 src=$4
  local dir=$work/$name art=$artifacts/$name/
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$art"
  if [[ -d $src/corpus/$name ]]; then
    cp -R "$src/corpus/$name/." "$dir/corpus/"
  fi
  local dict=()
  [[ -f $src/dict/$name.dict ]] && dict=(-dict="$src/dict/$name.dict")
  local rc=0
  # -timeout: one input running that long is a hang. The outer timeout only guards the runner.
  timeout --kill-after=30 $((seconds + 180)) \
    "$bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=25 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$art" "${dict[@]}" "$dir/corpus" \
      >"$dir/log" 2>&1 || rc=$?

  local runs cov ft corp
  # (A log without these lines, e.g. a harness dying at start-up, leaves them "?".)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n1 || true)
  cov=$(grep -oE 'cov: [0-9]+' "$dir/log" | tail -n1 | cut -d' ' -f2 || true)
  ft=$(grep -oE 'ft: [0-9]+' "$dir/log" | tail -n1 | cut -d' ' -f2 || true)
  corp=$(grep -oE 'corp: [0-9]+' "$dir/log" | tail -n1 | cut -d' ' -f2 || true)
  local line
  line=$(printf 'fuzz: %-8s %10s runs  cov %5s  ft %6s  corpus %5s' "$name" "${runs:-?}" \
         "${cov:-?}" "${ft:-?}" "${corp:-?}")
  local report
  report=$(grep -m1 -E '^SUMMARY: |ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' \
           "$dir/log" || true)
  if [[ $rc -eq 0 && -z $report ]]; then
    echo "$line  PASS" >"$dir/result"
  else
    local crash
    crash=$(grep -oE "Test unit written to .*" "$dir/log" | tail -n1 | sed 's/Test unit written to //' || true)
    [[ -z $report ]] && report="exit code $rc"
    {
      echo "$line  FAIL: $report"
      [[ -n $crash ]] && echo "fuzz:   reproduce: $bin $crash"
      echo "fuzz:   log: $dir/log"
    } >"$dir/result"
  fi
}

mapfile -t lines <"$manifest"
echo "fuzz: ${#lines[@]} harnesses x ${seconds} s, $jobs at a time ($build)"
names=()
running=0
for entry in "${lines[@]}"; do
  IFS=$'\t' read -r name bin max_len src <<<"$entry"
  [[ -z $name ]] && continue
  if [[ ! -x $bin ]]; then
    echo "fuzz: $bin not built (cmake --build $build --target fuzz)" >&2
    exit 2
  fi
  names+=("$name")
  mkdir -p "$work/$name" && rm -f "$work/$name/result"
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$name" "$bin" "$max_len" "$src" &
  running=$((running + 1))
done
wait || true

passed=0
failed=0
for name in "${names[@]}"; do
  result=$work/$name/result
  if [[ ! -s $result ]]; then
    echo "fuzz: $name  FAIL: no result (runner died; see $work/$name/log)"
    failed=$((failed + 1))
    continue
  fi
  cat "$result"
  if head -n1 "$result" | grep -q ' PASS$'; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
