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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct dimctl_napi_key);
	__type(value, struct dimctl_napi_value);
} napi_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DIMCTL_NAPI_SLOTS);
	__type(key, __u32);
	__type(value, struct dimctl_napi_slot);
} napi_slots SEC(".maps");

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

/* The counters of (ifindex, napi_id) on this CPU; create = claim/insert when missing. */
static __always_inline struct dimctl_napi_value *napi_value(__u32 ifindex, __u32 napi_id,
							    bool create)
{
	struct dimctl_napi_key key = { .ifindex = ifindex, .napi_id = napi_id };
	__u32 idx = napi_id & (DIMCTL_NAPI_SLOTS - 1);
	struct dimctl_napi_slot *slot;
	struct dimctl_napi_value *v;

	slot = bpf_map_lookup_elem(&napi_slots, &idx);
	if (slot) {
		if (slot->key.napi_id == napi_id && slot->key.ifindex == ifindex)
			return &slot->v;
		if (slot->key.ifindex == 0 && create) {
			/* Userspace zeroes retired slots entirely: the counters start at 0. */
			slot->key.ifindex = ifindex;
			slot->key.napi_id = napi_id;
			return &slot->v;
		}
	}
	/* Slot taken by another NAPI: the hash map. */
	v = bpf_map_lookup_elem(&napi_stats, &key);
	if (v || !create)
		return v;
	/* First poll of this NAPI on this CPU (or ever): create the entry. */
	struct dimctl_napi_value zero = {};

	/* EEXIST from a racing CPU is fine: the lookup below finds its entry. */
	bpf_map_update_elem(&napi_stats, &key, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&napi_stats, &key);
	if (!v)
		count_drop(DIMCTL_DROP_NAPI_MAP_FULL);
	return v;
}

static __always_inline void count_poll(__u32 ifindex, __u32 napi_id, int work, int budget)
{
	struct dimctl_napi_value *v;

	/* budget 0 = netpoll (poll_one_napi): not a NAPI episode. */
	if (budget <= 0 || ifindex == 0)
		return;
	v = napi_value(ifindex, napi_id, true);
	if (!v)
		return;
	v->polls += 1;
	if (work > 0)
		v->packets += (__u64)work;
	else
		v->empty_polls += 1;
	if (work >= budget)
		v->budget_exhausted += 1;
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
	struct dimctl_napi_value *v;
	__u32 ifindex;

	if (!dev)
		return 0;
	/* napi_poll fires after ->poll(): on a CPU's first poll of a NAPI the entry does not
	 * exist yet when its skbs arrive here, so create it (once per CPU and NAPI). Packets of
	 * non-NAPI paths (skb->napi_id 0 < MIN_NAPI_ID) are ignored. */
	if (skb->napi_id == 0)
		return 0;
	ifindex = dev->ifindex;
	/* Devices not selected by the globs: return before napi_value() can create an entry. */
	if (targ_bytes_filter && !bpf_map_lookup_elem(&skb_bytes_ifidx, &ifindex))
		return 0;
	if (targ_netns_ino && dev->nd_net.net->ns.inum != targ_netns_ino)
		return 0;
	v = napi_value(ifindex, skb->napi_id, true);
	if (!v)
		return 0;
	v->bytes += skb->len;
	v->skbs += 1;
	return 0;
}
