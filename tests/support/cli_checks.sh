# shellcheck shell=bash
# Sourced by the CLI test scripts (tests/unit/*/..._cli.sh): run dimctl as an operator would and
# check exit codes and printed text. Sets TMP (removed at exit) and counts failures in `fails`;
# the script ends with `cli_checks_done NAME`.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}

# run NAME WANT_RC ARGS...: runs $DIMCTL, keeps stdout/stderr in $TMP/NAME.{out,err}.
run() {
  local name=$1 want=$2
  shift 2
  "$DIMCTL" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$name: exit $rc, want $want"
    sed 's/^/  stdout: /' "$TMP/$name.out" | head -n 20 >&2
    sed 's/^/  stderr: /' "$TMP/$name.err" >&2
  fi
}

expect_in() {  # expect_in NAME out|err TEXT
  grep -qF -- "$3" "$TMP/$1.$2" || {
    fail "$1: '$3' not in $2"
    sed "s/^/  $2: /" "$TMP/$1.$2" | head -n 40 >&2
  }
}

expect_not_in() {  # expect_not_in NAME out|err TEXT
  if grep -qF -- "$3" "$TMP/$1.$2"; then fail "$1: $2 has '$3'"; fi
}

# cli_checks_done NAME: the summary line and the exit status.
cli_checks_done() {
  if [ "$fails" -ne 0 ]; then
    echo "$1: $fails check(s) failed" >&2
    exit 1
  fi
  echo "$1: all checks passed"
  exit 0
}
