#!/usr/bin/env bash
# Installs every Debian package dimctl needs to build, run and test, then the npm packages of the
# deploy checks (tests/unit/deploy/npm: exact versions from its package-lock.json). Idempotent and
# quiet: it only calls apt-get when something is missing, `apt-get update` only when needed, and
# npm only when node_modules is not what the lock file pins; the tests then run offline.
set -euo pipefail

PKGS=(
  # build
  build-essential cmake ninja-build pkg-config clang llvm clang-format
  libbpf-dev bpftool libelf-dev zlib1g-dev
  libibverbs-dev libmnl-dev
  libfmt-dev libspdlog-dev prometheus-cpp-dev libcpp-httplib-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  # the web config: TLS (the OpenSSL cpp-httplib is built with) and bcrypt (libxcrypt)
  libssl-dev libcrypt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # clang's runtimes (libFuzzer, ASan, UBSan): only a Recommends of clang, which is not installed
  libclang-rt-dev
  # tests
  iproute2 ethtool kmod procps python3 python3-jsonschema python3-yaml curl jq
  qemu-system-x86 busybox-static cpio nvme-cli fio
  # the net lab: unpacks its kernel modules (.ko.xz); its kernel and qemu come from the mirror
  xz-utils
  prometheus yamllint
  # test certificates for the TLS tests (unit and e2e)
  openssl
  # least privilege: setpriv (util-linux) cuts the capability sets, strace traces the daemon
  # against the unit's sandbox, systemd-analyze scores the unit (docs/SECURITY.md)
  util-linux strace systemd
  # bench (the simulator report's figures; bench/host's latency/CPU plots)
  gnuplot-nox
  # bench/host (make bench-host): UDP ping-pong, under-load and throughput on a veth pair
  sockperf
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
# node and npm for the deploy checks (tests/unit/deploy/npm; node >= 18). By command, not by
# package: a node from another source (NodeSource's nodejs bundles npm) must not be replaced,
# and Debian's npm conflicts with it.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if [ "${#missing[@]}" -gt 0 ]; then
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
fi

# The deploy checks' npm packages. The stamp holds the hash of the lock file they were installed
# from: unchanged lock, nothing to do. `npm ci` installs exactly the lock (and fails if
# package.json disagrees with it); --ignore-scripts: no package runs code at install time.
NPM_DIR="$(cd "$(dirname "$0")/.." && pwd)/tests/unit/deploy/npm"
stamp="$NPM_DIR/node_modules/.dimctl-lock.sha256"
lock_hash=$(sha256sum "$NPM_DIR/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
  echo "deps.sh: npm ci in tests/unit/deploy/npm"
  if ! (cd "$NPM_DIR" && npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error) \
    >/tmp/dimctl-npm.log 2>&1; then
    echo "deps.sh: npm ci failed; see /tmp/dimctl-npm.log" >&2
    tail -n 30 /tmp/dimctl-npm.log >&2
    exit 1
  fi
  echo "$lock_hash" >"$stamp"
fi
