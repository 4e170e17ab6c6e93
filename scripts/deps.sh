#!/usr/bin/env bash
# Installs every Debian package dimctl needs to build, run and test. Idempotent and quiet:
# it only calls apt-get when something is missing, and `apt-get update` only when needed.
set -euo pipefail

PKGS=(
  # build
  build-essential cmake ninja-build pkg-config clang llvm clang-format
  libbpf-dev bpftool libelf-dev zlib1g-dev
  libibverbs-dev libmnl-dev
  libfmt-dev libspdlog-dev prometheus-cpp-dev libcpp-httplib-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # clang's runtimes (libFuzzer, ASan, UBSan): only a Recommends of clang, which is not installed
  libclang-rt-dev
  # tests
  iproute2 ethtool kmod procps python3 python3-jsonschema python3-yaml curl jq
  qemu-system-x86 busybox-static cpio nvme-cli fio
  prometheus yamllint
  # bench (the simulator report's figures)
  gnuplot-nox
)

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: must run as root (try: sudo make ...)" >&2
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has empty lists; an old list may name versions the mirror no longer has.
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/dimctl-apt.log 2>&1; then
  apt-get update -qq >>/tmp/dimctl-apt.log 2>&1
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/dimctl-apt.log 2>&1; then
    echo "deps.sh: apt-get install failed; see /tmp/dimctl-apt.log" >&2
    tail -n 30 /tmp/dimctl-apt.log >&2
    exit 1
  fi
fi
echo "deps.sh: done"
