#!/usr/bin/env bash
# Runs every test tier and prints CTest's summary per tier plus one total line.
#
#   scripts/test.sh [BUILD] [TIER...]     TIER: unit kernel e2e lab release asan fuzz (default: all)
#
# unit/kernel/e2e/lab run the CTest label of that name in BUILD (configured and built by the
# Makefile). The other tiers configure and build their own trees next to it:
#   release  nothing when BUILD is itself a Release -Werror tree (the Makefile's default); else
#            BUILD-release: CMAKE_BUILD_TYPE=Release (-O3) with -Werror, what a packager builds
#            (tests off, benchmarks on): GCC warns differently at -O3; counted as one test.
#   asan     BUILD-asan: clang, -fsanitize=address,undefined, no benchmarks; runs the unit and
#            kernel labels with halting sanitizer options; any report from any process (daemons
#            and children included, through log_path) fails the tier.
#   fuzz     every libFuzzer harness in BUILD-asan for 60 s (scripts/fuzz.sh, when it exists).
# When kernel, e2e or lab tiers run too, the two extra trees build in the background at nice 19
# from the start, in the CPU time those tiers leave idle (see "background" below).
# Unit tests run in parallel; kernel, e2e and lab tests touch shared kernel state (namespaces,
# tracefs, bpf_stats, qemu) and run one at a time. CMAKE_FLAGS (from the Makefile) is passed to
# every extra tree's configure, e.g. compiler launchers; the tier's own settings win.
set -uo pipefail
BUILD=${1:-build}
shift || true
TIERS=("$@")
[ "${#TIERS[@]}" -eq 0 ] && TIERS=(unit kernel e2e lab release asan fuzz)
cd "$(dirname "$0")/.." || exit 2
JOBS=${JOBS:-$(nproc)}
read -r -a EXTRA_FLAGS <<<"${CMAKE_FLAGS:-}"
ASAN_BUILD="$BUILD-asan"
RELEASE_BUILD="$BUILD-release"

if [ "$(id -u)" -eq 0 ]; then
  mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
  mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
fi

rc=0 passed=0 failed=0
failures=() # "tier: test name" of every failed CTest test and check, repeated under the total
log=$(mktemp)
fail_out=$(mktemp -d /tmp/dimctl-failed.XXXXXX)
san_logs=$(mktemp -d /tmp/dimctl-sanitizer.XXXXXX)
trap 'rm -rf "$log" "$san_logs" "$fail_out"' EXIT

# count_ctest: adds CTest's "N% tests passed, F tests failed out of T" line in $log to the totals.
count_ctest() {
  local line f t
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  [ -n "$line" ] || return 0
  f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  t=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  passed=$((passed + t - f)) failed=$((failed + f))
}

# keep_failed TIER: remembers each test CTest lists as failed in $log and saves the tail of its
# output, so the total at the end names it and shows why (CI shows only the last lines of a log).
keep_failed() {
  local name status
  while IFS=$'\t' read -r name status; do
    failures+=("$1: $name ($status)")
    # The block --output-on-failure prints after the test's result line, up to the next line that
    # starts or ends a test (or CTest's summary), without GoogleTest's banner lines: what is left
    # ends with the failed assertion, or the script's FAIL lines and log tail.
    awk -v t="$name" '
      /^ *Start +[0-9]+:/ || / Test +#[0-9]+: / || /tests passed, [0-9]+ tests? failed/ { on = 0 }
      / Test +#[0-9]+: / && index($0, ": " t " ") { on = 1; next }
      on && !/^\[[ =A-Z-]+\]/ && !/^Note: Google Test filter/ && NF' "$log" |
      tail -n 15 >"$fail_out/${#failures[@]}"
  done < <(sed -n '/The following tests FAILED:/,/^Errors while running/p' "$log" |
    sed -nE 's/^[[:space:]]*[0-9]+ - (.*) \(([^()]*)\)$/\1\t\2/p')
  return 0
}

# one_check NAME STATUS: a step that is not a CTest test (a build, a report scan) counts as one.
one_check() {
  if [ "$2" -eq 0 ]; then
    passed=$((passed + 1))
  else
    echo "FAILED: $1"
    failures+=("check: $1")
    failed=$((failed + 1)) rc=1
  fi
}

# run_label DIR LABEL [CTEST_ARGS...]: one CTest label, serial except for unit tests.
run_label() {
  local dir=$1 label=$2 jobs=1
  shift 2
  [ "$label" = unit ] && jobs=$JOBS
  ctest --test-dir "$dir" -L "^${label}\$" --output-on-failure -j "$jobs" --no-tests=ignore "$@" 2>&1 |
    tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  count_ctest
  keep_failed "$dir $label"
}

# tier_kernel: the kernel label. The churn soak (the longest kernel test) runs once per make test:
# in the asan tier when that runs too (one minute there, two here), where the sanitizers also
# watch its churn for leaks and undefined behaviour; its kernel-side checks are the same in either
# tree.
tier_kernel() {
  if want asan; then
    echo "soak.kernel: runs once, in the asan tier ($ASAN_BUILD), not here"
    run_label "$BUILD" kernel -E '^soak\.kernel$'
  else
    run_label "$BUILD" kernel
  fi
}

# configure_and_build LOG DIR CMAKE_ARGS...: configure and build one tree, output in LOG; prints
# the configure summary line and the time on success, LOG's tail on failure.
configure_and_build() {
  local out=$1 dir=$2
  shift 2
  local start=$SECONDS
  if cmake -S . -B "$dir" -G Ninja "${EXTRA_FLAGS[@]}" "$@" >"$out" 2>&1 &&
    cmake --build "$dir" -j "$JOBS" >>"$out" 2>&1; then
    grep -E '^-- dimctl ' "$out" | tail -n 1
    echo "built $dir in $((SECONDS - start)) s"
    return 0
  fi
  tail -n 60 "$out"
  return 1
}

# What a packager builds (tests off), at -O3 with -Werror, when BUILD is not itself a Release tree
# (e.g. a RelWithDebInfo tree configured by hand): its tests were held to -Werror there already.
build_release() {
  configure_and_build "$1" "$RELEASE_BUILD" -DCMAKE_BUILD_TYPE=Release -DDIMCTL_WERROR=ON \
    -DDIMCTL_BUILD_TESTS=OFF -DDIMCTL_BUILD_BENCH=ON
}

# release_is_build: BUILD itself is a Release -Werror tree (the Makefile's default): its build,
# which make test ran before any tier, is the check; no second tree.
release_is_build() {
  grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$BUILD/CMakeCache.txt" 2>/dev/null &&
    grep -qx 'DIMCTL_WERROR:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null
}

tier_release() {
  if release_is_build; then
    echo "$BUILD is a Release (-O3) -Werror tree: built above, every tier ran on it"
    return
  fi
  tree_ready release build_release
  one_check "Release build ($RELEASE_BUILD)" $?
}

# Sanitizer runtime options. halt_on_error: the first report ends the process (UBSan is also
# compiled with -fno-sanitize-recover=all); log_path: reports from processes whose output no test
# reads (the daemon under daemon_test.sh, CLI children) still land where this script looks.
# Leak suppressions, each justified in the file: tests/sanitizers/lsan.supp.
sanitizer_env() {
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:strict_string_checks=1:log_path=$san_logs/report"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$san_logs/report"
  export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
}

# The ASan/UBSan tree; also where the fuzz harnesses are built.
build_asan() {
  # clang: the fuzz harnesses (DIMCTL_FUZZ) need libFuzzer, and clang's UBSan checks more.
  # -O0 -gline-tables-only: symbolized stacks at half the compile time of -O1 (this tree is the
  # largest part of what make test adds to CI); the tests run as fast, they wait on the kernel
  # and on timers. ASAN_OPT=-O1 for faster fuzzing. Debug: assert() stays on.
  local opt="${ASAN_OPT:--O0} -gline-tables-only"
  configure_and_build "$1" "$ASAN_BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="$opt" -DCMAKE_CXX_FLAGS_DEBUG="$opt" \
    -DDIMCTL_SANITIZE=address,undefined -DDIMCTL_WERROR=ON -DDIMCTL_BUILD_BENCH=OFF -DDIMCTL_FUZZ=ON
}

tier_asan() {
  if ! tree_ready asan build_asan; then
    one_check "ASan/UBSan build ($ASAN_BUILD)" 1
    return
  fi
  sanitizer_env
  echo "== asan+ubsan unit tests"
  # Tests labelled tree_independent check the repository's files with outside tools (schemas,
  # promtool, yamllint) and run no code of the tree: the unit tier ran them, the sanitizers see
  # nothing.
  echo "tree_independent unit tests: ran in the unit tier ($BUILD), not here"
  run_label "$ASAN_BUILD" unit -LE '^tree_independent$'
  # The fuzzers (same tree) run at nice 19 beside the kernel tests, which mostly wait: they take
  # the idle CPU, the tests keep theirs. Their own sanitizer options: reports on stderr, where
  # scripts/fuzz.sh looks, not in this tier's log_path.
  if want fuzz && [ -f scripts/fuzz.sh ]; then
    env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS nice -n 19 \
      bash scripts/fuzz.sh "$ASAN_BUILD" 60 >"$bg_dir/fuzz.log" 2>&1 &
    fuzz_pid=$!
    echo "fuzzing in the background (nice 19, pid $fuzz_pid) during the kernel tests"
  fi
  echo "== asan+ubsan kernel tests"
  # The soak for one minute here, not two: under ASan its RSS is not judged (the quarantine grows
  # by design), and its churn, restores and kernel-side checks come round several times a minute;
  # `make soak` is the long run. SOAK_SECONDS from the caller wins.
  # The crash torture and the capability tests run in the kernel tier only: their SIGKILLs and
  # setpriv runs check the kernel's side and the start-up path, which the sanitizers add nothing
  # to, and at ASan's start-up cost they would double the tier's time (docs/TESTING.md).
  SOAK_SECONDS=${SOAK_SECONDS:-60} run_label "$ASAN_BUILD" kernel \
    -E '^(torture|privilege|unit_sandbox)\.kernel$'
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
  local reports
  reports=$(find "$san_logs" -type f | sort)
  if [ -n "$reports" ]; then
    echo "sanitizer reports:"
    for f in $reports; do
      echo "--- $f"
      cat "$f"
    done
  fi
  [ -z "$reports" ]
  one_check "zero sanitizer reports (unit, kernel under $ASAN_BUILD)" $?
}

tier_fuzz() {
  if [ ! -f scripts/fuzz.sh ]; then
    echo "scripts/fuzz.sh absent: no fuzzing"
    return
  fi
  if ! tree_ready asan build_asan; then
    one_check "fuzzing: ASan/UBSan build ($ASAN_BUILD)" 1
    return
  fi
  local frc
  if [ -n "$fuzz_pid" ]; then
    wait "$fuzz_pid"
    frc=$?
    fuzz_pid=""
    cat "$bg_dir/fuzz.log"
  else
    bash scripts/fuzz.sh "$ASAN_BUILD" 60
    frc=$?
  fi
  one_check "fuzzing ($ASAN_BUILD, 60 s per harness)" $frc
}

# The Release and ASan trees build in the background at nice 19 while the other tiers run: the
# kernel, e2e and lab tests mostly wait (on timers, traffic, qemu's guest), and at nice 19 the
# builds only take CPU time those tests leave idle. This keeps make test inside CI's budget.
# tree_ready NAME FUNC: waits for NAME's background build and prints its log; builds it in the
# foreground (FUNC) when no background build was started (e.g. `scripts/test.sh build asan`).
bg_dir=$(mktemp -d /tmp/dimctl-trees.XXXXXX)
trap '[ -n "$bg_pid" ] && kill "$bg_pid" 2>/dev/null; [ -n "$fuzz_pid" ] && kill "$fuzz_pid" 2>/dev/null; rm -rf "$log" "$san_logs" "$bg_dir"' EXIT
bg_pid="" fuzz_pid=""
want() { [[ " ${TIERS[*]} " == *" $1 "* ]]; }
if { want release || want asan || want fuzz; } && { want kernel || want e2e || want lab; }; then
  (
    renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
    # Everything in one job: two builds at once would not fit in 2 cores' idle time either.
    if want release && ! release_is_build; then
      build_release "$bg_dir/release.out" >"$bg_dir/release.log" 2>&1
      echo $? >"$bg_dir/release.rc"
    fi
    if want asan || want fuzz; then
      build_asan "$bg_dir/asan.out" >"$bg_dir/asan.log" 2>&1
      echo $? >"$bg_dir/asan.rc"
    fi
  ) &
  bg_pid=$!
  trees=()
  want release && ! release_is_build && trees+=("$RELEASE_BUILD")
  { want asan || want fuzz; } && trees+=("$ASAN_BUILD")
  echo "building ${trees[*]} in the background (nice 19, pid $bg_pid)"
fi

tree_ready() {
  local name=$1 func=$2
  if [ -n "$bg_pid" ]; then
    local waited=$SECONDS
    while [ ! -f "$bg_dir/$name.rc" ] && kill -0 "$bg_pid" 2>/dev/null; do sleep 1; done
    # The build's log once: the asan and fuzz tiers both wait for the asan tree.
    if [ -f "$bg_dir/$name.log" ]; then
      echo "($name tree: waited $((SECONDS - waited)) s for the background build)"
      cat "$bg_dir/$name.log"
      rm -f "$bg_dir/$name.log"
    fi
    [ -f "$bg_dir/$name.rc" ] && [ "$(cat "$bg_dir/$name.rc")" -eq 0 ] && return 0
    return 1
  fi
  "$func" "$log"
}

for tier in "${TIERS[@]}"; do
  echo "== $tier tests"
  start=$SECONDS
  case "$tier" in
    unit | e2e | lab) run_label "$BUILD" "$tier" ;;
    kernel) tier_kernel ;;
    release) tier_release ;;
    asan) tier_asan ;;
    fuzz) tier_fuzz ;;
    *)
      echo "unknown tier $tier" >&2
      exit 2
      ;;
  esac
  echo "== $tier took $((SECONDS - start)) s"
done
echo "== total"
for i in "${!failures[@]}"; do
  echo "FAILED ${failures[$i]}"
  [ -s "$fail_out/$((i + 1))" ] && sed 's/^/    | /' "$fail_out/$((i + 1))"
done
echo "tests: $passed passed, $failed failed"
exit $rc
