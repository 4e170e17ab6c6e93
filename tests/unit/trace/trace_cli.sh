#!/usr/bin/env bash
# `dimctl trace show`, `dimctl trace costs`' errors and `dimctl record`'s flag checks as an operator meets them: exit codes
# 0/2 and the text printed (no root: record's flags are checked before anything is attached).
# usage: trace_cli.sh DIMCTL FIXTURE
set -uo pipefail
DIMCTL=$1
FIXTURE=$2
# shellcheck source=tests/support/cli_checks.sh
source "$(dirname "$0")/../../support/cli_checks.sh"

# record: every bad flag is a usage error naming the flag, before any BPF work.
run rec_interval 2 record --output "$TMP/x.dtr" --interval 20x
expect_in rec_interval err "--interval '20x' is not a duration"
run rec_interval_range 2 record --output "$TMP/x.dtr" --interval 100us
expect_in rec_interval_range err "--interval 100us is out of range 1ms..3600s"
run rec_duration 2 record --output "$TMP/x.dtr" --duration soon
expect_in rec_duration err "--duration 'soon' is not a duration"
run rec_size 2 record --output "$TMP/x.dtr" --max-bytes 12Q
expect_in rec_size err "--max-bytes '12Q' is not a size"
run rec_small 2 record --output "$TMP/x.dtr" --max-bytes 1K
expect_in rec_small err "--max-bytes 1K is below the minimum of 4096 bytes"
run rec_keep 2 record --output "$TMP/x.dtr" --keep -1
run rec_no_output 2 record
expect_in rec_no_output err "--output is required"
[ -e "$TMP/x.dtr" ] && fail "a usage error created the output file"

# trace show on the fixture.
run show 0 trace show "$FIXTURE"
expect_in show out "format version 1"
expect_in show out "note      dimctl record --interval 20ms --duration 4s --devices dimdemo0"
expect_in show out "frame 0 t="
expect_in show out "  dimdemo0 "
expect_in show out "summary: 200 frames"
run summary 0 trace show --summary "$FIXTURE"
expect_not_in summary out "frame 1 "
expect_in summary out "summary: 200 frames"
grep -Eq '^dimdemo0 +[0-9]+ +[0-9]+ .* 26229 ' "$TMP/summary.out" ||
  fail "summary: no dimdemo0 row with 26229 packets: $(cat "$TMP/summary.out")"

# A truncated copy: a warning, the frames before, exit 0.
size=$(stat -c %s "$FIXTURE")
head -c $((size - 5)) "$FIXTURE" >"$TMP/cut.dtr"
run cut 0 trace show --summary "$TMP/cut.dtr"
expect_in cut err "warning: $TMP/cut.dtr: truncated frame at byte"
expect_in cut out "summary: 199 frames"

# A corrupt last CRC: an error naming file and offset, exit 2, totals of what was read.
cp "$FIXTURE" "$TMP/bad.dtr"
last=$(tail -c 1 "$FIXTURE" | od -An -tu1 | tr -d ' ')
printf "\\$(printf %03o $(((last + 1) % 256)))" | dd of="$TMP/bad.dtr" bs=1 seek=$((size - 1)) conv=notrunc status=none
run bad 2 trace show --summary "$TMP/bad.dtr"
expect_in bad err "$TMP/bad.dtr: frame checksum mismatch at byte"
expect_in bad out "summary: 199 frames"

echo "just text" >"$TMP/text.dtr"
run text 2 trace show "$TMP/text.dtr"
expect_in text err "not a dimctl trace (bad magic at byte 0)"
run missing 2 trace show "$TMP/none.dtr"
expect_in missing err "cannot open $TMP/none.dtr"
run missing_set 2 trace show --rotation-set "$TMP/none.dtr"
expect_in missing_set err "no trace at $TMP/none.dtr"
run no_sub 2 trace

# A rotation set is read oldest first: FILE.1 then FILE.
cp "$FIXTURE" "$TMP/set.dtr.1"
cp "$FIXTURE" "$TMP/set.dtr"
run set 0 trace show --summary --rotation-set "$TMP/set.dtr"
expect_in set out "file      $TMP/set.dtr.1 ("
expect_in set out "summary: 400 frames"

# trace costs: the fixture (format 1) has no CPU times; bad flags and files are usage errors.
run costs_v1 2 trace costs "$FIXTURE"
expect_in costs_v1 err "the trace has no CPU times (format 1, or recorded with --no-cpu-times)"
run costs_every 2 trace costs --every soon "$FIXTURE"
expect_in costs_every err "--every 'soon' is not a positive duration"
run costs_missing 2 trace costs "$TMP/none.dtr"
expect_in costs_missing err "cannot open $TMP/none.dtr"
run costs_text 2 trace costs "$TMP/text.dtr"
expect_in costs_text err "not a dimctl trace (bad magic at byte 0)"

# sim --cost trace: the replayed trace's own costs, so it needs a trace with CPU times.
run sim_cost_v1 2 sim --trace "$FIXTURE" --cost trace --policy none --dry-run
expect_in sim_cost_v1 err "--cost trace: trace $FIXTURE: no CPU times"
run sim_cost_no_trace 2 sim --workload "$(dirname "$0")/../../../bench/sim/workloads/h1-napi-pingpong.yaml" --cost trace --policy none --dry-run
expect_in sim_cost_no_trace err "--cost trace: the costs measured in a trace, needs --trace FILE"

cli_checks_done "trace CLI"
