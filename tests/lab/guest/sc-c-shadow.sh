#!/bin/bash
# Scenario c: `dimctl run` in shadow mode runs RDMA DIM per kernel CQ of rxe0 under NVMe-oF
# load (fio QD=32) and exports the decisions on /metrics, scraped from inside the guest, with the
# cost model compared (its sharers: the CQs of a completion vector judged together, from the
# kernel's own comp_vector and poll context). Shadow writes nothing: rxe0's kernel DIM switch is
# unchanged. Report line record-cqs: `dimctl record --devices rxe0` beside the daemon through the
# same fio run (trace format 2 with CPU times): rxe0's CQs are in the trace with their
# completions and the CPU that polled them, and `dimctl trace costs` measures that CPU's costs.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/platform.sh"
t0=$(now)
PORT=9977
[ "${platform_ok:-0}" = 1 ] || { report FAIL shadow-metrics "platform setup failed"; exit 0; }

cfg=$WORK/shadow.yaml
cat >"$cfg" <<YAML
version: 1
mode: shadow
interval: 20ms
state_file: /run/dimctl/state-shadow.json
metrics:
  listen: 127.0.0.1:$PORT
collectors:
  napi: true
  rdma: true
devices:
  - name: lab-rxe
    match:
      rdma_device: ["rxe0"]
    mode: shadow
    algorithm: rdma
    compare: model
YAML
dim_before=$(rdma_dim_of rxe0)
fio_gated_start c "shadow:32:100000000:${LAB_C_FIO_SECONDS:-8}"
"$DIMCTL" run --config "$cfg" >"$WORK/run-shadow.log" 2>&1 &
pid=$!
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics-shadow.txt"; }
if ! wait_for 60 scrape; then
  report FAIL shadow-metrics "no /metrics on 127.0.0.1:$PORT within 60 s: $(tail -n 3 "$WORK/run-shadow.log" | tr '\n' ' ')"
  kill -TERM $pid 2>/dev/null; kill "$FIO_PID" 2>/dev/null; wait
  exit 0
fi
REC_PID=""
if dimctl_has record; then
  "$DIMCTL" record --output "$WORK/c.dtr" --interval 20ms --devices rxe0 >"$WORK/rec-c.log" 2>&1 &
  REC_PID=$!
  wait_for 60 grep -qs "recording to" "$WORK/rec-c.log" || { kill -KILL "$REC_PID" 2>/dev/null; REC_PID=""; }
fi
fio_gated_ready c shadow 90
fio_go c shadow
if fio_wait c; then fio_out=$(fio_result c shadow); else fio_out=$FIO_ERR; fi
sleep 1
scrape
m=$WORK/metrics-shadow.txt
REC_RC=""
if [ -n "$REC_PID" ]; then kill -INT "$REC_PID"; wait "$REC_PID"; REC_RC=$?; fi
kill -TERM $pid 2>/dev/null
wait_for 20 bash -c "! kill -0 $pid" || kill -KILL $pid
wait $pid; rc=$?
dim_after=$(rdma_dim_of rxe0)

# dimctl_rdma_cq_dim_decisions_total{device="rxe0",cq="3",verdict="better"} 12
decisions=$(grep -E '^dimctl_rdma_cq_dim_decisions_total\{' "$m" | grep 'device="rxe0"' | awk '{s += $NF} END {print s + 0}')
dcqs=$(grep -E '^dimctl_rdma_cq_dim_decisions_total\{' "$m" | grep 'device="rxe0"' | awk '$NF > 0' | grep -o 'cq="[^"]*"' | sort -u | wc -l)
profiles=$(grep -E '^dimctl_rdma_cq_dim_profile_index\{' "$m" | grep 'device="rxe0"' | grep -c 'source="dim"')
comps=$(grep -E '^dimctl_rdma_cq_completions_total\{' "$m" | grep 'device="rxe0"' | awk '{s += $NF} END {print s + 0}')
ready=$(awk '/^dimctl_ready /{print $NF}' "$m")
# dimctl_rdma_cq_model_sharers{device="rxe0",cq="3"} 2: one of the levels, on every CQ the
# compared model runs for.
sharers=$(grep -E '^dimctl_rdma_cq_model_sharers\{' "$m" | grep 'device="rxe0"')
n_sharers=$(printf '%s\n' "$sharers" | grep -c .)
bad_sharers=$(printf '%s\n' "$sharers" | grep . | awk '{v = $NF + 0} v != 1 && v != 2 && v != 3 && v != 4 && v != 6 && v != 8 && v != 12 && v != 16' | head -n 1)
max_sharers=$(printf '%s\n' "$sharers" | grep . | awk 'BEGIN {m = 0} $NF > m {m = $NF} END {print m}')
sample=$(grep -E '^dimctl_rdma_cq_dim_decisions_total\{' "$m" | grep 'device="rxe0"' | head -n 1)
why=""
att=$(grep -cE '^dimctl_bpf_program_attached\{program="rdma_core:[a-z_]+"\} 1' "$m")
[ "$att" -ge 7 ] || why+="only $att/7 rdma_core programs attached (dimctl_bpf_program_attached); "
[ "$decisions" -gt 0 ] 2>/dev/null || why+="no dimctl_rdma_cq_dim_decisions_total>0 for rxe0; "
[ "$profiles" -gt 0 ] || why+="no dimctl_rdma_cq_dim_profile_index{source=\"dim\"} for rxe0; "
[ "$n_sharers" -gt 0 ] || why+="no dimctl_rdma_cq_model_sharers for rxe0 (compare: model); "
[ -z "$bad_sharers" ] || why+="a sharers value outside the levels: $bad_sharers; "
[ "$dim_before" = "$dim_after" ] || why+="shadow mode changed rxe0 adaptive-moderation $dim_before -> $dim_after; "
[ $rc -eq 0 ] || why+="dimctl run exited $rc on SIGTERM; "
case "$fio_out" in [0-9]*) ;; *) why+="fio failed: $fio_out; " ;; esac
if [ -z "$why" ]; then
  report PASS shadow-metrics "$decisions RDMA DIM decisions on $dcqs rxe0 CQs, $profiles profile series, $comps completions on /metrics (e.g. $sample); compared model's sharers on $n_sharers CQs, up to $max_sharers; dimctl_ready=$ready; rxe0 adaptive-moderation untouched ($dim_after); fio QD32 $fio_out (ios iops); $(elapsed "$t0")s"
else
  report FAIL shadow-metrics "$why(log: $(tail -n 2 "$WORK/run-shadow.log" | tr '\n' ' '))"
fi
cp "$m" "$LAB_OUT/metrics-shadow.txt" 2>/dev/null
cp "$WORK/run-shadow.log" "$LAB_OUT/run-shadow.log" 2>/dev/null

# record-cqs: the recording of the same fio run.
if ! dimctl_has record; then
  report SKIP record-cqs "dimctl at $DIMCTL has no 'record' command"
elif [ -z "$REC_PID" ]; then
  report FAIL record-cqs "dimctl record did not start: $(tail -n 3 "$WORK/rec-c.log" | tr '\n' ' ')"
else
  "$DIMCTL" trace show "$WORK/c.dtr" >"$WORK/c-trace.txt" 2>"$WORK/c-trace.err"; show_rc=$?
  # The summary's CQ rows: IBDEV CQ FRAMES EVENTS COMPLETIONS EXHAUSTED EVENTS/s COMPLETIONS/s.
  rcomps=$(awk '$1 == "IBDEV" {f = 1; next} f && $1 == "rxe0" {s += $5} /^CPU / {f = 0} END {print s + 0}' "$WORK/c-trace.txt")
  rcqs=$(awk '$1 == "IBDEV" {f = 1; next} f && $1 == "rxe0" && $5 > 0 {n++} /^CPU / {f = 0} END {print n + 0}' "$WORK/c-trace.txt")
  # CQ frame lines end with "cpu N" once a CQ was polled (format 2).
  poll_cpus=$(awk '$1 == "cq" && $2 == "rxe0" && $(NF-1) == "cpu" {print $NF}' "$WORK/c-trace.txt" | sort -u | tr '\n' ' ')
  version=$(sed -n 's/^file .*format version \([0-9]*\))$/\1/p' "$WORK/c-trace.txt" | head -n 1)
  "$DIMCTL" trace costs --json "$WORK/c.dtr" >"$WORK/c-costs.json" 2>"$WORK/c-costs.err"; costs_rc=$?
  measured=$(jq -r '[.cores[] | select(.confidence != "defaults") | "cpu \(.cpu): \(.confidence) completion \(.estimate.completion_ns | floor) ns interrupt \(.estimate.interrupt_ns | floor) ns"] | join("; ")' "$WORK/c-costs.json" 2>/dev/null)
  rwhy=""
  [ "$REC_RC" = 0 ] || rwhy+="dimctl record exited $REC_RC on SIGINT; "
  [ "$show_rc" -eq 0 ] || rwhy+="trace show exited $show_rc: $(head -c 200 "$WORK/c-trace.err"); "
  [ "$version" = 2 ] || rwhy+="trace format version '$version', expected 2; "
  [ "$rcqs" -gt 0 ] || rwhy+="no rxe0 CQ with completions in the trace's summary; "
  [ -n "$poll_cpus" ] || rwhy+="no rxe0 CQ line names the CPU that polled it; "
  [ "$costs_rc" -eq 0 ] || rwhy+="trace costs exited $costs_rc: $(head -c 200 "$WORK/c-costs.err"); "
  [ -n "$measured" ] || rwhy+="trace costs: every CPU still at the defaults; "
  if [ -z "$rwhy" ]; then
    report PASS record-cqs "$rcomps completions of $rcqs rxe0 CQs recorded, polled on CPU(s) ${poll_cpus% }; trace costs: $measured; $(stat -c %s "$WORK/c.dtr") bytes"
  else
    report FAIL record-cqs "$rwhy"
  fi
  cp "$WORK/c.dtr" "$WORK/c-trace.txt" "$LAB_OUT/" 2>/dev/null
fi
true
