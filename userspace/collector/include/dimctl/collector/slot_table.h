// Slot tables: the collector reads the BPF programs' counters straight from memory, its mapping
// of the BPF_F_MMAPABLE arrays napi_slots and cq_slots, without a syscall, and runs the
// userspace half of the slot protocol of bpf/include/shared/dimctl_bpf.h: retiring a slot and
// giving it back to the BPF side after a grace period.
//
// Pure logic over memory and two small interfaces (the key -> slot directory and the free list,
// BPF maps in the collector, fakes in tests). The memory is 8-byte words shared with the BPF
// programs: every access is a whole-word atomic load or store (on x86-64 a plain aligned mov,
// never torn), so nothing here races in the C++ sense. The reader rules are in dimctl_bpf.h.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/map_reader.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/clock.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {

// The BPF hash from key to slot index (napi_stats for overflow NAPIs, cq_index).
template <typename K>
class SlotDirectory {
 public:
  virtual ~SlotDirectory() = default;
  // Removes `key`; absent is not an error.
  virtual Result<void> erase(const K& key) = 0;
};

// The BPF queue of slot indexes the programs may claim again (napi_free, cq_free).
class FreeSlots {
 public:
  virtual ~FreeSlots() = default;
  virtual Result<void> push(uint32_t index) = 0;
};

// How long a retired slot stays retired before it is zeroed and given back. A program that found
// the slot before it was retired may still add to it while it runs; tracepoint programs run to
// completion with preemption disabled, in microseconds, so a second is a wide margin (an exact
// RCU grace period is not available to userspace without blocking the sample for one).
inline constexpr int64_t kSlotGraceNs = 1'000'000'000;

// Words per slot.
inline constexpr size_t kNapiSlotWords = sizeof(dimctl_napi_slot) / 8;
inline constexpr size_t kCqSlotWords = sizeof(dimctl_cq_slot) / 8;

// Whole-word accesses to memory the BPF programs write at the same time.
inline uint64_t load_word(const uint64_t& w) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w)).load(std::memory_order_relaxed);
}

// A retired slot waiting for its grace period.
struct RetiredSlot {
  uint32_t index;
  int64_t since_ns;
};

// A live NAPI slot: its key and index.
struct LiveSlot {
  dimctl_napi_key key;
  uint32_t index;
};

// napi_slots. refresh() brings the list of live slots in key order up to date; the aggregator
// labels them in that order, reading each slot's counters from memory (no copy of the table
// first: CounterAggregator::queues(NapiSlotTable&, ...)). It is also a NapiMap (read(), for
// other readers and tests). erase() retires the key's slots.
class NapiSlotTable final : public NapiMap {
 public:
  // words: DIMCTL_NAPI_SLOT_COUNT slots; overflow_next: the programs' cursor (.bss).
  NapiSlotTable(std::span<uint64_t> words, const __u64* overflow_next,
                SlotDirectory<dimctl_napi_key>& directory, FreeSlots& free,
                const seam::Clock& clock);

  // First gives back the slots whose grace period is over (an error there fails the call; the
  // slots stay pending and the next call retries). Then compares the key word of every slot in
  // use (the home slots and the overflow slots handed out so far) with the last call's: equal,
  // the live list stands (steady state: one load per slot, no sort); else it is rebuilt and
  // sorted. A slot claimed after its key word was compared shows at the next call.
  Result<void> refresh();
  // The live slots in key order, as of the last refresh(). Keys are unique but for a rare claim
  // race (dimctl_bpf.h), whose entries are adjacent. A live slot keeps its key until this reader
  // retires it: only the BPF side's claims of free slots change keys behind its back.
  std::span<const LiveSlot> live() const { return live_; }
  // Slot `index`'s counters, each loaded whole (read after its key: the key's, dimctl_bpf.h).
  dimctl_napi_value counters(uint32_t index) const {
    const uint64_t* w = &words_[index * kNapiSlotWords];
    return {.polls = load_word(w[1]),
            .packets = load_word(w[2]),
            .budget_exhausted = load_word(w[3]),
            .empty_polls = load_word(w[4]),
            .bytes = load_word(w[5]),
            .skbs = load_word(w[6])};
  }

  // Slot `index`'s CPU of the latest poll (seam::QueueCounters::cpu; kNoCpu before the first).
  uint16_t cpu(uint32_t index) const {
    // The low half of word 7 (dimctl_napi_slot::cpu, little-endian), 1 + the CPU.
    const auto v = static_cast<uint32_t>(load_word(words_[index * kNapiSlotWords + 7]));
    return v == 0 || v > seam::QueueCounters::kNoCpu ? seam::QueueCounters::kNoCpu
                                                     : static_cast<uint16_t>(v - 1);
  }

  // refresh(), then one entry per live slot, in key order.
  Result<void> read(std::vector<NapiEntry>& out) override;
  // Retires every slot holding `key` (its napi_stats entry is removed first). Not an error when
  // none does. The live list keeps the slot until the next refresh().
  Result<void> erase(const dimctl_napi_key& key) override;

  // Slots retired and not given back yet.
  size_t retired() const { return retired_.size(); }
  // Slots compared by the last refresh(): the home slots and the overflow slots handed out.
  size_t scanned() const { return words_seen_.size(); }
  // refresh() calls that rebuilt the live list (the others reused it).
  uint64_t rebuilds() const { return rebuilds_; }

 private:
  Result<void> give_back();
  size_t slots_in_use() const;

  std::span<uint64_t> words_;
  const __u64* overflow_next_;
  SlotDirectory<dimctl_napi_key>& directory_;
  FreeSlots& free_;
  const seam::Clock& clock_;
  std::vector<RetiredSlot> retired_;
  // Every slot's key word at the last rebuild (index = slot), and the live list built from it.
  std::vector<uint64_t> words_seen_;
  std::vector<LiveSlot> live_;
  uint64_t rebuilds_ = 0;
};

// cq_slots, read as the aggregator's two CQ maps: stats() (counters) and info() (the static
// description), both over the live slots. Each slot is copied under its sequence count.
class CqSlotTable {
 public:
  // words: DIMCTL_CQ_SLOTS slots; next: the programs' cursor (.bss).
  CqSlotTable(std::span<uint64_t> words, const __u64* next, SlotDirectory<dimctl_cq_key>& directory,
              FreeSlots& free, const seam::Clock& clock);
  CqSlotTable(const CqSlotTable&) = delete;
  CqSlotTable& operator=(const CqSlotTable&) = delete;

  // stats().read() first gives back the slots whose grace period is over. erase() through
  // either view retires the key's live slot (its cq_index entry removed first); ENOENT when
  // no live slot holds the key (e.g. the other view retired it already).
  CqStatsMap& stats() { return stats_; }
  CqInfoMap& info() { return info_; }

  size_t retired() const { return retired_.size(); }

 private:
  class Stats final : public CqStatsMap {
   public:
    explicit Stats(CqSlotTable& t) : t_(t) {}
    Result<void> read(std::vector<CqEntry>& out) override;
    Result<void> erase(const dimctl_cq_key& key) override { return t_.retire(key); }

   private:
    CqSlotTable& t_;
  };
  class Info final : public CqInfoMap {
   public:
    explicit Info(CqSlotTable& t) : t_(t) {}
    Result<void> read(std::vector<CqInfoEntry>& out) override;
    Result<void> erase(const dimctl_cq_key& key) override { return t_.retire(key); }

   private:
    CqSlotTable& t_;
  };

  // Copies the first `words` words of slot `index` consistently (dimctl_bpf.h: seq). False when
  // the slot kept changing (never expected: BPF writers finish in nanoseconds).
  bool copy(size_t index, size_t words, dimctl_cq_slot& out) const;
  Result<void> retire(const dimctl_cq_key& key);
  Result<void> give_back();
  size_t slots_in_use() const;

  std::span<uint64_t> words_;
  const __u64* next_;
  SlotDirectory<dimctl_cq_key>& directory_;
  FreeSlots& free_;
  const seam::Clock& clock_;
  std::vector<RetiredSlot> retired_;
  Stats stats_{*this};
  Info info_{*this};
};

}  // namespace dimctl::collector
