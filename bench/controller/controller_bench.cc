// Controller cost per period: one Controller::step() over N synthetic queues (64 per device)
// whose counters change every period, shadow mode (DIM runs, nothing is written), 20 Hz
// snapshot times. Reported per step: CPU time, the share of one core at 20 Hz, peak RSS.
//
//   controller_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
//
// BM_SourceOnly measures the synthetic source alone (its in-place sample_into(), what the
// controller calls) so the controller's own share can be read off. BM_ControllerStep_Policy runs
// the cost model (algorithm model) or both policies (compare) on every device instead.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "dimctl/controller/controller.h"
#include "fakes/controller_fakes.h"

namespace {

using namespace dimctl;  // NOLINT: benchmark brevity

constexpr int64_t kPeriodNs = 50'000'000;  // 20 Hz
constexpr int kQueuesPerDevice = 64;

// Deterministic, cheap traffic. A busy queue gets a different, slowly varying load, so its DIM
// window closes (>= 64 events) every period and decisions and profile changes happen: the worst
// case, every queue deciding every period. A quiet queue (busy_pct < 100) gets 4 interrupts per
// period (80/s), so its window closes every 16th period, as on the many lightly loaded queues of
// a real multi-queue host.
class SyntheticSource final : public seam::CounterSource {
 public:
  explicit SyntheticSource(int queues, int busy_pct = 100) : queues_(queues), busy_pct_(busy_pct) {}
  // BM_ControllerStep_Costs: the queues spread over `cpus` CPUs (queue i on CPU i % cpus), and,
  // with `times`, per-CPU hard-IRQ and softirq times as cpu_time.bpf.c reports them (the
  // per-core cost estimators and saturation rules run).
  void spread_over(int cpus, bool times) {
    cpus_ = cpus;
    times_ = times;
  }

  Result<seam::Snapshot> sample() override {
    if (auto r = sample_into(own_); !r) return fail(std::move(r).error());
    return own_;
  }

  // In place, as the controller asks for it: only the counters change from period to period.
  Result<void> sample_into(seam::Snapshot& snap) override {
    if (!time_self_) return update(snap);
    const int64_t t0 = thread_cpu_ns();
    auto r = update(snap);
    last_ns_ = thread_cpu_ns() - t0;
    return r;
  }
  // The ping-pong mode (below) subtracts the source's own CPU time from each step.
  void time_self() { time_self_ = true; }
  int64_t last_ns() const { return last_ns_; }
  static int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

 private:
  Result<void> update(seam::Snapshot& snap) {
    if (snap.queues.size() != static_cast<size_t>(queues_)) init(snap);
    ++period_;
    snap.time_ns = period_ * kPeriodNs;
    uint64_t x = static_cast<uint64_t>(period_) * 0x9E3779B97F4A7C15ULL;
    size_t i = 0;
    for (auto& q : snap.queues) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      // Per-queue base load (80..335 events and 8..39 packets per event per period), a slow
      // triangular swing of +-25 % over 80 periods (4 s) with a per-queue phase, and +-3 %
      // noise: windows close every period, DIM decides every period, moves now and then.
      if (static_cast<int>(i % 100) >= busy_pct_) {
        q.polls += 4;
        q.packets += 4 + (x & 3);
        q.bytes += (4 + (x & 3)) * 256;
        ++i;
        continue;
      }
      const uint64_t base_events = 80 + (i * 37) % 256;
      const uint64_t ppe = 8 + (i * 13) % 32;
      const int64_t phase = (period_ + static_cast<int64_t>(i)) % 80;
      const uint64_t swing =
          static_cast<uint64_t>(phase < 40 ? 75 + phase * 5 / 4 : 175 - phase * 5 / 4);
      const uint64_t noise = 97 + (x & 7);
      const uint64_t events = base_events * swing / 100;
      const uint64_t packets = events * ppe * noise / 100;
      const uint64_t exhausted = (x >> 20) & 3;
      q.polls += events + exhausted;
      q.budget_exhausted += exhausted;
      q.packets += packets;
      q.bytes += packets * (64 + (i * 101) % 1400);
      if (times_) {
        // 150 + 350 ns per interrupt, 40 ns per packet (cores 10-30 % busy), every run timed.
        seam::CpuTimes& t = snap.cpus[q.cpu];
        t.hardirq_count += events;
        t.hardirq_timed += events;
        t.hardirq_ns += events * 150;
        t.softirq_net_rx_count += events + exhausted;
        t.softirq_net_rx_timed += events + exhausted;
        t.softirq_net_rx_ns += events * 350 + packets * 40;
      }
      ++i;
    }
    return ok();
  }

 public:
  void devices_into(fakes::RecordingNetActuator& net) const {
    for (int dev = 0; dev * kQueuesPerDevice < queues_; ++dev) {
      net.devices["eth" + std::to_string(dev)].state = fakes::RecordingNetActuator::full_coalesce();
    }
  }

 private:
  void init(seam::Snapshot& snap) const {
    snap.queues.assign(static_cast<size_t>(queues_), {});
    snap.devices.clear();
    snap.cqs.clear();
    for (int i = 0; i < queues_; ++i) {
      auto& q = snap.queues[static_cast<size_t>(i)];
      const int dev = i / kQueuesPerDevice;
      if (i % kQueuesPerDevice == 0) snap.devices.push_back("eth" + std::to_string(dev));
      q.key = {static_cast<uint32_t>(dev + 2), static_cast<uint32_t>(1000 + i)};
      q.device_ix = static_cast<uint32_t>(dev);
      q.queue = i % kQueuesPerDevice;
      q.irq = 100 + i;
      q.has_bytes = true;
      // Every queue on a CPU of its own: the cost model's rows go through the per-CPU sums and
      // the deferred model pass (model.shared_load) as on a real host, with the decisions of
      // queues judged alone (sharers 1), so that they measure the mechanism, not other choices.
      q.cpu = static_cast<uint16_t>(cpus_ > 0 ? i % cpus_ : i);
    }
    snap.cpus.assign(times_ ? static_cast<size_t>(cpus_) : 0, {});
  }

  seam::Snapshot own_;  // for sample()
  bool time_self_ = false;
  int64_t last_ns_ = 0;
  int queues_;
  int cpus_ = 0;
  bool times_ = false;
  int64_t period_ = 0;
  int busy_pct_;
};

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Which policy every device runs (BM_ControllerStep_Policy): the default (net DIM), the cost
// model, or net DIM with the model compared beside it.
enum class Policy : int { kNetDim = 0, kModel = 1, kNetDimCompare = 2, kModelCompare = 3 };

struct Rig {
  Rig(int queues, int64_t publish_interval_ns, int busy_pct = 100, Policy p = Policy::kNetDim)
      : source(queues, busy_pct) {
    if (p == Policy::kModel || p == Policy::kModelCompare) {
      policy.fallback.algorithm = seam::Algorithm::kModel;
    }
    policy.fallback.compare = p == Policy::kNetDimCompare || p == Policy::kModelCompare;
    source.devices_into(net);
    controller::ControllerOptions opts;
    opts.publish_interval_ns = publish_interval_ns;
    ctl =
        std::make_unique<controller::Controller>(source, net, nullptr, store, policy, clock, opts);
  }
  // One period: the clock moves on by 50 ms, then the controller steps.
  Result<void> step() {
    clock.advance(kPeriodNs);
    return ctl->step();
  }
  SyntheticSource source;
  fakes::RecordingNetActuator net;
  fakes::FakeOriginalsStore store;
  fakes::FakePolicySource policy;  // fallback: shadow, net-eqe
  fakes::FakeClock clock;
  std::unique_ptr<controller::Controller> ctl;
};

// The measured period, out of line so that instruction counts can leave the warm-up out:
//   valgrind --tool=callgrind --toggle-collect='*measured_step*' controller_bench ...
[[gnu::noinline]] void measured_step(Rig& rig) {
  auto r = rig.step();
  benchmark::DoNotOptimize(r);
}

// range(0): queues; range(1): publish interval in ms (0 = publish every step); range(2): % of
// queues that are busy (decide every period), the rest quiet.
void run_controller_steps(benchmark::State& state, int warm_up_steps) {
  spdlog::set_level(spdlog::level::warn);  // 157 "new device" lines are not the benchmark
  Rig rig(static_cast<int>(state.range(0)), state.range(1) * 1'000'000,
          static_cast<int>(state.range(2)));
  for (int i = 0; i < warm_up_steps; ++i) (void)rig.step();  // devices created, buffers warm
  for (auto _ : state) measured_step(rig);
  uint64_t changes = 0;
  for (const auto& q : rig.ctl->state()->queues) changes += q.dim.profile_changes_total;
  // How busy DIM is in this scenario: profile changes per queue per period.
  state.counters["changes_per_q_step"] =
      static_cast<double>(changes) / (static_cast<double>(state.iterations() + warm_up_steps) *
                                      static_cast<double>(state.range(0)));
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void BM_ControllerStep(benchmark::State& state) {
  run_controller_steps(state, 20);
}
BENCHMARK(BM_ControllerStep)
    ->ArgNames({"queues", "publish_ms", "busy_pct"})
    ->Args({1000, 0, 100})
    ->Args({10000, 0, 100})
    ->Args({1000, 250, 100})
    ->Args({10000, 250, 100})
    ->Args({10000, 250, 10})
    // The most NAPIs the BPF collector's maps hold (docs/COLLECTORS.md, "Capacity"): the
    // largest host the daemon itself can observe.
    ->Args({4608, 1000, 100})
    ->Args({10000, 1000, 100})
    ->Args({10000, 1000, 50})
    ->Args({10000, 1000, 25})
    ->Args({10000, 1000, 10})
    ->Unit(benchmark::kMicrosecond);

// The same rows for instruction and cache-miss counts: exactly 20 measured steps (the 41st to
// the 60th), so a 1 s view is built once among them, as in the timed rows, and every binary
// counts the same steps (the timed rows run as many steps as fit their time). 40 warm-up steps:
// the view of the 21st step is built into the second state buffer, which starts empty; from the
// 41st on both buffers hold every queue, as in the timed rows' long runs.
//   valgrind --tool=callgrind --toggle-collect='*measured_step*' controller_bench
//     --benchmark_filter='BM_ControllerStep20/queues:10000/publish_ms:1000/busy_pct:100/'
void BM_ControllerStep20(benchmark::State& state) {
  run_controller_steps(state, 40);
}
BENCHMARK(BM_ControllerStep20)
    ->ArgNames({"queues", "publish_ms", "busy_pct"})
    ->Args({10000, 1000, 100})
    ->Args({10000, 1000, 10})
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);

// The same steps with another policy on every device: algorithm model, or a rule with compare
// (both policies per queue). range(3): Policy. The default policy's rows are BM_ControllerStep.
void BM_ControllerStep_Policy(benchmark::State& state) {
  spdlog::set_level(spdlog::level::warn);
  Rig rig(static_cast<int>(state.range(0)), state.range(1) * 1'000'000,
          static_cast<int>(state.range(2)), static_cast<Policy>(state.range(3)));
  for (int i = 0; i < 20; ++i) (void)rig.step();
  for (auto _ : state) measured_step(rig);
  uint64_t changes = 0;
  for (const auto& q : rig.ctl->state()->queues) changes += q.dim.profile_changes_total;
  state.counters["changes_per_q_step"] =
      static_cast<double>(changes) /
      (static_cast<double>(state.iterations() + 20) * static_cast<double>(state.range(0)));
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
BENCHMARK(BM_ControllerStep_Policy)
    ->ArgNames({"queues", "publish_ms", "busy_pct", "policy"})
    ->Args({10000, 1000, 10, static_cast<int>(Policy::kModel)})
    ->Args({10000, 1000, 100, static_cast<int>(Policy::kModel)})
    ->Args({10000, 1000, 10, static_cast<int>(Policy::kNetDimCompare)})
    ->Args({10000, 1000, 100, static_cast<int>(Policy::kNetDimCompare)})
    ->Args({10000, 1000, 10, static_cast<int>(Policy::kModelCompare)})
    ->Unit(benchmark::kMicrosecond);

// The cost model on every device with the queues spread over range(3) CPUs, without (range(4)
// 0) and with (1) per-CPU times: what the per-core cost estimators, the cost buckets' tables and
// the saturation rules add to a step (core_costs.cc).
void BM_ControllerStep_Costs(benchmark::State& state) {
  spdlog::set_level(spdlog::level::warn);
  Rig rig(static_cast<int>(state.range(0)), state.range(1) * 1'000'000,
          static_cast<int>(state.range(2)), Policy::kModel);
  rig.source.spread_over(static_cast<int>(state.range(3)), state.range(4) != 0);
  for (int i = 0; i < 40; ++i) (void)rig.step();  // estimates confident, tables built
  for (auto _ : state) measured_step(rig);
  const auto st = rig.ctl->state();
  int measured = 0;
  for (const auto& c : st->cores) measured += c.used_interrupt_ns > 0;
  state.counters["measured_cores"] = measured;
  state.counters["tables_built"] = static_cast<double>(st->model_cost_tables_built_total);
}
BENCHMARK(BM_ControllerStep_Costs)
    ->ArgNames({"queues", "publish_ms", "busy_pct", "cpus", "times"})
    ->Args({10000, 1000, 100, 256, 0})
    ->Args({10000, 1000, 100, 256, 1})
    ->Args({10000, 1000, 10, 256, 0})
    ->Args({10000, 1000, 10, 256, 1})
    ->Unit(benchmark::kMicrosecond);

// The source's own share of a step: the same in-place update the controller asks for.
void BM_SourceOnly(benchmark::State& state) {
  SyntheticSource source(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  seam::Snapshot snap;
  for (auto _ : state) {
    auto r = source.sample_into(snap);
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(snap.queues.data());
  }
}
BENCHMARK(BM_SourceOnly)
    ->ArgNames({"queues", "busy_pct"})
    ->Args({1000, 100})
    ->Args({4608, 100})
    ->Args({10000, 100})
    ->Args({10000, 50})
    ->Args({10000, 25})
    ->Args({10000, 10})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

// A floor for the step: the same source and snapshot, and a slot array with the controller's
// slot size and alignment of which each period reads and writes the first two lines (previous
// counters, a continuity check, a 64-event window test). No DIM decisions, no devices, no view:
// what touching 10k queues' data costs on this machine.
void BM_LoopFloor(benchmark::State& state) {
  struct alignas(64) Slot {
    uint64_t key = 0, polls = 0, packets = 0, budget = 0, empty = 0, bytes = 0;
    int32_t queue = 0, irq = 0;
    uint16_t window_start = 0;
    uint8_t cold[246];
  };
  SyntheticSource source(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  seam::Snapshot snap;
  (void)source.sample_into(snap);
  std::vector<Slot> slots(snap.queues.size());
  uint64_t busiest = 0;
  for (auto _ : state) {
    (void)source.sample_into(snap);
    for (size_t i = 0; i < snap.queues.size(); ++i) {
      const seam::QueueCounters& q = snap.queues[i];
      Slot& s = slots[i];
      const uint64_t d_polls = q.polls - s.polls;
      const uint64_t d_budget = q.budget_exhausted - s.budget;
      const uint64_t any = d_polls | d_budget | (q.packets - s.packets) |
                           (q.empty_polls - s.empty) | (q.bytes - s.bytes);
      const bool discontinuity =
          (static_cast<int64_t>(any) < 0) | (q.queue != s.queue) | (q.irq != s.irq);
      s.polls = q.polls;
      s.packets = q.packets;
      s.budget = q.budget_exhausted;
      s.empty = q.empty_polls;
      s.bytes = q.bytes;
      const uint64_t events = discontinuity ? 0 : d_polls - d_budget;
      if (static_cast<uint16_t>(static_cast<uint16_t>(q.events()) - s.window_start) >= 64) {
        s.window_start = static_cast<uint16_t>(q.events());
      }
      busiest = std::max(busiest, events);
    }
    benchmark::DoNotOptimize(busiest);
  }
}
BENCHMARK(BM_LoopFloor)
    ->ArgNames({"queues", "busy_pct"})
    ->Args({10000, 100})
    ->Args({10000, 10})
    ->Unit(benchmark::kMicrosecond);

namespace {

// Ping-pong mode: two builds compared step by step (bench/controller/pingpong.py). This VM's
// speed drifts by 30-50 % within minutes, so the figure to trust is the ratio of steps run next
// to each other: each process runs one step when it reads a byte from IN_FD, prints that step's
// controller-alone CPU time (the step minus the source's own), and hands over by writing a byte
// to OUT_FD. Both processes on one CPU, so their steps alternate. With --burst=K each turn runs
// K steps and reports the last: with K > 1 that step finds the caches as the previous step of
// the same process left them (as in BM_ControllerStep), with K = 1 as the other process left
// them (as a daemon that does other work between its periods).
//   controller_bench --pingpong=IN_FD,OUT_FD --queues=N --busy=P --publish-ms=M --steps=S
//                    [--burst=K]
int pingpong(int argc, char** argv) {
  int in_fd = -1, out_fd = -1, queues = 10000, busy = 100, publish_ms = 1000, steps = 1000;
  int burst = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::sscanf(a, "--pingpong=%d,%d", &in_fd, &out_fd) == 2 ||
        std::sscanf(a, "--queues=%d", &queues) == 1 || std::sscanf(a, "--busy=%d", &busy) == 1 ||
        std::sscanf(a, "--publish-ms=%d", &publish_ms) == 1 ||
        std::sscanf(a, "--steps=%d", &steps) == 1 || std::sscanf(a, "--burst=%d", &burst) == 1) {
      continue;
    }
    std::fprintf(stderr,
                 "controller_bench: ping-pong argument '%s' is not one of --pingpong=IN_FD,OUT_FD "
                 "--queues=N --busy=P --publish-ms=M --steps=S --burst=K\n",
                 a);
    return 2;
  }
  if (in_fd < 0 || out_fd < 0 || queues < 1 || busy < 0 || busy > 100 || publish_ms < 0 ||
      steps < 1 || burst < 1) {
    std::fprintf(stderr,
                 "controller_bench: ping-pong needs --pingpong=IN_FD,OUT_FD with both >= 0, "
                 "queues, steps and burst >= 1, busy 0-100 and publish-ms >= 0\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // the peer may be gone after its last step
  spdlog::set_level(spdlog::level::warn);
  Rig rig(queues, int64_t{publish_ms} * 1'000'000, busy);
  rig.source.time_self();
  // As BM_ControllerStep20: both state buffers hold every queue.
  for (int i = 0; i < 40; ++i) (void)rig.step();
  char token = 0;
  for (int i = 0; i < steps; ++i) {
    if (read(in_fd, &token, 1) != 1) {
      std::fprintf(stderr, "controller_bench: the other build stopped after %d of %d steps\n", i,
                   steps);
      return 1;
    }
    for (int k = 1; k < burst; ++k) (void)rig.step();
    const int64_t t0 = SyntheticSource::thread_cpu_ns();
    auto r = rig.step();
    const int64_t total = SyntheticSource::thread_cpu_ns() - t0;
    benchmark::DoNotOptimize(r);
    std::printf("%lld\n", static_cast<long long>(total - rig.source.last_ns()));
    (void)!write(out_fd, &token, 1);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strncmp(argv[1], "--pingpong=", 11) == 0) return pingpong(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
