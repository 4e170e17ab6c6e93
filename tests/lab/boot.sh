#!/usr/bin/env bash
# Boots the lab guest once: qemu (TCG) + pinned Debian 6.1 kernel + lab initramfs, the host
# root shared read-only over 9p and tests/lab/out shared writable. The console goes to
# out/console.log. Usage: boot.sh BUILD [SCENARIOS]   (SCENARIOS: all | comma list, e.g. a,c)
set -euo pipefail
. "$(dirname "$0")/lab.conf.sh"
BUILD=${1:-build}
SCEN=${2:-${LAB_SCENARIOS:-all}}
case "$BUILD" in /*) ;; *) BUILD="$LAB_REPO/$BUILD" ;; esac
mkdir -p "$LAB_OUT"
# The guest clock lags under TCG on a loaded host, so the guest reads the host's time from
# out/host-clock (rewritten every second) and must be done by this host epoch.
deadline=$(( $(date +%s) + LAB_QEMU_TIMEOUT - 20 ))
( while :; do date +%s >"$LAB_OUT/.host-clock.tmp" && mv -f "$LAB_OUT/.host-clock.tmp" "$LAB_OUT/host-clock"; sleep 1; done ) &
clock_pid=$!
trap 'kill $clock_pid 2>/dev/null' EXIT
append="console=ttyS0 panic=-1 loglevel=4 mitigations=off nokaslr rdinit=/init"
append+=" lab.repo=$LAB_REPO lab.build=$BUILD lab.out=$LAB_OUT lab.scenarios=$SCEN lab.deadline=$deadline"
accel=tcg
# No KVM on the CI host; use it when present (the lab is written for TCG timings).
[ -w /dev/kvm ] && [ "${LAB_KVM:-0}" = 1 ] && accel=kvm
rc=0
timeout -k 10 "$LAB_QEMU_TIMEOUT" qemu-system-x86_64 \
  -machine q35,accel=$accel -cpu qemu64 -m 2048 -smp 2 -nographic -no-reboot -nic none \
  -kernel "$LAB_VMLINUZ" -initrd "$LAB_INITRD" -append "$append" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$LAB_OUT",mount_tag=labout,security_model=none,multidevs=remap \
  </dev/null >"$LAB_OUT/console.log" 2>&1 || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "lab: qemu killed after ${LAB_QEMU_TIMEOUT}s (host timeout); see $LAB_OUT/console.log" >&2
fi
exit "$rc"
