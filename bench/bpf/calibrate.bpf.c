// SPDX-License-Identifier: GPL-2.0
/* calibrate.bpf.c: an EMPTY tp_btf/napi_poll program. Its run_time_ns/run_cnt is the fixed cost
 * of running any program on this tracepoint as measured by kernel.bpf_stats_enabled (tracepoint
 * dispatch + the stats clock reads), the floor under dimctl's napi_poll figure. Bench only. */
#include "vmlinux/vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/napi_poll")
int BPF_PROG(dimctl_calibrate_empty, struct napi_struct *napi, int work, int budget)
{
	return 0;
}
