# Helpers for the guest-side lab scripts (bash, run inside the chroot into the host userland).
# shellcheck shell=bash
T=/sys/kernel/tracing
REPORT="$LAB_OUT/lab-report.txt"
DIMCTL="$LAB_BUILD/userspace/cli/dimctl"
WORK=/tmp/lab                       # guest tmpfs
mkdir -p "$WORK"

# Network and NVMe-oF constants shared by the platform and the scenarios.
RDMA_NET=10.77.0          # veth0 (rxe0) .1, veth1 .2
RDMA2_NET=10.77.1         # veth2 (rxe1) .1, veth3 .2
NAPI_NET=10.77.2          # lab-tx (netns labtx) .1 -> lab-rx .2
NQN=nqn.2026-01.io.dimctl:lab
NVME_PORT=4420

# Process creation is expensive in the TCG guest: helpers use bash builtins only.
now() { echo "${EPOCHREALTIME/./}"; }                  # microseconds
elapsed() { local d=$(( ${EPOCHREALTIME/./} - $1 )); printf '%d.%d' $((d / 1000000)) $((d % 1000000 / 100000)); }
log() { local up _; read -r up _ </proc/uptime; echo "[$up] $*"; }

# report PASS|FAIL|SKIP name [reason...]
report() {
  local st=$1 name=$2; shift 2
  local line="$st $name"
  [ $# -gt 0 ] && line+=": $*"
  echo "$line" >>"$REPORT"
  log "$line"
}
note() { echo "# $*" >>"$REPORT"; log "# $*"; }

# report_boot : PASS boot when every module tests/lab/init loaded came up, else FAIL naming them.
report_boot() {
  local failed_mods
  failed_mods=$(sed -n 's/^modules_failed=//p' "$LAB_OUT/init.log")
  if [ -n "${failed_mods// /}" ]; then
    report FAIL boot "modules failed to load:$failed_mods"
  else
    report PASS boot "kernel $(uname -r), $(sed -n 's/^modules_loaded=//p' "$LAB_OUT/init.log") modules loaded"
  fi
}

# guest_begin TITLE : the start of a guest's main.sh: everything it prints into guest.log, an
# empty report, the title line and the boot result.
guest_begin() {
  exec > >(tee -a "$LAB_OUT/guest.log") 2>&1
  : >"$REPORT"
  note "$1: kernel $(uname -r), $(nproc) cpus, build $LAB_BUILD, scenarios $LAB_SCENARIOS"
  GUEST_T0=$(now)
  report_boot
}

# guest_end ALL [REQUIRE_PLATFORM] : the end of a guest's main.sh: the scenarios (run_scenarios,
# with $platform_ok exported to them), the guest's total time and the report's end mark.
guest_end() {
  export platform_ok
  run_scenarios "$@"
  note "time guest-total $(elapsed "$GUEST_T0")s"
  echo "# END" >>"$REPORT"
}

# run_scenarios ALL [REQUIRE_PLATFORM] : the scenarios $LAB_SCENARIOS names (`all` = ALL, a
# comma list; `none` = nothing) from the caller's SC (name -> script in $GUEST_DIR) and SC_BOUND
# (name -> seconds) arrays, each under `timeout` within what is left of the lab's time budget
# ($LAB_DEADLINE against the host's clock). A scenario that times out or prints no result line is
# reported FAIL. REQUIRE_PLATFORM=1: while $platform_ok is not 1 a scenario fails unrun.
run_scenarios() {
  local list=$LAB_SCENARIOS require_platform=${2:-0} s f t before hnow left bound rc
  [ "$list" = all ] && list=$1
  [ "$list" = none ] && list=""
  for s in ${list//,/ }; do
    f=$GUEST_DIR/${SC[$s]:-}
    [ -n "${SC[$s]:-}" ] && [ -f "$f" ] || { report FAIL "scenario-$s" "no such scenario"; continue; }
    if [ "$require_platform" = 1 ] && [ "$platform_ok" -ne 1 ]; then
      report FAIL "scenario-$s" "not run: the platform failed"
      continue
    fi
    t=$(now)
    before=$(wc -l <"$REPORT")
    read -r hnow <"$LAB_OUT/host-clock" 2>/dev/null || hnow=0
    left=$(( ${LAB_DEADLINE:-0} - hnow - 3 ))
    bound=${SC_BOUND[$s]}
    [ "$left" -lt "$bound" ] && bound=$left
    if [ "$bound" -lt 15 ]; then
      report FAIL "scenario-$s" "not run: the lab's time budget (LAB_QEMU_TIMEOUT) is used up"
      continue
    fi
    log "=== scenario $s (${SC[$s]}, bound ${bound}s)"
    timeout -k 3 "$bound" bash "$f"
    rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && report FAIL "scenario-$s" "timed out after ${bound}s"
    [ "$(wc -l <"$REPORT")" -gt "$before" ] || report FAIL "scenario-$s" "printed no result (rc=$rc)"
    note "time scenario-$s $(elapsed "$t")s"
  done
}

# wait_for SECONDS CMD... : polls CMD every 0.2 s until it succeeds or the bound expires.
wait_for() {
  local bound=$1; shift
  local end=$(( EPOCHSECONDS + bound ))
  while ! "$@" >/dev/null 2>&1; do
    [ "$EPOCHSECONDS" -ge "$end" ] && return 1
    sleep 0.2
  done
}

# dimctl_has SUBCOMMAND... : true when this build of dimctl knows the (sub)command.
# (CLI11 prints the parent's help for an unknown subcommand, so look at the listing.)
dimctl_has() {
  [ -x "$DIMCTL" ] || return 1
  local last=${!#} help
  help=$("$DIMCTL" "${@:1:$#-1}" --help 2>&1) || return 1
  [[ $help == *Subcommands:* ]] || return 1
  [[ ${help#*Subcommands:} =~ (^|$'\n')[[:space:]]+"$last"[[:space:]] ]]
}

rdma_dim_of() { # DEV -> on|off (rdma dev show -d)
  local out; out=$(rdma dev show "$1" -d 2>/dev/null)
  [[ $out =~ adaptive-moderation\ ([a-z]+) ]] && echo "${BASH_REMATCH[1]}"
}

# ---- tracefs histograms: exact in-kernel per-CQ aggregation (no ring-buffer overruns) ----
HIST_POLL='hist:keys=cq_id,rc:vals=hitcount:sort=cq_id,rc:size=4096'
HIST_PROC='hist:keys=cq_id:vals=hitcount:sort=cq_id:size=4096'
HIST_SCHED='hist:keys=cq_id:vals=hitcount:sort=cq_id:size=4096'
hist_start() {
  echo "$HIST_POLL" >"$T/events/rdma_core/cq_poll/trigger" &&
    echo "$HIST_PROC" >"$T/events/rdma_core/cq_process/trigger" &&
    echo "$HIST_SCHED" >"$T/events/rdma_core/cq_schedule/trigger"
}
hist_pause() {
  echo "$HIST_POLL:pause" >>"$T/events/rdma_core/cq_poll/trigger"
  echo "$HIST_PROC:pause" >>"$T/events/rdma_core/cq_process/trigger"
  echo "$HIST_SCHED:pause" >>"$T/events/rdma_core/cq_schedule/trigger"
}
hist_stop() {
  echo "!$HIST_POLL" >>"$T/events/rdma_core/cq_poll/trigger" 2>/dev/null
  echo "!$HIST_PROC" >>"$T/events/rdma_core/cq_process/trigger" 2>/dev/null
  echo "!$HIST_SCHED" >>"$T/events/rdma_core/cq_schedule/trigger" 2>/dev/null
  true
}
# hist_dump OUT : writes "cq_id polls completions events schedules poll_errors full_polls" per CQ
# (full_polls: polls that returned a whole IB_POLL_BATCH of 16), and fails when the kernel
# dropped histogram entries.
hist_dump() {
  local out=$1 d
  for d in poll proc sched; do
    case $d in poll) e=cq_poll ;; proc) e=cq_process ;; sched) e=cq_schedule ;; esac
    printf '%s\n' "$(<"$T/events/rdma_core/$e/hist")" >"$out.$d"
    [[ $(<"$out.$d") == *"Dropped: 0"* ]] || { echo "histogram $e dropped entries" >&2; return 1; }
  done
  awk '
    FNR==1 { f++ }
    /^\{/ {
      gsub(/[{},:]/, " ")
      # fields: cq_id N [rc M] hitcount H
      id=""; rc=""; hc=""
      for (i = 1; i <= NF; i++) {
        if ($i == "cq_id") id = $(i+1)
        else if ($i == "rc") rc = $(i+1)
        else if ($i == "hitcount") hc = $(i+1)
      }
      ids[id] = 1
      if (f == 1) {
        polls[id] += hc; if (rc > 0) comps[id] += rc * hc; if (rc < 0) errs[id] += hc
        if (rc == 16) full[id] += hc
      }
      else if (f == 2) events[id] += hc
      else sched[id] += hc
    }
    END { for (id in ids) printf "%s %d %d %d %d %d %d\n", id, polls[id], comps[id], events[id], sched[id], errs[id], full[id] }
  ' "$out.poll" "$out.proc" "$out.sched" >"$out"
}

# wait_sampled PID BOUND : waits until `dimctl list` (PID) holds its BPF links and sleeps in
# clock_nanosleep, i.e. it has attached and taken its first sample (the interval runs from
# there). Prints the number of BPF links.
wait_sampled() {
  local pid=$1 bound=$2 n f l sc
  local end=$(( EPOCHSECONDS + bound ))
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    n=0
    for f in /proc/"$pid"/fdinfo/*; do
      [ -r "$f" ] || continue
      while read -r l; do [[ $l == link_type:* ]] && { n=$((n + 1)); break; }; done 2>/dev/null <"$f"
    done
    sc=""; read -r sc _ 2>/dev/null <"/proc/$pid/syscall"
    # 230 clock_nanosleep, 35 nanosleep (x86_64)
    if [ "$n" -gt 0 ] && { [ "$sc" = 230 ] || [ "$sc" = 35 ]; }; then
      echo "$n"; return 0
    fi
    sleep 0.1
  done
  return 1
}

# Gated fio: fio is slow to start in the guest (~60 shared libraries over 9p under TCG), so
# it is started early and each job blocks in exec_prerun until its go file exists. Jobs run
# one after the other (stonewall); job J touches $WORK/fio.J.ready when it reaches its gate.
# fio_gated_start TAG "NAME:QD:NIOS:SECONDS" ... : starts fio in the background, sets FIO_PID.
fio_gated_start() {
  local tag=$1 spec name qd nios secs jf=$WORK/fio-$1.job
  shift
  rm -f "$WORK"/fio."$tag".*
  # (fio job files treat ';' as a comment: the gate is a script)
  printf '%s\n' 'touch "$1.ready"; i=0' \
    'while [ ! -e "$1.go" ] && [ $i -lt 1800 ]; do sleep 0.05; i=$((i + 1)); done' >"$WORK/fio-gate.sh"
  {
    echo "[global]"
    echo "filename=/dev/nvme0n1"
    echo "direct=1"
    echo "rw=randread"
    echo "bs=4k"
    echo "ioengine=libaio"
    echo "size=256m"
    echo "stonewall"
  } >"$jf"
  for spec in "$@"; do
    IFS=: read -r name qd nios secs <<<"$spec"
    {
      echo "[$name]"
      echo "iodepth=$qd"
      echo "number_ios=$nios"
      echo "runtime=$secs"
      echo "exec_prerun=/bin/sh $WORK/fio-gate.sh $WORK/fio.$tag.$name"
    } >>"$jf"
  done
  (cd "$WORK" && exec fio --output-format=json --output="$WORK/fio-$tag.json" "$jf" >/dev/null 2>"$WORK/fio-$tag.err") &
  FIO_PID=$!
}
fio_gated_ready() { wait_for "${3:-60}" test -e "$WORK/fio.$1.$2.ready"; }   # TAG JOB [BOUND]
fio_go() { touch "$WORK/fio.$1.$2.go"; }                                       # TAG JOB
# fio_wait TAG : waits for the gated fio (in the shell that started it, not in a $(...)
# subshell); returns fio's status.
fio_wait() {
  wait "$FIO_PID"
  local rc=$?
  [ $rc -eq 0 ] || FIO_ERR="fio exit $rc: $(tail -n 2 "$WORK/fio-$1.err" | tr '\n' ' ')"
  return $rc
}
# fio_result TAG JOB : "total_ios iops" of one job
fio_result() {
  jq -r --arg j "$2" '.jobs[] | select(.jobname == $j) | .read | "\(.total_ios) \(.iops|floor)"' "$WORK/fio-$1.json"
}
