#!/usr/bin/env bash
# cpu_times_overhead.sh: cost per event of cpu_time.bpf.c (the irq:irq_handler_*,
# irq:softirq_* and sched:sched_switch programs) over empty programs on the same tracepoints,
# under real load, in private network namespaces (never eth0).
#
#   bench/bpf/cpu_times_overhead.sh [--probe PATH] [--runs N] [--seconds S] [--raw-tp]
#                                   [--one-in N] [--ns-prefix P]
#
# Load per phase: the UDP flood of overhead.sh over a veth pair (NET_RX softirqs: veth has no
# hard interrupt) plus O_DIRECT writes on the root disk (its completions are hard interrupts on
# a virtio-blk host), S seconds. Each run has two phases, interleaved (odd runs dimctl first,
# even runs empty first): `dimctl_bpf_cpu_times dimctl S` (the collector with only
# enable_cpu_times) and `dimctl_bpf_cpu_times empty S` (empty tp_btf programs). Per tracepoint:
# ns per run (run_time_ns / run_cnt, kernel.bpf_stats_enabled=1, restored on exit) of both, the
# difference (net: what dimctl's code costs per event) and the events/s; medians over the runs.
# --one-in N: time one run in N (CollectorOptions::cpu_times_time_one_in; default the
# collector's, 8); 1 times every run.
# Needs root, ip, ethtool, python3, dd.
set -euo pipefail

PROBE=""
RUNS=5
SECONDS_PER_RUN=3
RAW=""
ONE_IN=()
PREFIX="dimctl-cpub"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --probe) PROBE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
    --raw-tp) RAW="--raw-tp"; shift ;;
    --one-in) ONE_IN=(--one-in "$2"); shift 2 ;;
    --ns-prefix) PREFIX="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -z "$PROBE" ]]; then
  for c in "$ROOT"/build-bpf/bench/bpf/dimctl_bpf_cpu_times "$ROOT"/build/bench/bpf/dimctl_bpf_cpu_times; do
    [[ -x "$c" ]] && PROBE="$c" && break
  done
fi
[[ -x "$PROBE" ]] || { echo "dimctl_bpf_cpu_times not found (use --probe)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "needs root" >&2; exit 2; }

NSA="$PREFIX-a-$$"
NSB="$PREFIX-b-$$"
WORK="$(mktemp -d -p /var/tmp)"  # on the disk (not tmpfs): the I/O load needs interrupts
# shellcheck source=bench/bpf/veth_pair.sh
source "$(dirname "${BASH_SOURCE[0]}")/veth_pair.sh"
veth_pair_start


load() {  # S seconds of veth flood and direct disk writes
  local end=$(( $(date +%s) + SECONDS_PER_RUN ))
  ( while (( $(date +%s) < end )); do
      dd if=/dev/zero of="$WORK/io" bs=4k count=128 oflag=direct status=none
    done; rm -f "$WORK/io" ) &
  local io=$!
  "${B[@]}" python3 "$(dirname "${BASH_SOURCE[0]}")/udp_flood.py" "$SECONDS_PER_RUN" 8 >/dev/null
  wait "$io"
}

phase() {  # MODE OUT: the probe during the load
  "$PROBE" "$1" "$((SECONDS_PER_RUN + 1))" $RAW "${ONE_IN[@]}" > "$2" &
  local pid=$!
  sleep 0.5   # attached before the load starts
  load
  wait "$pid"
}

median() { python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f'{statistics.median(v):.1f}' if v else 'n/a')" "$@"; }

TPS=(irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry irq:softirq_exit sched:sched_switch)
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  kernel: $(uname -r)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)  probe: $PROBE $RAW ${ONE_IN[*]:-}"
echo "runs: $RUNS x ${SECONDS_PER_RUN}s"
printf '%-4s %-22s %10s %9s %9s %11s\n' run tracepoint dimctl_ns empty_ns net_ns events_s
declare -A NET DIM EMP
for run in $(seq 1 "$RUNS"); do
  if (( run % 2 == 1 )); then
    phase dimctl "$WORK/dimctl.txt"; phase empty "$WORK/empty.txt"
  else
    phase empty "$WORK/empty.txt"; phase dimctl "$WORK/dimctl.txt"
  fi
  for tp in "${TPS[@]}"; do
    read -r d runs < <(awk -v t="$tp" '$1 == t {print $2, $3}' "$WORK/dimctl.txt")
    e=$(awk -v t="$tp" '$1 == t {print $2}' "$WORK/empty.txt")
    net=$(python3 -c "print(f'{$d - $e:.1f}')" 2>/dev/null || echo n/a)
    rate=$(python3 -c "print(f'{$runs / ($SECONDS_PER_RUN + 1):.0f}')")
    printf '%-4s %-22s %10s %9s %9s %11s\n' "$run" "$tp" "$d" "$e" "$net" "$rate"
    DIM[$tp]+="$d "; EMP[$tp]+="$e "; [[ "$net" != n/a ]] && NET[$tp]+="$net "
  done
  awk '$1 == "hardirq" || $1 == "net_rx" {printf "     %s: %s ns in %s runs (%.0f ns/run)\n", $1, $2, $3, $3 ? $2 / $3 : 0}' "$WORK/dimctl.txt"
done
for tp in "${TPS[@]}"; do
  # shellcheck disable=SC2086
  echo "median $tp: dimctl_ns=$(median ${DIM[$tp]}) empty_ns=$(median ${EMP[$tp]}) net_ns=$(median ${NET[$tp]:-})"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
