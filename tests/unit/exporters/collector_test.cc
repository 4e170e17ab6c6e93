// StateCollector: exact series, values and labels for a hand-built state; caps and the dropped
// counters; promtool's linter on the rendered text.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <map>
#include <stop_token>
#include <string>
#include <thread>

#include "dimctl/exporters/state_collector.h"
#include "unit/exporters/fake_state.h"

namespace dimctl::exporters {
namespace {

using Labels = std::map<std::string, std::string>;

// name -> (labels -> value), flattened from the families of one Collect().
struct Rendered {
  std::map<std::string, prometheus::MetricType> types;
  std::map<std::string, std::map<Labels, double>> series;

  bool has(const std::string& name) const { return series.count(name) != 0; }
  std::optional<double> get(const std::string& name, const Labels& labels) const {
    auto f = series.find(name);
    if (f == series.end()) return std::nullopt;
    auto s = f->second.find(labels);
    if (s == f->second.end()) return std::nullopt;
    return s->second;
  }
  std::size_t count(const std::string& name) const {
    auto f = series.find(name);
    return f == series.end() ? 0 : f->second.size();
  }
};

Rendered flatten(const std::vector<prometheus::MetricFamily>& fams) {
  Rendered r;
  for (const auto& f : fams) {
    EXPECT_EQ(r.types.count(f.name), 0u) << "family emitted twice: " << f.name;
    r.types[f.name] = f.type;
    for (const auto& m : f.metric) {
      Labels l;
      for (const auto& lab : m.label) l[lab.name] = lab.value;
      double v = f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      EXPECT_TRUE(r.series[f.name].emplace(l, v).second) << "duplicate series in " << f.name;
    }
  }
  return r;
}

std::shared_ptr<StateCollector> make(std::shared_ptr<const seam::ControllerState>* slot,
                                     CollectorOptions opts = {}) {
  opts.version = "9.8.7";
  opts.now_ns = [] { return int64_t{6'500'000'000}; };
  auto c = StateCollector::create([slot] { return *slot; }, opts);
  EXPECT_TRUE(c.ok()) << c.error().message();
  return *c;
}

CollectorOptions caps(std::size_t queues, std::size_t cqs) {
  CollectorOptions o;
  o.max_queue_series = queues;
  o.max_cq_series = cqs;
  return o;
}

Rendered render(const seam::ControllerState& s, CollectorOptions opts = {}) {
  auto slot = std::make_shared<const seam::ControllerState>(s);
  return flatten(make(&slot, opts)->Collect());
}

const Labels kQ0{{"device", "eth0"}, {"queue", "0"}, {"direction", "rx"}};
const Labels kQ1{{"device", "eth0"}, {"queue", "1"}, {"direction", "rx"}};
const Labels kQ2{{"device", "eth0"}, {"queue", "napi9001"}, {"direction", "tx"}};
const Labels kCq{{"device", "mlx5_0"}, {"cq", "7"}};

Labels with(Labels l, const std::string& k, const std::string& v) {
  l[k] = v;
  return l;
}

TEST(StateCollector, PerQueueSeries) {
  Rendered r = render(testing::full_fake_state());
  EXPECT_EQ(r.get("dimctl_napi_polls_total", kQ0), 1000);
  EXPECT_EQ(r.get("dimctl_napi_events_total", kQ0), 900);  // polls - budget_exhausted
  EXPECT_EQ(r.get("dimctl_napi_packets_total", kQ0), 50000);
  EXPECT_EQ(r.get("dimctl_napi_bytes_total", kQ0), 7'000'000);
  EXPECT_EQ(r.get("dimctl_napi_budget_exhausted_total", kQ0), 100);
  EXPECT_EQ(r.get("dimctl_napi_empty_polls_total", kQ0), 10);
  EXPECT_EQ(r.get("dimctl_queue_info", with(with(kQ0, "napi_id", "8193"), "irq", "45")), 1);
  // Bytes only where the driver reports them.
  EXPECT_EQ(r.count("dimctl_napi_bytes_total"), 1u);
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 3u);
  EXPECT_EQ(r.get("dimctl_napi_polls_total", kQ2), 7);  // queue -1 -> napi<ID>

  // DIM state of an active queue.
  EXPECT_EQ(r.get("dimctl_dim_active", kQ0), 1);
  EXPECT_EQ(r.get("dimctl_dim_profile_index", with(kQ0, "source", "dim")), 3);
  EXPECT_EQ(r.get("dimctl_dim_profile_index", with(kQ0, "source", "applied")), 2);
  EXPECT_EQ(r.get("dimctl_dim_tune_state", kQ0), 2);
  EXPECT_EQ(r.get("dimctl_dim_tired", kQ0), 4);
  EXPECT_EQ(r.get("dimctl_dim_decisions_total", with(kQ0, "verdict", "worse")), 5);
  EXPECT_EQ(r.get("dimctl_dim_decisions_total", with(kQ0, "verdict", "same")), 6);
  EXPECT_EQ(r.get("dimctl_dim_decisions_total", with(kQ0, "verdict", "better")), 7);
  EXPECT_EQ(r.get("dimctl_dim_profile_changes_total", kQ0), 8);
  EXPECT_EQ(r.get("dimctl_dim_wanted_usecs", kQ0), 64);
  EXPECT_EQ(r.get("dimctl_dim_wanted_frames", kQ0), 128);
  // Inactive DIM: only dimctl_dim_active=0, no fake "profile 0".
  EXPECT_EQ(r.get("dimctl_dim_active", kQ1), 0);
  EXPECT_FALSE(r.get("dimctl_dim_profile_index", with(kQ1, "source", "dim")));
  EXPECT_FALSE(r.get("dimctl_dim_wanted_usecs", kQ1));
  EXPECT_FALSE(r.get("dimctl_dim_decisions_total", with(kQ1, "verdict", "same")));
  // Rates are Prometheus's job.
  for (const auto& [name, _] : r.series) {
    EXPECT_EQ(name.find("per_second"), std::string::npos) << name;
  }
}

TEST(StateCollector, PerDeviceSeries) {
  Rendered r = render(testing::full_fake_state());
  const Labels eth0{{"device", "eth0"}};
  EXPECT_EQ(r.get("dimctl_device_info", {{"device", "eth0"},
                                         {"kind", "net"},
                                         {"driver", "mlx5_core"},
                                         {"mode", "enforce"},
                                         {"algorithm", "net-eqe"},
                                         {"rule", "fast-nics"}}),
            1);
  EXPECT_EQ(r.get("dimctl_coalesce_rx_usecs", with(eth0, "source", "requested")), 64);
  EXPECT_EQ(r.get("dimctl_coalesce_rx_usecs", with(eth0, "source", "applied")), 62);
  EXPECT_EQ(r.get("dimctl_coalesce_rx_frames", with(eth0, "source", "applied")), 128);
  EXPECT_EQ(r.get("dimctl_coalesce_tx_usecs", with(eth0, "source", "requested")), 16);
  EXPECT_EQ(r.get("dimctl_coalesce_tx_frames", with(eth0, "source", "applied")), 32);
  EXPECT_EQ(r.get("dimctl_coalesce_adaptive_rx", with(eth0, "source", "requested")), 0);
  EXPECT_EQ(r.get("dimctl_coalesce_adaptive_tx", with(eth0, "source", "applied")), 1);
  // Absent in the request: not exported as 0.
  EXPECT_FALSE(r.get("dimctl_coalesce_adaptive_tx", with(eth0, "source", "requested")));
  EXPECT_EQ(r.get("dimctl_apply_total", with(eth0, "result", "ok")), 10);
  EXPECT_EQ(r.get("dimctl_apply_total", with(eth0, "result", "failed")), 1);
  EXPECT_EQ(r.get("dimctl_apply_total", with(eth0, "result", "rate_limited")), 3);
  EXPECT_EQ(r.get("dimctl_drift_total", eth0), 1);
  EXPECT_EQ(r.get("dimctl_drifted", eth0), 0);
  EXPECT_EQ(r.get("dimctl_device_allowlisted", eth0), 1);
  EXPECT_EQ(r.get("dimctl_device_error", eth0), 1);
  EXPECT_EQ(r.get("dimctl_device_allowlisted", {{"device", "mlx5_0"}}), 0);
  // The RDMA DIM switch only where it was read back.
  EXPECT_EQ(r.get("dimctl_rdma_dim_enabled", {{"device", "mlx5_0"}}), 1);
  EXPECT_EQ(r.count("dimctl_rdma_dim_enabled"), 1u);
  // No moderation known for the IB device: no coalesce series for it.
  EXPECT_EQ(r.count("dimctl_coalesce_rx_usecs"), 2u);
}

TEST(StateCollector, PerCqSeries) {
  Rendered r = render(testing::full_fake_state());
  EXPECT_EQ(
      r.get("dimctl_rdma_cq_info",
            with(with(with(kCq, "poll_ctx", "softirq"), "comp_vector", "3"), "nr_cqe", "256")),
      1);
  EXPECT_EQ(r.get("dimctl_rdma_cq_events_total", kCq), 404);
  EXPECT_EQ(r.get("dimctl_rdma_cq_polls_total", kCq), 800);
  EXPECT_EQ(r.get("dimctl_rdma_cq_completions_total", kCq), 6400);
  EXPECT_EQ(r.get("dimctl_rdma_cq_schedules_total", kCq), 400);
  EXPECT_EQ(r.get("dimctl_rdma_cq_reschedules_total", kCq), 4);
  EXPECT_EQ(r.get("dimctl_rdma_cq_poll_errors_total", kCq), 1);
  EXPECT_EQ(r.get("dimctl_rdma_cq_budget_exhausted_total", kCq), 2);
  EXPECT_EQ(r.get("dimctl_rdma_cq_kernel_modifies_total", kCq), 3);
  EXPECT_EQ(r.get("dimctl_rdma_cq_kernel_usecs", kCq), 8);
  EXPECT_EQ(r.get("dimctl_rdma_cq_kernel_comps", kCq), 32);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_active", kCq), 1);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_profile_index", with(kCq, "source", "dim")), 4);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_tune_state", kCq), 3);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_decisions_total", with(kCq, "verdict", "better")), 9);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_profile_changes_total", kCq), 2);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_wanted_usecs", kCq), 8);
  EXPECT_EQ(r.get("dimctl_rdma_cq_dim_wanted_comps", kCq), 64);
}

TEST(StateCollector, CostModelAndComparisonSeries) {
  Rendered r = render(testing::full_fake_state());
  // A queue whose rule compares: both policies' picks and changes.
  EXPECT_EQ(r.get("dimctl_compare_profile_index", with(kQ0, "policy", "dim")), 2);
  EXPECT_EQ(r.get("dimctl_compare_profile_index", with(kQ0, "policy", "model")), 1);
  EXPECT_EQ(r.get("dimctl_compare_profile_changes_total", with(kQ0, "policy", "dim")), 8);
  EXPECT_EQ(r.get("dimctl_compare_profile_changes_total", with(kQ0, "policy", "model")), 3);
  // Only there: two series per policy for the one compared queue.
  EXPECT_EQ(r.count("dimctl_compare_profile_index"), 2u);
  EXPECT_EQ(r.count("dimctl_compare_profile_changes_total"), 2u);
  // A queue on the cost model: its index and changes, no DIM tune state, tired or decisions.
  EXPECT_EQ(r.get("dimctl_dim_active", kQ2), 1);
  EXPECT_EQ(r.get("dimctl_dim_profile_index", with(kQ2, "source", "dim")), 1);
  EXPECT_EQ(r.get("dimctl_dim_profile_changes_total", kQ2), 11);
  EXPECT_FALSE(r.get("dimctl_dim_tune_state", kQ2));
  EXPECT_FALSE(r.get("dimctl_dim_tired", kQ2));
  EXPECT_FALSE(r.get("dimctl_dim_decisions_total", with(kQ2, "verdict", "same")));
  // CQs alike.
  EXPECT_EQ(r.get("dimctl_rdma_cq_compare_profile_index", with(kCq, "policy", "dim")), 4);
  EXPECT_EQ(r.get("dimctl_rdma_cq_compare_profile_index", with(kCq, "policy", "model")), 6);
  EXPECT_EQ(r.get("dimctl_rdma_cq_compare_profile_changes_total", with(kCq, "policy", "model")), 5);
}

TEST(StateCollector, QueueModelSharersWhereTheCostModelRuns) {
  auto s = testing::full_fake_state();
  EXPECT_EQ(render(s).get("dimctl_model_sharers", kQ0), 2);
  EXPECT_EQ(render(s).count("dimctl_model_sharers"), 1u);  // q0 only
  s.queues[0].model_sharers = 0;                           // no model
  EXPECT_FALSE(render(s).has("dimctl_model_sharers"));
}

TEST(StateCollector, CqModelSharersWhereTheCostModelRuns) {
  auto s = testing::full_fake_state();
  EXPECT_EQ(render(s).get("dimctl_rdma_cq_model_sharers", kCq), 4);
  s.cqs[0].model_sharers = 0;  // no model
  EXPECT_FALSE(render(s).has("dimctl_rdma_cq_model_sharers"));
}

TEST(StateCollector, ModelTradeWhereTheCostModelRuns) {
  auto s = testing::full_fake_state();
  Rendered r = render(s);
  // q2: objective efficiency, 50 us budget; chosen vs no moderation, in seconds.
  EXPECT_EQ(r.get("dimctl_model_objective", with(kQ2, "objective", "efficiency")), 1);
  EXPECT_FALSE(r.get("dimctl_model_objective", with(kQ2, "objective", "latency")));
  EXPECT_DOUBLE_EQ(*r.get("dimctl_model_latency_budget_seconds", kQ2), 50e-6);
  EXPECT_DOUBLE_EQ(
      *r.get("dimctl_model_predicted_added_latency_seconds", with(kQ2, "profile", "chosen")),
      12e-6);
  EXPECT_DOUBLE_EQ(
      *r.get("dimctl_model_predicted_added_latency_seconds", with(kQ2, "profile", "none")), 5e-7);
  EXPECT_DOUBLE_EQ(
      *r.get("dimctl_model_predicted_cpu_per_completion_seconds", with(kQ2, "profile", "chosen")),
      1.8e-6);
  EXPECT_DOUBLE_EQ(
      *r.get("dimctl_model_predicted_cpu_per_completion_seconds", with(kQ2, "profile", "none")),
      3e-6);
  // q0: objective latency, no budget series; q1 runs no model: nothing.
  EXPECT_EQ(r.get("dimctl_model_objective", with(kQ0, "objective", "latency")), 1);
  EXPECT_FALSE(r.get("dimctl_model_latency_budget_seconds", kQ0));
  EXPECT_EQ(r.count("dimctl_model_objective"), 2u);
  EXPECT_EQ(r.count("dimctl_model_latency_budget_seconds"), 1u);
  EXPECT_EQ(r.count("dimctl_model_predicted_added_latency_seconds"), 4u);
  EXPECT_EQ(r.count("dimctl_model_predicted_cpu_per_completion_seconds"), 4u);
  // The CQ alike.
  EXPECT_EQ(r.get("dimctl_rdma_cq_model_objective", with(kCq, "objective", "efficiency")), 1);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_rdma_cq_model_latency_budget_seconds", kCq), 100e-6);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_rdma_cq_model_predicted_added_latency_seconds",
                          with(kCq, "profile", "chosen")),
                   40e-6);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_rdma_cq_model_predicted_cpu_per_completion_seconds",
                          with(kCq, "profile", "none")),
                   2.6e-6);
  for (auto& q : s.queues) q.model_trade.reset();
  s.cqs[0].model_trade.reset();
  Rendered none = render(s);
  for (const char* name :
       {"dimctl_model_objective", "dimctl_model_latency_budget_seconds",
        "dimctl_model_predicted_added_latency_seconds",
        "dimctl_model_predicted_cpu_per_completion_seconds", "dimctl_rdma_cq_model_objective",
        "dimctl_rdma_cq_model_latency_budget_seconds",
        "dimctl_rdma_cq_model_predicted_added_latency_seconds",
        "dimctl_rdma_cq_model_predicted_cpu_per_completion_seconds"}) {
    EXPECT_FALSE(none.has(name)) << name;
  }
}

TEST(StateCollector, KernelCqValuesUnknownBeforeFirstModify) {
  auto s = testing::full_fake_state();
  s.cqs[0].counters.kernel_modifies = 0;
  Rendered r = render(s);
  EXPECT_EQ(r.get("dimctl_rdma_cq_kernel_modifies_total", kCq), 0);
  EXPECT_FALSE(r.has("dimctl_rdma_cq_kernel_usecs"));
  EXPECT_FALSE(r.has("dimctl_rdma_cq_kernel_comps"));
}

TEST(StateCollector, SelfMetrics) {
  Rendered r = render(testing::full_fake_state());
  EXPECT_EQ(r.get("dimctl_build_info", {{"version", "9.8.7"}}), 1);
  EXPECT_EQ(r.get("dimctl_ready", {}), 1);
  EXPECT_EQ(r.get("dimctl_loops_total", {}), 1234);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_last_loop_duration_seconds", {}), 0.00025);
  EXPECT_EQ(r.get("dimctl_sample_errors_total", {}), 2);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_state_age_seconds", {}), 1.5);  // 6.5 s - 5 s
  EXPECT_EQ(r.get("dimctl_config_info",
                  {{"path", "/etc/dimctl/dimctl.yaml"}, {"default_mode", "shadow"}}),
            1);
  EXPECT_EQ(r.get("dimctl_bpf_program_attached", {{"program", "napi_poll"}}), 1);
  EXPECT_EQ(r.get("dimctl_bpf_program_attached", {{"program", "cq_poll"}}), 0);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_bpf_program_run_seconds_total", {{"program", "napi_poll"}}), 2.5);
  EXPECT_EQ(r.get("dimctl_bpf_program_runs_total", {{"program", "napi_poll"}}), 1'000'000);
  EXPECT_EQ(r.get("dimctl_bpf_events_dropped_total", {{"reason", "napi_map_full"}}), 17);
  EXPECT_EQ(r.get("dimctl_bpf_events_dropped_total", {{"reason", "cq_map_full"}}), 0);
  EXPECT_EQ(r.get("dimctl_bpf_events_dropped_total", {{"reason", "ringbuf_full"}}), 3);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 0);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "cq"}}), 0);
  EXPECT_EQ(r.get("dimctl_series_limit", {{"kind", "queue"}}), 512);
}

TEST(StateCollector, NetlinkRequestsFromTheInjectedCounter) {
  CollectorOptions opts;
  opts.netlink_requests = [] { return std::array<uint64_t, kNetlinkFamilyCount>{7, 1500, 0}; };
  Rendered r = render(testing::full_fake_state(), opts);
  EXPECT_EQ(r.get("dimctl_netlink_requests_total", {{"family", "ethtool"}}), 7);
  EXPECT_EQ(r.get("dimctl_netlink_requests_total", {{"family", "netdev"}}), 1500);
  EXPECT_EQ(r.get("dimctl_netlink_requests_total", {{"family", "rdma"}}), 0);
  // Without the counter (tests, tools that render a state they did not make): no series.
  EXPECT_FALSE(render(testing::full_fake_state()).has("dimctl_netlink_requests_total"));
}

TEST(StateCollector, CoreCostsAndSaturation) {
  Rendered r = render(testing::full_fake_state());
  EXPECT_DOUBLE_EQ(*r.get("dimctl_model_cost_seconds", {{"cpu", "3"}, {"kind", "interrupt"}}),
                   2.5e-6);
  EXPECT_DOUBLE_EQ(*r.get("dimctl_model_cost_seconds", {{"cpu", "3"}, {"kind", "completion"}}),
                   4e-7);
  EXPECT_EQ(r.get("dimctl_model_cost_confidence", {{"cpu", "3"}}), 3);  // measured
  EXPECT_DOUBLE_EQ(*r.get("dimctl_core_busy_ratio", {{"cpu", "3"}}), 0.93);
  EXPECT_EQ(r.get("dimctl_core_saturated", {{"cpu", "3"}}), 1);
  EXPECT_EQ(r.get("dimctl_core_saturation_episodes_total", {{"cpu", "3"}}), 2);
  EXPECT_EQ(r.get("dimctl_core_qd1_probes_total", {{"cpu", "3"}, {"verdict", "qd1"}}), 3);
  EXPECT_EQ(r.get("dimctl_core_qd1_probes_total", {{"cpu", "3"}, {"verdict", "batching"}}), 1);
  EXPECT_EQ(r.get("dimctl_core_saturation_descents_total", {{"cpu", "3"}, {"verdict", "kept"}}), 2);
  EXPECT_EQ(r.get("dimctl_core_saturation_descents_total", {{"cpu", "3"}, {"verdict", "back"}}), 1);
  EXPECT_EQ(r.get("dimctl_core_saturation_rejudged_total", {{"cpu", "3"}}), 3);
  EXPECT_EQ(r.get("dimctl_model_cost_tables_built_total", {}), 5);
  // Without CPU times: no per-core series at all.
  seam::ControllerState st = testing::full_fake_state();
  st.cores.clear();
  Rendered none = render(st);
  EXPECT_FALSE(none.has("dimctl_model_cost_seconds"));
  EXPECT_FALSE(none.has("dimctl_model_cost_tables_built_total"));
}

TEST(StateCollector, TypesFollowTheCatalogueAndNaming) {
  CollectorOptions with_netlink;  // as the daemon renders: with its netlink request counter
  with_netlink.netlink_requests = [] { return std::array<uint64_t, kNetlinkFamilyCount>{}; };
  Rendered r = render(testing::full_fake_state(), with_netlink);
  for (const auto& spec : metric_catalogue()) {
    std::string name = spec.name;
    ASSERT_TRUE(r.types.count(name)) << "the full fake state should exercise " << name;
    EXPECT_EQ(r.types[name], spec.type) << name;
    const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(total, spec.type == prometheus::MetricType::Counter) << name;
    EXPECT_EQ(name.rfind("dimctl_", 0), 0u) << name;
    for (const auto& [labels, v] : r.series[name]) {
      EXPECT_EQ(labels.size(), spec.labels.size()) << name;
    }
  }
  EXPECT_EQ(r.types.size(), metric_catalogue().size());
}

TEST(StateCollector, NoStateYetExportsOnlySelfMetrics) {
  std::shared_ptr<const seam::ControllerState> none;
  Rendered r = flatten(make(&none)->Collect());
  EXPECT_EQ(r.get("dimctl_ready", {}), 0);
  EXPECT_EQ(r.get("dimctl_build_info", {{"version", "9.8.7"}}), 1);
  EXPECT_FALSE(r.has("dimctl_loops_total"));
  EXPECT_FALSE(r.has("dimctl_napi_polls_total"));
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 0);
}

TEST(StateCollector, RejectsMissingGetter) {
  auto c = StateCollector::create(StateGetter{});
  EXPECT_FALSE(c.ok());
}

seam::ControllerState queues_state(int n) {
  seam::ControllerState s;
  // Inserted in reverse so the cap has to sort: queue 10 sorts after queue 9 (numeric order).
  for (int i = n - 1; i >= 0; --i) {
    auto q = testing::fake_queue("eth0", i, static_cast<uint32_t>(100 + i));
    q.counters.polls = static_cast<uint64_t>(i);
    s.queues.push_back(q);
  }
  return s;
}

Labels qlabels(int i) {
  return {{"device", "eth0"}, {"queue", std::to_string(i)}, {"direction", "rx"}};
}

TEST(StateCollector, QueueCapKeepsTheFirstQueuesAndCountsDrops) {
  auto slot = std::make_shared<const seam::ControllerState>(queues_state(12));
  auto c = make(&slot, caps(10, 1));
  Rendered r = flatten(c->Collect());
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r.get("dimctl_napi_polls_total", qlabels(i)), i) << i;
  EXPECT_FALSE(r.get("dimctl_napi_polls_total", qlabels(10)));
  EXPECT_FALSE(r.get("dimctl_queue_info", with(with(qlabels(11), "napi_id", "111"), "irq", "-1")));
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 2);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 2);
  EXPECT_EQ(r.get("dimctl_series_limit", {{"kind", "queue"}}), 10);

  // Same state again: still 2 dropped now, but no new drops.
  r = flatten(c->Collect());
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 2);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 2);

  // One more queue: one new drop.
  slot = std::make_shared<const seam::ControllerState>(queues_state(13));
  r = flatten(c->Collect());
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 3);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 3);

  // Back under the cap: nothing dropped now, the counter keeps its history.
  slot = std::make_shared<const seam::ControllerState>(queues_state(4));
  r = flatten(c->Collect());
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 4u);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 0);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 3);

  // Dropped again later: counted again.
  slot = std::make_shared<const seam::ControllerState>(queues_state(11));
  r = flatten(c->Collect());
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 4);
}

// A config reload changes the caps of a running exporter: the next scrape selects, counts and
// reports with the new pair.
TEST(StateCollector, SetSeriesCapsTakesEffectAtTheNextScrape) {
  auto s = queues_state(12);
  const auto cq = testing::full_fake_state().cqs[0];
  for (uint32_t id = 1; id <= 3; ++id) {
    s.cqs.push_back(cq);
    s.cqs.back().counters.key.cq_id = id;
  }
  auto slot = std::make_shared<const seam::ControllerState>(s);
  auto c = make(&slot, caps(100, 100));
  Rendered r = flatten(c->Collect());
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 12u);
  EXPECT_EQ(r.count("dimctl_rdma_cq_events_total"), 3u);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 0);

  c->set_series_caps(5, 1);
  r = flatten(c->Collect());
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 5u);
  EXPECT_EQ(r.count("dimctl_queue_info"), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r.get("dimctl_napi_polls_total", qlabels(i)), i) << i;
  EXPECT_FALSE(r.get("dimctl_napi_polls_total", qlabels(5)));
  EXPECT_EQ(r.get("dimctl_series_limit", {{"kind", "queue"}}), 5);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 7);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 7);
  EXPECT_EQ(r.count("dimctl_rdma_cq_events_total"), 1u);
  EXPECT_TRUE(r.get("dimctl_rdma_cq_events_total", {{"device", "mlx5_0"}, {"cq", "1"}}));
  EXPECT_EQ(r.get("dimctl_series_limit", {{"kind", "cq"}}), 1);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "cq"}}), 2);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "cq"}}), 2);

  // Raised again: everything is back; the counters keep their history.
  c->set_series_caps(12, 3);
  r = flatten(c->Collect());
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 12u);
  EXPECT_EQ(r.count("dimctl_rdma_cq_events_total"), 3u);
  EXPECT_EQ(r.get("dimctl_series_limit", {{"kind", "queue"}}), 12);
  EXPECT_EQ(r.get("dimctl_series_limit", {{"kind", "cq"}}), 3);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 0);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "cq"}}), 0);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "queue"}}), 7);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "cq"}}), 2);
}

// A reload races with scrapes on the HTTP threads: every scrape must select and report one of
// the pairs that were set, never a queue cap of one with the CQ cap of the other.
TEST(StateCollector, EveryScrapeUsesOneCapPair) {
  auto s = queues_state(12);
  const auto cq = testing::full_fake_state().cqs[0];
  for (uint32_t id = 1; id <= 3; ++id) {
    s.cqs.push_back(cq);
    s.cqs.back().counters.key.cq_id = id;
  }
  auto slot = std::make_shared<const seam::ControllerState>(s);
  auto c = make(&slot, caps(5, 1));
  // A jthread: a failed ASSERT returns early, and its destructor still stops and joins it.
  std::jthread reloads([&](std::stop_token stop) {
    for (bool low = false; !stop.stop_requested(); low = !low) {
      if (low) {
        c->set_series_caps(5, 1);
      } else {
        c->set_series_caps(12, 3);
      }
    }
  });
  for (int i = 0; i < 1000; ++i) {
    Rendered r = flatten(c->Collect());
    const auto queues = r.get("dimctl_series_limit", {{"kind", "queue"}});
    const auto cqs = r.get("dimctl_series_limit", {{"kind", "cq"}});
    ASSERT_TRUE(queues && cqs);
    ASSERT_TRUE((*queues == 5 && *cqs == 1) || (*queues == 12 && *cqs == 3))
        << *queues << " " << *cqs;
    ASSERT_EQ(static_cast<double>(r.count("dimctl_napi_polls_total")), *queues);
    ASSERT_EQ(static_cast<double>(r.count("dimctl_rdma_cq_events_total")), *cqs);
  }
}

TEST(StateCollector, CqCapAndDuplicates) {
  auto s = testing::full_fake_state();
  auto cq = s.cqs[0];
  cq.counters.key.cq_id = 2;
  s.cqs.push_back(cq);  // sorts before cq 7
  auto dup = s.queues[0];
  dup.counters.polls = 999999;
  dup.counters.key.napi_id = 1;  // a recreated NAPI with the same queue index in the same state
  s.queues.push_back(dup);
  Rendered r = render(s, caps(100, 1));
  EXPECT_EQ(r.count("dimctl_rdma_cq_events_total"), 1u);
  EXPECT_TRUE(r.get("dimctl_rdma_cq_events_total", {{"device", "mlx5_0"}, {"cq", "2"}}));
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "cq"}}), 1);
  EXPECT_EQ(r.get("dimctl_series_dropped_total", {{"kind", "cq"}}), 1);
  // The duplicate label set is exported once (no duplicate series, which would fail the whole
  // scrape) and counted as dropped.
  EXPECT_EQ(r.count("dimctl_napi_polls_total"), 3u);
  EXPECT_EQ(r.get("dimctl_series_dropped", {{"kind", "queue"}}), 1);
}

TEST(StateCollector, TextExposition) {
  auto slot = std::make_shared<const seam::ControllerState>(testing::full_fake_state());
  std::string text = render_text(*make(&slot));
  EXPECT_NE(text.find("# TYPE dimctl_napi_packets_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("dimctl_napi_packets_total{device=\"eth0\",queue=\"0\",direction=\"rx\"} "
                      "50000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dimctl_coalesce_rx_usecs{device=\"eth0\",source=\"applied\"} 62\n"),
            std::string::npos);
  EXPECT_NE(text.find("dimctl_build_info{version=\"9.8.7\"} 1\n"), std::string::npos);
}

// Label values with quotes, backslashes and newlines must be escaped, not break the format.
TEST(StateCollector, TextEscapesLabelValues) {
  auto s = testing::full_fake_state();
  s.config_path = "/tmp/we\"ird\\path\nx.yaml";
  auto slot = std::make_shared<const seam::ControllerState>(s);
  std::string text = render_text(*make(&slot));
  EXPECT_NE(text.find(R"(path="/tmp/we\"ird\\path\nx.yaml")"), std::string::npos) << text;
}

TEST(StateCollector, PromtoolCheckMetricsPasses) {
  const char* promtool = "/usr/bin/promtool";
  if (access(promtool, X_OK) != 0) GTEST_SKIP() << "promtool not installed at " << promtool;
  auto slot = std::make_shared<const seam::ControllerState>(testing::full_fake_state());
  std::string text = render_text(*make(&slot));
  char path[] = "/tmp/dimctl-metrics-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  std::string cmd = std::string(promtool) + " check metrics < " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int rc = pclose(p);
  unlink(path);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "") << "promtool lint findings:\n" << out;
}

// The checker must be able to fail: a counter without _total is a lint error.
TEST(StateCollector, PromtoolRejectsBadExposition) {
  const char* promtool = "/usr/bin/promtool";
  if (access(promtool, X_OK) != 0) GTEST_SKIP() << "promtool not installed at " << promtool;
  std::string cmd = std::string(
                        "printf '# HELP dimctl_bad x\\n# TYPE dimctl_bad counter\\n"
                        "dimctl_bad 1\\n' | ") +
                    promtool + " check metrics >/dev/null 2>&1";
  EXPECT_NE(system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace dimctl::exporters
