#!/usr/bin/env bash
# The net lab: two igb NICs under qemu 10 (TCG) with a trixie-backports kernel; the same
# boot, watchdog and report machinery as the RDMA lab (tests/lab/run.sh with LAB_KIND=net).
# Usage: tests/lab/net/run.sh [BUILD [SCENARIOS]]   SCENARIOS: all (default) | m,q,r,e,n,c,f,i
# Report: tests/lab/out/net/lab-report.txt. See docs/LAB.md.
LAB_KIND=net exec bash "$(dirname "$0")/../run.sh" "$@"
