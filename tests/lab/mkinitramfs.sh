#!/usr/bin/env bash
# Builds the guest initramfs (busybox-static + the lab modules + /init) into tests/lab/cache.
# Idempotent: rebuilt only when /init, the module list, the kernel or busybox change.
set -euo pipefail
. "$(dirname "$0")/lab.conf.sh"
BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || { echo "lab: busybox-static missing (scripts/deps.sh installs it)" >&2; exit 1; }
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
  { ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' || { echo "lab: $BUSYBOX is not static" >&2; exit 1; }; }

stamp=$( { cat "$LAB_DIR/init" "$LAB_DIR/mkinitramfs.sh"; printf '%s\n' "$LAB_KVER" "${LAB_MODULES[@]}"; sha256sum "$BUSYBOX"; } | sha256sum | cut -c1-16)
if [ -s "$LAB_INITRD" ] && [ "$(cat "$LAB_INITRD.stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi

# name -> path of every module of the pinned kernel ('-' and '_' are the same to the kernel).
declare -A KO
while IFS= read -r f; do
  # No basename: a fork per module is 40 s for the 4,000 modules of the RDMA lab's kernel.
  b=${f##*/}; b=${b%.ko}; b=${b%.ko.xz}; b=${b%.ko.zst}; KO[${b//-/_}]=$f
done < <(find "$LAB_MODDIR/kernel" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst')

order=() ; declare -A seen
visit() {
  local key=${1//-/_} dep
  [ -n "${seen[$key]:-}" ] && return 0
  seen[$key]=1
  [ -n "${KO[$key]:-}" ] || { echo "lab: module $1 not in $LAB_KVER (built in?)" >&2; return 0; }
  for dep in $(modinfo -F depends "${KO[$key]}" | tr ',' ' '); do visit "$dep"; done
  order+=("$key")
}
for m in "${LAB_MODULES[@]}"; do visit "$m"; done

echo "lab: building initramfs (${#order[@]} modules)"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,etc,lib/modules,proc,sys,dev,host,tmp,run}
cp "$BUSYBOX" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 0755 "$LAB_DIR/init" "$root/init"
printf '#!/bin/sh\necho "lab-modprobe (not loaded): $*" >/dev/kmsg\nexit 1\n' >"$root/sbin/lab-modprobe"
chmod 0755 "$root/sbin/lab-modprobe"
# Debian compresses modules from 6.x on; busybox insmod takes plain ELF only.
for k in "${order[@]}"; do
  case ${KO[$k]} in
    *.xz) xz -dc "${KO[$k]}" >"$root/lib/modules/$k.ko" ;;
    *.zst) zstd -qdc "${KO[$k]}" >"$root/lib/modules/$k.ko" ;;
    *) cp "${KO[$k]}" "$root/lib/modules/$k.ko" ;;
  esac
done
printf '%s\n' "${order[@]}" >"$root/etc/lab-modules"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$LAB_INITRD.tmp"
mv "$LAB_INITRD.tmp" "$LAB_INITRD"
echo "$stamp" >"$LAB_INITRD.stamp"
echo "lab: initramfs $(du -h "$LAB_INITRD" | cut -f1): ${order[*]}"
