#!/usr/bin/env bash
# Kernel tests of `dimctl record` and `dimctl trace show`, as root, on a veth pair across two
# private network namespaces (never eth0). The recorder runs in the receiver's namespace; IPv6 is
# off and neighbours are static so that exactly the datagrams sent cross the link, as in the
# collector's kernel tests (tests/kernel/collector/veth_lab.h), whose tolerance is exact: the
# recorded packet total of the receiver's NAPI must equal the number sent.
#   sigint_exact_total     record until SIGINT (exit 0, no truncated frame); the per-frame
#                          deltas and the summary both add up to exactly the datagrams sent
#   rotation_set_exact     record for --duration with a small --max-bytes: files rotate, each
#                          stays within the bound, and the rotation set read oldest-first adds
#                          up to exactly the datagrams sent
#   cpu_times_recorded     that recording (format 2) names the CPU the NAPI was polled on, and
#                          that CPU's softirq runs and busy share; `trace costs` measures that
#                          CPU's costs from it; --no-cpu-times records none
#   sim_replays_recording  `dimctl sim --trace` on that recording: every policy (none, kernel net
#                          DIM, the daemon's controller) is offered the recorded packets, and
#                          delivers them (at most the last interval's few lost to the run's end);
#                          --cost trace charges the costs measured from the recording
#   sigkill_readable       after SIGKILL the file still reads (clean end or a truncated-tail
#                          warning, never an error)
# Prints one PASS/FAIL line per case and "N passed, N failed".
set -uo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DIMCTL=$(readlink -f "${1:?usage: record_test.sh path/to/dimctl}")

skip_unless_root "record kernel tests need root (BPF, netns)"

kernel_test_start record REC_PID
REC_PID=""
FAIL_LOG=$WORK/rec.log FAIL_LOG_LINES=15  # printed under every FAIL

netns_add --no-ipv6 "$NS" "$NS2"
veth_pair --static-neigh "$NS2" rec-s 10.213.7.1 "$NS" rec-r 10.213.7.2

# send N: N UDP datagrams from the sender's namespace to the receiver only, in bursts of 32
# (veth's ring to the receiver's NAPI holds 256); prints how many the sender's kernel accepted
# (a full ring can refuse a send: ENOBUFS).
send() {
  ip netns exec "$NS2" bash -c "ok=0; for ((i = 0; i < $1; i++)); do echo x 2>/dev/null >/dev/udp/10.213.7.2/9 && ok=\$((ok + 1)); ((i % 32 == 31)) && sleep 0.001; done; echo \$ok" 2>/dev/null
}
# Datagrams veth accepted and then dropped: the kernel's own count. What the receiver's NAPI
# polls is exactly what was accepted less these, which keeps the check exact on a loaded machine.
tx_dropped() { ip -n "$NS2" -s -j link show rec-s | jq '.[0].stats64.tx.dropped'; }
rx_packets() { ip -n "$NS" -s -j link show rec-r | jq '.[0].stats64.rx.packets'; }

start_record() {  # start_record ARGS...: in the receiver's namespace, logging to rec.log
  # Removed first: the background shell truncates it only when it gets to run, and the previous
  # recorder's "recording to" line must not be taken for this one's.
  rm -f "$WORK/rec.log"
  ip netns exec "$NS" "$DIMCTL" record --devices rec-r "$@" >"$WORK/rec.log" 2>&1 &
  REC_PID=$!
  wait_for 15 grep -qs "recording to" "$WORK/rec.log"
}
stop_record() {  # stop_record SIGNAL: the recorder's exit code (137: still running after 10 s)
  stop_process record_exit "dimctl record" "$1" "$REC_PID"
  local rc=$?
  REC_PID=""
  return $rc
}
# summary_packets FILE... [--rotation-set]: rec-r's PACKETS from `trace show --summary`.
summary_packets() {
  "$DIMCTL" trace show --summary "$@" 2>"$WORK/show.err" |
    awk '$1 == "rec-r" {s += $8} END {print s + 0}'
}

# --- sigint_exact_total
N=3000
if start_record --output "$WORK/a.dtr" --interval 20ms; then
  d0=$(tx_dropped) r0=$(rx_packets)
  accepted=$(send "$N")
  N=$((accepted - ($(tx_dropped) - d0)))
  sleep 0.5  # a few frames after the last datagram
  stop_record INT; rc=$?
  "$DIMCTL" trace show "$WORK/a.dtr" >"$WORK/a.txt" 2>"$WORK/a.err"; show_rc=$?
  per_frame=$(awk '$1 == "rec-r" { for (i = 1; i < NF; i++) if ($i == "packets") { sub(/^\+/, "", $(i+1)); s += $(i+1) } } END {print s + 0}' "$WORK/a.txt")
  total=$(summary_packets "$WORK/a.dtr")
  frames=$(grep -c '^frame ' "$WORK/a.txt")
  if [ "$rc" -ne 0 ]; then
    fail sigint_exact_total "dimctl record exited $rc on SIGINT"
  elif [ "$show_rc" -ne 0 ] || [ -s "$WORK/a.err" ]; then
    fail sigint_exact_total "trace show exited $show_rc: $(cat "$WORK/a.err")"
  elif [ "$total" -ne "$N" ] || [ "$per_frame" -ne "$N" ]; then
    fail sigint_exact_total "recorded $total packets (per-frame sum $per_frame), $N arrived ($accepted sent; veth rx_packets +$(($(rx_packets) - r0)))"
    grep -E '^summary|new|gone|reset' "$WORK/a.txt" | head -n 40 | sed 's/^/    /'
  elif [ "$frames" -lt 10 ]; then
    fail sigint_exact_total "only $frames frames"
  else
    pass sigint_exact_total
    echo "    $N datagrams arrived (of 3000, $accepted sent), $total recorded in $frames frames, $(stat -c %s "$WORK/a.dtr") bytes"
  fi
else
  fail sigint_exact_total "recorder did not start"
  [ -n "$REC_PID" ] && stop_record KILL
fi

# --- cpu_times_recorded: the recording above carries format 2's per-core measurements: the CPU
# rec-r's NAPI was polled on, and that CPU's softirq runs and busy time; --no-cpu-times leaves
# them out.
if [ -s "$WORK/a.txt" ]; then
  version=$(sed -n 's/^file .*format version \([0-9]*\))$/\1/p' "$WORK/a.txt" | head -n 1)
  poll_cpu=$(awk '$1 == "rec-r" && $(NF-1) == "cpu" {print $NF}' "$WORK/a.txt" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
  "$DIMCTL" trace show --summary "$WORK/a.dtr" >"$WORK/a.sum" 2>&1
  # The summary's CPU table: CPU FRAMES HARDIRQS/s HARDIRQ% SOFTIRQS/s SOFTIRQ% BUSY% MEASURED.
  row=$(awk -v c="${poll_cpu:--}" 'f && $1 == c {print; exit} $1 == "CPU" && $2 == "FRAMES" {f = 1}' "$WORK/a.sum")
  softirqs=$(awk '{print $5}' <<<"$row")
  busy=$(awk '{print $7}' <<<"$row")
  ncpus=$(awk 'f && $1 ~ /^[0-9]+$/ {n++} $1 == "CPU" && $2 == "FRAMES" {f = 1} END {print n + 0}' "$WORK/a.sum")
  # trace costs: the daemon's controller over the recording measures the polling CPU's costs.
  "$DIMCTL" trace costs --json "$WORK/a.dtr" >"$WORK/costs.json" 2>"$WORK/costs.err"; costs_rc=$?
  costs=$(jq -r --argjson c "${poll_cpu:-0}" '.cores[] | select(.cpu == $c) | "\(.confidence) \(.estimate.completion_ns) \(.estimate.interrupt_ns)"' "$WORK/costs.json" 2>/dev/null)
  read -r confidence completion_ns interrupt_ns <<<"$costs"
  "$DIMCTL" record --output "$WORK/d.dtr" --interval 20ms --duration 200ms --no-cpu-times >/dev/null 2>"$WORK/d.err"; d_rc=$?
  d_cpus=$("$DIMCTL" trace show "$WORK/d.dtr" 2>&1 | sed -n 's/^frame 0 .* \([0-9]*\) CPUs,.*/\1/p')
  if [ "$version" != 2 ]; then
    fail cpu_times_recorded "trace format version '$version', expected 2"
  elif [ -z "$poll_cpu" ]; then
    fail cpu_times_recorded "no rec-r frame line names the CPU its NAPI was polled on"
    grep rec-r "$WORK/a.txt" | head -n 5 | sed 's/^/    /'
  elif [ -z "$row" ] || [ "$ncpus" -lt 1 ]; then
    fail cpu_times_recorded "no CPU table row for CPU $poll_cpu in the summary"
    sed 's/^/    /' "$WORK/a.sum" | tail -n 12
  elif ! awk -v x="$softirqs" 'BEGIN {exit !(x > 0)}'; then
    fail cpu_times_recorded "CPU $poll_cpu polled rec-r but recorded no softirq run: $row"
  elif ! awk -v x="$busy" 'BEGIN {exit !(x ~ /^[0-9.]+$/ && x > 0 && x <= 100)}'; then
    fail cpu_times_recorded "CPU $poll_cpu busy '$busy' is not a share in (0, 100]: $row"
  elif [ "$costs_rc" -ne 0 ] || [ -z "$costs" ]; then
    fail cpu_times_recorded "trace costs exited $costs_rc, no costs for CPU $poll_cpu: $(head -c 300 "$WORK/costs.err")"
  elif [ "$confidence" = defaults ] || ! awk -v x="$completion_ns" 'BEGIN {exit !(x > 0 && x < 100000)}'; then
    fail cpu_times_recorded "trace costs: CPU $poll_cpu still at the defaults or out of bounds: $costs"
  elif [ "$d_rc" -ne 0 ] || [ "$d_cpus" != 0 ]; then
    fail cpu_times_recorded "--no-cpu-times: exit $d_rc, baseline frame lists '${d_cpus}' CPUs (expected 0): $(head -c 300 "$WORK/d.err")"
  else
    pass cpu_times_recorded
    echo "    rec-r polled on CPU $poll_cpu; $ncpus CPUs recorded; that CPU: $softirqs softirqs/s, $busy % busy; trace costs: $confidence, completion ${completion_ns} ns, interrupt ${interrupt_ns} ns"
  fi
else
  fail cpu_times_recorded "no trace show output from sigint_exact_total"
fi

# --- sim_replays_recording: the recording above, replayed by the simulator under three policies.
if [ -s "$WORK/a.dtr" ] && [ "$N" -gt 0 ]; then
  "$DIMCTL" sim --trace "$WORK/a.dtr" --trace-device rec-r \
    --policy none,kernel-net-eqe,dimctl-net-eqe --json >"$WORK/sim.json" 2>"$WORK/sim.err"; rc=$?
  counts=$(jq -r '[.runs[] | .simulated_completions] | join(" ")' "$WORK/sim.json" 2>/dev/null)
  nruns=$(wc -w <<<"$counts")
  bad=""
  for c in $counts; do
    # Arrivals are replayed inside their recorded intervals; only those whose delivery falls
    # past the trace's last frame are not counted (a few at the very end, if any).
    if [ "$c" -gt "$N" ] || [ "$c" -lt $((N * 99 / 100)) ]; then bad="$bad $c"; fi
  done
  # --cost trace: the replay charges the recording host's costs, measured from the trace.
  "$DIMCTL" sim --trace "$WORK/a.dtr" --trace-device rec-r --cost trace --policy none --dry-run \
    >"$WORK/sim-cost.txt" 2>&1; cost_rc=$?
  if [ "$rc" -ne 0 ]; then
    fail sim_replays_recording "dimctl sim --trace exited $rc: $(head -c 400 "$WORK/sim.err")"
  elif [ "$cost_rc" -ne 0 ] || ! grep -Eq 'cost trace \(irq [0-9.]+[nu]s, completion [0-9.]+[nu]s' "$WORK/sim-cost.txt"; then
    fail sim_replays_recording "sim --cost trace exited $cost_rc: $(grep -m1 -E 'cost|error' "$WORK/sim-cost.txt")"
  elif [ "$nruns" -ne 3 ]; then
    fail sim_replays_recording "expected 3 runs in the JSON, got '$counts'"
  elif [ -n "$bad" ]; then
    fail sim_replays_recording "simulated completions$bad, $N recorded"
  else
    pass sim_replays_recording
    echo "    $N recorded packets replayed; completions per policy: $counts; --cost trace: $(grep -o 'cost trace ([^)]*)' "$WORK/sim-cost.txt")"
  fi
else
  fail sim_replays_recording "no recording from sigint_exact_total to replay"
fi

# --- rotation_set_exact: ~21 bytes a frame at 5 ms, 4 KiB files: a new file every ~0.9 s.
N=4000
if start_record --output "$WORK/b.dtr" --interval 5ms --duration 10s --max-bytes 4K --keep 100; then
  d0=$(tx_dropped) r0=$(rx_packets)
  send_start=$SECONDS
  accepted=$(send "$N")
  N=$((accepted - ($(tx_dropped) - d0)))
  # The last datagrams must be polled, and that poll sampled, before the recording ends.
  sleep 0.5
  still_recording=yes
  kill -0 "$REC_PID" 2>/dev/null || still_recording=no
  wait "$REC_PID"; rc=$?
  REC_PID=""
  total=$(summary_packets --rotation-set "$WORK/b.dtr")
  nfiles=$(ls "$WORK"/b.dtr* | wc -l)
  big=$(find "$WORK" -name 'b.dtr*' -size +4096c | wc -l)
  if [ "$rc" -ne 0 ]; then
    fail rotation_set_exact "dimctl record --duration exited $rc"
  elif [ "$still_recording" != yes ]; then
    fail rotation_set_exact "sending (from ${send_start}s to $SECONDS s of the test) outlasted --duration 10s (machine too loaded?)"
  elif [ "$nfiles" -lt 3 ]; then
    fail rotation_set_exact "only $nfiles file(s): no rotation"
  elif [ "$big" -ne 0 ]; then
    fail rotation_set_exact "$big file(s) above --max-bytes 4K: $(ls -l "$WORK"/b.dtr*)"
  elif [ -s "$WORK/show.err" ]; then
    fail rotation_set_exact "trace show: $(cat "$WORK/show.err")"
  elif [ "$total" -ne "$N" ]; then
    fail rotation_set_exact "rotation set records $total packets, $N arrived ($accepted sent; veth rx_packets +$(($(rx_packets) - r0)))"
    # Where the count broke: queues that came, went or reset.
    "$DIMCTL" trace show --rotation-set "$WORK/b.dtr" 2>&1 | grep -E '^(file|summary|rec-r)|new|gone|reset' | head -n 40 | sed 's/^/    /'
  else
    pass rotation_set_exact
    echo "    $N datagrams arrived (of 4000, $accepted sent), $total recorded over $nfiles files"
  fi
else
  fail rotation_set_exact "recorder did not start"
  [ -n "$REC_PID" ] && stop_record KILL
fi

# --- sigkill_readable
if start_record --output "$WORK/c.dtr" --interval 5ms; then
  first=$(stat -c %s "$WORK/c.dtr")  # header and first frame
  send 500 >/dev/null
  # Frames are flushed about once a second: kill once a flush after the first frame landed.
  grown() { [ "$(stat -c %s "$WORK/c.dtr")" -gt "$first" ]; }
  flushed=yes
  wait_for 10 grown || flushed=no
  stop_record KILL
  "$DIMCTL" trace show --summary "$WORK/c.dtr" >"$WORK/c.txt" 2>"$WORK/c.err"; rc=$?
  frames=$(sed -n 's/^summary: \([0-9]*\) frames.*/\1/p' "$WORK/c.txt")
  if [ "$flushed" != yes ]; then
    fail sigkill_readable "no flush after the first frame within 10 s"
  elif [ "$rc" -ne 0 ]; then
    fail sigkill_readable "trace show exited $rc: $(cat "$WORK/c.err")"
  elif [ -s "$WORK/c.err" ] && ! grep -q "warning: .*truncated frame" "$WORK/c.err"; then
    fail sigkill_readable "unexpected stderr: $(cat "$WORK/c.err")"
  elif [ "${frames:-0}" -lt 2 ]; then
    fail sigkill_readable "only ${frames:-0} frames survived"
  else
    pass sigkill_readable
    echo "    $frames frames readable after SIGKILL$(grep -q warning "$WORK/c.err" && echo ', truncated tail warned')"
  fi
else
  fail sigkill_readable "recorder did not start"
  [ -n "$REC_PID" ] && stop_record KILL
fi

print_summary
