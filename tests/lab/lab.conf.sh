# Shared settings of the RDMA lab (sourced by the host-side scripts).
# Pinned guest kernel: Debian bookworm 6.1, unsigned image (modules carry BTF).
# Override for a newer point release: LAB_KABI=6.1.0-NN LAB_KPKG_VERSION=6.1.x-y make lab
LAB_KABI=${LAB_KABI:-6.1.0-50}
LAB_KPKG_VERSION=${LAB_KPKG_VERSION:-6.1.176-1}
LAB_KVER="${LAB_KABI}-amd64"
LAB_KPKG="linux-image-${LAB_KVER}-unsigned"

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_REPO=$(cd "$LAB_DIR/../.." && pwd)
LAB_CACHE=${LAB_CACHE:-$LAB_DIR/cache}
LAB_OUT=${LAB_OUT:-$LAB_DIR/out}
LAB_KDIR="$LAB_CACHE/kernel-$LAB_KABI"          # dpkg-deb -x of the package
LAB_VMLINUZ="$LAB_KDIR/boot/vmlinuz-$LAB_KVER"
LAB_MODDIR="$LAB_KDIR/lib/modules/$LAB_KVER"
LAB_INITRD="$LAB_CACHE/initramfs-$LAB_KVER.cpio.gz"

# Modules loaded by the guest's /init, in this order after dependency expansion
# (`modinfo -F depends`, depth first). 9p/virtio first: they bring up the host root.
LAB_MODULES=(
  virtio_pci 9pnet_virtio 9p
  configfs crc32_generic crct10dif_generic crc64_rocksoft_generic
  veth udp_tunnel ip6_udp_tunnel
  ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_rxe
  nvme-core nvme-fabrics nvme-rdma
  nvmet nvmet-rdma null_blk
)

# Host-side bound on the whole qemu run (seconds). The guest bounds each step itself.
LAB_QEMU_TIMEOUT=${LAB_QEMU_TIMEOUT:-600}
# Host-side hang watchdog (boot.sh): qemu is killed when the guest's heartbeat (out/heartbeat,
# every 5 s) and its console both stand still this long.
LAB_HANG_TIMEOUT=${LAB_HANG_TIMEOUT:-60}

# Shared by both labs (net.conf.sh may override).
LAB_FETCH="$LAB_DIR/fetch-kernel.sh"
LAB_GUEST_MAIN="tests/lab/guest/main.sh"   # relative to the repository
LAB_QEMU=qemu-system-x86_64
LAB_QEMU_NET=(-nic none)
LAB_SMP=2
LAB_MEM=2048
# LAB_KIND=net: the igb lab (tests/lab/net/) instead of the RDMA lab.
if [ "${LAB_KIND:-rdma}" = net ]; then . "$LAB_DIR/net/net.conf.sh"; fi
