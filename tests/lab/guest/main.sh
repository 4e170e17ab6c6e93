#!/bin/bash
# Guest-side entry point (runs in the chroot into the host userland; see tests/lab/init).
# Sets up the platform, runs the selected scenarios, writes $LAB_OUT/lab-report.txt.
set -uo pipefail
GUEST_DIR=$(cd "$(dirname "$0")" && pwd)
. "$GUEST_DIR/lib.sh"
. "$GUEST_DIR/platform.sh"
guest_begin "lab guest"
[ -e /sys/kernel/btf/ib_core ] || report FAIL boot "no module BTF for ib_core (/sys/kernel/btf/ib_core)"

platform_ok=1
t=$(now)
step() { # step NAME CMD... : a platform step; first failure marks the platform broken
  local name=$1; shift
  local err
  local t0; t0=$(now)
  if [ $platform_ok -eq 1 ] && err=$("$@" 2>&1); then
    log "platform step $name ok ($(elapsed "$t0")s)"
    return 0
  fi
  [ $platform_ok -eq 1 ] && report FAIL "platform-$name" "$(echo "$err" | tail -n 3 | tr '\n' ' ')"
  platform_ok=0
  return 1
}
step rxe setup_rxe0
step nvmet setup_nvmet
step connect nvme_connect
if [ $platform_ok -eq 1 ]; then
  # smoke: reads work and the rdma_core tracepoints see them
  # smoke: direct reads work and the rdma_core tracepoints see each of them 4 times
  # (host send + recv, target recv + send)
  hist_start
  if out=$(dd if=/dev/nvme0n1 of=/dev/null bs=4k count=200 iflag=direct 2>&1); then
    sleep 0.5
    hist_pause
    hist_dump "$WORK/hist-smoke" 2>/dev/null
    hist_stop
    comps=$(awk '{s+=$3} END{print s+0}' "$WORK/hist-smoke")
    ncq=$(awk '$3>0' "$WORK/hist-smoke" | wc -l)
    if [ "$comps" -eq 800 ]; then
      report PASS platform "rxe0 on veth0, nvmet-rdma $RDMA_NET.1:$NVME_PORT on nullb0, nvme0n1 connected; 200 direct reads -> $comps completions on $ncq CQs (tracefs); $(elapsed "$t")s"
    else
      report FAIL platform "200 direct reads -> $comps completions on $ncq CQs in tracefs, expected 800"
      platform_ok=0
    fi
    log "per-CQ (id polls comps events scheds errs):"; cat "$WORK/hist-smoke"
    rdma resource show cq
  else
    hist_stop
    report FAIL platform-read "$out"
    platform_ok=0
  fi
fi

declare -A SC=([a]=sc-a-rdma.sh [b]=sc-b-napi.sh [c]=sc-c-shadow.sh [d]=sc-d-netlink.sh [e]=sc-e-verbs.sh [i]=sc-i-idle.sh
  [p]=sc-p-patching.sh)
declare -A SC_BOUND=([a]=240 [b]=120 [c]=150 [d]=120 [e]=60 [i]=60 [p]=200)
guest_end a,b,c,d,e,i
