/* SPDX-License-Identifier: GPL-2.0 */
/* ib_core_subset.h: the few ib_core (drivers/infiniband/core, include/rdma/) types that
 * rdma.bpf.c reads, written by hand because the vendored vmlinux.h was dumped on a host without
 * CONFIG_INFINIBAND (ib_core is a module there anyway, so its types live in
 * /sys/kernel/btf/ib_core, never in vmlinux BTF).
 *
 * CO-RE rules applied:
 *  - every struct carries preserve_access_index, so only field NAMES and types matter: libbpf
 *    relocates offsets against the running kernel's ib_core module BTF at load time. Field
 *    order and the absence of the other members are irrelevant;
 *  - every type has the "___dimctl" flavor suffix, which libbpf strips when matching, so this
 *    header never collides with a vmlinux.h that does contain ib_core types (a kernel with
 *    CONFIG_INFINIBAND=y, or the forward declaration `struct ib_device;` in ours);
 *  - readers guard optional fields with bpf_core_field_exists() (see rdma.bpf.c); a field that
 *    the running kernel lacks reads as "unknown" instead of failing the load.
 *
 * Provenance (field: where it comes from, first mainline release that has it):
 *  - struct ib_cq::device, ::cqe: include/rdma/ib_verbs.h, present since the 2.6 verbs API.
 *  - struct ib_cq::poll_ctx (enum ib_poll_context): v4.5, commit 14d3a3b2498e
 *    ("IB: add a proper completion queue abstraction", Christoph Hellwig). The enumerator
 *    ORDER changed in v5.10 (shared CQ pool: IB_POLL_DIRECT moved last, IB_POLL_LAST_POOL_TYPE
 *    added), hence enum values are resolved with bpf_core_enum_value(), never hard-coded.
 *  - struct ib_cq::comp_vector: v5.9 (shared CQ pool API, "RDMA/core: Introduce shared CQ
 *    pool API", Yamin Friedman); absent before, guarded.
 *  - struct ib_cq::res (struct rdma_restrack_entry): v4.17, commit 02d8883f520e
 *    ("RDMA/restrack: Add general infrastructure to track RDMA resources", Leon Romanovsky).
 *  - struct rdma_restrack_entry::id (u32): v5.2 (restrack object IDs, the `cqn` of
 *    `rdma resource show cq`); the rdma_core tracepoints (v5.5/v5.6,
 *    include/trace/events/rdma_core.h, Chuck Lever) print exactly this as `cq_id`.
 *  - struct ib_device::name (char[IB_DEVICE_NAME_MAX = 64]): since the 2.6 verbs API.
 *  - struct ib_device::index (u32): v4.20 (device index used by rdma netlink,
 *    RDMA_NLDEV_ATTR_DEV_INDEX); the key of every CQ counter (restrack ids are per device).
 * Checked against the Debian 6.1 ib_core BTF in the qemu lab (tests/lab/).
 */
#ifndef DIMCTL_IB_CORE_SUBSET_H
#define DIMCTL_IB_CORE_SUBSET_H

#define DIMCTL_IB_DEVICE_NAME_MAX 64

enum ib_poll_context___dimctl {
	IB_POLL_SOFTIRQ___dimctl = 0,
	IB_POLL_WORKQUEUE___dimctl = 1,
	IB_POLL_UNBOUND_WORKQUEUE___dimctl = 2,
	IB_POLL_DIRECT___dimctl = 3,
};

struct rdma_restrack_entry___dimctl {
	u32 id;
} __attribute__((preserve_access_index));

struct ib_device___dimctl {
	char name[DIMCTL_IB_DEVICE_NAME_MAX];
	u32 index;
} __attribute__((preserve_access_index));

struct ib_cq___dimctl {
	struct ib_device___dimctl *device;
	int cqe;
	enum ib_poll_context___dimctl poll_ctx;
	int comp_vector;
	struct rdma_restrack_entry___dimctl res;
} __attribute__((preserve_access_index));

#endif /* DIMCTL_IB_CORE_SUBSET_H */
