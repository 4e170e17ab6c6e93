// CounterAggregator: turns raw per-CPU BPF map contents into model::Snapshot counters.
// Pure logic over the MapReader / NetdevDirectory interfaces (unit-tested with fakes):
//   - sums the per-CPU values of each key;
//   - labels NAPIs (device, RX queue, IRQ, qstats bytes) and CQs (ibdev, poll ctx ...);
//   - retires keys whose NAPI or CQ disappeared: drops them from the snapshot and erases them
//     from the maps so they neither leak nor come back with stale counters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "dimctl/collector/map_reader.h"
#include "dimctl/collector/netdev_directory.h"
#include "dimctl/common/result.h"
#include "dimctl/model/snapshot.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {

using NapiMap = PerCpuMapReader<dimctl_napi_key, dimctl_napi_value>;
using CqStatsMap = PerCpuMapReader<dimctl_cq_key, dimctl_cq_value>;
using CqInfoMap = MapReader<dimctl_cq_key, dimctl_cq_info>;

// Sums of per-CPU values (wrap-free: every per-CPU counter is a u64 and so is the sum).
dimctl_napi_value sum_per_cpu(std::span<const dimctl_napi_value> per_cpu);
dimctl_cq_value sum_per_cpu(std::span<const dimctl_cq_value> per_cpu);

model::PollContext poll_context_from_code(uint32_t code);

// The per-CPU slot array of napi.bpf.c (fast path, see dimctl_bpf.h). Index = slot.
class NapiSlotArray {
 public:
  virtual ~NapiSlotArray() = default;
  virtual Result<std::vector<PerCpuEntry<uint32_t, dimctl_napi_slot>>> read_all() = 0;
  // Zero the per-CPU copies of slot `index` that hold `key` (the NAPI was retired).
  virtual Result<void> clear(uint32_t index, const dimctl_napi_key& key) = 0;
};

// Folds slot array + overflow hash into one entry per key with one value per CPU: what the
// aggregator reads as napi_stats. Erasing a key clears its slots and its hash entry.
class NapiSources final : public NapiMap {
 public:
  NapiSources(NapiSlotArray& slots, NapiMap& overflow, size_t ncpus)
      : slots_(slots), overflow_(overflow), ncpus_(ncpus) {}
  Result<std::vector<PerCpuEntry<dimctl_napi_key, dimctl_napi_value>>> read_all() override;
  Result<void> erase(const dimctl_napi_key& key) override;

 private:
  NapiSlotArray& slots_;
  NapiMap& overflow_;
  size_t ncpus_;
};

struct AggregatorStats {
  uint64_t queues_retired = 0;
  uint64_t cqs_retired = 0;
};

class CounterAggregator {
 public:
  // count_bytes: the per-skb byte program is attached (bytes come from the map, not qstats).
  CounterAggregator(NetdevDirectory& dir, bool count_bytes)
      : dir_(dir), count_bytes_(count_bytes) {}

  // The byte program counts only these devices (collectors.skb_bytes globs): map bytes are
  // reported for them alone; the others keep qstats bytes where the device has them, else
  // has_bytes = false. nullopt (the default) = every device.
  void set_byte_devices(std::optional<std::set<uint32_t>> ifindexes) {
    byte_devices_ = std::move(ifindexes);
  }

  // Queues from napi_stats. The directory must have been refreshed by the caller.
  Result<std::vector<model::QueueCounters>> queues(NapiMap& map);
  // CQs from cq_stats + cq_info; `events` = lifecycle events drained from the ring buffer since
  // the previous call (a freed CQ is retired after its final counters were read).
  Result<std::vector<model::CqCounters>> cqs(CqStatsMap& stats, CqInfoMap& info,
                                             std::span<const dimctl_cq_event> events);

  const AggregatorStats& stats() const { return stats_; }

 private:
  NetdevDirectory& dir_;
  bool count_bytes_;
  std::optional<std::set<uint32_t>> byte_devices_;
  AggregatorStats stats_;
  // qstats rx-bytes at first sight of each NAPI, so bytes are cumulative since then.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes_base_;
};

}  // namespace dimctl::collector
