#!/bin/bash
# Scenario p (opt-in, not in "all"): kernel text patching under load, the reproducer of the
# MTTCG hang (docs/LAB.md, "Hangs"). Both CPUs run NVMe/RDMA reads, which execute the
# rdma_core and scheduler tracepoint sites, while the rdma_core and napi event groups are
# enabled and disabled in a loop: every (un)registration rewrites static calls and jump
# labels with text_poke_bp(). Under MTTCG (LAB_TCG_THREAD=multi) this hung the guest in 3 of
# 5 runs of 100 s, with one TCG thread in none of 4; the line passes when the guest survives
# LAB_PATCH_SECS (default 100).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/platform.sh"

if [ "${platform_ok:-0}" != 1 ]; then
  report FAIL text-patching "platform setup failed (see platform lines)"
  exit 0
fi
dur=${LAB_PATCH_SECS:-100}
end=$((EPOCHSECONDS + dur))
reads() { # CPU : direct 4k reads pinned to CPU until the end
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    taskset -c "$1" dd if=/dev/nvme0n1 of=/dev/null bs=4k count=2000 iflag=direct 2>/dev/null
  done
}
reads 0 &
r0=$!
reads 1 &
r1=$!
n=0
while [ "$EPOCHSECONDS" -lt "$end" ]; do
  if ! { echo 1 >"$T/events/rdma_core/enable" && echo 0 >"$T/events/rdma_core/enable" &&
    echo 1 >"$T/events/napi/enable" && echo 0 >"$T/events/napi/enable"; }; then
    report FAIL text-patching "cannot toggle the rdma_core/napi events"
    kill $r0 $r1
    exit 0
  fi
  n=$((n + 1))
done
wait $r0 $r1
report PASS text-patching "$n rounds of enabling/disabling the rdma_core and napi events in ${dur}s under direct reads on both CPUs; clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
