// ns per net_dim() / rdma_dim() call: the C++ library against the C reference
// (tests/unit/dim/ref/ref_dim.c, the kernel's shape) on the same pre-generated stream. Changes
// are applied at once, as the kernel worker would; the instance restarts when the stream wraps
// (amortised over 64 Ki calls).
#include <benchmark/benchmark.h>

#include <vector>

#include "dim/model_policy.h"
#include "dim/net_dim.h"
#include "dim/rdma_dim.h"
#include "ref_dim.h"
#include "streams.h"

namespace {

constexpr size_t kStreamLen = 1 << 16;

const std::vector<dim::Sample>& net_stream() {
  static const auto s = dim::bench::make_net_stream(kStreamLen, 42);
  return s;
}

const std::vector<ref_dim_sample>& net_stream_c() {
  static const auto s = [] {
    std::vector<ref_dim_sample> out;
    for (const dim::Sample& x : net_stream()) {
      out.push_back({x.time_ns, x.pkt_ctr, x.byte_ctr, x.event_ctr, x.comp_ctr});
    }
    return out;
  }();
  return s;
}

const std::vector<dim::bench::RdmaEvent>& rdma_stream() {
  static const auto s = dim::bench::make_rdma_stream(kStreamLen, 43);
  return s;
}

void report(benchmark::State& state, uint64_t changes) {
  state.counters["changes_per_1k_calls"] = benchmark::Counter(
      static_cast<double>(changes) * 1000.0 / static_cast<double>(state.iterations()));
}

void BM_NetDim_Cpp(benchmark::State& state) {
  const auto& stream = net_stream();
  dim::NetDim d;
  size_t i = 0;
  uint64_t changes = 0;
  for (auto _ : state) {
    const bool changed = d.on_sample(stream[i]);
    benchmark::DoNotOptimize(changed);
    if (changed) {
      d.profile_applied();
      ++changes;
    }
    if (++i == stream.size()) {
      i = 0;
      d = dim::NetDim();
    }
  }
  report(state, changes);
}
BENCHMARK(BM_NetDim_Cpp);

void BM_NetDim_C(benchmark::State& state) {
  const auto& stream = net_stream_c();
  ref_dim d;
  ref_net_dim_init(&d, 0);
  size_t i = 0;
  uint64_t changes = 0;
  for (auto _ : state) {
    const int changed = ref_net_dim(&d, &stream[i]);
    benchmark::DoNotOptimize(changed);
    if (changed) {
      ref_dim_work_done(&d);
      ++changes;
    }
    if (++i == stream.size()) {
      i = 0;
      ref_net_dim_init(&d, 0);
    }
  }
  report(state, changes);
}
BENCHMARK(BM_NetDim_C);

void BM_RdmaDim_Cpp(benchmark::State& state) {
  const auto& stream = rdma_stream();
  dim::RdmaDim d;
  size_t i = 0;
  uint64_t changes = 0;
  for (auto _ : state) {
    const bool changed = d.on_event(stream[i].time_ns, stream[i].completions);
    benchmark::DoNotOptimize(changed);
    if (changed) {
      d.profile_applied();
      ++changes;
    }
    if (++i == stream.size()) {
      i = 0;
      d = dim::RdmaDim();
    }
  }
  report(state, changes);
}
BENCHMARK(BM_RdmaDim_Cpp);

void BM_RdmaDim_C(benchmark::State& state) {
  const auto& stream = rdma_stream();
  ref_dim d;
  ref_rdma_dim_init(&d);
  size_t i = 0;
  uint64_t changes = 0;
  for (auto _ : state) {
    const int changed = ref_rdma_dim(&d, stream[i].completions, stream[i].time_ns);
    benchmark::DoNotOptimize(changed);
    if (changed) {
      ref_dim_work_done(&d);
      ++changes;
    }
    if (++i == stream.size()) {
      i = 0;
      ref_rdma_dim_init(&d);
    }
  }
  report(state, changes);
}
BENCHMARK(BM_RdmaDim_C);

// The controller's RDMA path: one on_events() per 20 ms period with the period's event and
// completion totals (the same stream, cut into periods). items = events fed.
struct Period {
  int64_t t_begin = 0, t_end = 0;
  uint64_t events = 0, completions = 0;
};

const std::vector<Period>& rdma_periods() {
  static const auto p = [] {
    std::vector<Period> out;
    const auto& s = rdma_stream();
    Period cur{s.front().time_ns, s.front().time_ns + 20'000'000, 0, 0};
    for (const auto& e : s) {
      while (e.time_ns > cur.t_end) {
        out.push_back(cur);
        cur = {cur.t_end, cur.t_end + 20'000'000, 0, 0};
      }
      ++cur.events;
      cur.completions += e.completions;
    }
    return out;
  }();
  return p;
}

void BM_RdmaDim_OnEvents_Period(benchmark::State& state) {
  const auto& periods = rdma_periods();
  dim::RdmaDim d;
  size_t i = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    const Period& p = periods[i];
    const bool changed = d.on_events(p.t_begin, p.t_end, p.events, p.completions);
    benchmark::DoNotOptimize(changed);
    if (d.state() == dim::MeasureState::kApplyNewProfile) d.profile_applied();
    events += p.events;
    if (++i == periods.size()) {
      i = 0;
      d = dim::RdmaDim();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
  state.counters["events_per_period"] =
      benchmark::Counter(static_cast<double>(events) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_RdmaDim_OnEvents_Period);

// ModelPolicy::update(): one call per queue and period (the controller's cost per model queue),
// on one instance (hot in cache) and on 10k instances in turn (the controller's case: each
// period touches every queue's 24 bytes once). items = calls.
const std::vector<dim::ModelInput>& model_stream() {
  static const auto s = dim::bench::make_model_stream(kStreamLen, 44);
  return s;
}

const dim::ModelTable& model_table(int which) {
  static const dim::ModelTable eqe(dim::kNetRxEqeProfiles, dim::ProfileCount::kPackets,
                                   dim::ModelParams{});
  static const dim::ModelTable rdma(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                                    dim::ModelParams{});
  return which == 0 ? eqe : rdma;
}

void BM_ModelPolicy_Update(benchmark::State& state) {
  const auto& stream = model_stream();
  const dim::ModelTable& table = model_table(static_cast<int>(state.range(0)));
  dim::ModelPolicy m(table);
  size_t i = 0;
  uint64_t changes = 0;
  for (auto _ : state) {
    const bool changed = m.update(table, stream[i]);
    benchmark::DoNotOptimize(changed);
    changes += changed;
    if (++i == stream.size()) i = 0;
  }
  report(state, changes);
}
BENCHMARK(BM_ModelPolicy_Update)->ArgName("rdma")->Arg(0)->Arg(1);

// 10k queues on one table, one update each per iteration.
void update_10k_queues(benchmark::State& state, const dim::ModelTable& table) {
  const auto& stream = model_stream();
  constexpr size_t kQueues = 10'000;
  std::vector<dim::ModelPolicy> queues(kQueues, dim::ModelPolicy(table));
  size_t i = 0;
  uint64_t changes = 0;
  for (auto _ : state) {
    // Queue q gets the stream from its own offset, so queues are in different regimes.
    for (size_t q = 0; q < kQueues; ++q) {
      changes += queues[q].update(table, stream[(i + q * 37) & (kStreamLen - 1)]);
    }
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kQueues));
  state.counters["changes_per_1k_calls"] =
      benchmark::Counter(static_cast<double>(changes) * 1000.0 /
                         (static_cast<double>(state.iterations()) * static_cast<double>(kQueues)));
}

void BM_ModelPolicy_Update_10kQueues(benchmark::State& state) {
  update_10k_queues(state, model_table(0));
}
BENCHMARK(BM_ModelPolicy_Update_10kQueues)->Unit(benchmark::kMicrosecond);

// Building a device's table (once per policy: start-up, reload).
void BM_ModelTable_Build(benchmark::State& state) {
  for (auto _ : state) {
    if (state.range(0) == 0) {
      dim::ModelTable t(dim::kNetRxEqeProfiles, dim::ProfileCount::kPackets, dim::ModelParams{});
      benchmark::DoNotOptimize(t.threshold(1));
    } else {
      dim::ModelTable t(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, dim::ModelParams{});
      benchmark::DoNotOptimize(t.threshold(1));
    }
  }
}
BENCHMARK(BM_ModelTable_Build)->ArgName("rdma")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The same under the efficiency objective (a 50 µs budget): its map is rate segments, and an
// update reads the profiles they hold over the margins' band of rates.
dim::ModelParams efficiency_params() {
  dim::ModelParams p;
  p.objective = dim::Objective::kEfficiency;
  p.latency_budget_ns = 50'000;
  return p;
}

void BM_ModelPolicy_Update_Efficiency_10kQueues(benchmark::State& state) {
  static const dim::ModelTable table(dim::kNetRxEqeProfiles, dim::ProfileCount::kPackets,
                                     efficiency_params());
  update_10k_queues(state, table);
}
BENCHMARK(BM_ModelPolicy_Update_Efficiency_10kQueues)->Unit(benchmark::kMicrosecond);

void BM_ModelTable_Build_Efficiency(benchmark::State& state) {
  for (auto _ : state) {
    if (state.range(0) == 0) {
      dim::ModelTable t(dim::kNetRxEqeProfiles, dim::ProfileCount::kPackets, efficiency_params());
      benchmark::DoNotOptimize(t.pick(1000));
    } else {
      dim::ModelTable t(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, efficiency_params());
      benchmark::DoNotOptimize(t.pick(1000));
    }
  }
}
BENCHMARK(BM_ModelTable_Build_Efficiency)
    ->ArgName("rdma")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
