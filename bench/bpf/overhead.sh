#!/usr/bin/env bash
# overhead.sh: cost of dimctl's BPF programs on real veth traffic, in private network
# namespaces (never eth0).
#
#   bench/bpf/overhead.sh [--dimctl PATH] [--runs N] [--seconds S] [--flows F] [--count-bytes]
#                         [--raw-tp] [--all-netns]   (passed to dimctl list)
#
# For each run: a bounded UDP flood (F flows, at most 20M datagrams, S seconds) from netns B to
# netns A over a veth pair (TSO off on the sender, GRO on on the receiver, so veth polls its own
# NAPI); first without dimctl, then with `dimctl list --interval S --json` attached in netns A,
# then (when dimctl_bpf_calibrate is built, --calibrate PATH) with an EMPTY tp_btf/napi_poll
# program, whose ns/run is the floor of the measurement (dispatch + bpf_stats clock reads):
# net = dimctl ns/run - empty ns/run is what dimctl's own code costs per poll.
# Reports receiver packets/s for both, and ns per run (run_time_ns / run_cnt, with
# kernel.bpf_stats_enabled=1, restored on exit) of every attached program, plus the median over
# the runs. Needs root, ip, ethtool, python3.
set -euo pipefail

DIMCTL=""
CALIBRATE=""
RUNS=5
SECONDS_PER_RUN=3
FLOWS=8
EXTRA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dimctl) DIMCTL="$2"; shift 2 ;;
    --calibrate) CALIBRATE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
    --flows) FLOWS="$2"; shift 2 ;;
    --count-bytes) EXTRA+=(--count-bytes); shift ;;
    --raw-tp) EXTRA+=(--raw-tp); shift ;;
    --all-netns) EXTRA+=(--all-netns); shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -z "$DIMCTL" ]]; then
  for c in "$ROOT"/build-bpf/userspace/cli/dimctl "$ROOT"/build/userspace/cli/dimctl; do
    [[ -x "$c" ]] && DIMCTL="$c" && break
  done
fi
[[ -x "$DIMCTL" ]] || { echo "dimctl binary not found (use --dimctl)" >&2; exit 2; }
if [[ -z "$CALIBRATE" ]]; then
  CALIBRATE="$(dirname "$DIMCTL")/../../bench/bpf/dimctl_bpf_calibrate"
fi
[[ -x "$CALIBRATE" ]] || CALIBRATE=""
[[ $(id -u) -eq 0 ]] || { echo "needs root" >&2; exit 2; }

NSA="dimctl-bench-a-$$"
NSB="dimctl-bench-b-$$"
WORK="$(mktemp -d)"
# shellcheck source=bench/bpf/veth_pair.sh
source "$(dirname "${BASH_SOURCE[0]}")/veth_pair.sh"
veth_pair_start
# Drop at the receiver's netfilter-free UDP layer is fine: the NAPI has already polled.


rx_packets() { "${A[@]}" cat /sys/class/net/va/statistics/rx_packets; }

flood_pps() {  # prints received packets/s over the flood
  local before after t0 t1
  before=$(rx_packets); t0=$(date +%s.%N)
  "${B[@]}" python3 "$(dirname "${BASH_SOURCE[0]}")/udp_flood.py" "$SECONDS_PER_RUN" "$FLOWS" >/dev/null
  t1=$(date +%s.%N); after=$(rx_packets)
  python3 -c "print(f'{($after-$before)/($t1-$t0):.0f}')"
}

median() { python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f'{statistics.median(v):.1f}' if v else 'n/a')" "$@"; }

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  kernel: $(uname -r)  cpus: $(nproc)  dimctl: $DIMCTL ${EXTRA[*]:-}"
echo "runs: $RUNS x ${SECONDS_PER_RUN}s, flows: $FLOWS"
printf '%-4s %12s %12s %12s %11s %12s %9s %9s %s\n' run pps_without pps_with pps_empty napi_polls ns_per_poll empty_ns net_ns others
PPS_OFF=(); PPS_ON=(); NS=(); EMPTY=(); NET=()
for run in $(seq 1 "$RUNS"); do
  # Odd runs measure "without" first, even runs last, so drift does not favour one side.
  (( run % 2 == 1 )) && off=$(flood_pps)
  "${A[@]}" "$DIMCTL" list --interval "$(python3 -c "print($SECONDS_PER_RUN + 1.5)")" --json "${EXTRA[@]}" \
      > "$WORK/list.json" 2>"$WORK/list.err" &
  pid=$!
  sleep 0.7   # attached before the flood starts
  on=$(flood_pps)
  wait "$pid"
  read -r polls ns others < <(python3 - "$WORK/list.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
polls = sum(q["polls"] for q in d["queues"] if q["device"] == "va")
ns, others = "n/a", []
for p in d["programs"]:
    if not p["attached"]:
        continue
    per = p["run_time_ns"] / p["run_count"] if p["run_count"] else 0.0
    if p["name"] == "napi:napi_poll":
        ns = f"{per:.1f}"
    else:
        others.append(f"{p['name']}={per:.1f}ns")
print(polls, ns, ",".join(others) or "-")
PY
  )
  (( run % 2 == 0 )) && off=$(flood_pps)
  empty=n/a; net=n/a; pps_empty=n/a
  if [[ -n "$CALIBRATE" ]]; then
    "$CALIBRATE" "$(python3 -c "print(int($SECONDS_PER_RUN + 2))")" > "$WORK/cal.txt" 2>&1 &
    cpid=$!
    sleep 0.7
    pps_empty=$(flood_pps)
    wait "$cpid"
    empty=$(awk '/empty_ns_per_run/ {print $2}' "$WORK/cal.txt")
    [[ "$ns" != n/a && -n "$empty" ]] && net=$(python3 -c "print(f'{$ns - $empty:.1f}')")
  fi
  printf '%-4s %12s %12s %12s %11s %12s %9s %9s %s\n' "$run" "$off" "$on" "$pps_empty" "$polls" "$ns" "$empty" "$net" "$others"
  PPS_OFF+=("$off"); PPS_ON+=("$on")
  [[ "$ns" != n/a ]] && NS+=("$ns")
  [[ "$empty" != n/a && -n "$empty" ]] && EMPTY+=("$empty")
  [[ "$net" != n/a ]] && NET+=("$net")
done
echo "median: pps_without=$(median "${PPS_OFF[@]}") pps_with=$(median "${PPS_ON[@]}") ns_per_napi_poll=$(median "${NS[@]}") empty_ns=$(median "${EMPTY[@]}") net_ns=$(median "${NET[@]}")"
per_packet=$(python3 -c "
import json; d=json.load(open('$WORK/list.json'))
print(sum(1 for p in d['programs'] if p['attached'] and p['name']=='net:netif_receive_skb'))")
echo "per-packet programs attached: $per_packet"
