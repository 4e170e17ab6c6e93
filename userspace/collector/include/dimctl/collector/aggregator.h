// CounterAggregator: turns BPF counters into seam::Snapshot counters. Pure logic over the
// MapReader / NetdevDirectory interfaces and the slot tables (unit-tested with fakes and with
// tables in plain memory):
//   - labels NAPIs (device, RX queue, IRQ, qstats bytes) and CQs (ibdev, poll ctx ...), in key
//     order;
//   - retires keys whose NAPI or CQ disappeared: drops them from the snapshot and erases them
//     from the maps so they neither leak nor come back with stale counters.
// The collector reads the slot tables (slot_table.h). NapiSlotArray and NapiSources (which merge
// the former per-CPU slot array and overflow hash per key), per_cpu_fold.h and src/bpf_maps.h
// are the read path it used before, kept for the benchmark's same-run comparison
// (bench/collector) and tested as before.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "dimctl/collector/map_reader.h"
#include "dimctl/collector/netdev_directory.h"
#include "dimctl/collector/per_cpu_fold.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/snapshot.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {

using NapiEntry = KeyValue<dimctl_napi_key, dimctl_napi_value>;
using CqEntry = KeyValue<dimctl_cq_key, dimctl_cq_value>;
using CqInfoEntry = KeyValue<dimctl_cq_key, dimctl_cq_info>;
using NapiMap = PerCpuMapReader<dimctl_napi_key, dimctl_napi_value>;
using CqStatsMap = PerCpuMapReader<dimctl_cq_key, dimctl_cq_value>;
using CqInfoMap = MapReader<dimctl_cq_key, dimctl_cq_info>;

seam::PollContext poll_context_from_code(uint32_t code);

// The per-CPU slot array of the former napi.bpf.c (its fast path). Index = slot.
class NapiSlotArray {
 public:
  virtual ~NapiSlotArray() = default;
  // Appends, per slot, one entry per NAPI holding it on some CPU, summed over those CPUs
  // (fold_napi_slots()). On error `out` may hold part of the array.
  virtual Result<void> read(std::vector<NapiEntry>& out) = 0;
  // Zero the per-CPU copies of slot `index` that hold `key` (the NAPI was retired).
  virtual Result<void> clear(uint32_t index, const dimctl_napi_key& key) = 0;
};

// Merges slot array + overflow hash into one entry per key (a NAPI whose slot is held by another
// on some CPU counts there in the hash): what the aggregator reads as napi_stats. The hash
// entries are matched to the slot entries of their slot index, found through an index rebuilt
// per read in reused storage (no map, no allocation once it has held the largest read).
// Erasing a key clears its slots and its hash entry.
class NapiSources final : public NapiMap {
 public:
  NapiSources(NapiSlotArray& slots, NapiMap& overflow) : slots_(slots), overflow_(overflow) {}
  Result<void> read(std::vector<NapiEntry>& out) override;
  Result<void> erase(const dimctl_napi_key& key) override;

 private:
  NapiSlotArray& slots_;
  NapiMap& overflow_;
  // Slot entries of the current read grouped by slot index (counting sort): the positions in
  // `out` of index i's entries are by_slot_[slot_start_[i] .. slot_start_[i + 1]).
  std::array<uint32_t, DIMCTL_NAPI_SLOTS + 1> slot_start_{};
  std::vector<uint32_t> by_slot_;
};

class NapiSlotTable;  // slot_table.h

// An entry's key packed into 64 bits (ifindex or IB device index high) and its position: what
// the aggregator sorts instead of the entries.
struct KeyOrder {
  uint64_t key;
  uint32_t pos;
};

// The key order of one map's entries and the keys it was computed for, in read order: when a
// read returns the same keys in the same positions as the last (the slot tables do while no
// NAPI or CQ comes or goes), the order is reused as it is instead of being sorted again.
struct KeyOrderCache {
  std::vector<KeyOrder> order;
  std::vector<uint64_t> keys;
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

  // Queues from napi_stats, in key order (ifindex, napi id), into out.queues, and their device
  // names into out.devices (one entry per ifindex, in the same order). Nothing else of `out`
  // is touched. The directory must have been refreshed by the caller. Entries with the same key
  // (two slots of one NAPI after a rare claim race, dimctl_bpf.h) are added up into one queue.
  //
  // `out` is meant to be the snapshot this call filled last time: every field of the queues is
  // overwritten in place, a name is assigned only where it differs from the one at its position
  // (names fit the small-string buffer: no allocation either way), and both vectors are resized
  // only when the number of queues or devices changed, so a period with the same NAPIs as the
  // last allocates nothing. Any other contents are fine too (they are overwritten). On failure
  // `out` may be left half-written; the caller must not use it.
  Result<void> queues(NapiMap& map, seam::Snapshot& out);
  // The same into a new snapshot (queues and devices only).
  Result<seam::Snapshot> queues(NapiMap& map);
  // The same from the slot table (the collector's read path): table.refresh(), then its live
  // slots are labelled in its key order, their counters read from its memory as they are
  // written into `out` (no copy of the table, no sort in steady state). Errors name napi_slots.
  Result<void> queues(NapiSlotTable& table, seam::Snapshot& out);
  // CQs from cq_stats + cq_info, in key order (IB device index, CQ id); `events` = lifecycle
  // events drained from the ring buffer since the previous call (a freed CQ is retired after its
  // final counters were read). Written into `out` as queues() does; on failure `out` may be left
  // half-written.
  Result<void> cqs(CqStatsMap& stats, CqInfoMap& info, std::span<const dimctl_cq_event> events,
                   std::vector<seam::CqCounters>& out);
  // The same into a new vector.
  Result<std::vector<seam::CqCounters>> cqs(CqStatsMap& stats, CqInfoMap& info,
                                            std::span<const dimctl_cq_event> events);

  const AggregatorStats& stats() const { return stats_; }

 private:
  // queues() over entries in key order (src/aggregator.cc: ReadEntries, TableEntries); `map`
  // retires what is gone.
  template <typename Entries>
  Result<void> label_queues(const Entries& entries, NapiMap& map, seam::Snapshot& out);

  NetdevDirectory& dir_;
  bool count_bytes_;
  std::optional<std::set<uint32_t>> byte_devices_;
  AggregatorStats stats_;
  // qstats rx-bytes at first sight of each NAPI, so bytes are cumulative since then.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes_base_;
  // Map contents of the last sample, kept for their capacity: a sample reads into them without
  // allocating once they have held the largest maps.
  std::vector<NapiEntry> napis_;
  std::vector<CqEntry> cqs_;
  std::vector<CqInfoEntry> cq_infos_;
  // Key order of napis_, cqs_ and cq_infos_.
  KeyOrderCache napi_order_;
  KeyOrderCache cq_order_;
  KeyOrderCache info_order_;
};

}  // namespace dimctl::collector
