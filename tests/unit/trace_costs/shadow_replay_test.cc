// ShadowReplay: a format 2 trace of a host whose costs are known, written and read back with
// dimctl::trace, fed to the daemon's controller (shadow, model policy) frame by frame. The
// per-core estimates it publishes are the known costs, per CPU, for a NIC queue and an RDMA CQ;
// a trace without CPU times gives no core; nothing is ever written to a device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dimctl/trace/trace_reader.h"
#include "dimctl/trace/trace_writer.h"
#include "dimctl/trace_costs/host_costs.h"
#include "dimctl/trace_costs/shadow_replay.h"

namespace dimctl::trace_costs {
namespace {

constexpr int64_t kPeriod = 20'000'000;

struct Lcg {
  uint64_t x = 99;
  uint64_t next(uint64_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (x >> 33) % mod;
  }
};

// A core's known costs: the hard-IRQ handler and the softirq's wake-up per interrupt, the
// softirq per completion (C_irq = handler + wakeup, C_c = completion).
struct Costs {
  double handler, wakeup, completion;
};

// Adds one period of `interrupts` and `completions` on `t` at `c` (every run timed for the
// handler, one in four for the softirq, as the collector samples), and the rest of the period
// idle.
void charge(seam::CpuTimes& t, const Costs& c, uint64_t interrupts, uint64_t completions,
            bool irq_poll) {
  const auto hard = static_cast<uint64_t>(c.handler * static_cast<double>(interrupts));
  const auto soft = static_cast<uint64_t>(c.wakeup * static_cast<double>(interrupts) +
                                          c.completion * static_cast<double>(completions));
  t.hardirq_count += interrupts;
  t.hardirq_timed += interrupts;
  t.hardirq_ns += hard;
  // Timed runs: a quarter, carrying a quarter of the time (the estimate scales it back).
  const uint64_t timed = interrupts / 4;
  const uint64_t timed_ns = interrupts == 0 ? 0 : soft * timed / interrupts;
  if (irq_poll) {
    t.softirq_irq_poll_count += interrupts;
    t.softirq_irq_poll_timed += timed;
    t.softirq_irq_poll_ns += timed_ns;
  } else {
    t.softirq_net_rx_count += interrupts;
    t.softirq_net_rx_timed += timed;
    t.softirq_net_rx_ns += timed_ns;
  }
  t.idle_ns += static_cast<uint64_t>(kPeriod) - hard - soft;
  t.idle_known = true;
}

class ShadowReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dimctl-trace-costs.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `frames` to a trace and reads them back: what `dimctl trace costs` feeds.
  std::string path() const { return dir_ + "/t.dtr"; }
  std::vector<seam::Snapshot> round_trip(const std::vector<seam::Snapshot>& frames) {
    const std::string path = this->path();
    auto w = trace::TraceWriter::open(path);
    EXPECT_TRUE(w.ok());
    for (const auto& s : frames) EXPECT_TRUE(w->write(s).ok());
    EXPECT_TRUE(w->close().ok());
    auto r = trace::TraceReader::open(path);
    EXPECT_TRUE(r.ok());
    std::vector<seam::Snapshot> back;
    for (;;) {
      auto f = r->next();
      EXPECT_TRUE(f.ok());
      if (!f.ok() || !f->has_value()) break;
      back.push_back(std::move(**f));
    }
    return back;
  }

  std::string dir_;
};

// CPU 0 polls eth9's NAPI (NET_RX), CPU 1 an RDMA CQ in softirq (IRQ_POLL), each at its own
// costs; the load changes regime every second (rate and batch), as the estimator needs to tell
// the interrupt's cost from the completion's.
std::vector<seam::Snapshot> two_core_host(const Costs& net, const Costs& rdma, bool cpu_times,
                                          int seconds) {
  seam::Snapshot s;
  s.time_ns = 1'000'000'000;
  s.devices = {"eth9"};
  seam::QueueCounters q;
  q.key = {7, 8200};
  q.queue = 0;
  q.irq = 60;
  q.cpu = 0;
  s.queues = {q};
  seam::CqCounters c;
  c.key = {0, 5};
  c.ibdev = "rxe0";
  c.poll_ctx = seam::PollContext::kSoftirq;
  c.comp_vector = 1;
  c.cpu = 1;
  s.cqs = {c};
  if (cpu_times) s.cpus.resize(2);
  Lcg rng;
  std::vector<seam::Snapshot> frames{s};
  uint64_t rate[2] = {0, 0}, batch[2] = {1, 1};
  for (int p = 1; p <= seconds * 50; ++p) {
    if (p % 50 == 1) {
      for (int i = 0; i < 2; ++i) {
        rate[i] = 20'000 + 10'000 * rng.next(20);
        batch[i] = 1 + rng.next(16);
      }
    }
    s.time_ns += kPeriod;
    uint64_t comp[2], irqs[2];
    for (int i = 0; i < 2; ++i) {
      comp[i] = rate[i] * (95 + rng.next(11)) / 100 * kPeriod / 1'000'000'000;
      irqs[i] = std::max<uint64_t>(comp[i] / batch[i], 1);
    }
    s.queues[0].polls += irqs[0];
    s.queues[0].packets += comp[0];
    s.cqs[0].schedules += irqs[1];
    s.cqs[0].events += irqs[1];
    s.cqs[0].polls += irqs[1] * 2;
    s.cqs[0].completions += comp[1];
    if (cpu_times) {
      charge(s.cpus[0], net, irqs[0], comp[0], false);
      charge(s.cpus[1], rdma, irqs[1], comp[1], true);
    }
    frames.push_back(s);
  }
  return frames;
}

TEST_F(ShadowReplayTest, RecoversEachCoresKnownCostsThroughATraceFile) {
  const Costs net{800, 1700, 350}, rdma{1500, 3000, 900};
  const auto frames = round_trip(two_core_host(net, rdma, true, 20));
  ASSERT_EQ(frames.size(), 20u * 50 + 1);
  ShadowReplay replay;
  for (const auto& f : frames) ASSERT_TRUE(replay.feed(f).ok());
  const auto state = replay.state();
  ASSERT_EQ(state->cores.size(), 2u);
  for (const auto& [cpu, known] : {std::pair{0u, net}, std::pair{1u, rdma}}) {
    SCOPED_TRACE(::testing::Message() << "cpu " << cpu);
    const seam::CoreView& c = state->cores[cpu];
    EXPECT_EQ(c.cpu, cpu);
    EXPECT_EQ(c.confidence, dim::CostConfidence::kMeasured);
    EXPECT_NEAR(c.estimate.interrupt_ns, known.handler + known.wakeup,
                0.1 * (known.handler + known.wakeup));
    EXPECT_NEAR(c.estimate.completion_ns, known.completion, 0.1 * known.completion);
    EXPECT_NEAR(c.estimate.handler_ns, known.handler, 0.1 * known.handler);
    EXPECT_GT(c.busy, 0.0);
    EXPECT_LT(c.busy, 1.0);
    EXPECT_GT(c.completions_per_s, 0.0);
  }
  // Shadow: the model ran on both devices, nothing was applied or recorded anywhere (the replay
  // has no writer: its set() fails, and no device reports a write).
  ASSERT_EQ(state->devices.size(), 2u);
  for (const auto& d : state->devices) {
    EXPECT_EQ(d.mode, seam::Mode::kShadow) << d.name;
    EXPECT_EQ(d.algorithm, seam::Algorithm::kModel) << d.name;
  }
}

TEST_F(ShadowReplayTest, ATraceWithoutCpuTimesGivesNoCore) {
  const auto frames = round_trip(two_core_host({800, 1700, 350}, {1500, 3000, 900}, false, 2));
  ShadowReplay replay;
  for (const auto& f : frames) ASSERT_TRUE(replay.feed(f).ok());
  EXPECT_TRUE(replay.state()->cores.empty());
  EXPECT_EQ(replay.state()->queues.size(), 1u);
  EXPECT_EQ(replay.state()->cqs.size(), 1u);
}

TEST_F(ShadowReplayTest, ASnapshotBreakingItsDeviceTableIsRefusedAndCounted) {
  seam::Snapshot s;
  s.devices = {"a"};
  s.queues.resize(1);
  s.queues[0].device_ix = 3;
  ShadowReplay replay;
  EXPECT_FALSE(replay.feed(s).ok());
  EXPECT_EQ(replay.state()->sample_errors_total, 1u);
  // Outside feed() there is no frame: the controller's sample fails instead of reading garbage.
  EXPECT_FALSE(replay.sample().ok());
}

// What `dimctl sim --trace FILE --cost trace` charges: the costs of the CPUs that polled the
// replayed queues, weighted by their completions; a device keeps only its own CPU's.
TEST_F(ShadowReplayTest, HostCostsAreThoseOfTheCpusThatPolledTheReplayedQueues) {
  const Costs net{800, 1700, 350}, rdma{1500, 3000, 900};
  round_trip(two_core_host(net, rdma, true, 20));
  for (const auto& [device, known] :
       {std::pair{std::string("eth9"), net}, std::pair{std::string("rxe0"), rdma}}) {
    SCOPED_TRACE(device);
    auto h = host_costs(path(), device);
    ASSERT_TRUE(h.ok()) << h.error().message();
    ASSERT_EQ(h->cpus.size(), 1u);
    EXPECT_EQ(h->cpus[0].cpu, device == "eth9" ? 0u : 1u);
    EXPECT_NEAR(h->interrupt_ns, known.handler + known.wakeup,
                0.1 * (known.handler + known.wakeup));
    EXPECT_NEAR(h->completion_ns, known.completion, 0.1 * known.completion);
    EXPECT_GT(h->completions, 0u);
  }
  // Both devices: between the two, each CPU weighted by its completions.
  auto both = host_costs(path());
  ASSERT_TRUE(both.ok()) << both.error().message();
  ASSERT_EQ(both->cpus.size(), 2u);
  double irq = 0, comp = 0;
  for (const CpuShare& c : both->cpus) {
    irq += c.estimate.interrupt_ns * static_cast<double>(c.completions);
    comp += c.estimate.completion_ns * static_cast<double>(c.completions);
  }
  EXPECT_EQ(both->completions, both->cpus[0].completions + both->cpus[1].completions);
  EXPECT_DOUBLE_EQ(both->interrupt_ns, irq / static_cast<double>(both->completions));
  EXPECT_DOUBLE_EQ(both->completion_ns, comp / static_cast<double>(both->completions));
  EXPECT_GT(both->completion_ns, net.completion * 1.1);
  EXPECT_LT(both->completion_ns, rdma.completion * 0.9);
}

TEST_F(ShadowReplayTest, HostCostsNameWhatIsMissing) {
  round_trip(two_core_host({800, 1700, 350}, {1500, 3000, 900}, false, 2));
  auto none = host_costs(path());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("no CPU times"), std::string::npos)
      << none.error().message();
  round_trip(two_core_host({800, 1700, 350}, {1500, 3000, 900}, true, 2));
  auto other = host_costs(path(), "eth7");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message().find("device 'eth7'"), std::string::npos)
      << other.error().message();
  auto missing = host_costs(dir_ + "/none.dtr");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("none.dtr"), std::string::npos);
}

}  // namespace
}  // namespace dimctl::trace_costs
