/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* dimctl_bpf.h: the one contract between the BPF programs (bpf/NAME.bpf.c) and the C++ collector
 * (userspace/collector). Every map key/value and ring-buffer event lives here.
 *
 * Rules: fixed-width types only (__u32/__u64 ... map to <linux/types.h> in userspace and to the
 * vmlinux.h typedefs in BPF), explicit padding, no kernel enums (the BPF side translates kernel
 * enum values to the DIMCTL_* values below via CO-RE). The C++ side static_asserts sizes and
 * offsets (userspace/collector/src/bpf_collector.cc). Changing a layout means changing both sides
 * in one commit.
 */
#ifndef DIMCTL_BPF_SHARED_H
#define DIMCTL_BPF_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define DIMCTL_IBDEV_NAME_LEN 64 /* IB_DEVICE_NAME_MAX */

/* ---- Slot tables: how counters reach userspace --------------------------------------------
 *
 * Counters live in BPF_F_MMAPABLE arrays of slots (napi_slots, cq_slots), one slot per NAPI or
 * CQ, updated in place by the programs and read by userspace from its mapping of the array: a
 * sample reads memory, with no syscall and no per-CPU copies. A slot is assigned by the BPF side
 * on the first event of its key and given back by userspace (retirement), in three steps:
 *
 *   free --(BPF claims, atomically)--> live --(userspace retires)--> retired
 *        <--(userspace, after a grace period: counters zeroed, then marked free)--
 *
 * Userspace is the only writer of "retired" and "free"; BPF only claims free slots, whose
 * counters are zero. A program that found the slot just before it was retired may still add to
 * it while it runs; the grace period (far longer than a program run: tracepoint programs run to
 * completion with preemption disabled) ensures no such late add lands after the zeroing, so a
 * claimed slot always starts from zero. The consistent-snapshot rule for readers is stated per
 * table below and in docs/COLLECTORS.md. */

/* ---- napi.bpf.c -------------------------------------------------------------------------- */

/* One NAPI instance of one net device. */
struct dimctl_napi_key {
  __u32 ifindex; /* napi->dev->ifindex */
  __u32 napi_id; /* napi->napi_id (0 for NAPIs the kernel does not hash: TX-only NAPIs) */
};

/* A NAPI's counters (the per-CPU value of the former napi_stats map; the per-CPU read path
 * in userspace, kept for the benchmark's comparison, still sums it over the CPUs). */
struct dimctl_napi_value {
  __u64 polls;            /* napi_poll with budget > 0 */
  __u64 packets;          /* sum of work */
  __u64 budget_exhausted; /* work >= budget */
  __u64 empty_polls;      /* work == 0 */
  __u64 bytes;            /* only with the optional skb byte program (count_bytes) */
  __u64 skbs;             /* skbs seen by the optional byte program */
};

/* Map napi_slots (BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, DIMCTL_NAPI_SLOT_COUNT entries): one
 * 64-byte slot (one cache line, the array's data is page-aligned) per NAPI.
 *
 *  - Home slots [0, DIMCTL_NAPI_SLOTS): the NAPI whose slot is napi_id & (DIMCTL_NAPI_SLOTS - 1)
 *    (napi ids are allocated sequentially, so up to 512 NAPIs rarely collide). The fast path:
 *    an array lookup (inlined by the verifier) and one 64-bit key compare. Claimed with a
 *    compare-and-swap of the key word from 0.
 *  - Overflow slots [DIMCTL_NAPI_SLOTS, DIMCTL_NAPI_SLOT_COUNT): a NAPI whose home slot is held
 *    by another. Found through napi_stats (BPF_MAP_TYPE_HASH, key dimctl_napi_key, value __u32
 *    slot index, DIMCTL_NAPI_OVERFLOW entries; the name is the former per-CPU map's). An index
 *    comes from napi_free (BPF_MAP_TYPE_QUEUE of __u32: slots userspace gave back) or, when that
 *    is empty, from the global napi_overflow_next (an atomic cursor in .bss; userspace reads the
 *    slots below DIMCTL_NAPI_SLOTS + min(cursor, DIMCTL_NAPI_OVERFLOW)). The hash insert
 *    (BPF_NOEXIST) decides between CPUs claiming the same key; a full hash is a drop
 *    (DIMCTL_DROP_NAPI_MAP_FULL) and the index goes back to napi_free.
 *
 * A key claims its home slot only when napi_stats does not hold it, so a NAPI normally has one
 * slot; readers still add up slots with equal keys (a claim racing with the freeing of its home
 * slot can leave two).
 *
 * Key word: ifindex 0 = not live: {0, 0} free, {0, DIMCTL_NAPI_ID_RETIRED} retired (no device
 * has ifindex 0, so no live key matches either). Userspace zeroes a retired slot's counters,
 * then stores the free key (release); on x86-64 each 8-byte word is read and written whole.
 *
 * Reader rule: read the key word, skip it unless live, then the counters. A slot changes key
 * only from free to live (BPF, counters zero) or by the reader itself (retire, free), so the
 * counters read after a live key are that key's. Counters are cumulative and each is read whole;
 * a poll landing between two counter reads shows in one and not yet in the other (e.g. packets
 * without its poll) until the next sample: harmless, nothing is lost or counted twice. */
#define DIMCTL_NAPI_SLOTS 512     /* home slots */
#define DIMCTL_NAPI_OVERFLOW 4096 /* overflow slots (and napi_stats / napi_free entries) */
#define DIMCTL_NAPI_SLOT_COUNT (DIMCTL_NAPI_SLOTS + DIMCTL_NAPI_OVERFLOW)
#define DIMCTL_NAPI_ID_RETIRED 0xffffffffu
struct dimctl_napi_slot {
  struct dimctl_napi_key key; /* ifindex 0: free or retired (above) */
  struct dimctl_napi_value v;
  /* 1 + the CPU the latest poll ran on (0: not polled yet): where the NAPI's interrupt and
   * softirq work lands, so that userspace can tell which NAPIs share a core. Stored whole by
   * every poll; for napi_id 0 (concurrent polls) one of the racing CPUs wins, any is right. */
  __u32 cpu;
  __u32 pad;
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

/* A CQ's counters as the aggregator reads them (the per-CPU value of the former cq_stats map;
 * last_modify_ns only mattered between CPUs and is 0 from the slot table). */
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
  __u32 cpu;            /* dimctl_cq_slot.cpu (0: unknown; the per-CPU map path leaves it 0) */
  __u32 pad;
  __u64 exhausted; /* poll passes that used their whole budget (dimctl_cq_slot) */
};

/* Stable dimctl encoding of enum ib_poll_context (== dimctl::seam::PollContext). The kernel
 * reordered its enum in v5.10, so BPF translates with bpf_core_enum_value(). */
#define DIMCTL_POLL_DIRECT 0
#define DIMCTL_POLL_SOFTIRQ 1
#define DIMCTL_POLL_WORKQUEUE 2
#define DIMCTL_POLL_UNBOUND_WORKQUEUE 3
#define DIMCTL_POLL_UNKNOWN 255

/* dimctl_cq_info.flags */
#define DIMCTL_CQ_INFO_FROM_ALLOC 1u /* filled by cq_alloc (else read from the CQ on first sight) \
                                      */

/* Static description of a CQ (in its slot; in the cq_events ring buffer records). */
struct dimctl_cq_info {
  __u32 dev_index;
  __u32 cq_id;
  __u32 nr_cqe;
  __s32 comp_vector;
  __u32 poll_ctx; /* DIMCTL_POLL_* */
  __u32 flags;    /* DIMCTL_CQ_INFO_* */
  char ibdev[DIMCTL_IBDEV_NAME_LEN];
};

/* Map cq_slots (BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, DIMCTL_CQ_SLOTS entries): one slot per CQ,
 * found through cq_index (BPF_MAP_TYPE_HASH, key dimctl_cq_key, value __u32 slot index) and
 * claimed like an overflow NAPI slot (cq_free queue, then the .bss cursor cq_next; the
 * BPF_NOEXIST insert into cq_index decides; full = DIMCTL_DROP_CQ_MAP_FULL). Restrack ids are
 * reused and a key may be 0/0, so the slot carries its state apart from its key.
 *
 * Counters are added with atomic adds (lock add): the events of one CQ are not serialized
 * (rdma.bpf.c says why). The last cq_modify's comps and usec are one 8-byte word, stored whole.
 *
 * seq is a sequence count for the changes BPF makes to a live slot's identity: the claim writes
 * key, info and state, and cq_alloc of a reused restrack id zeroes the counters and rewrites the
 * info in place, each between two increments of seq (odd meanwhile). Reader rule: read seq
 * (retry while odd), copy the slot, read seq again; equal = a consistent slot (no mix of an old
 * and a new incarnation's counters or info), else retry. Counters added meanwhile do not touch
 * seq: each counter is read whole and cumulative, as for NAPIs. */
#define DIMCTL_CQ_SLOTS 16384
#define DIMCTL_SLOT_FREE 0
#define DIMCTL_SLOT_LIVE 1
#define DIMCTL_SLOT_RETIRED 2
struct dimctl_cq_slot {
  __u64 seq;   /* even: stable; odd: BPF is writing key/info/state or resetting */
  __u32 state; /* DIMCTL_SLOT_* */
  /* 1 + the CPU the latest cq_poll ran on (0: not polled yet), as dimctl_napi_slot.cpu: the
   * core whose interrupt and softirq (or ib_comp_wq worker) time the CQ's completions cost.
   * Stored whole by every poll, outside seq (not identity). */
  __u32 cpu;
  struct dimctl_cq_key key;
  __u64 schedules;
  __u64 reschedules;
  __u64 events;
  __u64 polls;
  __u64 completions;
  __u64 poll_errors;
  __u64 modifies;
  __u64 last_modify; /* comps | (__u64)usec << 32 of the latest cq_modify */
  /* Poll passes that used their whole budget (ib_poll_handler's 256, the work item's 65536).
   * __ib_process_cq ends a pass on a poll that returned fewer than IB_POLL_BATCH, or once
   * the completions reach the budget; the request is min(batch, budget - completed), so a
   * pass whose last cq_poll returned all it requested ended at its budget. Which poll was the
   * last shows only when the next pass starts: cq_poll stores last_poll_full (1: returned all
   * it requested), cq_process counts a set flag here and clears it. An exhausted pass is
   * always followed by one (irq_poll keeps the CQ scheduled, the work item requeues itself),
   * so the count lags by microseconds. A DIRECT CQ polled with budget -1 never counts. */
  __u64 exhausted;
  __u32 last_poll_full;
  __u32 pad1;
  struct dimctl_cq_info info; /* 192 bytes in all: three cache lines */
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

/* ---- cpu_time.bpf.c ---------------------------------------------------------------------- */

/* Time each CPU spends in hard interrupt handlers and in the softirqs that poll queues, for the
 * cost estimator. Loaded only when CollectorOptions::enable_cpu_times.
 *
 * Map cpu_times (BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, one slot per possible CPU: the loader sets
 * max_entries to libbpf_num_possible_cpus()), indexed by bpf_get_smp_processor_id(). Only its
 * own CPU writes a slot (the programs run with preemption off, on the CPU whose event it is), so
 * counters are plain adds, on lines no other CPU writes. Counters are cumulative; the reader
 * reads each word whole (relaxed 8-byte loads) and needs no retry: an event landing between two
 * loads shows in one counter and not yet in the other until the next sample.
 *
 *  - hardirq: from irq_handler_entry to irq_handler_exit, i.e. one irqaction's handler
 *    (a shared line with two handlers counts two); the generic entry/exit code around the
 *    handler and threaded handlers' thread time are not included.
 *  - softirq: from softirq_entry to softirq_exit of the vectors DIMCTL_SOFTIRQ_*, MINUS the
 *    hardirq handler time of that CPU in between (a hard interrupt may preempt a softirq; softirqs
 *    never nest on a CPU), so hardirq and softirq times add up without double counting.
 *  - idle: from a sched_switch to the CPU's idle task (pid 0) to the switch away from it; every
 *    stretch is timed by the CPU's rq clock (sched_clock), which __schedule() has just updated
 *    and the program reads through the switch's non-idle task (se.cfs_rq->rq,
 *    CONFIG_FAIR_GROUP_SCHED): no clock read per edge (the raw_tp twin reads the monotonic clock:
 *    a probe read per pointer would cost more). Without that link, se.exec_start, the
 *    rq's clock_task, which leaves out interrupt time (CONFIG_IRQ_TIME_ACCOUNTING) and time
 *    stolen by the hypervisor (CONFIG_PARAVIRT_TIME_ACCOUNTING: a woken vCPU waiting for its
 *    host). Interrupts taken while idle run on the idle task and count as idle here (they are
 *    in hardirq/softirq): a reader takes busy = max(period - idle, hardirq + softirq). A stretch
 *    still running is in idle_start only, a stamp: the reader turns it into CLOCK_MONOTONIC
 *    (bpf_ktime_get_ns's clock) with the latest calibration pair (idle_cal_mono,
 *    idle_cal_stamp: both clocks read at one idle entry in targ_time_mask + 1) and adds now -
 *    that. Their offset moves only by sched_clock's drift against the monotonic clock (and, for
 *    clock_task stamps, the interrupt and stolen time between the pair and the stretch). The
 *    sum can step back when a stretch ends between the reader's loads (given back next
 *    period); consumers clamp a period's idle to [0, period].
 *  - a slot's state words (hardirq_start ...) are the programs' own; readers ignore them, except
 *    idle_start (above). An exit without its entry (the programs attached in between) is not
 *    counted.
 *
 * Sampled timing. A clock read (bpf_ktime_get_ns) costs ~50 ns on a VM, more than the whole
 * budget per event, so every run is COUNTED but only one in (targ_time_mask + 1) is TIMED: the
 * runs whose count (runs completed before it) is a multiple of that, plus every hardirq that
 * preempts a timed softirq (so the softirq's nested time is known exactly). `ns` sums the timed
 * runs, `timed` counts them; a period's time is  delta(ns) / delta(timed) * delta(count).
 * targ_time_mask = 0 times every run (timed == count). The mask is a power of two minus one,
 * set by the loader (CollectorOptions::cpu_times_time_one_in). A count-based choice, not a
 * random one: no helper call, and on a CPU the timed runs are evenly spread.
 *
 * Softirq vectors are the kernel's anonymous enum (HI_SOFTIRQ = 0 ... NET_RX_SOFTIRQ = 3,
 * BLOCK_SOFTIRQ = 4, IRQ_POLL_SOFTIRQ = 5), unchanged since 2.6.x and part of /proc/softirqs'
 * order; an anonymous enum has no CO-RE relocation, so cpu_time.bpf.c names the numbers. */
#define DIMCTL_SOFTIRQ_NET_RX 0   /* kernel vector 3 */
#define DIMCTL_SOFTIRQ_BLOCK 1    /* kernel vector 4 */
#define DIMCTL_SOFTIRQ_IRQ_POLL 2 /* kernel vector 5 */
#define DIMCTL_SOFTIRQ_COUNTED 3
/* Handler or softirq runs of one kind on one CPU (or of one IRQ). */
struct dimctl_run_times {
  __u64 ns;    /* sum over the timed runs (softirqs: excluding nested hardirq time) */
  __u64 count; /* every run (exit events) */
  __u64 timed; /* runs timed (== count when targ_time_mask is 0) */
};
struct dimctl_cpu_slot {
  /* BPF state, not for readers. First, with the hardirq and NET_RX counters, in the slot's
   * first cache line: an interrupt's or a NET_RX softirq's entry and exit touch that line
   * (on a host where interrupts are rare each run finds it cold). */
  __u64 hardirq_start;   /* bpf_ktime_get_ns() at a timed irq_handler_entry, else 0 */
  __u64 softirq_start;   /* the same for a timed counted softirq */
  __u64 softirq_hard_ns; /* hardirq.ns at that softirq_entry */
  struct dimctl_run_times hardirq;
  struct dimctl_run_times softirq[DIMCTL_SOFTIRQ_COUNTED]; /* DIMCTL_SOFTIRQ_* */
  __u64 pad0; /* the idle words start the slot's third line: a switch touches that line only */
  /* Idle time (sched:sched_switch): the CPU's idle task (pid 0) running. idle_ns sums the
   * finished idle stretches; idle_start is the stamp (rq clock) at which the running stretch
   * began (0: not idle, or no switch seen yet); seen is set at the first switch the program
   * sees on the CPU, so that a reader knows whether idle_ns means anything (a CPU idle since
   * before the attach has not switched yet). idle_entries counts idle entries (it picks the
   * calibrated ones); idle_cal_mono / idle_cal_stamp are bpf_ktime_get_ns() and the stamp of
   * the latest calibrated entry (0: none yet). Written only at idle edges and at the
   * first switch. */
  __u64 idle_start;
  __u64 idle_ns;
  __u64 seen;
  __u64 idle_entries;
  __u64 idle_cal_mono;
  __u64 idle_cal_stamp;
  __u64 pad[2]; /* 192 bytes: a slot never shares a line with another CPU's */
};

/* Map irq_times (BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, DIMCTL_IRQ_SLOTS entries), indexed by IRQ
 * number: the same handler runs per IRQ, over all CPUs (IRQs >= DIMCTL_IRQ_SLOTS count only in
 * cpu_times). An array, not a hash: the lookup is inlined (a hash costs a helper call and a jhash
 * per interrupt, more than the rest of the program). Plain adds: the kernel never runs one IRQ's
 * handlers on two CPUs at once (IRQD_IRQ_INPROGRESS), except per-CPU interrupts
 * (percpu_devid: arm64 timers and IPIs; x86's local APIC vectors do not pass irq_handler_entry),
 * whose per-IRQ sums may lose an add when two CPUs update together; cpu_times stays exact. */
#define DIMCTL_IRQ_SLOTS 4096
struct dimctl_irq_slot {
  struct dimctl_run_times t;
  __u64 pad;
};

/* Map dimctl_drops (BPF_MAP_TYPE_PERCPU_ARRAY, DIMCTL_DROP_MAX entries of __u64): what a
 * program could not record. */
#define DIMCTL_DROP_NAPI_MAP_FULL 0
#define DIMCTL_DROP_CQ_MAP_FULL 1
#define DIMCTL_DROP_RINGBUF_FULL 2
#define DIMCTL_DROP_MAX 3

#endif /* DIMCTL_BPF_SHARED_H */
