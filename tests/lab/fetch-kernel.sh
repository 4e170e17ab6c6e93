#!/usr/bin/env bash
# Fetches the pinned Debian 6.1 kernel package into tests/lab/cache and extracts it
# (vmlinuz + modules with BTF). Idempotent: a second run only checks the cache.
set -euo pipefail
. "$(dirname "$0")/lab.conf.sh"
mkdir -p "$LAB_CACHE"
deb="$LAB_CACHE/${LAB_KPKG}_${LAB_KPKG_VERSION}_amd64.deb"
if [ ! -s "$deb" ]; then
  echo "lab: fetching $LAB_KPKG=$LAB_KPKG_VERSION"
  tmp=$(mktemp -d "$LAB_CACHE/dl.XXXXXX")
  # apt's _apt user cannot write into the cache; download in a tmp dir it can reach.
  chmod 777 "$tmp"
  if ! (cd "$tmp" && apt-get download -q "$LAB_KPKG=$LAB_KPKG_VERSION") >"$tmp/apt.log" 2>&1; then
    echo "lab: package not found, running apt-get update"
    apt-get update -qq
    (cd "$tmp" && apt-get download -q "$LAB_KPKG=$LAB_KPKG_VERSION") >"$tmp/apt.log" 2>&1 || cat "$tmp/apt.log" >&2
  fi
  f=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
  [ -s "$f" ] || { echo "lab: download of $LAB_KPKG=$LAB_KPKG_VERSION failed" >&2; rm -rf "$tmp"; exit 1; }
  mv "$f" "$deb"
  rm -rf "$tmp"
fi
if [ ! -s "$LAB_VMLINUZ" ] || [ ! -f "$LAB_KDIR/.extracted" ]; then
  echo "lab: extracting $(basename "$deb")"
  rm -rf "$LAB_KDIR"
  mkdir -p "$LAB_KDIR"
  dpkg-deb -x "$deb" "$LAB_KDIR"
  touch "$LAB_KDIR/.extracted"
fi
