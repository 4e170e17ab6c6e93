#!/usr/bin/env bash
# e2e: Debian's `promtool check web-config` and `dimctl check-config --web.config.file` judge the
# same files alike (docs/METRICS.md, "Securing the endpoint"):
#   cases/valid/*.yml     both accept (exit 0)
#   cases/invalid/*.yml   both refuse (promtool non-zero, dimctl exit 2 naming the file)
#   cases/stricter/*.yml  promtool accepts, dimctl refuses: where dimctl is stricter on purpose
#                         (each documented); a change on either side shows up here
# The files name certificates made by tests/support/pki.sh, in a scratch directory.
#
# usage: agree.sh DIMCTL_BINARY      exit 0 pass, 1 fail, 77 skipped (no promtool)
set -euo pipefail

DIMCTL=${1:?usage: agree.sh DIMCTL_BINARY}
PROMTOOL=${PROMTOOL:-$(command -v promtool || true)}
if [ -z "$PROMTOOL" ]; then
  echo "SKIP: promtool not installed (apt-get install prometheus)"
  exit 77
fi
command -v openssl >/dev/null || { echo "FAIL: openssl is required"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/dimctl-e2e-webcfg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bash "$here/../../support/pki.sh" "$tmp"

failed=0
count=0
for kind in valid invalid stricter; do
  for f in "$here/cases/$kind"/*.yml; do
    name=$(basename "$f")
    cp "$f" "$tmp/$name"
    set +e
    p_out=$("$PROMTOOL" check web-config "$tmp/$name" 2>&1)
    p=$?
    d_out=$("$DIMCTL" check-config --web.config.file "$tmp/$name" 2>&1)
    d=$?
    set -e
    case $kind in
      valid) want_p=0 want_d=0 ;;
      *) want_p=$([ "$kind" = invalid ] && echo 1 || echo 0) want_d=2 ;;
    esac
    p_ok=$([ "$want_p" -eq 0 ] && [ "$p" -eq 0 ] || { [ "$want_p" -ne 0 ] && [ "$p" -ne 0 ]; } && echo 1 || echo 0)
    if [ "$p_ok" = 1 ] && [ "$d" -eq "$want_d" ]; then
      printf 'ok: %-8s %-36s promtool=%d dimctl=%d\n' "$kind" "$name" "$p" "$d"
    else
      printf 'FAIL: %-8s %-36s promtool=%d dimctl=%d\n  promtool: %s\n  dimctl: %s\n' \
        "$kind" "$name" "$p" "$d" "$p_out" "$d_out"
      failed=1
    fi
    # A refusal names the file (and, for what YAML can place, the line).
    if [ "$d" -ne 0 ] && ! grep -q "$name" <<<"$d_out"; then
      echo "FAIL: dimctl's refusal of $name does not name the file: $d_out"
      failed=1
    fi
    count=$((count + 1))
  done
done
# What deploy/kubernetes/make-web-config.sh writes for the DaemonSet's Secret: both accept it.
if bash "$here/../../../deploy/kubernetes/make-web-config.sh" "$tmp/made" >/dev/null 2>&1 &&
  "$PROMTOOL" check web-config "$tmp/made/web.yml" >/dev/null 2>&1 &&
  "$DIMCTL" check-config --web.config.file "$tmp/made/web.yml" >/dev/null 2>&1; then
  echo "ok: deploy/kubernetes/make-web-config.sh's web.yml: both accept it"
else
  echo "FAIL: deploy/kubernetes/make-web-config.sh's web.yml is not accepted by both"
  failed=1
fi
echo "$count files: $(ls "$here"/cases/valid/*.yml | wc -l) valid, $(ls "$here"/cases/invalid/*.yml | wc -l) invalid, $(ls "$here"/cases/stricter/*.yml | wc -l) stricter"
exit "$failed"
