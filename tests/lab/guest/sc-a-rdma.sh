#!/bin/bash
# Scenario a: the RDMA BPF programs attach via ib_core's module BTF, and dimctl's per-CQ
# counters equal the tracefs ground truth exactly over the same window, at QD=1 and QD=32;
# CQ lifecycle across an NVMe-oF disconnect/connect.
#
# Window: tracefs histograms (hist triggers: exact, in-kernel, no ring-buffer loss) start
# before dimctl attaches and pause after `dimctl list --interval` has taken its second sample.
# dimctl's window is [first sample, second sample]. I/O is confined strictly inside it: fio is
# started (and pays its slow library loading) before dimctl, and waits in exec_prerun until
# dimctl's programs are attached and its first sample is taken; fio completes before the
# interval ends. Outside I/O the rdma CQs are silent: the NVMe keep-alive timeout is 3600 s (a
# keep-alive every 1800 s), no AENs fire, nothing else uses rxe0. So both windows see exactly
# the same events; the extra check "completions == 4 x I/Os" (host send+recv, target
# recv+send per read) proves the window was quiet.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/platform.sh"

if [ "${platform_ok:-0}" != 1 ]; then
  for n in rdma-attach rdma-counts-qd1 rdma-counts-qd32 rdma-cq-lifecycle; do
    report FAIL "$n" "platform setup failed (see platform lines)"
  done
  exit 0
fi

HAVE_LIST=0
dimctl_has list && HAVE_LIST=1
[ $HAVE_LIST -eq 1 ] || note "dimctl at $DIMCTL has no 'list' command: tracefs-only checks"

# cmp_window NAME LISTJSON HIST : per-CQ comparison; echoes a summary, fails on mismatch.
# Exact means: per CQ dimctl never exceeds tracefs, and per column the total shortfall equals
# the runs the kernel itself reports skipping (bpf_prog_info.recursion_misses: a tracing program
# is not re-entered on a CPU, e.g. a softirq cq_process interrupting a workqueue one). With no
# misses, every CQ must match exactly. A missed cq_poll run loses an unknown number of
# completions, so completions are only required to be exact when cq_poll had no misses.
cmp_window() {
  local name=$1 js=$2 hist=$3 mp mc ms
  jq -r '.cqs[] | select(.device == "rxe0") | "\(.cq) \(.polls) \(.completions) \(.events) \(.schedules)"' \
    "$js" | sort -n >"$WORK/$name.dimctl"
  mp=$(jq -r '[.programs[] | select(.name == "rdma_core:cq_poll") | .recursion_misses // 0] | add // 0' "$js")
  mc=$(jq -r '[.programs[] | select(.name == "rdma_core:cq_process") | .recursion_misses // 0] | add // 0' "$js")
  ms=$(jq -r '[.programs[] | select(.name == "rdma_core:cq_schedule") | .recursion_misses // 0] | add // 0' "$js")
  awk -v mpoll="$mp" -v mproc="$mc" -v msched="$ms" '
    FNR == 1 { f++ }
    f == 1 { t[$1] = $2 " " $3 " " $4 " " $5; ids[$1] = 1 }
    f == 2 { d[$1] = $2 " " $3 " " $4 " " $5; ids[$1] = 1 }
    END {
      bad = 0; n = 0; tc = 0; sp = 0; sc = 0; se = 0; ss = 0
      for (id in ids) {
        tv = (id in t) ? t[id] : "0 0 0 0"
        dv = (id in d) ? d[id] : "0 0 0 0"
        split(tv, a, " "); split(dv, b, " ")
        if (a[2] + a[3] == 0 && b[2] + b[3] == 0) continue
        n++; tc += a[2]
        sp += a[1] - b[1]; sc += a[2] - b[2]; se += a[3] - b[3]; ss += a[4] - b[4]
        if (b[1] > a[1] || b[2] > a[2] || b[3] > a[3] || b[4] > a[4]) {
          bad++; printf "cq %s dimctl above tracefs: tracefs=%s dimctl=%s; ", id, tv, dv
        } else if (tv != dv) {
          printf "cq %s tracefs polls/completions/events/schedules=%s dimctl=%s; ", id, tv, dv
        }
      }
      if (sp != mpoll || se != mproc || ss != msched || (mpoll == 0 && sc != 0)) {
        bad++
        printf "shortfall polls/completions/events/schedules=%d/%d/%d/%d vs kernel-reported misses cq_poll/cq_process/cq_schedule=%d/%d/%d; ", sp, sc, se, ss, mpoll, mproc, msched
      } else if (mpoll + mproc + msched > 0) {
        printf "shortfall = kernel-reported recursion misses (cq_poll %d, cq_process %d, cq_schedule %d); ", mpoll, mproc, msched
      }
      printf "%d active CQs, %d completions", n, tc
      exit (bad > 0)
    }' "$hist" "$WORK/$name.dimctl"
}

# window JOB QD INTERVAL NEXT : one dimctl window around fio job JOB (gated, tag "a"). The job
# has ended when job NEXT reaches its gate (stonewall) or fio exits (NEXT empty).
window() {
  local name=$1 qd=$2 ival=$3 next=$4 t0 pid nlinks="" ok=1 why="" t_io io_s
  t0=$(now)
  fio_gated_ready a "$name" 90 || { report FAIL "rdma-counts-$name" "fio job $name did not reach its gate within 90 s: $(tail -n 2 "$WORK/fio-a.err" | tr '\n' ' ')"; return 1; }
  hist_start || { report FAIL "rdma-counts-$name" "cannot install tracefs hist triggers"; return 1; }
  if [ $HAVE_LIST -eq 1 ]; then
    "$DIMCTL" list --json --interval "$ival" >"$WORK/list-$name.json" 2>"$WORK/list-$name.err" &
    pid=$!
    if ! nlinks=$(wait_sampled $pid 60); then
      ok=0; why="dimctl list did not attach and sample within 60 s: $(tail -n 2 "$WORK/list-$name.err" | tr '\n' ' ')"
    fi
  fi
  t_io=$(now)
  fio_go a "$name"
  if [ -n "$next" ]; then
    fio_gated_ready a "$next" 60 || { ok=0; why="fio job $name did not finish within 60 s"; }
  else
    fio_wait a || { ok=0; why="$FIO_ERR"; }
  fi
  io_s=$(elapsed "$t_io")
  if [ $HAVE_LIST -eq 1 ]; then
    if ! kill -0 $pid 2>/dev/null; then
      [ $ok -eq 0 ] || { ok=0; why="dimctl's interval (${ival}s) ended before fio job $name finished (${io_s}s after go): window too short"; }
    fi
    wait $pid || { [ $ok -eq 0 ] || { ok=0; why="dimctl list failed: $(tail -n 3 "$WORK/list-$name.err" | tr '\n' ' ')"; }; }
    cp "$WORK/list-$name.json" "$WORK/list-$name.err" "$LAB_OUT/" 2>/dev/null
  else
    sleep 1
  fi
  hist_pause
  hist_dump "$WORK/hist-$name" || { ok=0; why="tracefs histogram dropped entries"; }
  hist_stop
  local tcomp; tcomp=$(awk '{s += $3} END {print s + 0}' "$WORK/hist-$name")
  WIN_COMPS[$name]=$tcomp
  if [ $ok -eq 0 ]; then
    report FAIL "rdma-counts-$name" "$why"
    return 1
  fi
  if [ $HAVE_LIST -eq 0 ]; then
    WIN_RESULT[$name]="SKIP|dimctl list missing; tracefs alone: $tcomp completions in the window"
    return 0
  fi
  [ "$name" = qd1 ] && attach_check "$WORK/list-$name.json" "$nlinks"
  local res cpus nocpu exh full
  # Every CQ that was polled names the CPU of its latest poll (the core its
  # completions cost), a CPU this guest has.
  cpus=$(nproc --all)
  nocpu=$(jq -r --argjson n "$cpus" '[.cqs[] | select(.device == "rxe0" and .polls > 0)
      | select(.cpu == null or .cpu >= $n) | "cq \(.cq) cpu=\(.cpu)"] | join(", ")' \
    "$WORK/list-$name.json")
  # Budget exhaustion: a pass ends at its budget only with 256 completions (softirq;
  # 65536 workqueue) waiting. At QD <= 32 the whole system has at most 2 x 32 host and 2 x 32
  # target completions outstanding, so no pass can: every CQ must count 0, whatever the polls
  # that returned a full batch of 16 (which a per-poll rule would miscount as exhaustion).
  exh=$(jq -r '[.cqs[] | select(.device == "rxe0" and ((.budget_exhausted // -1) != 0))
      | "cq \(.cq) budget_exhausted=\(.budget_exhausted) events=\(.events)"] | join(", ")' \
    "$WORK/list-$name.json")
  full=$(awk '{s += $7} END {print s + 0}' "$WORK/hist-$name")
  if ! res=$(cmp_window "$name" "$WORK/list-$name.json" "$WORK/hist-$name"); then
    WIN_RESULT[$name]="FAIL|$res"
  elif [ -n "$nocpu" ]; then
    WIN_RESULT[$name]="FAIL|polled CQs without a CPU in 0..$((cpus - 1)): $nocpu"
  elif [ -n "$exh" ]; then
    WIN_RESULT[$name]="FAIL|CQs with passes at their budget where none can be (QD $qd): $exh ($full polls returned a full batch)"
  else
    WIN_RESULT[$name]="PASS|dimctl == tracefs per CQ (polls, completions, events, schedules; less kernel-reported misses), every polled CQ's CPU reported, no pass at its budget ($full polls returned a full batch of 16): $res; I/O ${io_s}s, window ${ival}s, $(elapsed "$t0")s"
  fi
}

attach_check() {
  local js=$1 nlinks=$2 bad
  bad=$(jq -r '[.programs[] | select(.name | startswith("rdma_core:")) | select(.attached != true or .attach_type != "tp_btf") | "\(.name) attached=\(.attached) type=\(.attach_type) \(.reason)"] | join("; ")' "$js")
  local n; n=$(jq '[.programs[] | select(.name | startswith("rdma_core:"))] | length' "$js")
  if [ "$n" -ge 7 ] && [ -z "$bad" ]; then
    report PASS rdma-attach "$n rdma_core programs attached as tp_btf via /sys/kernel/btf/ib_core ($nlinks BPF links held by dimctl)"
  else
    # Diagnose with bpftool: load the same object, keep the verifier log.
    local obj; obj=$(ls "$LAB_BUILD"/bpf/*/rdma.bpf.o 2>/dev/null | head -n 1)
    local diag=""
    if [ -n "$obj" ] && command -v bpftool >/dev/null; then
      mkdir -p /sys/fs/bpf/labdiag
      bpftool -d prog loadall "$obj" /sys/fs/bpf/labdiag >"$LAB_OUT/bpf-rdma-verifier.log" 2>&1
      rm -rf /sys/fs/bpf/labdiag
      diag=$(grep -B8 -E 'expected=|invalid |not allowed|unknown func' "$LAB_OUT/bpf-rdma-verifier.log" | grep -E '^; |expected=|invalid |not allowed|unknown func' | tail -n 2 | tr '\n' ' ')
      diag="; bpftool loadall of $obj -> out/bpf-rdma-verifier.log: $diag"
    fi
    report FAIL rdma-attach "expected 7 rdma_core:* programs attached as tp_btf, got $n; not: ${bad:-none}; dimctl said: $(grep -m1 -i 'rdma.bpf.o' "${js%.json}.err" | cut -c1-200)$diag"
  fi
}

# One fio process, two gated jobs (its start-up is paid once, before any window).
declare -A WIN_RESULT WIN_COMPS
fio_gated_start a "qd1:1:${LAB_A_QD1_IOS:-200}:5" "qd32:32:${LAB_A_QD32_IOS:-3000}:5"
window qd1 1 "${LAB_A_INTERVAL:-15}" qd32
window qd32 32 "${LAB_A_INTERVAL:-15}" ""
kill -0 "$FIO_PID" 2>/dev/null && { kill "$FIO_PID"; wait "$FIO_PID"; }
for name in qd1 qd32; do
  [ -n "${WIN_RESULT[$name]:-}" ] || continue
  qd=${name#qd}
  ios=$(fio_result a "$name"); n=${ios%% *}
  quiet="tracefs completions ${WIN_COMPS[$name]} = 4 x $n I/Os"
  st=${WIN_RESULT[$name]%%|*}; msg=${WIN_RESULT[$name]#*|}
  if [ "${WIN_COMPS[$name]}" != $((4 * ${n:-0})) ]; then
    quiet="tracefs completions ${WIN_COMPS[$name]} != 4 x $n I/Os: the window was not quiet"
    [ "$st" = PASS ] && st=FAIL
  fi
  report "$st" "rdma-counts-$name" "$msg; fio QD$qd: $ios (ios iops); $quiet"
done
[ $HAVE_LIST -eq 1 ] || report SKIP rdma-attach "dimctl list missing"

# ---- lifecycle -------------------------------------------------------------------------
# nvme-rdma (host, IB_POLL_SOFTIRQ) and nvmet-rdma (target, IB_POLL_WORKQUEUE) take their CQs
# from ib_core's per-device CQ pool, which lives until the device is unregistered, and the MAD
# layer allocates its CQ (IB_POLL_UNBOUND_WORKQUEUE) when the device registers. So the
# lifecycle is exercised with a fresh device: within one dimctl window, `rdma link add rxe2`,
# a second subsystem (same nullb0) exported on rxe2's address, `nvme connect` over it and 16
# reads -> cq_alloc for rxe2's MAD CQ and pool CQs. dimctl must report every new CQ that saw
# activity with device rxe2 and the nr_cqe / comp_vector / poll ctx of its cq_alloc. After the
# window: disconnect, port removal and `rdma link delete rxe2` -> cq_free for all of them
# (tracefs); a second short `dimctl list` must not list any rxe2 CQ (retired/gone).
LNET=10.77.3
NQN2=$NQN-2
t0=$(now)
echo 0 >"$T/tracing_on"; echo >"$T/trace"
echo 1 >"$T/events/rdma_core/cq_alloc/enable"; echo 1 >"$T/events/rdma_core/cq_free/enable"
echo 1 >"$T/tracing_on"
if [ $HAVE_LIST -eq 1 ]; then
  "$DIMCTL" list --json --interval "${LAB_A_INTERVAL_LIFE:-15}" >"$WORK/list-life.json" 2>"$WORK/list-life.err" &
  pid=$!
  wait_sampled $pid 60 >/dev/null
fi
c=/sys/kernel/config/nvmet
err=""
life_up() {
  ip -batch - <<IP || return 1
link add veth4 type veth peer name veth5
addr add $LNET.1/24 dev veth4
link set veth4 up
link set veth5 up
IP
  rdma link add rxe2 type rxe netdev veth4 || return 1
  mkdir "$c/subsystems/$NQN2" "$c/subsystems/$NQN2/namespaces/1" "$c/ports/2" || return 1
  echo 1 >"$c/subsystems/$NQN2/attr_allow_any_host"
  echo -n /dev/nullb0 >"$c/subsystems/$NQN2/namespaces/1/device_path"
  echo 1 >"$c/subsystems/$NQN2/namespaces/1/enable" || return 1
  echo rdma >"$c/ports/2/addr_trtype"; echo ipv4 >"$c/ports/2/addr_adrfam"
  echo "$LNET.1" >"$c/ports/2/addr_traddr"; echo "$NVME_PORT" >"$c/ports/2/addr_trsvcid"
  ln -s "$c/subsystems/$NQN2" "$c/ports/2/subsystems/$NQN2" || return 1
  nvme connect -t rdma -a "$LNET.1" -s "$NVME_PORT" -n "$NQN2" -k 3600 \
    --hostnqn="nqn.2014-08.org.nvmexpress:uuid:$HOSTID" --hostid="$HOSTID" || return 1
  # the new namespace: the block device that is not nvme0n1
  wait_for 20 bash -c 'ls /dev/nvme*n1 | grep -qv "^/dev/nvme0n1$"' || { echo "no namespace block device for $NQN2"; return 1; }
  local b; b=$(ls /dev/nvme*n1 | grep -v '^/dev/nvme0n1$' | head -n 1)
  dd if="$b" of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || { echo "reads on $b failed"; return 1; }
  return 0
}
life_down() {
  nvme disconnect -n "$NQN2" >/dev/null || return 1
  rm -f "$c/ports/2/subsystems/$NQN2"
  rmdir "$c/ports/2"
  echo 0 >"$c/subsystems/$NQN2/namespaces/1/enable"
  rmdir "$c/subsystems/$NQN2/namespaces/1" "$c/subsystems/$NQN2"
  rdma link delete rxe2 || return 1
  ip link del veth4
}
up_out=$(life_up 2>&1) || err="rxe2 + connect over it failed: $(echo "$up_out" | tail -n 2 | tr '\n' ' ')"
if [ $HAVE_LIST -eq 1 ]; then
  kill -0 $pid 2>/dev/null || err="$err dimctl's interval ended before connect + reads on rxe2 finished"
  wait $pid || err="$err dimctl list failed: $(tail -n 2 "$WORK/list-life.err" | tr '\n' ' ')"
  cp "$WORK/list-life.json" "$LAB_OUT/list-life.json" 2>/dev/null
fi
grep -E 'cq_alloc:' "$T/trace" >"$WORK/life-alloc.trace"
echo >"$T/trace"
down_out=$(life_down 2>&1) || err="$err teardown failed: $(echo "$down_out" | tail -n 2 | tr '\n' ' ')"
echo 0 >"$T/events/rdma_core/cq_alloc/enable"; echo 0 >"$T/events/rdma_core/cq_free/enable"
grep -E 'cq_free:' "$T/trace" >"$WORK/life-free.trace"
echo >"$T/trace"
after=""
if [ $HAVE_LIST -eq 1 ] && [ -z "$err" ]; then
  "$DIMCTL" list --json --interval 0.5 >"$WORK/list-after.json" 2>>"$WORK/list-life.err" &&
    after=$(jq -r '[.cqs[] | select(.device == "rxe2") | .cq] | join(",")' "$WORK/list-after.json")
fi
# "cq_alloc: cq.id=5 nr_cqe=128 comp_vector=0 poll_ctx=SOFTIRQ"
awk '{ delete v; for (i = 1; i <= NF; i++) if ($i ~ /=/) { split($i, kv, "="); v[kv[1]] = kv[2] }
       print v["cq.id"], v["nr_cqe"], v["comp_vector"], tolower(v["poll_ctx"]) }' "$WORK/life-alloc.trace" >"$WORK/life.alloc"
awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^cq.id=/) { split($i, kv, "="); print kv[2] } }' "$WORK/life-free.trace" | sort -n | tr '\n' ' ' >"$WORK/life.free"
nalloc=$(wc -l <"$WORK/life.alloc"); nfree=$(wc -w <"$WORK/life.free")
alloc_ids=$(cut -d' ' -f1 "$WORK/life.alloc" | sort -n | tr '\n' ' ')
ctxs=$(cut -d' ' -f4 "$WORK/life.alloc" | sort | uniq -c | awk '{printf "%s%s x%s", (NR>1?", ":""), $2, $1}')
if [ -n "$err" ]; then
  report FAIL rdma-cq-lifecycle "$err"
elif [ "$nalloc" -eq 0 ] || [ "$alloc_ids" != "$(<"$WORK/life.free")" ]; then
  report FAIL rdma-cq-lifecycle "tracefs: cq_alloc ids [$alloc_ids] on rxe2 add + connect, cq_free ids [$(<"$WORK/life.free")] on disconnect + delete: expected the same set"
elif [ $HAVE_LIST -eq 0 ]; then
  report SKIP rdma-cq-lifecycle "dimctl list missing; tracefs: $nalloc cq_alloc ($ctxs) on rxe2 add + connect, the same $nfree ids freed on disconnect + delete"
else
  jq -r '.cqs[] | select(.device == "rxe2") | "\(.cq) \(.nr_cqe) \(.comp_vector) \(.poll_ctx) \(.events)"' "$WORK/list-life.json" >"$WORK/life.dimctl"
  res=$(awk '
    FNR == 1 { f++ }
    f == 1 { a[$1] = $2 " " $3 " " $4 }
    f == 2 { d[$1] = $2 " " $3 " " $4; ev[$1] = $5 }
    END {
      bad = 0; n = 0
      for (id in d) {
        if (!(id in a)) { bad++; printf "dimctl lists rxe2 cq %s that tracefs did not see allocated; ", id; continue }
        n++
        if (d[id] != a[id]) { bad++; printf "cq %s: cq_alloc nr_cqe/comp_vector/poll_ctx=%s, dimctl=%s; ", id, a[id], d[id] }
      }
      printf "%d of %d new rxe2 CQs reported by dimctl with nr_cqe/comp_vector/poll ctx equal to cq_alloc", n, length(a)
      exit (bad > 0 || n == 0)
    }' "$WORK/life.alloc" "$WORK/life.dimctl")
  rc=$?
  if [ -n "$after" ]; then
    report FAIL rdma-cq-lifecycle "rxe2 CQs [$after] still listed by dimctl after they were freed; $res"
  elif [ $rc -eq 0 ]; then
    report PASS rdma-cq-lifecycle "$res; tracefs: $nalloc cq_alloc ($ctxs) on rxe2 add + connect, the same $nfree ids freed on disconnect + delete, none listed afterwards; $(elapsed "$t0")s"
  else
    report FAIL rdma-cq-lifecycle "$res"
  fi
fi
cp "$WORK"/list-*.err "$LAB_OUT/" 2>/dev/null
log "lifecycle: alloc"; cat "$WORK/life.alloc"; log "free: $(<"$WORK/life.free")"; cat "$WORK/life.dimctl" 2>/dev/null
true
