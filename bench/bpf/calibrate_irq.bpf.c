// SPDX-License-Identifier: GPL-2.0
/* calibrate_irq.bpf.c: EMPTY tp_btf programs on the five tracepoints of cpu_time.bpf.c. Their
 * run_time_ns/run_cnt is the floor under dimctl's figures there (dispatch + bpf_stats' clock
 * reads), as calibrate.bpf.c is for napi_poll. Bench only. */
#include "vmlinux/vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(empty_irq_entry, int irq, struct irqaction *action)
{
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(empty_irq_exit, int irq, struct irqaction *action, int ret)
{
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(empty_softirq_entry, unsigned int vec)
{
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(empty_softirq_exit, unsigned int vec)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}
