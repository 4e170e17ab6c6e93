// SPDX-License-Identifier: GPL-2.0
/* napi.bpf.c: per-NAPI poll counters from napi:napi_poll (dim-spec 8.1).
 *
 * One update per poll, never per packet in the default configuration. Two twins of the same
 * handler exist; the loader enables exactly one with bpf_program__set_autoload():
 *   tp_btf/napi_poll  BTF-typed arguments, direct (trusted) loads: preferred;
 *   raw_tp/napi_poll  for kernels/hosts where tp_btf cannot attach; reads via CO-RE probe reads.
 * The optional byte counter (tp_btf/netif_receive_skb, per skb) is off by default
 * (autoload false in the loader unless CollectorOptions::count_bytes); with device globs it
 * only counts the ifindexes userspace puts in skb_bytes_ifidx.
 */
#include "vmlinux/vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "shared/dimctl_bpf.h"

#define EEXIST 17 /* errno values are macros: not in vmlinux.h */

char LICENSE[] SEC("license") = "GPL";

/* Network namespace filter: only devices whose netns inode equals this are counted (ifindex is
 * per netns, so foreign devices would be mislabelled). 0 = all namespaces. Set before load. */
const volatile __u32 targ_netns_ino = 0;

/* Byte counter device filter: when set, the skb program only counts devices whose ifindex is a
 * key of skb_bytes_ifidx (maintained by userspace). Set before load; when false the verifier
 * drops the lookup as dead code. */
const volatile bool targ_bytes_filter = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DIMCTL_SKB_BYTES_MAX_DEVICES);
	__type(key, __u32);
	__type(value, __u8);
} skb_bytes_ifidx SEC(".maps");

/* The slot table (dimctl_bpf.h: layout, claim and retirement protocol, reader rule). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, DIMCTL_NAPI_SLOT_COUNT);
	__type(key, __u32);
	__type(value, struct dimctl_napi_slot);
} napi_slots SEC(".maps");

/* Overflow directory: key -> slot index of NAPIs whose home slot is held by another. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DIMCTL_NAPI_OVERFLOW);
	__type(key, struct dimctl_napi_key);
	__type(value, __u32);
} napi_stats SEC(".maps");

/* Overflow slots userspace gave back after retiring their NAPI (zeroed, free). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, DIMCTL_NAPI_OVERFLOW);
	__type(value, __u32);
} napi_free SEC(".maps");

/* Overflow slots handed out so far from the cursor (may pass DIMCTL_NAPI_OVERFLOW by the few
 * claims that raced past the check below; userspace clamps). */
__u64 napi_overflow_next = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DIMCTL_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} napi_drops SEC(".maps");

static __always_inline void count_drop(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&napi_drops, &what);

	if (v)
		*v += 1;
}

/* The key as the slot's first 8-byte word. */
union napi_key_word {
	struct dimctl_napi_key key;
	__u64 word;
};

/* A new overflow slot for `k` (its home slot is held by another NAPI). The hash insert decides
 * between CPUs claiming the same key (napi_poll and the skb program of one NAPI may run at once
 * on two CPUs); the loser gives its index back and uses the winner's slot. */
static __noinline struct dimctl_napi_slot *claim_overflow(struct dimctl_napi_key *k)
{
	struct dimctl_napi_slot *slot;
	__u32 ix, *found;
	__u64 n;
	long err;

	if (bpf_map_pop_elem(&napi_free, &ix) != 0) {
		if (napi_overflow_next >= DIMCTL_NAPI_OVERFLOW)
			goto full;
		n = __sync_fetch_and_add(&napi_overflow_next, 1);
		if (n >= DIMCTL_NAPI_OVERFLOW)
			goto full;
		ix = DIMCTL_NAPI_SLOTS + (__u32)n;
	}
	err = bpf_map_update_elem(&napi_stats, k, &ix, BPF_NOEXIST);
	if (err != 0) {
		bpf_map_push_elem(&napi_free, &ix, 0);
		if (err != -EEXIST)
			goto full; /* -E2BIG: the directory is full */
		found = bpf_map_lookup_elem(&napi_stats, k);
		if (!found)
			return 0; /* retired meanwhile: this one event is not counted */
		return bpf_map_lookup_elem(&napi_slots, found);
	}
	slot = bpf_map_lookup_elem(&napi_slots, &ix);
	if (!slot)
		return 0;
	/* Published to readers by the key; until then (or if another CPU, finding the index in
	 * napi_stats, counts first) the counters are there but the slot reads as free. */
	slot->key = *k;
	return slot;
full:
	count_drop(DIMCTL_DROP_NAPI_MAP_FULL);
	return 0;
}

/* The slot counting (ifindex, napi_id); create = claim one when the NAPI has none. */
static __always_inline struct dimctl_napi_slot *napi_slot(__u32 ifindex, __u32 napi_id,
							   bool create)
{
	union napi_key_word k = { .key = { .ifindex = ifindex, .napi_id = napi_id } };
	__u32 home = napi_id & (DIMCTL_NAPI_SLOTS - 1);
	struct dimctl_napi_slot *slot;
	__u32 *ix;

	slot = bpf_map_lookup_elem(&napi_slots, &home);
	if (!slot)
		return 0;
	if (*(__u64 *)&slot->key == k.word)
		return slot; /* the fast path */
	ix = bpf_map_lookup_elem(&napi_stats, &k.key);
	if (ix)
		return bpf_map_lookup_elem(&napi_slots, ix);
	if (!create)
		return 0;
	/* Claim the home slot if it is free: counters are zero there (dimctl_bpf.h). A CPU
	 * claiming it for the same key at the same time is as good as winning. */
	if (*(__u64 *)&slot->key == 0) {
		__u64 old = __sync_val_compare_and_swap((__u64 *)&slot->key, 0, k.word);

		if (old == 0 || old == k.word)
			return slot;
	}
	return claim_overflow(&k.key);
}

/*
 * Plain or atomic adds. The napi_poll tracepoint fires in __napi_poll() (softirq, threaded NAPI
 * or busy polling), always run by the owner of the instance's NAPI_STATE_SCHED bit, which is
 * taken and released with atomic read-modify-writes (full barriers): the polls of one NAPI
 * instance never overlap, and each one sees the stores of the one before, on whichever CPU it
 * ran. So the poll counters of a slot have one writer at a time: plain adds (one load and one
 * 8-byte store, which readers see whole). Two exceptions take atomic adds (lock add):
 *  - napi_id 0: NAPIs the kernel does not hash (netif_napi_add_tx: virtio_net's TX NAPIs, ...)
 *    all count under (ifindex, 0) and poll at the same time on different CPUs;
 *  - bytes/skbs of the optional skb program: netif_receive_skb also runs on other CPUs than the
 *    NAPI's (RPS backlogs), concurrently with its polls and with each other.
 * A plain add and an atomic add to different words of one slot do not disturb each other.
 */
static __always_inline void count_poll(__u32 ifindex, __u32 napi_id, int work, int budget)
{
	struct dimctl_napi_slot *s;

	/* budget 0 = netpoll (poll_one_napi): not a NAPI episode. */
	if (budget <= 0 || ifindex == 0)
		return;
	s = napi_slot(ifindex, napi_id, true);
	if (!s)
		return;
	/* The slot's line is written below anyway: one more store. */
	s->cpu = bpf_get_smp_processor_id() + 1;
	if (napi_id != 0) {
		s->v.polls += 1;
		if (work > 0)
			s->v.packets += (__u64)work;
		else
			s->v.empty_polls += 1;
		if (work >= budget)
			s->v.budget_exhausted += 1;
		return;
	}
	__sync_fetch_and_add(&s->v.polls, 1);
	if (work > 0)
		__sync_fetch_and_add(&s->v.packets, (__u64)work);
	else
		__sync_fetch_and_add(&s->v.empty_polls, 1);
	if (work >= budget)
		__sync_fetch_and_add(&s->v.budget_exhausted, 1);
}

SEC("tp_btf/napi_poll")
int BPF_PROG(dimctl_napi_poll_btf, struct napi_struct *napi, int work, int budget)
{
	struct net_device *dev = napi->dev;

	/* The per-CPU backlog NAPI (process_backlog) has no device: not a device queue. */
	if (!dev)
		return 0;
	if (targ_netns_ino && dev->nd_net.net->ns.inum != targ_netns_ino)
		return 0;
	count_poll(dev->ifindex, napi->napi_id, work, budget);
	return 0;
}

SEC("raw_tp/napi_poll")
int BPF_PROG(dimctl_napi_poll_raw, struct napi_struct *napi, int work, int budget)
{
	struct net_device *dev = BPF_CORE_READ(napi, dev);

	if (!dev)
		return 0;
	if (targ_netns_ino && BPF_CORE_READ(dev, nd_net.net, ns.inum) != targ_netns_ino)
		return 0;
	count_poll(BPF_CORE_READ(dev, ifindex), BPF_CORE_READ(napi, napi_id), work, budget);
	return 0;
}

/* Optional, per packet: bytes per NAPI for devices without netdev qstats. skb->napi_id is set
 * by skb_mark_napi_id() in the GRO/receive path of NAPI drivers (CONFIG_NET_RX_BUSY_POLL). */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(dimctl_napi_skb_bytes, struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;
	struct dimctl_napi_slot *s;
	__u32 ifindex;

	if (!dev)
		return 0;
	/* napi_poll fires after ->poll(): on the first poll of a NAPI its slot does not exist yet
	 * when its skbs arrive here, so claim it. Packets of non-NAPI paths (skb->napi_id 0 <
	 * MIN_NAPI_ID) are ignored. */
	if (skb->napi_id == 0)
		return 0;
	ifindex = dev->ifindex;
	/* Devices not selected by the globs: return before napi_slot() can claim a slot. */
	if (targ_bytes_filter && !bpf_map_lookup_elem(&skb_bytes_ifidx, &ifindex))
		return 0;
	if (targ_netns_ino && dev->nd_net.net->ns.inum != targ_netns_ino)
		return 0;
	s = napi_slot(ifindex, skb->napi_id, true);
	if (!s)
		return 0;
	/* Atomic: see count_poll(). */
	__sync_fetch_and_add(&s->v.bytes, (__u64)skb->len);
	__sync_fetch_and_add(&s->v.skbs, 1);
	return 0;
}
