#include "dimctl/collector/aggregator.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

namespace dimctl::collector {

dimctl_napi_value sum_per_cpu(std::span<const dimctl_napi_value> per_cpu) {
  dimctl_napi_value s{};
  for (const auto& v : per_cpu) {
    s.polls += v.polls;
    s.packets += v.packets;
    s.budget_exhausted += v.budget_exhausted;
    s.empty_polls += v.empty_polls;
    s.bytes += v.bytes;
    s.skbs += v.skbs;
  }
  return s;
}

dimctl_cq_value sum_per_cpu(std::span<const dimctl_cq_value> per_cpu) {
  dimctl_cq_value s{};
  for (const auto& v : per_cpu) {
    s.schedules += v.schedules;
    s.reschedules += v.reschedules;
    s.events += v.events;
    s.polls += v.polls;
    s.completions += v.completions;
    s.poll_errors += v.poll_errors;
    s.modifies += v.modifies;
    // Last DIM decision: the CPU that modified most recently wins.
    if (v.modifies > 0 && v.last_modify_ns >= s.last_modify_ns) {
      s.last_modify_ns = v.last_modify_ns;
      s.last_comps = v.last_comps;
      s.last_usec = v.last_usec;
    }
  }
  return s;
}

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
void add_into(dimctl_napi_value& to, const dimctl_napi_value& v) {
  to.polls += v.polls;
  to.packets += v.packets;
  to.budget_exhausted += v.budget_exhausted;
  to.empty_polls += v.empty_polls;
  to.bytes += v.bytes;
  to.skbs += v.skbs;
}
struct KeyLess {
  bool operator()(const dimctl_napi_key& a, const dimctl_napi_key& b) const {
    return std::tie(a.ifindex, a.napi_id) < std::tie(b.ifindex, b.napi_id);
  }
};
}  // namespace

Result<std::vector<PerCpuEntry<dimctl_napi_key, dimctl_napi_value>>> NapiSources::read_all() {
  auto slots = slots_.read_all();
  if (!slots) return std::move(slots).error().wrap("napi_slots");
  auto hash = overflow_.read_all();
  if (!hash) return std::move(hash).error();
  std::map<dimctl_napi_key, std::vector<dimctl_napi_value>, KeyLess> merged;
  auto per_cpu_of = [&](const dimctl_napi_key& k) -> std::vector<dimctl_napi_value>& {
    auto& v = merged[k];
    if (v.size() < ncpus_) v.resize(ncpus_);
    return v;
  };
  for (const auto& e : *slots) {
    for (size_t c = 0; c < e.per_cpu.size() && c < ncpus_; ++c) {
      const dimctl_napi_slot& s = e.per_cpu[c];
      if (s.key.ifindex == 0) continue;  // free on this CPU
      add_into(per_cpu_of(s.key)[c], s.v);
    }
  }
  for (const auto& e : *hash) {
    auto& v = per_cpu_of(e.key);
    for (size_t c = 0; c < e.per_cpu.size() && c < ncpus_; ++c) add_into(v[c], e.per_cpu[c]);
  }
  std::vector<PerCpuEntry<dimctl_napi_key, dimctl_napi_value>> out;
  out.reserve(merged.size());
  for (auto& [k, v] : merged) out.push_back({k, std::move(v)});
  return out;
}

Result<void> NapiSources::erase(const dimctl_napi_key& key) {
  if (auto r = overflow_.erase(key); !r && r.error().code() != ENOENT) return r;
  return slots_.clear(key.napi_id & (DIMCTL_NAPI_SLOTS - 1), key);
}

Result<std::vector<model::QueueCounters>> CounterAggregator::queues(NapiMap& map) {
  auto entries = map.read_all();
  if (!entries) return std::move(entries).error().wrap("napi_stats");
  std::vector<model::QueueCounters> out;
  out.reserve(entries->size());
  for (const auto& e : *entries) {
    const auto id = std::make_pair(e.key.ifindex, e.key.napi_id);
    auto name = dir_.ifname(e.key.ifindex);
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
    const dimctl_napi_value sum = sum_per_cpu(e.per_cpu);
    model::QueueCounters q;
    q.key = {e.key.ifindex, e.key.napi_id};
    q.device = *name;
    q.polls = sum.polls;
    q.packets = sum.packets;
    q.budget_exhausted = sum.budget_exhausted;
    q.empty_polls = sum.empty_polls;
    if (info) {
      q.queue = info->queue;
      q.irq = info->irq;
    }
    if (count_bytes_ && (!byte_devices_ || byte_devices_->count(e.key.ifindex) != 0)) {
      q.bytes = sum.bytes;
      q.has_bytes = true;
    } else if (info && info->rx_bytes) {
      auto [it, inserted] = bytes_base_.try_emplace(id, *info->rx_bytes);
      q.bytes = *info->rx_bytes >= it->second ? *info->rx_bytes - it->second : 0;
      q.has_bytes = true;
    }
    out.push_back(std::move(q));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

Result<std::vector<model::CqCounters>> CounterAggregator::cqs(
    CqStatsMap& stats, CqInfoMap& info_map, std::span<const dimctl_cq_event> events) {
  auto entries = stats.read_all();
  if (!entries) return std::move(entries).error().wrap("cq_stats");
  auto infos = info_map.read_all();
  if (!infos) return std::move(infos).error().wrap("cq_info");

  auto key_of = [](const dimctl_cq_key& k) { return model::CqKey{k.dev_index, k.cq_id}; };
  std::map<model::CqKey, const dimctl_cq_info*> info_by_key;
  for (const auto& [k, v] : *infos) info_by_key[key_of(k)] = &v;

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

  std::vector<model::CqCounters> out;
  out.reserve(entries->size());
  for (const auto& e : *entries) {
    const model::CqKey key = key_of(e.key);
    if (skip.count(key) != 0) continue;
    const dimctl_cq_value sum = sum_per_cpu(e.per_cpu);
    model::CqCounters c;
    c.key = key;
    if (auto it = info_by_key.find(key); it != info_by_key.end()) {
      const dimctl_cq_info& i = *it->second;
      c.ibdev.assign(i.ibdev, strnlen(i.ibdev, sizeof(i.ibdev)));
      c.poll_ctx = poll_context_from_code(i.poll_ctx);
      c.nr_cqe = i.nr_cqe;
      c.comp_vector = i.comp_vector;
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
    out.push_back(std::move(c));
  }
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
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

}  // namespace dimctl::collector
