// Collector cost per sample at scale: the userspace half of BpfCollector::sample() and
// sample_into() for NAPIs, the slot table the collector reads now against the per-CPU maps it
// read before, in one run.
//
// Slots (the collector's read path): napi_slots as napi.bpf.c creates it, a BPF_F_MMAPABLE
// array, mapped and filled as the programs fill it (sequential napi ids from 8193, i.e.
// MIN_NAPI_ID on a kernel with NR_CPUS 8192: the first 512 in their home slots, the rest in
// overflow slots in claim order with their napi_stats entries); each iteration reads every slot
// in use from the mapping (NapiSlotTable) and labels the queues. No syscall.
//
// PerCpu (the read path before, kept for this comparison): the per-CPU slot array and the
// per-CPU overflow hash of the former napi.bpf.c, filled as those programs filled them (the
// first 512 NAPIs in their slots, the rest in the hash, every CPU's copy non-zero); each
// iteration reads both maps from the kernel (batched lookups), folds them per key, sums over the
// possible CPUs and labels the queues.
//
// 64 NAPIs per device in both. The plain variants build a new snapshot per sample
// (CounterAggregator::queues(map), what BpfCollector::sample() returns); the InPlace variants
// write into the snapshot of the last sample (queues(map, out), what BpfCollector::sample_into()
// does with the controller's one Snapshot).
//
// Counters: allocs_per_sample (operator new calls per iteration, after one warm-up sample: a new
// snapshot's queue vector and its growing name table, the in-place variant none), kernel_pct
// (system time share of the loop, getrusage: the PerCpu variants' batched per-CPU copies; the
// rest is the userspace fold and labelling).
//
//   sudo collector_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
//     --benchmark_enable_random_interleaving=true
//
// Not measured: netdev netlink labelling (queue index, IRQ, qstats), which depends on the
// driver; here the directory knows names only.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/resource.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "bpf_maps.h"
#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/slot_table.h"
#include "dimctl/common/fd.h"
#include "dimctl/seam/clock.h"
#include "support/count_allocations.h"

namespace {

using namespace dimctl;  // NOLINT: benchmark brevity

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

constexpr uint32_t kPerDevice = 64;
constexpr uint32_t kHashEntries = 4096;  // the former per-CPU napi_stats' max_entries
constexpr uint32_t kFirstNapiId = 8193;  // MIN_NAPI_ID with NR_CPUS 8192

// Names for every ifindex, no NAPI listing (nothing is retired): labelling by name only, as the
// netlink directory does on kernels before v6.8 (no netdev queue/napi commands).
class NamesOnly final : public collector::NetdevDirectory {
 public:
  Result<void> refresh() override { return ok(); }
  std::optional<std::string> ifname(uint32_t ifindex) const override {
    return "eth" + std::to_string(ifindex);
  }
  bool lists_napis(uint32_t) const override { return false; }
  std::optional<collector::NapiInfo> napi(uint32_t, uint32_t) const override {
    return std::nullopt;
  }
  bool knows_napis(uint32_t) const override { return false; }
  Result<std::map<uint32_t, std::string>> devices() override {
    return std::map<uint32_t, std::string>{};
  }
};

// SkipWithError copies the message. Out of line because GCC 12 at -O3, inlining the Result's
// destructor next to the call, reports -Wdangling-pointer on `r` (it cannot see the copy).
[[gnu::noinline]] void skip(benchmark::State& state, const Error& e) {
  const std::string why = e.message();
  state.SkipWithError(why.c_str());
}

// The timed loop over `map` and its counters. in_place: queues(map, out) into one snapshot kept
// across samples, else a new one per sample (for the slot table: queues(table, out) into a new
// snapshot, what BpfCollector::sample() does).
template <typename Map>
void run(benchmark::State& state, Map& map, bool in_place) {
  const auto napis = static_cast<uint32_t>(state.range(0));
  NamesOnly dir;
  collector::CounterAggregator agg(dir, false);
  size_t queues = 0;
  seam::Snapshot kept;  // in_place: the controller's snapshot
  // One sample; false (after SkipWithError) on failure.
  auto sample = [&] {
    if (in_place) {
      if (auto r = agg.queues(map, kept); !r) {
        skip(state, r.error());
        return false;
      }
      queues = kept.queues.size();
      benchmark::DoNotOptimize(kept.queues.data());
      return true;
    }
    seam::Snapshot fresh;
    if (auto r = agg.queues(map, fresh); !r) {
      skip(state, r.error());
      return false;
    }
    queues = fresh.queues.size();
    benchmark::DoNotOptimize(fresh);
    return true;
  };
  // One sample before the timed loop, as the daemon's first: the readers' buffers (and, in
  // place, the queue vector and the name table) grow to the maps' size there, later samples
  // reuse them.
  if (!sample()) return;
  if (queues != napis) {
    state.SkipWithError("the sample did not return every NAPI");
    return;
  }
  rusage r0{};
  getrusage(RUSAGE_THREAD, &r0);
  const uint64_t allocs0 = dimctl::testing::allocations_so_far();
  for (auto _ : state) {
    if (!sample()) return;
  }
  const uint64_t allocs = dimctl::testing::allocations_so_far() - allocs0;
  rusage r1{};
  getrusage(RUSAGE_THREAD, &r1);
  const double user = seconds(r1.ru_utime) - seconds(r0.ru_utime);
  const double sys = seconds(r1.ru_stime) - seconds(r0.ru_stime);
  state.counters["allocs_per_sample"] =
      static_cast<double>(allocs) / static_cast<double>(state.iterations());
  state.counters["kernel_pct"] = user + sys > 0 ? 100.0 * sys / (user + sys) : 0.0;
  state.counters["queues"] = static_cast<double>(queues);
  state.counters["ns_per_napi"] =
      benchmark::Counter(static_cast<double>(napis), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

// range(0): NAPIs (up to 512 + 4096, what the maps hold). The per-CPU maps of the former
// napi.bpf.c, read with batched lookups.
void collect_per_cpu(benchmark::State& state, bool in_place) {
  if (geteuid() != 0) {
    state.SkipWithError("needs root (CAP_BPF) to create BPF maps");
    return;
  }
  const auto napis = static_cast<uint32_t>(state.range(0));
  const int ncpus = libbpf_num_possible_cpus();
  Fd slots(bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "napi_slots", sizeof(uint32_t),
                          sizeof(dimctl_napi_slot), DIMCTL_NAPI_SLOTS, nullptr));
  Fd hash(bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "napi_stats", sizeof(dimctl_napi_key),
                         sizeof(dimctl_napi_value), kHashEntries, nullptr));
  if (!slots.valid() || !hash.valid() || ncpus <= 0) {
    state.SkipWithError("bpf_map_create failed");
    return;
  }
  std::vector<dimctl_napi_slot> slot_vals(static_cast<size_t>(ncpus));
  std::vector<dimctl_napi_value> hash_vals(static_cast<size_t>(ncpus));
  for (uint32_t i = 0; i < napis; ++i) {
    const dimctl_napi_key key{2 + i / kPerDevice, i < DIMCTL_NAPI_SLOTS ? i : 100'000 + i};
    dimctl_napi_value v{};
    v.polls = 1000 + i;
    v.packets = 50'000 + i;
    v.budget_exhausted = i % 7;
    if (i < DIMCTL_NAPI_SLOTS) {
      for (auto& s : slot_vals) s = dimctl_napi_slot{.key = key, .v = v, .cpu = 0, .pad = 0};
      if (bpf_map_update_elem(slots.get(), &i, slot_vals.data(), BPF_ANY) != 0) {
        state.SkipWithError("filling napi_slots failed");
        return;
      }
    } else {
      for (auto& h : hash_vals) h = v;
      if (bpf_map_update_elem(hash.get(), &key, hash_vals.data(), BPF_NOEXIST) != 0) {
        state.SkipWithError("filling napi_stats failed (more NAPIs than the maps hold?)");
        return;
      }
    }
  }
  collector::BpfNapiSlotArray slot_reader(slots.get(), ncpus);
  collector::BpfPerCpuHash<dimctl_napi_key, dimctl_napi_value> hash_reader(hash.get(), "napi_stats",
                                                                           ncpus);
  collector::NapiSources sources(slot_reader, hash_reader);
  state.counters["possible_cpus"] = ncpus;
  collector::NapiMap& map = sources;
  run(state, map, in_place);
}

// The slot table of napi.bpf.c, read from its mapping.
void collect_slots(benchmark::State& state, bool in_place) {
  if (geteuid() != 0) {
    state.SkipWithError("needs root (CAP_BPF) to create BPF maps");
    return;
  }
  const auto napis = static_cast<uint32_t>(state.range(0));
  LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
  Fd slots(bpf_map_create(BPF_MAP_TYPE_ARRAY, "napi_slots", sizeof(uint32_t),
                          sizeof(dimctl_napi_slot), DIMCTL_NAPI_SLOT_COUNT, &mmapable));
  Fd index(bpf_map_create(BPF_MAP_TYPE_HASH, "napi_stats", sizeof(dimctl_napi_key),
                          sizeof(uint32_t), DIMCTL_NAPI_OVERFLOW, nullptr));
  Fd free(bpf_map_create(BPF_MAP_TYPE_QUEUE, "napi_free", 0, sizeof(uint32_t), DIMCTL_NAPI_OVERFLOW,
                         nullptr));
  if (!slots.valid() || !index.valid() || !free.valid()) {
    state.SkipWithError("bpf_map_create failed");
    return;
  }
  auto memory = collector::MappedArray::map(slots.get(), "napi_slots", sizeof(dimctl_napi_slot),
                                            DIMCTL_NAPI_SLOT_COUNT);
  if (!memory) {
    skip(state, memory.error());
    return;
  }
  // As the programs claim: the home slot when free, else the next overflow slot.
  const std::span<uint64_t> words = memory->words();
  __u64 overflow_next = 0;
  for (uint32_t i = 0; i < napis; ++i) {
    const dimctl_napi_key key{2 + i / kPerDevice, kFirstNapiId + i};
    dimctl_napi_slot s{.key = key, .v = {}, .cpu = 0, .pad = 0};
    s.v.polls = 1000 + i;
    s.v.packets = 50'000 + i;
    s.v.budget_exhausted = i % 7;
    uint32_t ix = key.napi_id & (DIMCTL_NAPI_SLOTS - 1);
    if (words[ix * collector::kNapiSlotWords] != 0) {
      ix = DIMCTL_NAPI_SLOTS + static_cast<uint32_t>(overflow_next++);
      if (ix >= DIMCTL_NAPI_SLOT_COUNT ||
          bpf_map_update_elem(index.get(), &key, &ix, BPF_NOEXIST) != 0) {
        state.SkipWithError("filling napi_stats failed (more NAPIs than the maps hold?)");
        return;
      }
    }
    std::memcpy(&words[ix * collector::kNapiSlotWords], &s, sizeof(s));
  }
  collector::BpfSlotDirectory<dimctl_napi_key> directory(index.get(), "napi_stats");
  collector::BpfFreeSlots free_slots(free.get(), "napi_free");
  seam::MonotonicClock clock;
  collector::NapiSlotTable table(words, &overflow_next, directory, free_slots, clock);
  run(state, table, in_place);
  state.counters["slots_scanned"] = static_cast<double>(table.scanned());
}

void BM_CollectNapisSlots(benchmark::State& state) {
  collect_slots(state, false);
}
void BM_CollectNapisSlotsInPlace(benchmark::State& state) {
  collect_slots(state, true);
}
void BM_CollectNapisPerCpu(benchmark::State& state) {
  collect_per_cpu(state, false);
}
void BM_CollectNapisPerCpuInPlace(benchmark::State& state) {
  collect_per_cpu(state, true);
}
#define DIMCTL_NAPI_ARGS \
  ArgName("napis")->Arg(512)->Arg(1024)->Arg(4608)->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_CollectNapisSlots)->DIMCTL_NAPI_ARGS;
BENCHMARK(BM_CollectNapisSlotsInPlace)->DIMCTL_NAPI_ARGS;
BENCHMARK(BM_CollectNapisPerCpu)->DIMCTL_NAPI_ARGS;
BENCHMARK(BM_CollectNapisPerCpuInPlace)->DIMCTL_NAPI_ARGS;

}  // namespace

BENCHMARK_MAIN();
