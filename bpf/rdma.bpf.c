// SPDX-License-Identifier: GPL-2.0
/* rdma.bpf.c: per-CQ counters from the rdma_core:cq_* tracepoints (dim-spec 8.1).
 *
 * ib_core is a module: the tp_btf twins attach to the tracepoints' BTF in the module BTF
 * (/sys/kernel/btf/ib_core; libbpf >= 0.6 searches module BTFs for tp_btf targets and passes
 * attach_btf_obj_fd). The raw_tp twins need no BTF for the attach itself. Both read the CQ
 * with CO-RE probe reads against ib_core_subset.h; the loader enables one twin per tracepoint
 * with bpf_program__set_autoload().
 *
 * Key = (ib_device index, restrack id): restrack ids are per device. Counters live in the
 * mmapable slot table cq_slots (dimctl_bpf.h: layout, claim, retirement, reader rule).
 *
 * Why atomic adds. The events of one CQ are not serialized the way the polls of one NAPI are:
 *  - cq_schedule fires in the completion handler (hard IRQ or the driver's tasklet/work: rxe
 *    completes from a tasklet or a work item) on the CPU of the completion vector, while the
 *    CQ's previous poll pass may still run on another CPU (SOFTIRQ CQs are polled by irq_poll
 *    on the CPU that scheduled them, WORKQUEUE CQs by a work item on any CPU of the wq);
 *  - DIRECT CQs are polled by their owner (ib_process_cq_direct) in its own context, e.g. by
 *    several blk-mq pollers at once, and cq_modify comes from the DIM work item;
 *  - a work item of one CQ does not run concurrently with itself, and one irq_poll instance is
 *    polled by one CPU at a time, but nothing orders a work-queue pass against a softirq one of
 *    the same CQ across CPUs in general, and the lab sees both contexts nest on one CPU.
 * So every counter is added with __sync_fetch_and_add (result unused: a lock add). CQ events
 * come per poll pass, not per packet, so the few ns of a locked add do not matter. The last
 * cq_modify's comps and usec go into one 8-byte word with one store (never torn).
 */
#include "vmlinux/vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ib_core_subset.h"
#include "shared/dimctl_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EEXIST 17 /* errno values are macros: not in vmlinux.h */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, DIMCTL_CQ_SLOTS);
	__type(key, __u32);
	__type(value, struct dimctl_cq_slot);
} cq_slots SEC(".maps");

/* key -> index into cq_slots of every live CQ. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DIMCTL_CQ_SLOTS);
	__type(key, struct dimctl_cq_key);
	__type(value, __u32);
} cq_index SEC(".maps");

/* Slots userspace gave back after retiring their CQ (zeroed, free). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, DIMCTL_CQ_SLOTS);
	__type(value, __u32);
} cq_free SEC(".maps");

/* Slots handed out so far from the cursor (userspace reads below min(cq_next, DIMCTL_CQ_SLOTS)). */
__u64 cq_next = 0;

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

/* Writes key, info and state of a slot this program has just claimed (cq_index points to it, so
 * other CPUs may already add to its counters: those are not touched). */
static __always_inline void init_slot(struct dimctl_cq_slot *s, struct ib_cq___dimctl *cq,
				      const struct dimctl_cq_key *key,
				      const struct dimctl_cq_info *given)
{
	__sync_fetch_and_add(&s->seq, 1); /* odd: readers retry */
	s->key = *key;
	if (given)
		s->info = *given;
	else
		fill_info(cq, key, &s->info);
	s->cpu = 0;
	s->state = DIMCTL_SLOT_LIVE;
	__sync_fetch_and_add(&s->seq, 1);
}

/* A new slot for `key` (first event of the CQ since attach, or cq_alloc); `given` = the info
 * from cq_alloc's arguments, else read from the CQ. The cq_index insert decides between CPUs
 * claiming the same key; the loser gives its index back and uses the winner's slot. */
static __noinline struct dimctl_cq_slot *claim_slot(struct ib_cq___dimctl *cq,
						    const struct dimctl_cq_key *key,
						    const struct dimctl_cq_info *given)
{
	struct dimctl_cq_slot *s;
	__u32 ix, *found;
	__u64 n;
	long err;

	if (bpf_map_pop_elem(&cq_free, &ix) != 0) {
		if (cq_next >= DIMCTL_CQ_SLOTS)
			goto full;
		n = __sync_fetch_and_add(&cq_next, 1);
		if (n >= DIMCTL_CQ_SLOTS)
			goto full;
		ix = (__u32)n;
	}
	err = bpf_map_update_elem(&cq_index, key, &ix, BPF_NOEXIST);
	if (err != 0) {
		bpf_map_push_elem(&cq_free, &ix, 0);
		if (err != -EEXIST)
			goto full;
		found = bpf_map_lookup_elem(&cq_index, key);
		if (!found)
			return 0; /* retired meanwhile: this one event is not counted */
		return bpf_map_lookup_elem(&cq_slots, found);
	}
	s = bpf_map_lookup_elem(&cq_slots, &ix);
	if (!s)
		return 0;
	init_slot(s, cq, key, given);
	return s;
full:
	count_drop(DIMCTL_DROP_CQ_MAP_FULL);
	return 0;
}

static __always_inline struct dimctl_cq_slot *cq_slot(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_key key;
	__u32 *ix;

	cq_key(cq, &key);
	ix = bpf_map_lookup_elem(&cq_index, &key);
	if (ix)
		return bpf_map_lookup_elem(&cq_slots, ix);
	/* First sight: a CQ that existed before dimctl attached has had no cq_alloc. */
	return claim_slot(cq, &key, 0);
}

static __always_inline int on_schedule(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_slot *s = cq_slot(cq);

	if (s)
		__sync_fetch_and_add(&s->schedules, 1);
	return 0;
}

static __always_inline int on_reschedule(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_slot *s = cq_slot(cq);

	if (s)
		__sync_fetch_and_add(&s->reschedules, 1);
	return 0;
}

static __always_inline int on_process(struct ib_cq___dimctl *cq)
{
	struct dimctl_cq_slot *s = cq_slot(cq);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->events, 1);
	/* The previous pass ended on a poll that returned all it requested: at its budget
	 * (dimctl_bpf.h). Read and cleared without an atomic exchange (kernels before 5.12 have
	 * none): only two passes of one CQ starting at once on two CPUs could count one twice. */
	if (s->last_poll_full) {
		s->last_poll_full = 0;
		__sync_fetch_and_add(&s->exhausted, 1);
	}
	return 0;
}

static __always_inline int on_poll(struct ib_cq___dimctl *cq, int requested, int rc)
{
	struct dimctl_cq_slot *s = cq_slot(cq);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->polls, 1);
	s->cpu = bpf_get_smp_processor_id() + 1;
	s->last_poll_full = rc > 0 && rc == requested;
	if (rc > 0)
		__sync_fetch_and_add(&s->completions, (__u64)rc);
	else if (rc < 0)
		__sync_fetch_and_add(&s->poll_errors, 1);
	return 0;
}

static __always_inline int on_modify(struct ib_cq___dimctl *cq, __u64 comps, __u64 usec)
{
	struct dimctl_cq_slot *s = cq_slot(cq);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->modifies, 1);
	s->last_modify = (comps & 0xffffffff) | (usec << 32);
	return 0;
}

static __always_inline int on_alloc(struct ib_cq___dimctl *cq, __u64 nr_cqe, __s64 comp_vector,
				    __u64 poll_ctx)
{
	/*
	 * Built on the stack, not in a reserved ring-buffer slot: it is also copied into the slot,
	 * and kernels before 6.3 or so reject ring-buffer memory (alloc_mem) as a helper's value
	 * argument, which the 6.1 lab verifier showed ("R3 type=alloc_mem expected=fp, ...").
	 */
	struct dimctl_cq_event e = {};
	struct dimctl_cq_slot *s;
	struct dimctl_cq_key key;
	__u32 *ix;

	cq_key(cq, &key);
	e.type = DIMCTL_CQ_EVENT_ALLOC;
	e.time_ns = bpf_ktime_get_ns();
	fill_info(cq, &key, &e.info);
	/* The tracepoint arguments are authoritative for a new CQ. */
	e.info.nr_cqe = (__u32)nr_cqe;
	e.info.comp_vector = (__s32)comp_vector;
	e.info.poll_ctx = poll_ctx_code(poll_ctx);
	e.info.flags = DIMCTL_CQ_INFO_FROM_ALLOC;
	ix = bpf_map_lookup_elem(&cq_index, &key);
	s = ix ? bpf_map_lookup_elem(&cq_slots, ix) : 0;
	if (s) {
		/* A reused restrack id whose slot userspace has not retired yet: the new CQ starts
		 * from zero, in place. Nothing else writes this slot now: the old CQ is freed (its
		 * pollers were stopped first) and the new one has no work before this returns. */
		__sync_fetch_and_add(&s->seq, 1);
		s->schedules = 0;
		s->reschedules = 0;
		s->events = 0;
		s->polls = 0;
		s->completions = 0;
		s->poll_errors = 0;
		s->modifies = 0;
		s->last_modify = 0;
		s->exhausted = 0;
		s->last_poll_full = 0;
		s->cpu = 0;
		s->info = e.info;
		__sync_fetch_and_add(&s->seq, 1);
	} else {
		claim_slot(cq, &key, &e.info);
	}
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
	/* Counters stay until userspace has read them; it retires the slot. */
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
	return on_poll(cq, requested, rc);
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
	return on_poll(cq, requested, rc);
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
