// ns per CostEstimator::update() and SaturationPolicy::update(): each is called once per core and
// control period. Pre-generated streams (seeded), cycled; the estimator's window is full.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "dim/cost_estimator.h"
#include "dim/saturation.h"

namespace {

constexpr int64_t kPeriod = 20'000'000;
constexpr size_t kStreamLen = 1 << 12;

// Periods of a core with 800 ns handler, 1.2 µs wake-up and 1.5 µs per completion, batches 1-8,
// 1 % noise (a stream the estimator is confident on) and, with `outliers`, one period in ten with
// 10x the time.
std::vector<dim::CoreMeasurement> core_stream(bool outliers) {
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> batch(1, 8), irqs(200, 600), u(0, 1);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<dim::CoreMeasurement> out;
  for (size_t i = 0; i < kStreamLen; ++i) {
    const double b = batch(rng), n = irqs(rng);
    const double k = outliers && u(rng) < 0.1 ? 10 : 1;
    dim::CoreMeasurement m;
    m.dt_ns = kPeriod;
    m.interrupts = static_cast<uint64_t>(n);
    m.completions = static_cast<uint64_t>(n * b);
    m.polls = m.interrupts;
    m.hardirq_ns = static_cast<uint64_t>(800 * n * k * (1 + noise(rng)));
    m.softirq_ns = static_cast<uint64_t>((1200 * n + 1500 * n * b) * k * (1 + noise(rng)));
    out.push_back(m);
  }
  return out;
}

void BM_CostEstimator_Update(benchmark::State& state) {
  const auto stream = core_stream(state.range(0) != 0);
  dim::CostEstimator e;
  for (int i = 0; i < dim::CostEstimator::kWindow; ++i) e.update(stream[static_cast<size_t>(i)]);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(e.update(stream[i]));
    benchmark::DoNotOptimize(e.estimate().completion_ns);
    if (++i == stream.size()) i = 0;
  }
  state.counters["measured"] =
      e.estimate().confidence == dim::CostConfidence::kMeasured ? 1.0 : 0.0;
}
BENCHMARK(BM_CostEstimator_Update)->ArgName("outliers")->Arg(0)->Arg(1);

const dim::ModelTable& rdma_table() {
  static const dim::ModelTable t(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                                 dim::ModelParams{});
  return t;
}

dim::SaturationInput sat_input(double busy, double rate, double batch, uint8_t model_ix) {
  dim::SaturationInput in;
  in.dt_ns = kPeriod;
  in.busy_ns = static_cast<uint64_t>(busy * kPeriod);
  in.completions = static_cast<uint64_t>(rate * kPeriod * 1e-9);
  in.interrupts = static_cast<uint64_t>(static_cast<double>(in.completions) / batch);
  in.polls = in.interrupts;
  in.model_ix = model_ix;
  return in;
}

// Arg 0: a free core (the common case: one compare). Arg 1: a saturated core holding profile 0
// while the latency objective has moved to 3 (the projection's one predict() per period).
void BM_SaturationPolicy_Update(benchmark::State& state) {
  const dim::ModelTable& t = rdma_table();
  const bool saturated = state.range(0) != 0;
  const dim::SaturationInput in =
      saturated ? sat_input(0.99, 600'000, 8, 0) : sat_input(0.40, 100'000, 2, 0);
  dim::SaturationPolicy s;
  const dim::CostParams cost;
  for (int i = 0; i < 100; ++i) s.update(t, cost, in);
  dim::SaturationInput run = in;
  run.model_ix = saturated ? 3 : 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.update(t, cost, run));
  }
  state.counters["saturated"] = s.saturated() ? 1.0 : 0.0;
}
BENCHMARK(BM_SaturationPolicy_Update)->ArgName("saturated")->Arg(0)->Arg(1);

// Whole episodes: 20 periods of overload (entering, the climb's cost-model steps, holding), 20
// free; ns per period on average.
void BM_SaturationPolicy_Episodes(benchmark::State& state) {
  const dim::ModelTable& t = rdma_table();
  const dim::SaturationInput hot = sat_input(0.99, 600'000, 8, 0);
  const dim::SaturationInput cold = sat_input(0.30, 50'000, 1, 0);
  dim::SaturationPolicy s;
  const dim::CostParams cost;
  int i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.update(t, cost, i < 20 ? hot : cold));
    if (++i == 40) i = 0;
  }
  state.counters["episodes"] = static_cast<double>(s.episodes());
}
BENCHMARK(BM_SaturationPolicy_Episodes);

}  // namespace

BENCHMARK_MAIN();
