// SPDX-License-Identifier: GPL-2.0
/* rdma.bpf.c: per-CQ counters from the rdma_core:cq_* tracepoints (dim-spec 8.1).
 *
 * ib_core is a module: the tp_btf twins attach to the tracepoints' BTF in the module BTF
 * (/sys/kernel/btf/ib_core; libbpf >= 0.6 searches module BTFs for tp_btf targets and passes
 * attach_btf_obj_fd). The raw_tp twins need no BTF for the attach itself. Both read the CQ
 * with CO-RE probe reads against ib_core_subset.h; the loader enables one twin per tracepoint
 * with bpf_program__set_autoload().
 *
 * Key = (ib_device index, restrack id): restrack ids are per device.
 */
#include "vmlinux/vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ib_core_subset.h"
#include "shared/dimctl_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dimctl_cq_key);
	__type(value, struct dimctl_cq_value);
} cq_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dimctl_cq_key);
	__type(value, struct dimctl_cq_info);
} cq_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} cq_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DIMCTL_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} rdma_drops SEC(".maps");

static __always_inline void count_drop(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&rdma_drops, &what);

	if (v)
		*v += 1;
}

static __always_inline void cq_key(struct ib_cq___dimctl *cq, struct dimctl_cq_key *key)
{
	key->dev_index = 0;
	key->cq_id = 0;
	if (bpf_core_field_exists(cq->device) && bpf_core_field_exists(cq->device->index))
		key->dev_index = BPF_CORE_READ(cq, device, index);
	if (bpf_core_field_exists(cq->res) && bpf_core_field_exists(cq->res.id))
		key->cq_id = BPF_CORE_READ(cq, res.id);
}

/* enum ib_poll_context -> DIMCTL_POLL_*, by enumerator name (the kernel reordered it). */
static __always_inline __u32 poll_ctx_code(__u64 v)
{
	if (bpf_core_enum_value_exists(enum ib_poll_context___dimctl, IB_POLL_DIRECT___dimctl) &&
	    v == bpf_core_enum_value(enum ib_poll_context___dimctl, IB_POLL_DIRECT___dimctl))
		return DIMCTL_POLL_DIRECT;
	if (bpf_core_enum_value_exists(enum ib_poll_context___dimctl, IB_POLL_SOFTIRQ___dimctl) &&
	    v == bpf_core_enum_value(enum ib_poll_context___dimctl, IB_POLL_SOFTIRQ___dimctl))
		return DIMCTL_POLL_SOFTIRQ;
	if (bpf_core_enum_value_exists(enum ib_poll_context___dimctl, IB_POLL_WORKQUEUE___dimctl) &&
	    v == bpf_core_enum_value(enum ib_poll_context___dimctl, IB_POLL_WORKQUEUE___dimctl))
		return DIMCTL_POLL_WORKQUEUE;
	if (bpf_core_enum_value_exists(enum ib_poll_context___dimctl,
				       IB_POLL_UNBOUND_WORKQUEUE___dimctl) &&
	    v == bpf_core_enum_value(enum ib_poll_context___dimctl,
				     IB_POLL_UNBOUND_WORKQUEUE___dimctl))
		return DIMCTL_POLL_UNBOUND_WORKQUEUE;
	return DIMCTL_POLL_UNKNOWN;
}

static __always_inline void fill_info(struct ib_cq___dimctl *cq, const struct dimctl_cq_key *key,
				      struct dimctl_cq_info *info)
{
	struct ib_device___dimctl *dev = 0;

	info->dev_index = key->dev_index;
	info->cq_id = key->cq_id;
	info->nr_cqe = 0;
	info->comp_vector = -1;
	info->poll_ctx = DIMCTL_POLL_UNKNOWN;
	info->flags = 0;
	info->ibdev[0] = 0;
	if (bpf_core_field_exists(cq->cqe))
		info->nr_cqe = (__u32)BPF_CORE_READ(cq, cqe);
	if (bpf_core_field_exists(cq->comp_vector))
		info->comp_vector = BPF_CORE_READ(cq, comp_vector);
	if (bpf_core_field_exists(cq->poll_ctx))
		info->poll_ctx = poll_ctx_code((__u64)BPF_CORE_READ(cq, poll_ctx));
	if (bpf_core_field_exists(cq->device))
		dev = BPF_CORE_READ(cq, device);
	if (dev && bpf_core_field_exists(dev->name))
		bpf_probe_read_kernel_str(info->ibdev, sizeof(info->ibdev), &dev->name);
}

static __always_inline struct dimctl_cq_value *cq_value(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_key key;
	struct dimctl_cq_value *v;

	cq_key(cq, &key);
	v = bpf_map_lookup_elem(&cq_stats, &key);
	if (v)
		return v;
	struct dimctl_cq_value zero = {};

	bpf_map_update_elem(&cq_stats, &key, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&cq_stats, &key);
	if (!v) {
		count_drop(DIMCTL_DROP_CQ_MAP_FULL);
		return 0;
	}
	/* First sight on this CPU: describe the CQ unless cq_alloc already did (CQs that existed
	 * before dimctl attached have no cq_alloc). Rare path. */
	if (!bpf_map_lookup_elem(&cq_info, &key)) {
		struct dimctl_cq_info info;

		fill_info(cq, &key, &info);
		bpf_map_update_elem(&cq_info, &key, &info, BPF_NOEXIST);
	}
	return v;
}

static __always_inline int on_schedule(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_value *v = cq_value(cq);

	if (v)
		v->schedules += 1;
	return 0;
}

static __always_inline int on_reschedule(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_value *v = cq_value(cq);

	if (v)
		v->reschedules += 1;
	return 0;
}

static __always_inline int on_process(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_value *v = cq_value(cq);

	if (v)
		v->events += 1;
	return 0;
}

static __always_inline int on_poll(struct ib_cq___dimctl *cq, int rc)
{
	struct dimctl_cq_value *v = cq_value(cq);

	if (!v)
		return 0;
	v->polls += 1;
	if (rc > 0)
		v->completions += (__u64)rc;
	else if (rc < 0)
		v->poll_errors += 1;
	return 0;
}

static __always_inline int on_modify(struct ib_cq___dimctl *cq, __u64 comps, __u64 usec)
{
	struct dimctl_cq_value *v = cq_value(cq);

	if (!v)
		return 0;
	v->modifies += 1;
	v->last_comps = (__u32)comps;
	v->last_usec = (__u32)usec;
	v->last_modify_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_alloc(struct ib_cq___dimctl *cq, __u64 nr_cqe, __s64 comp_vector,
				    __u64 poll_ctx)
{
	/*
	 * Built on the stack, not in a reserved ring-buffer slot: kernels before 6.3 or so reject
	 * ring-buffer memory (alloc_mem) as the value argument of bpf_map_update_elem, which the
	 * 6.1 lab verifier showed ("R3 type=alloc_mem expected=fp, ...").
	 */
	struct dimctl_cq_event e = {};
	struct dimctl_cq_key key;

	cq_key(cq, &key);
	e.type = DIMCTL_CQ_EVENT_ALLOC;
	e.time_ns = bpf_ktime_get_ns();
	fill_info(cq, &key, &e.info);
	/* The tracepoint arguments are authoritative for a new CQ. */
	e.info.nr_cqe = (__u32)nr_cqe;
	e.info.comp_vector = (__s32)comp_vector;
	e.info.poll_ctx = poll_ctx_code(poll_ctx);
	e.info.flags = DIMCTL_CQ_INFO_FROM_ALLOC;
	/* A restrack id may be reused: a new CQ starts from zero. */
	bpf_map_delete_elem(&cq_stats, &key);
	bpf_map_update_elem(&cq_info, &key, &e.info, BPF_ANY);
	if (bpf_ringbuf_output(&cq_events, &e, sizeof(e), 0) < 0)
		count_drop(DIMCTL_DROP_RINGBUF_FULL);
	return 0;
}

static __always_inline int on_free(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_event *e;
	struct dimctl_cq_key key;

	cq_key(cq, &key);
	e = bpf_ringbuf_reserve(&cq_events, sizeof(*e), 0);
	if (!e) {
		count_drop(DIMCTL_DROP_RINGBUF_FULL);
		return 0;
	}
	e->type = DIMCTL_CQ_EVENT_FREE;
	e->pad = 0;
	e->time_ns = bpf_ktime_get_ns();
	fill_info(cq, &key, &e->info);
	bpf_ringbuf_submit(e, 0);
	/* Counters stay until userspace has read them; it deletes the key (retirement). */
	return 0;
}

/* ---- tp_btf twins (module BTF of ib_core) ------------------------------------------------ */

SEC("tp_btf/cq_schedule")
int BPF_PROG(dimctl_cq_schedule_btf, struct ib_cq___dimctl *cq)
{
	return on_schedule(cq);
}

SEC("tp_btf/cq_reschedule")
int BPF_PROG(dimctl_cq_reschedule_btf, struct ib_cq___dimctl *cq)
{
	return on_reschedule(cq);
}

SEC("tp_btf/cq_process")
int BPF_PROG(dimctl_cq_process_btf, struct ib_cq___dimctl *cq)
{
	return on_process(cq);
}

SEC("tp_btf/cq_poll")
int BPF_PROG(dimctl_cq_poll_btf, struct ib_cq___dimctl *cq, int requested, int rc)
{
	return on_poll(cq, rc);
}

SEC("tp_btf/cq_modify")
int BPF_PROG(dimctl_cq_modify_btf, struct ib_cq___dimctl *cq, u16 comps, u16 usec)
{
	return on_modify(cq, comps, usec);
}

SEC("tp_btf/cq_alloc")
int BPF_PROG(dimctl_cq_alloc_btf, struct ib_cq___dimctl *cq, int nr_cqe, int comp_vector,
	     enum ib_poll_context___dimctl poll_ctx)
{
	return on_alloc(cq, (__u32)nr_cqe, comp_vector, (__u64)poll_ctx);
}

SEC("tp_btf/cq_free")
int BPF_PROG(dimctl_cq_free_btf, struct ib_cq___dimctl *cq)
{
	return on_free(cq);
}

/* ---- raw_tp twins ------------------------------------------------------------------------ */

SEC("raw_tp/cq_schedule")
int BPF_PROG(dimctl_cq_schedule_raw, struct ib_cq___dimctl *cq)
{
	return on_schedule(cq);
}

SEC("raw_tp/cq_reschedule")
int BPF_PROG(dimctl_cq_reschedule_raw, struct ib_cq___dimctl *cq)
{
	return on_reschedule(cq);
}

SEC("raw_tp/cq_process")
int BPF_PROG(dimctl_cq_process_raw, struct ib_cq___dimctl *cq)
{
	return on_process(cq);
}

SEC("raw_tp/cq_poll")
int BPF_PROG(dimctl_cq_poll_raw, struct ib_cq___dimctl *cq, int requested, int rc)
{
	return on_poll(cq, rc);
}

SEC("raw_tp/cq_modify")
int BPF_PROG(dimctl_cq_modify_raw, struct ib_cq___dimctl *cq, u16 comps, u16 usec)
{
	return on_modify(cq, comps, usec);
}

SEC("raw_tp/cq_alloc")
int BPF_PROG(dimctl_cq_alloc_raw, struct ib_cq___dimctl *cq, int nr_cqe, int comp_vector,
	     enum ib_poll_context___dimctl poll_ctx)
{
	return on_alloc(cq, (__u32)nr_cqe, comp_vector, (__u64)poll_ctx);
}

SEC("raw_tp/cq_free")
int BPF_PROG(dimctl_cq_free_raw, struct ib_cq___dimctl *cq)
{
	return on_free(cq);
}
