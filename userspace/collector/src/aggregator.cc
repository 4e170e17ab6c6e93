#include "dimctl/collector/aggregator.h"

#include "dimctl/collector/slot_table.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>

namespace dimctl::collector {

seam::PollContext poll_context_from_code(uint32_t code) {
  switch (code) {
    case DIMCTL_POLL_SOFTIRQ:
      return seam::PollContext::kSoftirq;
    case DIMCTL_POLL_WORKQUEUE:
      return seam::PollContext::kWorkqueue;
    case DIMCTL_POLL_UNBOUND_WORKQUEUE:
      return seam::PollContext::kUnboundWorkqueue;
    default:
      return seam::PollContext::kDirect;
  }
}

namespace {

constexpr uint32_t kSlotMask = DIMCTL_NAPI_SLOTS - 1;

bool same_key(const dimctl_napi_key& a, const dimctl_napi_key& b) {
  return a.ifindex == b.ifindex && a.napi_id == b.napi_id;
}
// The model's key order: the snapshot comes in it.
uint64_t packed(const dimctl_napi_key& k) {
  return seam::packed(seam::QueueKey{k.ifindex, k.napi_id});
}
uint64_t packed(const dimctl_cq_key& k) {
  return seam::packed(seam::CqKey{k.dev_index, k.cq_id});
}

// Positions of `v`'s entries in key order (into reused storage). The same keys in the same read
// positions as last time (a steady state of the slot tables) keep the last order: one compare
// per entry. Otherwise sorting 16-byte (key, position) pairs moves far less than sorting the
// entries; entries already in order are only checked.
template <typename E>
const std::vector<KeyOrder>& order_by_key(const std::vector<E>& v, KeyOrderCache& c) {
  const size_t n = v.size();
  bool same = c.keys.size() == n;
  for (size_t i = 0; same && i < n; ++i) same = packed(v[i].key) == c.keys[i];
  if (same) return c.order;
  c.keys.resize(n);
  c.order.clear();
  for (size_t i = 0; i < n; ++i) {
    c.keys[i] = packed(v[i].key);
    c.order.push_back({c.keys[i], static_cast<uint32_t>(i)});
  }
  auto less = [](const KeyOrder& a, const KeyOrder& b) { return a.key < b.key; };
  if (!std::is_sorted(c.order.begin(), c.order.end(), less))
    std::sort(c.order.begin(), c.order.end(), less);
  return c.order;
}

// What label_queues() walks: entries in key order, with their keys and counters.
// A read's entries, through their key order.
struct ReadEntries {
  const std::vector<NapiEntry>& entries;
  const std::vector<KeyOrder>& order;
  size_t size() const { return order.size(); }
  const dimctl_napi_key& key(size_t i) const { return entries[order[i].pos].key; }
  const dimctl_napi_value& value(size_t i) const { return entries[order[i].pos].value; }
  uint16_t cpu(size_t) const { return seam::QueueCounters::kNoCpu; }  // not in a map's value
};
// The live slots of the table, their counters read from its memory.
struct TableEntries {
  const NapiSlotTable& table;
  std::span<const LiveSlot> live;
  size_t size() const { return live.size(); }
  const dimctl_napi_key& key(size_t i) const { return live[i].key; }
  dimctl_napi_value value(size_t i) const { return table.counters(live[i].index); }
  uint16_t cpu(size_t i) const { return table.cpu(live[i].index); }
};

}  // namespace

void fold_napi_slots(const uint8_t* values, size_t count, size_t ncpus,
                     std::vector<NapiEntry>& out) {
  constexpr size_t stride = per_cpu_stride(sizeof(dimctl_napi_slot));
  static_assert(offsetof(dimctl_napi_slot, key) == 0);
  for (size_t i = 0; i < count; ++i) {
    const size_t first = out.size();  // this index's entries: usually one NAPI on every CPU
    for (size_t c = 0; c < ncpus; ++c, values += stride) {
      dimctl_napi_key key;
      std::memcpy(&key, values, sizeof(key));
      if (key.ifindex == 0) continue;  // free on this CPU
      size_t j = first;
      while (j < out.size() && !same_key(out[j].key, key)) ++j;
      if (j == out.size()) out.push_back({key, {}});
      dimctl_napi_value v;
      std::memcpy(&v, values + offsetof(dimctl_napi_slot, v), sizeof(v));
      add_cpu(out[j].value, v);
    }
  }
}

Result<void> NapiSources::read(std::vector<NapiEntry>& out) {
  const size_t first = out.size();
  if (auto r = slots_.read(out); !r) return std::move(r).error().wrap("napi_slots");
  const size_t slots_end = out.size();
  // Group the slot entries by slot index: a hash key can only meet a slot entry of its own slot.
  slot_start_.fill(0);
  for (size_t i = first; i < slots_end; ++i) ++slot_start_[(out[i].key.napi_id & kSlotMask) + 1];
  for (size_t i = 1; i < slot_start_.size(); ++i) slot_start_[i] += slot_start_[i - 1];
  std::array<uint32_t, DIMCTL_NAPI_SLOTS> fill;
  std::copy_n(slot_start_.begin(), DIMCTL_NAPI_SLOTS, fill.begin());
  by_slot_.resize(slots_end - first);
  for (size_t i = first; i < slots_end; ++i) {
    by_slot_[fill[out[i].key.napi_id & kSlotMask]++] = static_cast<uint32_t>(i);
  }

  if (auto r = overflow_.read(out); !r) return r;
  // A hash entry whose NAPI also holds its slot (on other CPUs) adds into that entry; the others
  // are moved down over the merged ones.
  size_t kept = slots_end;
  for (size_t j = slots_end; j < out.size(); ++j) {
    const uint32_t slot = out[j].key.napi_id & kSlotMask;
    NapiEntry* same = nullptr;
    for (uint32_t p = slot_start_[slot]; p < slot_start_[slot + 1]; ++p) {
      if (same_key(out[by_slot_[p]].key, out[j].key)) {
        same = &out[by_slot_[p]];
        break;
      }
    }
    if (same != nullptr) {
      add_cpu(same->value, out[j].value);
    } else {
      if (kept != j) out[kept] = out[j];
      ++kept;
    }
  }
  out.resize(kept);
  return ok();
}

Result<void> NapiSources::erase(const dimctl_napi_key& key) {
  if (auto r = overflow_.erase(key); !r && r.error().code() != ENOENT) return r;
  return slots_.clear(key.napi_id & (DIMCTL_NAPI_SLOTS - 1), key);
}

template <typename Entries>
Result<void> CounterAggregator::label_queues(const Entries& es, NapiMap& map,
                                             seam::Snapshot& snap) {
  std::vector<seam::QueueCounters>& out = snap.queues;
  std::vector<std::string>& devices = snap.devices;
  // Room for every entry read: a no-op on the vector of the last sample unless the maps grew
  // (entries are value-initialized only when it grows). Shrunk to what was written at the end.
  if (out.size() < es.size()) out.resize(es.size());
  seam::QueueCounters* const qs = out.data();
  size_t n = 0;  // entries written
  size_t d = 0;  // device names written
  // A device or NAPI the counters show and the directory does not is retired only on a fresh
  // answer: the first one re-reads the kernel's view (at most once per sample) and labelling
  // starts over, since the re-read may have changed any device's entries. Nothing was retired
  // before that point: the first miss is the first retirement.
  bool reread = false;
restart:
  n = 0;
  d = 0;

  // One device's run of entries at a time. What is per device is looked up once: the name (one
  // if_indextoname() per device instead of per NAPI, and all queues of a device carry the same
  // device_ix, as seam::Snapshot promises), whether netlink lists its NAPIs or knows anything
  // per NAPI, whether its bytes come from the skb program. The name enters the table with the
  // device's first queue that is kept, so no name goes without a queue.
  for (size_t i = 0; i < es.size();) {
    const uint32_t ifindex = es.key(i).ifindex;
    size_t end = i + 1;
    while (end < es.size() && es.key(end).ifindex == ifindex) ++end;
    const std::optional<std::string> name = dir_.ifname(ifindex);
    const bool listed = name && dir_.lists_napis(ifindex);
    const bool knows = name && dir_.knows_napis(ifindex);
    const bool map_bytes = count_bytes_ && (!byte_devices_ || byte_devices_->count(ifindex) != 0);
    auto enter_name = [&] {
      if (d == devices.size()) {
        devices.push_back(*name);
      } else if (devices[d] != *name) {
        devices[d] = *name;
      }
      ++d;
    };
    // Every field of the entry at this position last time (or a new one) is written.
    auto write = [&](const dimctl_napi_key& key, const dimctl_napi_value& sum, const NapiInfo* info,
                     uint16_t cpu) {
      seam::QueueCounters& q = qs[n++];
      q.key = {key.ifindex, key.napi_id};
      q.cpu = cpu;
      q.device_ix = static_cast<uint32_t>(d - 1);
      q.queue = info != nullptr ? info->queue : -1;
      q.irq = info != nullptr ? info->irq : -1;
      q.polls = sum.polls;
      q.packets = sum.packets;
      q.budget_exhausted = sum.budget_exhausted;
      q.empty_polls = sum.empty_polls;
      q.bytes = map_bytes ? sum.bytes : 0;
      q.has_bytes = map_bytes;
      if (info != nullptr && !map_bytes &&
          info->rx_bytes) {  // qstats, cumulative since first sight
        auto [it, inserted] = bytes_base_.try_emplace({key.ifindex, key.napi_id}, *info->rx_bytes);
        q.bytes = *info->rx_bytes >= it->second ? *info->rx_bytes - it->second : 0;
        q.has_bytes = true;
      }
    };
    // A second slot of the NAPI written last (equal keys are adjacent: two slots of one NAPI
    // after a rare claim race) is added into its queue.
    auto add = [&](const dimctl_napi_value& sum) {
      seam::QueueCounters& q = qs[n - 1];
      q.polls += sum.polls;
      q.packets += sum.packets;
      q.budget_exhausted += sum.budget_exhausted;
      q.empty_polls += sum.empty_polls;
      if (map_bytes) q.bytes += sum.bytes;
    };

    if (name && !listed && !knows) {
      // The directory has nothing per NAPI on the device (no netdev NAPI commands before v6.8,
      // or a driver that links none): every entry is kept as it is. The loop the slot table's
      // steady state spends its time in, free of calls.
      enter_name();
      for (size_t j = i; j < end; ++j) {
        const dimctl_napi_key& key = es.key(j);
        if (j > i && key.napi_id == es.key(j - 1).napi_id) [[unlikely]] {
          add(es.value(j));
        } else {
          write(key, es.value(j), nullptr, es.cpu(j));
        }
      }
      i = end;
      continue;
    }

    bool in_table = false;
    // Whether the entry before was written to qs[n - 1] (kept) or retired.
    bool last_kept = false;
    for (size_t j = i; j < end; ++j) {
      const dimctl_napi_key& key = es.key(j);
      const uint32_t napi_id = key.napi_id;
      if (j > i && napi_id == es.key(j - 1).napi_id) [[unlikely]] {
        if (last_kept) add(es.value(j));
        continue;
      }
      last_kept = false;
      std::optional<NapiInfo> info;
      if (knows) info = dir_.napi(ifindex, napi_id);
      if (!name || (listed && napi_id != 0 && !info)) [[unlikely]] {  // gone
        if (!reread) {
          reread = true;
          if (dir_.reread()) goto restart;
        }
        auto r = map.erase(key);
        if (!r)
          return std::move(r).error().wrap(
              fmt::format("retire napi {} of ifindex {}", napi_id, ifindex));
        bytes_base_.erase({ifindex, napi_id});
        ++stats_.queues_retired;
        continue;
      }
      if (!in_table) {
        enter_name();
        in_table = true;
      }
      write(key, es.value(j), info ? &*info : nullptr, es.cpu(j));
      last_kept = true;
    }
    i = end;
  }
  out.resize(n);  // shrinks when NAPIs were retired or vanished (never grows: n <= size)
  devices.resize(d);
  return ok();
}

Result<void> CounterAggregator::queues(NapiMap& map, seam::Snapshot& snap) {
  napis_.clear();
  if (auto r = map.read(napis_); !r) return std::move(r).error().wrap("napi_stats");
  // The snapshot's order, and every device's NAPIs in one run.
  return label_queues(ReadEntries{napis_, order_by_key(napis_, napi_order_)}, map, snap);
}

Result<void> CounterAggregator::queues(NapiSlotTable& table, seam::Snapshot& snap) {
  if (auto r = table.refresh(); !r) return std::move(r).error().wrap("napi_slots");
  return label_queues(TableEntries{table, table.live()}, table, snap);
}

Result<seam::Snapshot> CounterAggregator::queues(NapiMap& map) {
  seam::Snapshot out;
  if (auto r = queues(map, out); !r) return std::move(r).error();
  return out;
}

Result<void> CounterAggregator::cqs(CqStatsMap& stats, CqInfoMap& info_map,
                                    std::span<const dimctl_cq_event> events,
                                    std::vector<seam::CqCounters>& out) {
  cqs_.clear();
  if (auto r = stats.read(cqs_); !r) return std::move(r).error().wrap("cq_stats");
  cq_infos_.clear();
  if (auto r = info_map.read(cq_infos_); !r) return std::move(r).error().wrap("cq_info");
  // Both in key order: the snapshot's order, and cq_info is joined by walking it alongside.
  const std::vector<KeyOrder>& order = order_by_key(cqs_, cq_order_);
  const std::vector<KeyOrder>& info_order = order_by_key(cq_infos_, info_order_);

  auto key_of = [](const dimctl_cq_key& k) { return seam::CqKey{k.dev_index, k.cq_id}; };

  // CQs freed since the previous sample are left out of this snapshot (they are gone) and
  // retired from the maps. A restrack id freed and re-allocated within one period is also left
  // out once (the consumer sees old-gone, then new-from-zero) but not erased: BPF already
  // reset its counters at cq_alloc.
  std::set<seam::CqKey> skip;
  std::set<seam::CqKey> freed;
  for (const auto& ev : events) {
    const seam::CqKey k{ev.info.dev_index, ev.info.cq_id};
    if (ev.type == DIMCTL_CQ_EVENT_FREE) {
      skip.insert(k);
      freed.insert(k);
    } else if (ev.type == DIMCTL_CQ_EVENT_ALLOC) {
      freed.erase(k);
    }
  }

  out.reserve(cqs_.size());  // as in queues(): the vector of the last sample keeps its storage
  size_t n = 0;              // entries written
  auto info = info_order.cbegin();
  for (const KeyOrder& o : order) {
    const CqEntry& e = cqs_[o.pos];
    const seam::CqKey key = key_of(e.key);
    if (skip.count(key) != 0) continue;
    const dimctl_cq_value& sum = e.value;
    // Every field written, the IB device name into the existing string.
    if (n == out.size()) out.emplace_back();
    seam::CqCounters& c = out[n++];
    c.key = key;
    while (info != info_order.cend() && info->key < o.key) ++info;
    if (info != info_order.cend() && info->key == o.key) {
      const dimctl_cq_info& i = cq_infos_[info->pos].value;
      c.ibdev.assign(i.ibdev, strnlen(i.ibdev, sizeof(i.ibdev)));
      c.poll_ctx = poll_context_from_code(i.poll_ctx);
      c.nr_cqe = i.nr_cqe;
      c.comp_vector = i.comp_vector;
    } else {
      c.ibdev.clear();
      c.poll_ctx = seam::PollContext::kDirect;
      c.nr_cqe = 0;
      c.comp_vector = -1;
    }
    c.schedules = sum.schedules;
    c.reschedules = sum.reschedules;
    c.events = sum.events;
    c.polls = sum.polls;
    c.completions = sum.completions;
    c.poll_errors = sum.poll_errors;
    c.budget_exhausted = sum.exhausted;
    c.kernel_modifies = sum.modifies;
    c.cpu = sum.cpu != 0 && sum.cpu - 1 < seam::QueueCounters::kNoCpu
                ? static_cast<uint16_t>(sum.cpu - 1)
                : seam::QueueCounters::kNoCpu;
    c.kernel_comps = static_cast<uint16_t>(sum.last_comps);
    c.kernel_usec = static_cast<uint16_t>(sum.last_usec);
  }
  out.resize(n);
  for (const auto& key : freed) {
    const dimctl_cq_key k{key.dev_index, key.cq_id};
    // The key may already be absent (never polled); ENOENT is not an error here.
    if (auto r = stats.erase(k); !r && r.error().code() != ENOENT) {
      return std::move(r).error().wrap(fmt::format("retire cq {}/{}", key.dev_index, key.cq_id));
    }
    if (auto r = info_map.erase(k); !r && r.error().code() != ENOENT) {
      return std::move(r).error().wrap(
          fmt::format("retire cq info {}/{}", key.dev_index, key.cq_id));
    }
    ++stats_.cqs_retired;
  }
  return ok();
}

Result<std::vector<seam::CqCounters>> CounterAggregator::cqs(
    CqStatsMap& stats, CqInfoMap& info_map, std::span<const dimctl_cq_event> events) {
  std::vector<seam::CqCounters> out;
  if (auto r = cqs(stats, info_map, events, out); !r) return std::move(r).error();
  return out;
}

}  // namespace dimctl::collector
