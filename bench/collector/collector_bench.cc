// Collector cost per sample at scale: the userspace half of BpfCollector::sample() and
// sample_into() for NAPIs.
// The per-CPU slot array and the overflow hash of napi.bpf.c are created here as real BPF maps
// and filled as the programs would fill them (the first 512 NAPIs in their slots, the rest in
// the hash, 64 NAPIs per device, every CPU's copy non-zero); each iteration then reads both
// maps from the kernel (batched lookups), folds them per key, sums over the possible CPUs and
// labels the queues: what the daemon pays per period before the controller sees a snapshot.
//
// BM_CollectNapis builds a new snapshot per sample (CounterAggregator::queues(map), what
// BpfCollector::sample() returns); BM_CollectNapisInPlace writes into the snapshot of the last
// sample (queues(map, out), what BpfCollector::sample_into() does with the controller's one
// Snapshot).
//
// Counters: allocs_per_sample (operator new calls per iteration, after one warm-up sample: a new
// snapshot's queue vector and its growing name table, the in-place variant none), kernel_pct
// (system time share of the loop, getrusage: the kernel's batched per-CPU copies; the rest is
// the userspace fold and labelling).
//
//   sudo collector_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Not measured: netdev netlink labelling (queue index, IRQ, qstats), which depends on the
// driver; here the directory knows names only.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/resource.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bpf_maps.h"
#include "dimctl/collector/aggregator.h"
#include "dimctl/common/fd.h"
#include "support/count_allocations.h"

namespace {

using namespace dimctl;  // NOLINT: benchmark brevity

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

constexpr uint32_t kPerDevice = 64;
constexpr uint32_t kHashEntries = 4096;  // napi_stats max_entries in napi.bpf.c

// Names for every ifindex, no NAPI listing (nothing is retired): labelling by name only.
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
  Result<std::map<uint32_t, std::string>> devices() override {
    return std::map<uint32_t, std::string>{};
  }
};

// range(0): NAPIs (up to 512 + 4096, what the maps hold). in_place: queues(map, out) into one
// snapshot kept across samples, else queues(map) returning a new one.
void collect_napis(benchmark::State& state, bool in_place) {
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
      for (auto& s : slot_vals) s = dimctl_napi_slot{.key = key, .v = v, .pad = 0};
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
  NamesOnly dir;
  collector::CounterAggregator agg(dir, false);
  size_t queues = 0;
  model::Snapshot kept;  // in_place: the controller's snapshot
  // The in-place sample's status outlives the lambda: with a Result<void> local to the lambda,
  // which is inlined twice, GCC 12 -O3 reports a false -Wdangling-pointer on its destructor.
  Result<void> r;
  // One sample; false (after SkipWithError) on failure.
  auto sample = [&] {
    if (in_place) {
      if (r = agg.queues(sources, kept); !r) {
        state.SkipWithError(r.error().message().c_str());
        return false;
      }
      queues = kept.queues.size();
      benchmark::DoNotOptimize(kept.queues.data());
      return true;
    }
    auto q = agg.queues(sources);
    if (!q) {
      state.SkipWithError(q.error().message().c_str());
      return false;
    }
    queues = q->queues.size();
    benchmark::DoNotOptimize(q);
    return true;
  };
  // One sample before the timed loop, as the daemon's first: the readers' buffers (and, in
  // place, the queue vector and the name table) grow to the maps' size there, later samples
  // reuse them.
  if (!sample()) return;
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
  state.counters["possible_cpus"] = ncpus;
  state.counters["ns_per_napi"] =
      benchmark::Counter(static_cast<double>(napis), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}
void BM_CollectNapis(benchmark::State& state) {
  collect_napis(state, false);
}
void BM_CollectNapisInPlace(benchmark::State& state) {
  collect_napis(state, true);
}
BENCHMARK(BM_CollectNapis)
    ->ArgName("napis")
    ->Arg(512)
    ->Arg(1024)
    ->Arg(4608)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CollectNapisInPlace)
    ->ArgName("napis")
    ->Arg(512)
    ->Arg(1024)
    ->Arg(4608)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
