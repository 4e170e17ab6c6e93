// SPDX-License-Identifier: GPL-2.0
/* cpu_time.bpf.c: time per CPU in hard interrupt handlers, in the queue-polling softirqs
 * (NET_RX, BLOCK, IRQ_POLL) and idle, for the cost estimator and the saturation rule. Layout,
 * nesting rule and reader rule: dimctl_bpf.h ("cpu_time.bpf.c").
 *
 * These tracepoints fire far more often than napi_poll on a busy host (every interrupt, every
 * softirq of every vector), so each program is one inlined array lookup and a few plain stores
 * to its own CPU's line, and only one run in targ_time_mask + 1 reads the clock (dimctl_bpf.h:
 * sampled timing). Twins as in napi.bpf.c: tp_btf preferred, raw_tp the
 * fallback; the irq arguments are scalars, so both read them the same way (sched_switch's
 * tasks: direct loads under tp_btf, CO-RE reads under raw_tp).
 */
#include "vmlinux/vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "shared/dimctl_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* One slot per possible CPU: the loader sets max_entries. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dimctl_cpu_slot);
} cpu_times SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, DIMCTL_IRQ_SLOTS);
	__type(key, __u32);
	__type(value, struct dimctl_irq_slot);
} irq_times SEC(".maps");

/* The kernel's softirq vectors (dimctl_bpf.h: why numbers). */
#define NET_RX_VEC 3
#define IRQ_POLL_VEC 5

static __always_inline struct dimctl_cpu_slot *this_cpu_slot(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&cpu_times, &cpu);
}

/* Sampled timing (dimctl_bpf.h): time one run in targ_time_mask + 1. Set before load. */
const volatile __u64 targ_time_mask = 0;

/* Idle time: a context switch to or from the CPU's idle task (pid 0 on every CPU). Switches
 * between two other tasks only count. No clock read at an edge: __schedule() has just updated
 * the CPU's rq clock (update_rq_clock(), sched_clock), and the stretch is its value at the switch
 * out of idle minus its value at the switch in. The program reaches the rq through the non-idle
 * task of the switch (se.cfs_rq->rq, CONFIG_FAIR_GROUP_SCHED, which every distribution kernel
 * builds); without that link, the task's se.exec_start, which the scheduler has just set to the
 * rq's clock_task (the leaving task in update_curr(), the coming one in set_next_task()):
 * clock_task leaves out interrupt and stolen time (dimctl_bpf.h). One entry in
 * targ_time_mask + 1 also reads the monotonic clock beside its stamp, the reader's calibration
 * for a stretch still running. `raw`, a constant at each call: the raw_tp twin, which would pay
 * a probe read per pointer of the chain, stamps with the monotonic clock itself (its calibration
 * pair is then one clock). */
static __always_inline __u64 task_stamp(struct task_struct *t, bool raw)
{
	/* raw_tp: three probe reads cost more than the clock (245 against 180 ns a switch) */
	if (raw)
		return bpf_ktime_get_ns();
	if (bpf_core_field_exists(struct cfs_rq, rq))
		return t->se.cfs_rq->rq->clock;
	return t->se.exec_start;
}

static __always_inline void switched(struct task_struct *prev, struct task_struct *next, bool raw)
{
	struct dimctl_cpu_slot *s = this_cpu_slot();
	/* The tracepoint fires in __schedule() before context_switch(): prev is still current, and
	 * the helper's low word is its pid without a probe read (the raw_tp twin's dearest part). */
	int prev_pid = raw ? (int)(__u32)bpf_get_current_pid_tgid() : prev->pid;
	int next_pid = raw ? BPF_CORE_READ(next, pid) : next->pid;
	__u64 stamp;

	if (!s)
		return;
	if (prev_pid != 0 && next_pid != 0) {
		if (!s->seen) /* a load per switch; the store once */
			s->seen = 1;
		return;
	}
	s->seen = 1;
	if (prev_pid == 0) {
		stamp = task_stamp(next, raw);
		if (s->idle_start && stamp > s->idle_start)
			s->idle_ns += stamp - s->idle_start;
		s->idle_start = 0;
	}
	if (next_pid == 0) {
		stamp = task_stamp(prev, raw);
		if ((s->idle_entries++ & targ_time_mask) == 0) {
			s->idle_cal_mono = raw ? stamp : bpf_ktime_get_ns();
			s->idle_cal_stamp = stamp;
		}
		s->idle_start = stamp;
	}
}

/* A hardirq is timed when its turn comes, or when it preempts a timed softirq (whose nested
 * hardirq time must be known). */
static __always_inline void hardirq_entry(void)
{
	struct dimctl_cpu_slot *s = this_cpu_slot();

	if (!s)
		return;
	if ((s->hardirq.count & targ_time_mask) && !s->softirq_start)
		return;
	s->hardirq_start = bpf_ktime_get_ns();
}

static __always_inline void add_run(struct dimctl_run_times *t, __u64 start, __u64 d)
{
	t->count += 1;
	if (start) {
		t->ns += d;
		t->timed += 1;
	}
}

static __always_inline void hardirq_exit(int irq)
{
	struct dimctl_cpu_slot *s = this_cpu_slot();
	struct dimctl_irq_slot *per_irq;
	__u32 key = (__u32)irq;
	__u64 start, d = 0;

	if (!s)
		return;
	start = s->hardirq_start;
	if (start) {
		d = bpf_ktime_get_ns() - start;
		s->hardirq_start = 0;
	}
	add_run(&s->hardirq, start, d);
	per_irq = bpf_map_lookup_elem(&irq_times, &key); /* NULL past DIMCTL_IRQ_SLOTS */
	if (per_irq)
		add_run(&per_irq->t, start, d);
}

/* The counted vectors NET_RX, BLOCK, IRQ_POLL (3..5) as 0..2, else -1. 64-bit and bounded on
 * both sides in the register that indexes: a 32-bit difference lets clang check a truncated
 * copy, which the verifier cannot bound. */
static __always_inline __s64 counted(unsigned int vec)
{
	__u64 v = vec;

	if (v < NET_RX_VEC || v > IRQ_POLL_VEC)
		return -1;
	return v - NET_RX_VEC;
}

static __always_inline void softirq_entry(unsigned int vec)
{
	struct dimctl_cpu_slot *s;
	__s64 ix = counted(vec);

	if (ix < 0)
		return;
	s = this_cpu_slot();
	if (!s)
		return;
	if (s->softirq[ix].count & targ_time_mask)
		return;
	s->softirq_hard_ns = s->hardirq.ns;
	s->softirq_start = bpf_ktime_get_ns();
}

static __always_inline void softirq_exit(unsigned int vec)
{
	struct dimctl_cpu_slot *s;
	__s64 ix = counted(vec);
	__u64 start, d = 0, hard;

	if (ix < 0)
		return;
	s = this_cpu_slot();
	if (!s)
		return;
	start = s->softirq_start;
	if (start) {
		d = bpf_ktime_get_ns() - start;
		s->softirq_start = 0;
		/* Handler time of hard interrupts that preempted this softirq (all timed). */
		hard = s->hardirq.ns - s->softirq_hard_ns;
		d = d > hard ? d - hard : 0;
	}
	add_run(&s->softirq[ix], start, d);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(dimctl_irq_entry_btf, int irq, struct irqaction *action)
{
	hardirq_entry();
	return 0;
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(dimctl_irq_entry_raw, int irq, struct irqaction *action)
{
	hardirq_entry();
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(dimctl_irq_exit_btf, int irq, struct irqaction *action, int ret)
{
	hardirq_exit(irq);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(dimctl_irq_exit_raw, int irq, struct irqaction *action, int ret)
{
	hardirq_exit(irq);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(dimctl_softirq_entry_btf, unsigned int vec)
{
	softirq_entry(vec);
	return 0;
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(dimctl_softirq_entry_raw, unsigned int vec)
{
	softirq_entry(vec);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(dimctl_softirq_exit_btf, unsigned int vec)
{
	softirq_exit(vec);
	return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(dimctl_softirq_exit_raw, unsigned int vec)
{
	softirq_exit(vec);
	return 0;
}

/* Three arguments on every kernel: 5.18 appended prev_state, which is not read. */
SEC("tp_btf/sched_switch")
int BPF_PROG(dimctl_sched_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	switched(prev, next, false);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(dimctl_sched_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	switched(prev, next, true);
	return 0;
}
