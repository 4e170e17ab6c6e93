/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* dimctl_bpf.h: the one contract between the BPF programs (bpf/NAME.bpf.c) and the C++ collector
 * (userspace/collector). Every map key/value and ring-buffer event lives here.
 *
 * Rules: fixed-width types only (__u32/__u64 ... map to <linux/types.h> in userspace and to the
 * vmlinux.h typedefs in BPF), explicit padding, no kernel enums (the BPF side translates kernel
 * enum values to the DIMCTL_* values below via CO-RE). The C++ side static_asserts sizes and
 * offsets (userspace/collector/src/bpf_layout.cc). Changing a layout means changing both sides
 * in one commit.
 */
#ifndef DIMCTL_BPF_SHARED_H
#define DIMCTL_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define DIMCTL_IBDEV_NAME_LEN 64 /* IB_DEVICE_NAME_MAX */

/* ---- napi.bpf.c -------------------------------------------------------------------------- */

/* Map napi_stats (BPF_MAP_TYPE_PERCPU_HASH): key = one NAPI instance of one net device. */
struct dimctl_napi_key {
	__u32 ifindex; /* napi->dev->ifindex */
	__u32 napi_id; /* napi->napi_id (0 on kernels/devices that do not hash NAPIs) */
};

/* Per-CPU value; userspace sums over libbpf_num_possible_cpus(). */
struct dimctl_napi_value {
	__u64 polls;            /* napi_poll with budget > 0 */
	__u64 packets;          /* sum of work */
	__u64 budget_exhausted; /* work >= budget */
	__u64 empty_polls;      /* work == 0 */
	__u64 bytes;            /* only with the optional skb byte program (count_bytes) */
	__u64 skbs;             /* skbs seen by the optional byte program */
};

/* Map napi_slots (BPF_MAP_TYPE_PERCPU_ARRAY, DIMCTL_NAPI_SLOTS entries): the fast path.
 * A per-CPU array lookup is inlined by the verifier, a per-CPU hash lookup is a helper call
 * with jhash and a bucket walk (~100 ns measured on the reference VM, docs/benchmarks/bpf.md).
 * Slot = napi_id & (DIMCTL_NAPI_SLOTS - 1); a CPU claims an empty slot for its key; a key whose
 * slot holds another key (rare: napi ids are allocated sequentially) uses napi_stats instead.
 * Userspace sums both, per key, and zeroes a slot when its NAPI is retired. 64 bytes = one
 * cache line. */
#define DIMCTL_NAPI_SLOTS 512
struct dimctl_napi_slot {
	struct dimctl_napi_key key; /* ifindex 0 = free */
	struct dimctl_napi_value v;
	__u64 pad;
};

/* Map skb_bytes_ifidx (BPF_MAP_TYPE_HASH, key __u32 ifindex, value __u8 = 1): the devices
 * whose bytes the optional per-skb program counts when the load-time flag targ_bytes_filter is
 * set (CollectorOptions::count_bytes_devices). Userspace resolves the device globs to ifindexes
 * of its network namespace and adds/removes keys as devices come and go. Without the flag the
 * map is unused and every device is counted. */
#define DIMCTL_SKB_BYTES_MAX_DEVICES 256

/* ---- rdma.bpf.c -------------------------------------------------------------------------- */

/* restrack ids are per ib_device, so the key carries the device index. */
struct dimctl_cq_key {
	__u32 dev_index; /* cq->device->index */
	__u32 cq_id;     /* cq->res.id */
};

/* Map cq_stats (BPF_MAP_TYPE_PERCPU_HASH) per-CPU value. */
struct dimctl_cq_value {
	__u64 schedules;      /* rdma_core:cq_schedule */
	__u64 reschedules;    /* rdma_core:cq_reschedule */
	__u64 events;         /* rdma_core:cq_process */
	__u64 polls;          /* rdma_core:cq_poll */
	__u64 completions;    /* sum of cq_poll rc > 0 */
	__u64 poll_errors;    /* cq_poll rc < 0 */
	__u64 modifies;       /* rdma_core:cq_modify (in-kernel RDMA DIM decisions) */
	__u64 last_modify_ns; /* bpf_ktime_get_ns() of this CPU's last cq_modify */
	__u32 last_comps;     /* comps of this CPU's last cq_modify */
	__u32 last_usec;      /* usec of this CPU's last cq_modify */
};

/* Stable dimctl encoding of enum ib_poll_context (== dimctl::model::PollContext). The kernel
 * reordered its enum in v5.10, so BPF translates with bpf_core_enum_value(). */
#define DIMCTL_POLL_DIRECT 0
#define DIMCTL_POLL_SOFTIRQ 1
#define DIMCTL_POLL_WORKQUEUE 2
#define DIMCTL_POLL_UNBOUND_WORKQUEUE 3
#define DIMCTL_POLL_UNKNOWN 255

/* dimctl_cq_info.flags */
#define DIMCTL_CQ_INFO_FROM_ALLOC 1u /* filled by cq_alloc (else read from the CQ on first sight) */

/* Map cq_info (BPF_MAP_TYPE_HASH, key dimctl_cq_key): static description of a CQ. */
struct dimctl_cq_info {
	__u32 dev_index;
	__u32 cq_id;
	__u32 nr_cqe;
	__s32 comp_vector;
	__u32 poll_ctx; /* DIMCTL_POLL_* */
	__u32 flags;    /* DIMCTL_CQ_INFO_* */
	char ibdev[DIMCTL_IBDEV_NAME_LEN];
};

#define DIMCTL_CQ_EVENT_ALLOC 1
#define DIMCTL_CQ_EVENT_FREE 2

/* Ring buffer cq_events: CQ lifecycle. */
struct dimctl_cq_event {
	__u32 type; /* DIMCTL_CQ_EVENT_* */
	__u32 pad;
	__u64 time_ns; /* bpf_ktime_get_ns() */
	struct dimctl_cq_info info;
};

/* Map dimctl_drops (BPF_MAP_TYPE_PERCPU_ARRAY, DIMCTL_DROP_MAX entries of __u64): what a
 * program could not record. */
#define DIMCTL_DROP_NAPI_MAP_FULL 0
#define DIMCTL_DROP_CQ_MAP_FULL 1
#define DIMCTL_DROP_RINGBUF_FULL 2
#define DIMCTL_DROP_MAX 3

#endif /* DIMCTL_BPF_SHARED_H */
