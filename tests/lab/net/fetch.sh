#!/usr/bin/env bash
# Fetches the net lab's kernel (trixie-backports) and qemu (bookworm-backports) into
# tests/lab/cache through the machine's own Debian mirror, with a private apt configuration:
# the system's sources, lists and cache are never touched. Idempotent: a second run only checks
# the cache. The kernel pin falls back to what linux-image-amd64 names in the suite when the
# mirror no longer has it (the choice is printed and kept in cache/net-kernel.current).
set -euo pipefail
LAB_KIND=net
. "$(dirname "$0")/../lab.conf.sh"
mkdir -p "$LAB_CACHE"

# The mirror: the first Debian URI of the system's apt sources (deb822 or one-line format).
mirror() {
  local u
  u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v -- '-security' | grep -m 1 -i debian || true)
  [ -n "$u" ] || u=$(grep -h -E '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    sed -E 's/\[[^]]*\]//' | awk '{print $2}' | grep -v -- '-security' | grep -m 1 -i debian || true)
  echo "${u:-http://deb.debian.org/debian}"
}
A="$LAB_APT"
APT_OPTS=(-o "Dir::Etc::SourceList=$A/sources.list" -o "Dir::Etc::SourceParts=$A/empty"
  -o "Dir::State::Lists=$A/lists" -o "Dir::Cache=$A/cache" -o "Dir::State::Status=$A/status"
  -o "Dir::Etc::Preferences=$A/empty/none" -o "Dir::Etc::PreferencesParts=$A/empty"
  -o "APT::Get::List-Cleanup=0" -q)
apt_private_init() {
  mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/empty"
  : >"$A/status"
  local m; m=$(mirror)
  printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
    "$m" "$LAB_NET_KSUITE" "$m" "$LAB_NET_QSUITE" >"$A/sources.list.new"
  if ! cmp -s "$A/sources.list.new" "$A/sources.list"; then
    mv "$A/sources.list.new" "$A/sources.list"; rm -f "$A/lists/"*_Packages* "$A/updated"
  else
    rm -f "$A/sources.list.new"
  fi
}
apt_update() { # once per run at most
  [ -e "$A/updated.$$" ] && return 0
  echo "lab: apt-get update (private: $A, mirror $(mirror))"
  apt-get "${APT_OPTS[@]}" update >"$A/update.log" 2>&1 || { cat "$A/update.log" >&2; return 1; }
  rm -f "$A"/updated.*; touch "$A/updated.$$"
}
# download PKG=VERSION...: into the cache (kept between runs), file names printed
download() {
  local tmp f
  tmp=$(mktemp -d "$LAB_CACHE/dl.XXXXXX"); chmod 777 "$tmp"   # apt's _apt user writes here
  if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" download "$@") >"$tmp/apt.log" 2>&1; then
    cat "$tmp/apt.log" >&2; rm -rf "$tmp"; return 1
  fi
  for f in "$tmp"/*.deb; do mv "$f" "$LAB_CACHE/"; echo "$LAB_CACHE/$(basename "$f")"; done
  rm -rf "$tmp"
}
cached() { ls "$LAB_CACHE/${1}_"*"${2//:/%3a}_"*.deb 2>/dev/null | head -n 1 || true; }  # PKG VERSION

apt_private_init

# ---- kernel ----
kabi=$LAB_NET_KABI kver=$LAB_NET_KPKG_VERSION
kpkgs() { echo "linux-binary-unsigned-$1-amd64 linux-modules-$1-amd64 linux-base-$1-amd64"; }
have_kernel() {
  local p; for p in $(kpkgs "$1"); do [ -n "$(cached "$p" "$2")" ] || return 1; done
}
if ! have_kernel "$kabi" "$kver"; then
  apt_update
  if ! apt-cache "${APT_OPTS[@]}" show "linux-binary-unsigned-$kabi-amd64=$kver" >/dev/null 2>&1; then
    # The pin is gone: take what the suite's metapackage depends on.
    dep=$(apt-cache "${APT_OPTS[@]}" show "linux-image-amd64/$LAB_NET_KSUITE" 2>/dev/null |
      sed -n 's/^Depends:.*linux-image-\([^ ]*\)-amd64 (= \([^)]*\)).*/\1 \2/p' | head -n 1)
    [ -n "$dep" ] || { echo "lab: $LAB_NET_KSUITE has neither linux-binary-unsigned-$kabi-amd64=$kver nor a linux-image-amd64" >&2; exit 1; }
    read -r kabi kver <<<"$dep"
    echo "lab: kernel pin $LAB_NET_KABI=$LAB_NET_KPKG_VERSION not on the mirror; falling back to linux-image-amd64's $kabi=$kver"
  fi
  if ! have_kernel "$kabi" "$kver"; then
    echo "lab: fetching kernel $kabi ($kver) from $LAB_NET_KSUITE"
    args=(); for p in $(kpkgs "$kabi"); do args+=("$p=$kver"); done
    download "${args[@]}" >/dev/null
  fi
fi
# Record the kernel in use for this pin (net.conf.sh reads it).
pin=$LAB_NET_PIN
echo "$pin $kabi $kver" >"$LAB_NET_KSTAMP.tmp" && mv "$LAB_NET_KSTAMP.tmp" "$LAB_NET_KSTAMP"
kdir="$LAB_CACHE/kernel-$kabi"
# Of the ~3000 modules only the guest's (LAB_MODULES and what they depend on) are kept: the
# packages are unpacked into a temporary tree, the closure is copied out, the tree removed.
# A changed module list unpacks again from the cached packages.
want=$(printf '%s\n' "$kabi" "${LAB_MODULES[@]}" | sha256sum | cut -c1-16)
if [ "$(cat "$kdir/.extracted" 2>/dev/null)" != "$want" ]; then
  echo "lab: unpacking kernel $kabi: vmlinuz and the modules the guest loads"
  tmp=$(mktemp -d "$LAB_CACHE/unpack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  for p in $(kpkgs "$kabi"); do dpkg-deb -x "$(cached "$p" "$kver")" "$tmp"; done
  mdir="usr/lib/modules/$kabi-amd64"
  declare -A KO seen
  while IFS= read -r f; do
    # No basename: a fork per module would be most of this step's time (~4,000 modules).
    b=${f##*/}; b=${b%.ko}; b=${b%.ko.xz}; b=${b%.ko.zst}; KO[${b//-/_}]=$f
  done < <(find "$tmp/$mdir/kernel" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst')
  keep=()
  visit() {
    local key=${1//-/_} dep
    [ -n "${seen[$key]:-}" ] && return 0
    seen[$key]=1
    [ -n "${KO[$key]:-}" ] || return 0   # built in
    for dep in $(modinfo -F depends "${KO[$key]}" | tr ',' ' '); do visit "$dep"; done
    keep+=("${KO[$key]#"$tmp"/}")
  }
  for m in "${LAB_MODULES[@]}"; do visit "$m"; done
  rm -rf "$kdir"; mkdir -p "$kdir"
  (cd "$tmp" && cp --parents "$mdir/vmlinuz.unsigned" "$mdir/System.map" "${keep[@]}" "$kdir/") 2>/dev/null ||
    (cd "$tmp" && cp --parents "$mdir/vmlinuz.unsigned" "${keep[@]}" "$kdir/")
  cp "$tmp"/boot/config-* "$kdir/" 2>/dev/null || true
  rm -rf "$tmp"; trap - EXIT
  echo "$want" >"$kdir/.extracted"
  echo "lab: kept ${#keep[@]} modules: $(printf '%s ' "${keep[@]##*/}")"
fi

# ---- qemu ----
if [ ! -f "$LAB_QEMU_ROOT/.extracted" ]; then
  debs=()
  for p in "${LAB_NET_QEMU_PKGS[@]}"; do
    f=$(cached "$p" "") # any version of seabios/data matching below
    case $p in
      qemu-system-*) f=$(cached "$p" "$LAB_NET_QEMU_VERSION") ;;
    esac
    if [ -z "$f" ]; then
      apt_update
      case $p in
        qemu-system-*) spec="$p=$LAB_NET_QEMU_VERSION" ;;
        *) spec="$p/$LAB_NET_QSUITE" ;;
      esac
      echo "lab: fetching $spec"
      f=$(download "$spec") || { echo "lab: cannot download $spec" >&2; exit 1; }
    fi
    debs+=("$f")
  done
  echo "lab: extracting qemu $LAB_NET_QEMU_VERSION into $LAB_QEMU_ROOT"
  rm -rf "$LAB_QEMU_ROOT"; mkdir -p "$LAB_QEMU_ROOT/modules"
  for f in "${debs[@]}"; do dpkg-deb -x "$f" "$LAB_QEMU_ROOT"; done
  # Every shared library must resolve on this host (Debian 12).
  if missing=$(ldd "$LAB_QEMU" | grep 'not found'); then
    echo "lab: qemu $LAB_NET_QEMU_VERSION needs libraries this host lacks: $missing" >&2; exit 1
  fi
  touch "$LAB_QEMU_ROOT/.extracted"
fi
# (-device help would load every module qemu finds, the host qemu's too: ask for igb only)
h=$("$LAB_QEMU" -machine none -device igb,help 2>&1 || true)
[[ $h == *"igb options"* ]] || { echo "lab: $LAB_QEMU has no -device igb: $h" >&2; exit 1; }
