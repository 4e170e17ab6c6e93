#include "dimctl/collector/aggregator.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>

namespace dimctl::collector {

model::PollContext poll_context_from_code(uint32_t code) {
  switch (code) {
    case DIMCTL_POLL_SOFTIRQ:
      return model::PollContext::kSoftirq;
    case DIMCTL_POLL_WORKQUEUE:
      return model::PollContext::kWorkqueue;
    case DIMCTL_POLL_UNBOUND_WORKQUEUE:
      return model::PollContext::kUnboundWorkqueue;
    default:
      return model::PollContext::kDirect;
  }
}

namespace {

constexpr uint32_t kSlotMask = DIMCTL_NAPI_SLOTS - 1;

bool same_key(const dimctl_napi_key& a, const dimctl_napi_key& b) {
  return a.ifindex == b.ifindex && a.napi_id == b.napi_id;
}
// The model's key order: the snapshot comes in it.
uint64_t packed(const dimctl_napi_key& k) {
  return model::packed(model::QueueKey{k.ifindex, k.napi_id});
}
uint64_t packed(const dimctl_cq_key& k) {
  return model::packed(model::CqKey{k.dev_index, k.cq_id});
}

// Positions of `v`'s entries in key order (into reused storage). Sorting 16-byte (key, position)
// pairs moves far less than sorting the entries; entries already in order (slot entries come
// in napi id order) are only checked.
template <typename E>
void order_by_key(const std::vector<E>& v, std::vector<KeyOrder>& order) {
  order.clear();
  for (size_t i = 0; i < v.size(); ++i)
    order.push_back({packed(v[i].key), static_cast<uint32_t>(i)});
  auto less = [](const KeyOrder& a, const KeyOrder& b) { return a.key < b.key; };
  if (!std::is_sorted(order.begin(), order.end(), less))
    std::sort(order.begin(), order.end(), less);
}

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

Result<void> CounterAggregator::queues(NapiMap& map, model::Snapshot& snap) {
  napis_.clear();
  if (auto r = map.read(napis_); !r) return std::move(r).error().wrap("napi_stats");
  order_by_key(napis_, order_);  // the snapshot's order, and every device's NAPIs in one run
  std::vector<model::QueueCounters>& out = snap.queues;
  std::vector<std::string>& devices = snap.devices;
  // Room for every entry read (no-op on the vector of the last sample unless the maps grew):
  // growing it below then never reallocates.
  out.reserve(napis_.size());
  size_t n = 0;  // entries written
  size_t d = 0;  // device names written
  // The name is looked up once per device: one if_indextoname() per device instead of per NAPI,
  // and all queues of a device carry the same device_ix (model::Snapshot promises it). It enters
  // the table with the device's first queue that is kept, so no name goes without a queue.
  std::optional<std::string> name;
  std::optional<uint32_t> named;
  bool in_table = false;
  for (const KeyOrder& o : order_) {
    const NapiEntry& e = napis_[o.pos];
    const auto id = std::make_pair(e.key.ifindex, e.key.napi_id);
    if (named != e.key.ifindex) {
      name = dir_.ifname(e.key.ifindex);
      named = e.key.ifindex;
      in_table = false;
    }
    std::optional<NapiInfo> info;
    if (name) info = dir_.napi(e.key.ifindex, e.key.napi_id);
    const bool gone = !name || (!info && e.key.napi_id != 0 && dir_.lists_napis(e.key.ifindex));
    if (gone) {
      auto r = map.erase(e.key);
      if (!r)
        return std::move(r).error().wrap(
            fmt::format("retire napi {} of ifindex {}", e.key.napi_id, e.key.ifindex));
      bytes_base_.erase(id);
      ++stats_.queues_retired;
      continue;
    }
    if (!in_table) {
      if (d == devices.size()) {
        devices.push_back(*name);
      } else if (devices[d] != *name) {
        devices[d] = *name;
      }
      ++d;
      in_table = true;
    }
    // The entry at this position last time (or a new one): every field is written.
    if (n == out.size()) out.emplace_back();
    model::QueueCounters& q = out[n++];
    const dimctl_napi_value& sum = e.value;
    q.key = {e.key.ifindex, e.key.napi_id};
    q.device_ix = static_cast<uint32_t>(d - 1);
    q.queue = info ? info->queue : -1;
    q.irq = info ? info->irq : -1;
    q.polls = sum.polls;
    q.packets = sum.packets;
    q.budget_exhausted = sum.budget_exhausted;
    q.empty_polls = sum.empty_polls;
    q.bytes = 0;
    q.has_bytes = false;
    if (count_bytes_ && (!byte_devices_ || byte_devices_->count(e.key.ifindex) != 0)) {
      q.bytes = sum.bytes;
      q.has_bytes = true;
    } else if (info && info->rx_bytes) {
      auto [it, inserted] = bytes_base_.try_emplace(id, *info->rx_bytes);
      q.bytes = *info->rx_bytes >= it->second ? *info->rx_bytes - it->second : 0;
      q.has_bytes = true;
    }
  }
  out.resize(n);  // shrinks when NAPIs were retired or vanished (never grows: n <= size)
  devices.resize(d);
  return ok();
}

Result<model::Snapshot> CounterAggregator::queues(NapiMap& map) {
  model::Snapshot out;
  if (auto r = queues(map, out); !r) return std::move(r).error();
  return out;
}

Result<void> CounterAggregator::cqs(CqStatsMap& stats, CqInfoMap& info_map,
                                    std::span<const dimctl_cq_event> events,
                                    std::vector<model::CqCounters>& out) {
  cqs_.clear();
  if (auto r = stats.read(cqs_); !r) return std::move(r).error().wrap("cq_stats");
  cq_infos_.clear();
  if (auto r = info_map.read(cq_infos_); !r) return std::move(r).error().wrap("cq_info");
  // Both in key order: the snapshot's order, and cq_info is joined by walking it alongside.
  order_by_key(cqs_, order_);
  order_by_key(cq_infos_, info_order_);

  auto key_of = [](const dimctl_cq_key& k) { return model::CqKey{k.dev_index, k.cq_id}; };

  // CQs freed since the previous sample are left out of this snapshot (they are gone) and
  // retired from the maps. A restrack id freed and re-allocated within one period is also left
  // out once (the consumer sees old-gone, then new-from-zero) but not erased: BPF already
  // reset its counters at cq_alloc.
  std::set<model::CqKey> skip;
  std::set<model::CqKey> freed;
  for (const auto& ev : events) {
    const model::CqKey k{ev.info.dev_index, ev.info.cq_id};
    if (ev.type == DIMCTL_CQ_EVENT_FREE) {
      skip.insert(k);
      freed.insert(k);
    } else if (ev.type == DIMCTL_CQ_EVENT_ALLOC) {
      freed.erase(k);
    }
  }

  out.reserve(cqs_.size());  // as in queues(): the vector of the last sample keeps its storage
  size_t n = 0;              // entries written
  auto info = info_order_.cbegin();
  for (const KeyOrder& o : order_) {
    const CqEntry& e = cqs_[o.pos];
    const model::CqKey key = key_of(e.key);
    if (skip.count(key) != 0) continue;
    const dimctl_cq_value& sum = e.value;
    // Every field written, the IB device name into the existing string.
    if (n == out.size()) out.emplace_back();
    model::CqCounters& c = out[n++];
    c.key = key;
    while (info != info_order_.cend() && info->key < o.key) ++info;
    if (info != info_order_.cend() && info->key == o.key) {
      const dimctl_cq_info& i = cq_infos_[info->pos].value;
      c.ibdev.assign(i.ibdev, strnlen(i.ibdev, sizeof(i.ibdev)));
      c.poll_ctx = poll_context_from_code(i.poll_ctx);
      c.nr_cqe = i.nr_cqe;
      c.comp_vector = i.comp_vector;
    } else {
      c.ibdev.clear();
      c.poll_ctx = model::PollContext::kDirect;
      c.nr_cqe = 0;
      c.comp_vector = -1;
    }
    c.schedules = sum.schedules;
    c.reschedules = sum.reschedules;
    c.events = sum.events;
    c.polls = sum.polls;
    c.completions = sum.completions;
    c.poll_errors = sum.poll_errors;
    c.kernel_modifies = sum.modifies;
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

Result<std::vector<model::CqCounters>> CounterAggregator::cqs(
    CqStatsMap& stats, CqInfoMap& info_map, std::span<const dimctl_cq_event> events) {
  std::vector<model::CqCounters> out;
  if (auto r = cqs(stats, info_map, events, out); !r) return std::move(r).error();
  return out;
}

}  // namespace dimctl::collector
