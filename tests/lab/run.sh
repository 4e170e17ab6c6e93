#!/usr/bin/env bash
# Runs one lab: the RDMA lab by default, the net (igb) lab with LAB_KIND=net (net/run.sh).
# The RDMA lab: boots the pinned Debian 6.1 kernel under qemu (TCG) with soft-RoCE (rxe) and
# NVMe-oF over RDMA, runs the guest scenarios against the dimctl build in BUILD and prints
# tests/lab/out/lab-report.txt. Exit status 1 when any line is FAIL (or the guest did not
# finish). Usage: tests/lab/run.sh [BUILD [SCENARIOS]]   SCENARIOS: all (default) | a,b,c,d,e,i
# See docs/LAB.md.
set -uo pipefail
. "$(dirname "$0")/lab.conf.sh"
BUILD=${1:-build}
SCEN=${2:-${LAB_SCENARIOS:-all}}
case "$BUILD" in /*) ;; *) BUILD="$LAB_REPO/$BUILD" ;; esac
cd "$LAB_REPO"
t_start=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

fail_early() { echo "FAIL lab: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail_early "must run as root (the guest shares the host root read-only and runs our build as root)"
for t in dpkg-deb apt-get cpio gzip modinfo; do
  command -v "$t" >/dev/null || fail_early "$t missing (scripts/deps.sh installs the lab packages)"
done
[ -x "$BUILD/userspace/cli/dimctl" ] || fail_early "no dimctl in $BUILD (build first: make build)"

t=$(date +%s.%N)
bash "$LAB_FETCH" || fail_early "cannot fetch $LAB_KPKG=$LAB_KPKG_VERSION"
t_fetch=$(since "$t")
# The fetch may have chosen another kernel (net lab: the pin's fallback): read the settings again.
. "$LAB_DIR/lab.conf.sh"
command -v "$LAB_QEMU" >/dev/null || fail_early "$LAB_QEMU missing (scripts/deps.sh installs the lab packages)"
t=$(date +%s.%N)
bash "$LAB_DIR/mkinitramfs.sh" || fail_early "cannot build the initramfs"
t_initrd=$(since "$t")

mkdir -p "$LAB_OUT"
rm -f "$LAB_OUT"/*.txt "$LAB_OUT"/*.log "$LAB_OUT"/*.json "$LAB_OUT"/*.err "$LAB_OUT"/host-clock
t=$(date +%s.%N)
qemu_v=$("${LAB_QEMU}" --version 2>/dev/null | head -n 1)
echo "lab: booting $LAB_KVER under $qemu_v (TCG), scenarios: $SCEN; console: $LAB_OUT/console.log"
bash "$LAB_DIR/boot.sh" "$BUILD" "$SCEN"
qrc=$?
t_qemu=$(since "$t")

R="$LAB_OUT/lab-report.txt"
C="$LAB_OUT/console.log"
touch "$R"
# A hung or panicked guest is named as such, with the kernel's own first report (soft lockup,
# RCU stall, panic) and the last console lines, even when the scenarios had all finished.
kbug=$(grep -a -m 1 -E 'BUG: soft lockup|rcu: INFO: .*(stall|self-detected)|rcu_.*kthread (starved|timer wakeup)|Kernel panic' "$C" 2>/dev/null | tr -d '\r')
tail_c=$(grep -a -v '^\s*$' "$C" 2>/dev/null | tail -n 4 | tr -d '\r' | tr '\n' ' ')
why=""
if [ "$qrc" -eq 125 ]; then
  why="guest hung: $(cat "$LAB_OUT/hang" 2>/dev/null), qemu killed after ${t_qemu}s"
elif grep -a -q 'Kernel panic' "$C" 2>/dev/null; then
  why="guest kernel panicked after ${t_qemu}s"
elif ! grep -q '^# END' "$R"; then
  why="guest did not finish (qemu exit $qrc"
  [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ] && why+=", killed by the host timeout of ${LAB_QEMU_TIMEOUT}s"
  why+=")"
fi
if [ -n "$why" ]; then
  [ -n "$kbug" ] && why+="; kernel: $kbug"
  echo "FAIL lab: $why; last console lines: $tail_c" >>"$R"
fi
{
  echo "# time fetch-kernel ${t_fetch}s, initramfs ${t_initrd}s, qemu ${t_qemu}s, total $(since "$t_start")s"
  echo "# kernel $LAB_KPKG=$LAB_KPKG_VERSION${LAB_KNOTE:-}; $qemu_v; build $BUILD; console log $LAB_OUT/console.log"
} >>"$R"
echo "==== lab report ($R)"
cat "$R"
nfail=$(grep -c '^FAIL' "$R")
npass=$(grep -c '^PASS' "$R")
nskip=$(grep -c '^SKIP' "$R")
echo "==== lab: $npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
