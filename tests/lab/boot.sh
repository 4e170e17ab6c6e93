#!/usr/bin/env bash
# Boots the lab guest once: qemu (TCG) + pinned Debian 6.1 kernel + lab initramfs, the host
# root shared read-only over 9p and tests/lab/out shared writable. The console goes to
# out/console.log. Usage: boot.sh BUILD [SCENARIOS]   (SCENARIOS: all | comma list, e.g. a,c)
# Exit status: qemu's; 124 when the host timeout killed it; 125 when the hang watchdog did
# (out/hang says why).
set -euo pipefail
. "$(dirname "$0")/lab.conf.sh"
BUILD=${1:-build}
SCEN=${2:-${LAB_SCENARIOS:-all}}
case "$BUILD" in /*) ;; *) BUILD="$LAB_REPO/$BUILD" ;; esac
mkdir -p "$LAB_OUT"
rm -f "$LAB_OUT/hang" "$LAB_OUT/heartbeat"
# The guest clock lags under TCG on a loaded host, so the guest reads the host's time from
# out/host-clock (rewritten every second) and must be done by this host epoch.
deadline=$(( $(date +%s) + LAB_QEMU_TIMEOUT - 20 ))
( while :; do date +%s >"$LAB_OUT/.host-clock.tmp" && mv -f "$LAB_OUT/.host-clock.tmp" "$LAB_OUT/host-clock"; sleep 1; done ) &
clock_pid=$!
qemu_pid=
trap 'kill $clock_pid 2>/dev/null; [ -z "$qemu_pid" ] || kill $qemu_pid 2>/dev/null' EXIT
# loglevel=5: the stack dumps of lockup and stall reports are printed at the default level
# (4), which loglevel=4 hid. A soft lockup or an RCU stall panics the guest (qemu exits at
# once, -no-reboot); all CPUs' stacks are in the report.
append="console=ttyS0 panic=-1 loglevel=5 mitigations=off nokaslr rdinit=/init"
append+=" softlockup_panic=1 softlockup_all_cpu_backtrace=1 sysctl.kernel.panic_on_rcu_stall=1"
# no_timer_check: the boot-time IO-APIC timer test counts ticks against a busy loop, and a
# starved TCG vCPU fails it ("IO-APIC + timer doesn't work!", a panic at 0.05 s, seen once
# at host load 15); KVM guests skip it for the same reason.
append+=" no_timer_check"
append+=" ${LAB_APPEND_EXTRA:-}"
append+=" lab.repo=$LAB_REPO lab.build=$BUILD lab.out=$LAB_OUT lab.scenarios=$SCEN lab.deadline=$deadline"
append+=" lab.main=$LAB_GUEST_MAIN"
# One TCG thread runs both vCPUs (round robin) instead of a host thread per vCPU (MTTCG).
# Under MTTCG, qemu 7.2 let one vCPU keep executing a stale translation of kernel text that
# the other vCPU had just patched (text_poke_bp: int3, new bytes, final byte, with a sync IPI
# after each step): CPU0 looped on an int3 that was no longer in memory, with interrupts off,
# while CPU1 waited forever in text_poke_bp_batch() for CPU0 to answer the sync IPI (soft
# lockup on CPU1, RCU stall, dead timers on CPU0). Every tracepoint (un)registration patches
# static calls and jump labels, and the lab does many. With one thread, a write to translated
# code invalidates it before any other vCPU runs again. LAB_TCG_THREAD=multi brings MTTCG
# back (to reproduce it). See docs/LAB.md.
accel="tcg,thread=${LAB_TCG_THREAD:-single}"
# No KVM on the CI host; use it when present (the lab is written for TCG timings).
[ -w /dev/kvm ] && [ "${LAB_KVM:-0}" = 1 ] && accel=kvm
qemu_env=()
# An extracted qemu (net lab) takes its firmware from beside it and must not load the host
# qemu's modules (another build: qemu aborts); it needs none.
case $LAB_QEMU in
  /*) qemu_env=(env "QEMU_MODULE_DIR=$(dirname "$LAB_QEMU")/../../modules")
      qroot=$(dirname "$LAB_QEMU")/../..
      set -- -L "$qroot/usr/share/seabios" -L "$qroot/usr/share/qemu" ;;
  *) set -- ;;
esac
timeout -k 10 "$LAB_QEMU_TIMEOUT" "${qemu_env[@]}" "$LAB_QEMU" "$@" \
  -machine q35 -accel "$accel" -cpu qemu64 -m "$LAB_MEM" -smp "$LAB_SMP" -nographic -no-reboot \
  "${LAB_QEMU_NET[@]}" \
  -kernel "$LAB_VMLINUZ" -initrd "$LAB_INITRD" -append "$append" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$LAB_OUT",mount_tag=labout,security_model=none,multidevs=remap \
  </dev/null >"$LAB_OUT/console.log" 2>&1 &
qemu_pid=$!

# Hang watchdog: the guest rewrites out/heartbeat every 5 s from /init (a busybox loop,
# independent of the scenarios), and the console grows while it boots. When neither moves
# for LAB_HANG_TIMEOUT seconds the guest is hung (a stuck CPU that the kernel's own lockup
# detectors missed, or a dead timer): kill qemu now instead of at the 600 s bound.
last_change=$(date +%s)
last_sig=
while kill -0 "$qemu_pid" 2>/dev/null; do
  sleep 2
  sig="$(cat "$LAB_OUT/heartbeat" 2>/dev/null || true)/$(stat -c %s "$LAB_OUT/console.log" 2>/dev/null || true)"
  now=$(date +%s)
  if [ "$sig" != "$last_sig" ]; then
    last_sig=$sig last_change=$now
  elif [ $((now - last_change)) -ge "$LAB_HANG_TIMEOUT" ]; then
    echo "no heartbeat and no console output for $((now - last_change)) s (guest heartbeat: $(cat "$LAB_OUT/heartbeat" 2>/dev/null || echo none))" >"$LAB_OUT/hang"
    kill "$qemu_pid" 2>/dev/null
    break
  fi
done
rc=0
wait "$qemu_pid" || rc=$?
qemu_pid=
if [ -s "$LAB_OUT/hang" ]; then
  echo "lab: guest hung, qemu killed: $(cat "$LAB_OUT/hang"); see $LAB_OUT/console.log" >&2
  rc=125
elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "lab: qemu killed after ${LAB_QEMU_TIMEOUT}s (host timeout); see $LAB_OUT/console.log" >&2
fi
exit "$rc"
