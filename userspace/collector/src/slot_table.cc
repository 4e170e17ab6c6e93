#include "dimctl/collector/slot_table.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace dimctl::collector {

static_assert(sizeof(dimctl_napi_slot) % 8 == 0 && offsetof(dimctl_napi_slot, key) == 0 &&
              offsetof(dimctl_napi_slot, v) == 8);
static_assert(sizeof(dimctl_cq_slot) % 8 == 0 && offsetof(dimctl_cq_slot, seq) == 0 &&
              offsetof(dimctl_cq_slot, state) == 8 && offsetof(dimctl_cq_slot, key) == 16 &&
              offsetof(dimctl_cq_slot, schedules) == 24);

namespace {

// Whole-word accesses to memory the BPF programs write at the same time.
uint64_t load(const uint64_t& w) {
  return load_word(w);
}
uint64_t load_acquire(const uint64_t& w) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w)).load(std::memory_order_acquire);
}
void store(uint64_t& w, uint64_t v) {
  std::atomic_ref<uint64_t>(w).store(v, std::memory_order_relaxed);
}
void store_release(uint64_t& w, uint64_t v) {
  std::atomic_ref<uint64_t>(w).store(v, std::memory_order_release);
}
// A cursor in the programs' .bss (__u64 is unsigned long long, uint64_t unsigned long).
uint64_t load_cursor(const __u64* c) {
  return std::atomic_ref<__u64>(*const_cast<__u64*>(c)).load(std::memory_order_relaxed);
}

template <typename T>
uint64_t word_of(const T& v) {
  static_assert(sizeof(T) == 8);
  uint64_t w;
  std::memcpy(&w, &v, 8);
  return w;
}
template <typename T>
T from_word(uint64_t w) {
  static_assert(sizeof(T) == 8);
  T v;
  std::memcpy(&v, &w, 8);
  return v;
}

// Key words (dimctl_bpf.h): ifindex 0 is never live.
const uint64_t kNapiRetired = word_of(dimctl_napi_key{0, DIMCTL_NAPI_ID_RETIRED});
bool is_live(const dimctl_napi_key& k) {
  return k.ifindex != 0;
}

// Word 1 of a CQ slot: state and cpu (a retire or free clears the cpu too).
struct CqState {
  uint32_t state;
  uint32_t pad;
};

constexpr int kSeqAttempts = 1000;

// Gives back the retired slots whose grace period is over: release(index) zeroes the slot and
// hands it to the free list. After a failure the remaining slots wait for the next call, and so
// does the failed one (zeroed and released again then).
template <typename Release>
Result<void> give_back_retired(std::vector<RetiredSlot>& retired, int64_t now_ns, Release release) {
  size_t kept = 0;
  Result<void> result = ok();
  for (size_t j = 0; j < retired.size(); ++j) {
    const RetiredSlot r = retired[j];
    if (!result || now_ns - r.since_ns < kSlotGraceNs) {
      retired[kept++] = r;
      continue;
    }
    if (auto p = release(r.index); !p) {
      result = std::move(p).error();
      retired[kept++] = r;
    }
  }
  retired.resize(kept);
  return result;
}

}  // namespace

// ---- NAPI ----------------------------------------------------------------------------------

NapiSlotTable::NapiSlotTable(std::span<uint64_t> words, const __u64* overflow_next,
                             SlotDirectory<dimctl_napi_key>& directory, FreeSlots& free,
                             const seam::Clock& clock)
    : words_(words),
      overflow_next_(overflow_next),
      directory_(directory),
      free_(free),
      clock_(clock) {}

size_t NapiSlotTable::slots_in_use() const {
  // The cursor may run past the end by claims that raced past the programs' check.
  const uint64_t next = std::min<uint64_t>(load_cursor(overflow_next_), DIMCTL_NAPI_OVERFLOW);
  return std::min(words_.size() / kNapiSlotWords, DIMCTL_NAPI_SLOTS + static_cast<size_t>(next));
}

Result<void> NapiSlotTable::refresh() {
  if (!retired_.empty()) {
    if (auto r = give_back(); !r) return r;
  }
  const size_t n = slots_in_use();
  const uint64_t* w = words_.data();
  bool same = n == words_seen_.size();
  for (size_t i = 0; same && i < n; ++i) same = load(w[i * kNapiSlotWords]) == words_seen_[i];
  if (same) return ok();
  ++rebuilds_;
  words_seen_.resize(n);
  live_.clear();
  for (size_t i = 0; i < n; ++i) {
    words_seen_[i] = load(w[i * kNapiSlotWords]);
    const auto key = from_word<dimctl_napi_key>(words_seen_[i]);
    if (is_live(key)) live_.push_back({key, static_cast<uint32_t>(i)});
  }
  // Key order (seam::packed: ifindex, then napi id); the slot index breaks ties so that the
  // order is the same from one rebuild to the next.
  auto less = [](const LiveSlot& a, const LiveSlot& b) {
    const uint64_t ka = seam::packed(seam::QueueKey{a.key.ifindex, a.key.napi_id});
    const uint64_t kb = seam::packed(seam::QueueKey{b.key.ifindex, b.key.napi_id});
    return ka != kb ? ka < kb : a.index < b.index;
  };
  std::sort(live_.begin(), live_.end(), less);
  return ok();
}

Result<void> NapiSlotTable::read(std::vector<NapiEntry>& out) {
  if (auto r = refresh(); !r) return r;
  for (const LiveSlot& s : live_) out.push_back({s.key, counters(s.index)});
  return ok();
}

Result<void> NapiSlotTable::erase(const dimctl_napi_key& key) {
  const uint64_t word = word_of(key);
  const int64_t now = clock_.now_ns();
  auto retire = [&](size_t index) {
    store_release(words_[index * kNapiSlotWords], kNapiRetired);
    retired_.push_back({static_cast<uint32_t>(index), now});
  };
  const size_t home = key.napi_id & (DIMCTL_NAPI_SLOTS - 1);
  if (load(words_[home * kNapiSlotWords]) == word) retire(home);
  bool directory_erased = false;
  const size_t n = slots_in_use();
  for (size_t i = DIMCTL_NAPI_SLOTS; i < n; ++i) {
    if (load(words_[i * kNapiSlotWords]) != word) continue;
    // The directory first: a program that misses it from now on claims a new slot instead of
    // adding to this one (which would be harmless too: it is zeroed after the grace period).
    if (!directory_erased) {
      if (auto r = directory_.erase(key); !r) return r;
      directory_erased = true;
    }
    retire(i);
  }
  return ok();
}

Result<void> NapiSlotTable::give_back() {
  return give_back_retired(retired_, clock_.now_ns(), [this](uint32_t index) -> Result<void> {
    uint64_t* w = &words_[index * kNapiSlotWords];
    for (size_t k = 1; k < kNapiSlotWords; ++k) store(w[k], 0);
    // Counters zero before the slot reads as free: a home slot can be claimed from here on.
    store_release(w[0], 0);
    if (index < DIMCTL_NAPI_SLOTS) return ok();  // a home slot is on no free list
    if (auto p = free_.push(index); !p)
      return std::move(p).error().wrap(fmt::format("give back napi slot {}", index));
    return ok();
  });
}

// ---- CQ ------------------------------------------------------------------------------------

CqSlotTable::CqSlotTable(std::span<uint64_t> words, const __u64* next,
                         SlotDirectory<dimctl_cq_key>& directory, FreeSlots& free,
                         const seam::Clock& clock)
    : words_(words), next_(next), directory_(directory), free_(free), clock_(clock) {}

size_t CqSlotTable::slots_in_use() const {
  const uint64_t next = std::min<uint64_t>(load_cursor(next_), DIMCTL_CQ_SLOTS);
  return std::min(words_.size() / kCqSlotWords, static_cast<size_t>(next));
}

bool CqSlotTable::copy(size_t index, size_t words, dimctl_cq_slot& out) const {
  const uint64_t* w = &words_[index * kCqSlotWords];
  uint64_t buf[kCqSlotWords] = {};
  for (int attempt = 0; attempt < kSeqAttempts; ++attempt) {
    const uint64_t seq = load_acquire(w[0]);
    if (seq & 1) continue;  // BPF is writing the slot
    buf[0] = seq;
    for (size_t k = 1; k < words; ++k) buf[k] = load(w[k]);
    // The copy's loads before the second read of seq.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load(w[0]) == seq) {
      std::memcpy(&out, buf, sizeof(buf));
      return true;
    }
  }
  return false;
}

Result<void> CqSlotTable::Stats::read(std::vector<CqEntry>& out) {
  if (!t_.retired_.empty()) {
    if (auto r = t_.give_back(); !r) return r;
  }
  constexpr size_t kWords = offsetof(dimctl_cq_slot, info) / 8;  // up to last_modify
  const size_t n = t_.slots_in_use();
  dimctl_cq_slot s;
  for (size_t i = 0; i < n; ++i) {
    if (!t_.copy(i, kWords, s))
      return DIMCTL_FAIL(EAGAIN, "map cq_slots: slot {} kept changing", i);
    if (s.state != DIMCTL_SLOT_LIVE) continue;
    CqEntry& e = out.emplace_back();
    e.key = s.key;
    e.value.schedules = s.schedules;
    e.value.reschedules = s.reschedules;
    e.value.events = s.events;
    e.value.polls = s.polls;
    e.value.completions = s.completions;
    e.value.poll_errors = s.poll_errors;
    e.value.exhausted = s.exhausted;
    e.value.modifies = s.modifies;
    e.value.last_modify_ns = 0;
    e.value.last_comps = static_cast<uint32_t>(s.last_modify);
    e.value.last_usec = static_cast<uint32_t>(s.last_modify >> 32);
    e.value.cpu = s.cpu;
  }
  return ok();
}

Result<void> CqSlotTable::Info::read(std::vector<CqInfoEntry>& out) {
  constexpr size_t kWords = (offsetof(dimctl_cq_slot, info) + sizeof(dimctl_cq_info)) / 8;
  const size_t n = t_.slots_in_use();
  dimctl_cq_slot s;
  for (size_t i = 0; i < n; ++i) {
    if (!t_.copy(i, kWords, s))
      return DIMCTL_FAIL(EAGAIN, "map cq_slots: slot {} kept changing", i);
    if (s.state != DIMCTL_SLOT_LIVE) continue;
    out.push_back({s.key, s.info});
  }
  return ok();
}

Result<void> CqSlotTable::retire(const dimctl_cq_key& key) {
  const size_t n = slots_in_use();
  for (size_t i = 0; i < n; ++i) {
    uint64_t* w = &words_[i * kCqSlotWords];
    // Only userspace moves a slot out of "live", and BPF rewrites the key of a live slot only
    // with the same key (cq_alloc reset): no sequence count needed for these two words.
    if (from_word<CqState>(load(w[1])).state != DIMCTL_SLOT_LIVE) continue;
    if (load(w[2]) != word_of(key)) continue;
    if (auto r = directory_.erase(key); !r) return r;
    store_release(w[1], word_of(CqState{DIMCTL_SLOT_RETIRED, 0}));
    retired_.push_back({static_cast<uint32_t>(i), clock_.now_ns()});
    return ok();
  }
  return DIMCTL_FAIL(ENOENT, "map cq_slots: no live slot for cq {}/{}", key.dev_index, key.cq_id);
}

Result<void> CqSlotTable::give_back() {
  return give_back_retired(retired_, clock_.now_ns(), [this](uint32_t index) -> Result<void> {
    uint64_t* w = &words_[index * kCqSlotWords];
    for (size_t k = 2; k < kCqSlotWords; ++k) store(w[k], 0);  // seq (word 0) stays even
    store_release(w[1], word_of(CqState{DIMCTL_SLOT_FREE, 0}));
    if (auto p = free_.push(index); !p)
      return std::move(p).error().wrap(fmt::format("give back cq slot {}", index));
    return ok();
  });
}

}  // namespace dimctl::collector
