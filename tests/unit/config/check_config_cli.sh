#!/usr/bin/env bash
# `dimctl check-config` as an operator runs it: exit codes 0/2 and the text printed.
# usage: check_config_cli.sh DIMCTL TEST_DIR DEPLOY_CONFIG_DIR
set -uo pipefail
DIMCTL=$1
TESTS=$2
DEPLOY=$3
# shellcheck source=tests/support/cli_checks.sh
source "$(dirname "$0")/../../support/cli_checks.sh"

# Every shipped config is valid.
for f in "$DEPLOY"/dimctl.yaml "$DEPLOY"/examples/*.yaml; do
  run shipped 0 check-config "$f"
  expect_in shipped out "$f: OK"
done

# A good file: OK plus the summary.
run good 0 check-config "$TESTS/good/full.yaml"
expect_in good out "$TESTS/good/full.yaml: OK"
expect_in good out "mode: observe (devices named by no rule: observe, never written)"
expect_in good out "lab-tun: mode enforce, algorithm net-cqe (compare: model), match interface=dimtap*,tap[0-3] driver=tun"
[ -s "$TMP/good.err" ] && fail "good: unexpected stderr: $(cat "$TMP/good.err")"

# Decimal durations and former label spellings: read, and written the config's way.
run compat 0 check-config "$TESTS/good/compat.yaml"
expect_in compat out "interval: 1.5ms, metrics:"
expect_in compat out "former-label: mode shadow, algorithm net-cqe, match interface=eth*"
expect_in compat out "former-model: mode shadow, algorithm model-cqe, match interface=ens*"

# A bad file: exit 2, "file:line:column: key: reason" on stderr, nothing claiming OK.
bad="$TESTS/bad/profiles-min-above-max.yaml"
run bad 2 check-config "$bad"
expect_in bad err "$bad:9:12: devices[0].profiles.max: max 1 is below min 3"
expect_in bad err "$bad: invalid (1 error)"
grep -q "OK" "$TMP/bad.out" && fail "bad: stdout claims OK"

# Several errors: each on its own line.
printf 'mode: enforcing\ninterval: 20\nmetrics:\n  listen: nowhere\n' >"$TMP/multi.yaml"
run multi 2 check-config "$TMP/multi.yaml"
expect_in multi err "$TMP/multi.yaml:1:7: mode: 'enforcing' is not one of observe, shadow, enforce; did you mean 'enforce'?"
expect_in multi err "$TMP/multi.yaml:2:11: interval: '20' has no unit"
expect_in multi err "$TMP/multi.yaml:4:11: metrics.listen: bad listen address 'nowhere'"
expect_in multi err "invalid (3 errors)"

# --web.listen-address is read by the config's own parser, before anything starts: a text
# metrics.listen refuses is a usage error (exit 2) naming the flag, never a failed bind later.
for addr in example.com:9977 127.0.0.1:0 nowhere; do
  run "flag-$addr" 2 run --config "$TESTS/good/full.yaml" --web.listen-address "$addr"
  # The daemon logs (spdlog) on stdout.
  expect_in "flag-$addr" out "--web.listen-address: bad listen address '$addr'"
done

# Unreadable file and usage errors are exit 2 as well.
run missing 2 check-config "$TMP/does-not-exist.yaml"
expect_in missing err "cannot open config: No such file or directory"
run noarg 2 check-config

# --devices against a fake sysfs: allowlist, unnamed devices, a conflict, an RDMA device.
mkdir -p "$TMP/sys/drivers/tun" "$TMP/sys/drivers/virtio_net" "$TMP/sys/drivers/rdma_rxe"
for spec in net/dimtap0:tun net/eth0:virtio_net net/ens1:virtio_net infiniband/rxe0:rdma_rxe; do
  dev=${spec%%:*}
  drv=${spec##*:}
  mkdir -p "$TMP/sys/class/$dev/device"
  ln -s "$TMP/sys/drivers/$drv" "$TMP/sys/class/$dev/device/driver"
done
cat >"$TMP/devices.yaml" <<'YAML'
devices:
  - name: lab
    match: {interface: ["dimtap*"], driver: tun}
    mode: enforce
  - name: eth-shadow
    match: {interface: ["eth*"]}
    mode: shadow
  - name: virtio-observe
    match: {driver: virtio_net}
    mode: observe
  - name: rxe
    match: {rdma_device: ["rxe*"]}
    kernel_dim: on
  - name: unused
    match: {interface: nothing0}
YAML
run devices 0 check-config --devices --sysfs "$TMP/sys" "$TMP/devices.yaml"
out="$TMP/devices.out"
grep -qE '^  net +dimtap0 +tun +lab +enforce +net-eqe +allowlisted: written$' "$out" ||
  fail "devices: dimtap0 line wrong: $(cat "$out")"
grep -qE "^  net +eth0 +virtio_net +- +observe +net-eqe +CONFLICT, refused: matched by rules 'eth-shadow' \(mode shadow\) and 'virtio-observe' \(mode observe\)$" "$out" ||
  fail "devices: eth0 conflict line wrong: $(cat "$out")"
grep -qE '^  net +ens1 +virtio_net +virtio-observe +observe ' "$out" || fail "devices: ens1 line wrong"
grep -qE '^  rdma +rxe0 +rdma_rxe +rxe +shadow +rdma +allowlisted$' "$out" || fail "devices: rxe0 line wrong"
expect_in devices out "rule 'unused' matches no device on this host"
expect_in devices out "1 device(s) in conflict"

cli_checks_done "check-config CLI"
