#!/bin/bash
# Scenario i (both labs: Debian's 6.1 and the net lab's newer kernel): the sched_switch
# program's idle time, which takes each idle stretch from the rq clock the scheduler has just
# updated (read through the switch's task, cpu_time.bpf.c) instead of reading a clock, holds
# on this kernel: CpuTimesKernelTest's IdleTimeFollowsTheCpus* cases (tp_btf and raw_tp) run
# here as they do on the host. A thread spins on CPU 0 for 1 s: no idle there; every CPU's idle
# time agrees with /proc/stat's. A stamp the kernel had not updated at the switch would show as
# idle above the wall time (a stale entry stamp) or far below /proc/stat's (a stale exit stamp).
set -uo pipefail
. "$LAB_REPO/tests/lab/guest/lib.sh"
t0=$(now)
BIN="$LAB_BUILD/tests/kernel/collector/collector_cpu_times_kernel_test"
[ -x "$BIN" ] || { report FAIL idle-time "no $BIN in this build"; exit 0; }
out=$("$BIN" --gtest_filter='CpuTimesKernelTest.IdleTimeFollowsTheCpus*' 2>&1)
rc=$?
echo "$out" >"$LAB_OUT/i-idle.log"
cpus=$(echo "$out" | grep -E '^cpu [0-9]+: idle' | tr '\n' ' ')
# exactly the two cases, both run: a filter that matches nothing passes too
if [ $rc -eq 0 ] && echo "$out" | grep -q '\[  PASSED  \] 2 tests' &&
  ! echo "$out" | grep -q SKIPPED; then
  report PASS idle-time "kernel $(uname -r): tp_btf and raw_tp, $cpus$(elapsed "$t0")s"
else
  report FAIL idle-time "rc=$rc: $(echo "$out" | grep -E 'Failure|Expected|Which is|cpu [0-9]+:|FAILED|SKIPPED' | head -n 12 | tr '\n' ' ')"
fi
true
