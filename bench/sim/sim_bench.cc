// Simulated completions per second of wall time, per workload shape and policy. The counter
// `completions_per_s` is the figure (docs/BENCHMARKS.md); wall time includes the whole run (set-up,
// metrics, the controller's periods).
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <string>

#include "dimctl/sim/simulator.h"

namespace {

using namespace dimctl::sim;

// 8 queues on 2 cores, 32 outstanding each, CPU-bound: what the saturation workloads (W3) run.
Workload saturation() {
  Workload w;
  w.name = "saturation";
  w.seed = 11;
  w.queues = 8;
  w.table = ProfileTable::kRdma;
  w.stages[0].service = Dist::constant(10'000);
  w.stages[0].timer = TimerMode::kIdleGap;
  w.stages[0].poll_budget = 256;
  w.stages[0].cores = 2;
  w.stages[0].cpu = CostModel{"512B", 2000, 1000, 300, 2000};
  w.sources[0].kind = SourceSpec::Kind::kClosed;
  w.sources[0].depth = 32;
  w.phases[0].duration_ns = 200'000'000;
  return w;
}

// One queue, Poisson 500k/s, log-normal service: an open-loop NIC queue (W2/W4 shape).
Workload open_loop() {
  Workload w;
  w.name = "open";
  w.seed = 5;
  w.table = ProfileTable::kNetEqe;
  w.stages[0].service = Dist::lognormal(10'000, 0.3);
  w.stages[0].cpu = CostModel{"net", 1500, 500, 200, 0};
  w.sources[0].kind = SourceSpec::Kind::kPoisson;
  w.sources[0].rate = 5e5;
  w.phases[0].duration_ns = 400'000'000;
  return w;
}

// QD=1, one queue: one interrupt per completion, the most events per completion (W1 shape).
Workload qd1() {
  Workload w;
  w.name = "qd1";
  w.seed = 3;
  w.table = ProfileTable::kRdma;
  w.stages[0].service = Dist::lognormal(5'000, 0.2);
  w.stages[0].cpu = CostModel{"4k", 1500, 1000, 300, 1000};
  w.sources[0].kind = SourceSpec::Kind::kClosed;
  w.sources[0].depth = 1;
  w.phases[0].duration_ns = 1'000'000'000;
  return w;
}

void BM_Sim(benchmark::State& state, Workload (*make)(), const char* policy) {
  spdlog::set_level(spdlog::level::warn);
  const Workload w = make();
  const PolicySpec p = *parse_policy(policy);
  uint64_t completions = 0;
  for (auto _ : state) {
    auto r = run(w, p);
    if (!r) {
      state.SkipWithError(r.error().message().c_str());
      return;
    }
    completions += r->simulated_completions;
    benchmark::DoNotOptimize(r->total.completions);
  }
  state.counters["completions_per_s"] =
      benchmark::Counter(static_cast<double>(completions), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Sim, saturation_none, saturation, "none")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sim, saturation_kernel_rdma, saturation, "kernel-rdma")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sim, saturation_dimctl_rdma, saturation, "dimctl-rdma")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sim, open_kernel_net_eqe, open_loop, "kernel-net-eqe")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sim, open_dimctl_net_eqe, open_loop, "dimctl-net-eqe")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sim, qd1_kernel_rdma, qd1, "kernel-rdma")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sim, qd1_none, qd1, "none")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
