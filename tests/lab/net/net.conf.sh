# Settings of the net lab (igb), sourced by lab.conf.sh when LAB_KIND=net: they replace the
# RDMA lab's kernel, module list, qemu and results directory; everything else is shared.
# Guest kernel: Debian trixie-backports, split packages (linux-binary-unsigned-*,
# linux-modules-*, linux-base-*). When the pin is gone from the mirror, fetch.sh falls back to
# the version linux-image-amd64 names there and records it in $LAB_OUT/kernel.txt.
LAB_NET_KABI=${LAB_NET_KABI:-7.3.4+deb13}
LAB_NET_KPKG_VERSION=${LAB_NET_KPKG_VERSION:-7.3.4-1~bpo13+1}
LAB_NET_KSUITE=${LAB_NET_KSUITE:-trixie-backports}
# qemu with -device igb (Debian 12's qemu 7.2 has none): bookworm-backports, extracted into
# the cache, never installed.
LAB_NET_QSUITE=${LAB_NET_QSUITE:-bookworm-backports}
LAB_NET_QEMU_VERSION=${LAB_NET_QEMU_VERSION:-1:10.0.2+ds-2+deb13u1~bpo12+1}
LAB_NET_QEMU_PKGS=(qemu-system-x86 qemu-system-data seabios)

LAB_OUT=${LAB_NET_OUT:-$LAB_DIR/out/net}
LAB_APT="$LAB_CACHE/apt"                          # private apt state (sources, lists, cache)
LAB_QEMU_ROOT="$LAB_CACHE/qemu-$LAB_NET_QEMU_VERSION"
LAB_QEMU_ROOT=${LAB_QEMU_ROOT//:/_}
LAB_QEMU="$LAB_QEMU_ROOT/usr/bin/qemu-system-x86_64"
# The kernel actually fetched (the pin or the fallback): fetch.sh writes it here.
LAB_NET_KSTAMP="$LAB_CACHE/net-kernel.current"
# Its line: "PIN_ABI PIN_VERSION ABI VERSION"; used only while the pin is unchanged.
LAB_NET_PIN="$LAB_NET_KABI $LAB_NET_KPKG_VERSION"
if [ -s "$LAB_NET_KSTAMP" ]; then
  read -r _pa _pv _a _v <"$LAB_NET_KSTAMP"
  [ "$_pa $_pv" = "$LAB_NET_PIN" ] && [ -n "$_v" ] && LAB_NET_KABI=$_a LAB_NET_KPKG_VERSION=$_v
  [ "$LAB_NET_KABI $LAB_NET_KPKG_VERSION" = "$LAB_NET_PIN" ] ||
    LAB_KNOTE=" (the pin $LAB_NET_PIN is not on the mirror: linux-image-amd64's fallback)"
  unset _pa _pv _a _v
fi
LAB_KABI=$LAB_NET_KABI
LAB_KPKG_VERSION=$LAB_NET_KPKG_VERSION
LAB_KVER="${LAB_KABI}-amd64"
LAB_KPKG="linux-binary-unsigned-$LAB_KVER"
LAB_KDIR="$LAB_CACHE/kernel-$LAB_KABI"
LAB_MODDIR="$LAB_KDIR/usr/lib/modules/$LAB_KVER"
LAB_VMLINUZ="$LAB_MODDIR/vmlinuz.unsigned"
LAB_INITRD="$LAB_CACHE/initramfs-$LAB_KVER.cpio.gz"
LAB_FETCH="$LAB_DIR/net/fetch.sh"
LAB_GUEST_MAIN="tests/lab/net/guest/main.sh"
LAB_SMP=${LAB_NET_SMP:-2}
LAB_MEM=${LAB_NET_MEM:-1536}

# Only what the guest needs: 9p for the host root, igb and its dependencies, veth for nothing
# (absent on purpose). The rest of the 128 MB of modules is never extracted into the initramfs.
LAB_MODULES=(
  virtio_pci 9pnet_virtio 9p
  igb
)
# Two igb NICs on one qemu hub: igb0 stays here, igb1 moves into the netns digtx, so every
# packet crosses both drivers (TX on one, RX on the other). romfile= drops the option ROMs
# (slow under TCG, unused with -kernel). Each igb sits on its own PCIe root port: qemu's igb
# reserves its SR-IOV VFs' functions at the PF's devfn + 0x80, which two PFs in neighbouring
# slots of the root bus would share. -audio none: qemu would otherwise probe audio backends
# (modules of the host's qemu 7.2, another build). Queues: igb gives 82576 one RSS queue per CPU.
LAB_QEMU_NET=(
  -audio none
  -device pcie-root-port,id=rp0,chassis=1,slot=1 -device pcie-root-port,id=rp1,chassis=2,slot=2
  -netdev hubport,id=p0,hubid=0 -device igb,bus=rp0,netdev=p0,mac=52:54:00:d1:00:01,romfile=
  -netdev hubport,id=p1,hubid=0 -device igb,bus=rp1,netdev=p1,mac=52:54:00:d1:00:02,romfile=
)
# Scenarios (all = m,q,r,e,n,c,f,i): LAB_NET_SCENARIOS, so that LAB_SCENARIOS=a make lab still
# means the RDMA lab's scenario a.
LAB_SCENARIOS=${LAB_NET_SCENARIOS:-all}
# Host-side bound on the whole run: ~2.5 min at load 7 here; far above it, as a safety net.
LAB_QEMU_TIMEOUT=${LAB_NET_QEMU_TIMEOUT:-450}
