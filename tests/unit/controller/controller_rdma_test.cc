// RDMA side: per-CQ RDMA DIM on period aggregates (virtual apply), and the kernel RDMA DIM
// switch, written in enforce mode on allowlisted devices only.
#include <gtest/gtest.h>

#include "controller_fixture.h"
#include "dim/rdma_dim.h"

namespace dimctl::controller::testing {
namespace {

class RdmaTest : public ControllerTest {
 protected:
  void add_cq(const std::string& ibdev, uint32_t dev_index, uint32_t cq_id,
              seam::PollContext ctx = seam::PollContext::kSoftirq) {
    seam::CqCounters c;
    c.key = {dev_index, cq_id};
    c.ibdev = ibdev;
    c.poll_ctx = ctx;
    c.nr_cqe = 4096;
    c.comp_vector = 1;
    source.current.cqs.push_back(c);
  }
  void cq_traffic(const seam::CqKey& k, uint64_t events, uint64_t completions) {
    auto* c = source.cq(k);
    ASSERT_NE(c, nullptr);
    c->events += events;
    c->schedules += events;
    c->polls += events;
    c->completions += completions;
  }
  const seam::CqView* cq(const seam::CqKey& k) {
    hold_ = st();
    for (const auto& c : hold_->cqs) {
      if (c.counters.key == k) return &c;
    }
    return nullptr;
  }
  void add_ibdev(const std::string& name, bool dim_enabled) {
    seam::RdmaDevice d;
    d.index = static_cast<uint32_t>(rdma.devices.size());
    d.name = name;
    d.dim_enabled = dim_enabled;
    rdma.devices.push_back(d);
  }
  static seam::DevicePolicy rdma_enforce(std::optional<bool> kernel_dim) {
    seam::DevicePolicy p = enforce();
    p.algorithm = seam::Algorithm::kRdma;
    p.rdma_kernel_dim = kernel_dim;
    return p;
  }

  std::shared_ptr<const seam::ControllerState> hold_;
};

TEST_F(RdmaTest, CqDimMatchesTheLibraryFedTheSamePeriods) {
  add_cq("mlx5_0", 0, 7);
  dim::RdmaDim ref;
  int64_t prev_t = 0;
  uint64_t prev_events = 0, prev_comps = 0;
  int changes = 0;
  uint8_t last = 0;
  for (int p = 0; p < 120; ++p) {
    // Completions per event climb, hold, then fall: RDMA DIM walks right, resets, walks back.
    const int level = p < 40 ? p / 4 : (p < 80 ? 10 : (120 - p) / 4);
    cq_traffic({0, 7}, 200 + static_cast<uint64_t>(p % 5) * 7,
               static_cast<uint64_t>(200) << std::min(level, 9));
    ASSERT_TRUE(step().ok());
    const auto& c = *source.cq({0, 7});
    if (p > 0) {
      ref.on_events(prev_t, source.current.time_ns, c.events - prev_events,
                    c.completions - prev_comps);
      ref.profile_applied();
    }
    prev_t = source.current.time_ns;
    prev_events = c.events;
    prev_comps = c.completions;
    const auto* v = cq({0, 7});
    ASSERT_NE(v, nullptr);
    ASSERT_TRUE(v->dim.active);
    EXPECT_EQ(v->dim.profile_ix, ref.profile_ix()) << "period " << p;
    EXPECT_EQ(v->dim.tune_state, static_cast<uint8_t>(ref.tune_state())) << "period " << p;
    EXPECT_EQ(v->wanted_usec, ref.profile().usec) << "period " << p;
    EXPECT_EQ(v->wanted_comps, ref.profile().comps) << "period " << p;
    EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2],
              ref.windows_evaluated());
    if (ref.profile_ix() != last) ++changes;
    last = ref.profile_ix();
  }
  EXPECT_GE(changes, 3) << "the scenario must exercise RDMA DIM";
  EXPECT_TRUE(rdma.set_calls.empty());  // CQ decisions are never written (kernel CQs)
}

TEST_F(RdmaTest, ObserveRunsNoCqDim) {
  add_cq("mlx5_0", 0, 7);
  policy.by_name["mlx5_0"] = rdma_enforce(std::nullopt);
  policy.by_name["mlx5_0"].mode = seam::Mode::kObserve;
  for (int p = 0; p < 5; ++p) {
    cq_traffic({0, 7}, 200, 800);
    ASSERT_TRUE(step().ok());
  }
  const auto* v = cq({0, 7});
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->dim.active);
  EXPECT_GT(v->completions_per_second, 0.0);
}

TEST_F(RdmaTest, DirectPollCqsHaveNoDimLikeTheKernel) {
  add_cq("mlx5_0", 0, 7, seam::PollContext::kDirect);
  for (int p = 0; p < 3; ++p) {
    cq_traffic({0, 7}, 200, 800);
    ASSERT_TRUE(step().ok());
  }
  EXPECT_FALSE(cq({0, 7})->dim.active);
}

TEST_F(RdmaTest, CqCounterResetRestartsTheWindow) {
  add_cq("mlx5_0", 0, 7);
  cq_traffic({0, 7}, 5000, 20000);
  ASSERT_TRUE(step().ok());
  auto* c = source.cq({0, 7});
  c->events = 10;  // CQ id reused after cq_free / cq_alloc, counters restarted
  c->completions = 10;
  ASSERT_TRUE(step().ok());
  const auto* v = cq({0, 7});
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 0u);
  EXPECT_EQ(v->completions_per_second, 0.0);
}

TEST_F(RdmaTest, KernelDimSwitchSetOnlyInEnforceOnAllowlistedDevices) {
  add_ibdev("mlx5_0", true);
  add_ibdev("mlx5_1", true);
  add_ibdev("mlx5_2", true);
  policy.by_name["mlx5_0"] = rdma_enforce(false);
  policy.by_name["mlx5_1"] = rdma_enforce(false);
  policy.by_name["mlx5_1"].mode = seam::Mode::kShadow;
  policy.by_name["mlx5_2"] = rdma_enforce(false);
  policy.by_name["mlx5_2"].rule.clear();  // not named by a rule
  size_t sets_at_record = 99;
  store.on_record = [&](const std::string&) { sets_at_record = rdma.set_calls.size(); };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(step().ok());

  ASSERT_EQ(rdma.set_calls.size(), 1u);
  EXPECT_EQ(rdma.set_calls[0], std::make_pair(std::string("mlx5_0"), false));
  EXPECT_EQ(sets_at_record, 0u);
  EXPECT_EQ(store.rdma.at("mlx5_0"), true);
  EXPECT_EQ(store.rdma.count("mlx5_1"), 0u);
  EXPECT_TRUE(rdma.devices[1].dim_enabled);
  EXPECT_TRUE(rdma.devices[2].dim_enabled);
  const auto* d = device("mlx5_0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind, seam::DeviceKind::kRdma);
  EXPECT_EQ(d->rdma_dim_enabled, false);
  EXPECT_EQ(d->applies_ok_total, 1u);
  EXPECT_EQ(device("mlx5_1")->rdma_dim_enabled, true);

  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_TRUE(rdma.devices[0].dim_enabled);
}

TEST_F(RdmaTest, ReloadWithoutKernelDimWishRestoresTheSwitchAtOnce) {
  add_ibdev("mlx5_0", true);
  add_ibdev("mlx5_1", true);
  policy.by_name["mlx5_0"] = rdma_enforce(false);
  policy.by_name["mlx5_1"] = rdma_enforce(false);
  ASSERT_TRUE(step().ok());
  ASSERT_FALSE(rdma.devices[0].dim_enabled);
  ASSERT_FALSE(rdma.devices[1].dim_enabled);

  policy.by_name["mlx5_0"].rdma_kernel_dim.reset();  // the operator stopped asking
  ctl().reload_policies();
  EXPECT_TRUE(rdma.devices[0].dim_enabled);
  EXPECT_FALSE(rdma.devices[1].dim_enabled);
  EXPECT_EQ(store.rdma.count("mlx5_0"), 0u);
  EXPECT_EQ(store.rdma.count("mlx5_1"), 1u);
  const size_t sets = rdma.set_calls.size();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(step().ok());
  EXPECT_EQ(rdma.set_calls.size(), sets);
  EXPECT_FALSE(device("mlx5_0")->drifted);
}

TEST_F(RdmaTest, KernelDimSwitchNotSetWhenRecordingFails) {
  add_ibdev("mlx5_0", true);
  policy.by_name["mlx5_0"] = rdma_enforce(false);
  store.fail_rdma = true;
  ASSERT_TRUE(step().ok());
  EXPECT_TRUE(rdma.set_calls.empty());
  EXPECT_EQ(device("mlx5_0")->applies_failed_total, 1u);
}

TEST_F(RdmaTest, KernelDimSwitchDriftStopsWrites) {
  add_ibdev("mlx5_0", true);
  policy.by_name["mlx5_0"] = rdma_enforce(false);
  ASSERT_TRUE(step().ok());
  ASSERT_EQ(rdma.set_calls.size(), 1u);
  rdma.devices[0].dim_enabled = true;  // `rdma dev set mlx5_0 adaptive-moderation on` by someone
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(step().ok());
  EXPECT_EQ(rdma.set_calls.size(), 1u);
  EXPECT_TRUE(device("mlx5_0")->drifted);
  EXPECT_EQ(device("mlx5_0")->drift_total, 1u);
}

TEST_F(RdmaTest, CqsAndDevicesThatDisappearAreDropped) {
  add_ibdev("mlx5_0", true);
  add_cq("mlx5_0", 0, 7);
  add_cq("mlx5_0", 0, 8);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(st()->cqs.size(), 2u);
  source.current.cqs.pop_back();
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(st()->cqs.size(), 1u);
  EXPECT_EQ(cq({0, 8}), nullptr);
  rdma.devices.clear();
  source.current.cqs.clear();
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(device("mlx5_0"), nullptr);
}

TEST_F(RdmaTest, UnnamedIbDeviceIsNotExportedButItsCqsRunDim) {
  add_cq("", 5, 1);
  for (int p = 0; p < 3; ++p) {
    cq_traffic({5, 1}, 200, 800);
    ASSERT_TRUE(step().ok());
  }
  EXPECT_TRUE(cq({5, 1})->dim.active);
  EXPECT_TRUE(st()->devices.empty());
}

TEST_F(RdmaTest, WorksWithoutAnRdmaSwitch) {
  with_rdma = false;
  add_cq("mlx5_0", 0, 7);
  policy.by_name["mlx5_0"] = rdma_enforce(false);
  for (int p = 0; p < 3; ++p) {
    cq_traffic({0, 7}, 200, 800);
    ASSERT_TRUE(step().ok());
  }
  EXPECT_TRUE(cq({0, 7})->dim.active);
  ASSERT_NE(device("mlx5_0"), nullptr);
  EXPECT_FALSE(device("mlx5_0")->rdma_dim_enabled.has_value());
}

}  // namespace
}  // namespace dimctl::controller::testing
