// ControllerState: an immutable view of everything the controller knows, published once per
// period. The exporter, `dimctl status` and `dimctl top` read it; none of them decide anything.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dim/cost_estimator.h"
#include "dim/objective.h"
#include "dimctl/seam/coalesce.h"
#include "dimctl/seam/napi_actuator.h"
#include "dimctl/seam/policy.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::seam {

// One DIM instance (kernel field names; numeric enum values as in dim-spec section 1), or the
// cost-model policy when `model` is set (algorithm model/model-cqe: no tune state, windows or
// verdicts; profile_ix and profile_changes_total are the model's).
struct DimView {
  bool active = false;        // false: algorithm off / static / observe mode
  bool model = false;         // the queue's policy is the cost model, not kernel-identical DIM
  uint8_t profile_ix = 0;     // DIM's own index
  uint8_t applied_ix = 0;     // after policy bounds (what would be / was written)
  uint8_t tune_state = 0;     // dim_tune_state
  uint8_t measure_state = 0;  // dim_state
  uint8_t tired = 0;
  // Decisions (windows evaluated) by compare verdict: [worse, same, better].
  uint64_t verdicts_total[3] = {0, 0, 0};
  uint64_t profile_changes_total = 0;
  // Stats of the last evaluated window.
  int32_t ppms = 0, bpms = 0, epms = 0, cpms = 0, cpe_ratio = 0;
};

// Both policies of a queue or CQ whose rule compares them (compare: dim|model), whichever is
// the algorithm: the index each picks, after the device's profile bounds (what enforce would
// write with that policy as the algorithm; per queue, before any device-wide combining), and
// how often that index changed.
struct PolicyComparison {
  uint8_t dim_ix = 0;
  uint8_t model_ix = 0;
  uint64_t dim_changes_total = 0;
  uint64_t model_changes_total = 0;
  bool operator==(const PolicyComparison&) const = default;
};

// The PolicyComparison of one queue or CQ, by its position in ControllerState::queues / cqs.
struct Comparison {
  uint32_t index = 0;
  PolicyComparison picks;
  bool operator==(const Comparison&) const = default;
};

// The cost model's trade-off on a queue or CQ that runs it (as the algorithm or compared), once it
// has measured traffic: the objective of its table, and dim::Prediction (cost_model.h) for the
// profile the model chose and for the table's latency profile (dim::ModelTable::latency_ix(): no
// moderation where the table has it), both at the view's completion rate and with the table the
// model judged this period's load with (its sharers and costs): what the latency budget buys.
struct ModelTrade {
  dim::Objective objective = dim::Objective::kLatency;
  int64_t latency_budget_ns = 0;  // kEfficiency: the budget; 0 with kLatency
  uint8_t chosen_ix = 0;          // the model's own pick (DimView::profile_ix under the model)
  uint8_t none_ix = 0;            // the latency profile
  // Prediction::added_delay_ns and cpu_per_completion_ns of each.
  double chosen_added_delay_ns = 0;
  double chosen_cpu_per_completion_ns = 0;
  double none_added_delay_ns = 0;
  double none_cpu_per_completion_ns = 0;
  bool operator==(const ModelTrade&) const = default;
};

struct QueueView {
  QueueCounters counters;  // queue, napi id, irq, cumulative counters; device_ix is not set
  std::string device;      // ifname (the view has no name table)
  std::string direction = "rx";
  double packets_per_second = 0;
  double events_per_second = 0;
  double polls_per_second = 0;
  // As CqView::model_sharers, for the queues polled on the same CPU (QueueCounters::cpu).
  double model_sharers = 0;
  DimView dim;
  uint32_t wanted_usecs = 0;  // moderation of the profile DIM chose for this queue
  uint32_t wanted_frames = 0;
  // Devices written with method napi: the software profile of the chosen index (applied in
  // enforce, what would be in shadow), and the NAPI's settings as last read (napi-get or the
  // read-back of our write; unset until read). Unset on ethtool devices.
  std::optional<SoftwareProfile> wanted_software;
  std::optional<NapiConfig> napi_config;
  // At packets_per_second; unset where the queue runs no model or it has measured nothing yet.
  std::optional<ModelTrade> model_trade;
};

struct CqView {
  CqCounters counters;
  double completions_per_second = 0;
  double events_per_second = 0;
  // The sharers the cost model judged this period's load with (dim::CostParams::sharers): the
  // completion rate of the CQ's completion vector over the CQ's own, rounded to a level; 1 when
  // the CQ is alone or shares nothing, 0 when it runs no model.
  double model_sharers = 0;
  DimView dim;
  uint16_t wanted_usec = 0;   // RDMA profile DIM chose (cq_period)
  uint16_t wanted_comps = 0;  // (cq_count)
  // At completions_per_second; unset where the CQ runs no model or it has measured nothing yet.
  std::optional<ModelTrade> model_trade;
};

struct DeviceView {
  DeviceKind kind = DeviceKind::kNet;
  std::string name;
  std::string driver;
  Mode mode = Mode::kShadow;
  Algorithm algorithm = Algorithm::kNetEqe;
  bool compare = false;  // the rule compares DIM and the cost model (PolicyComparison)
  std::string rule;
  bool allowlisted = false;              // named by a config rule (may be written in enforce mode)
  std::optional<Coalesce> requested;     // what the controller asked for last
  std::optional<Coalesce> applied;       // read back from the device
  std::optional<bool> rdma_dim_enabled;  // RDMA: kernel DIM switch as read back
  // Net: the method the device is written with (policy method resolved: never kAuto).
  Method method = Method::kEthtool;
  // Net: false when the driver has no rx interrupt coalescing (COALESCE_GET not supported, or
  // neither rx-usecs nor rx-frames): only method napi can moderate it. Absent for RDMA.
  std::optional<bool> coalescing;
  uint64_t applies_ok_total = 0;
  uint64_t applies_failed_total = 0;
  uint64_t applies_rate_limited_total = 0;
  uint64_t drift_total = 0;  // changes by someone else noticed
  bool drifted = false;      // stopped writing because someone else changed the device
  std::string last_error;
};

struct ProgramView {
  std::string name;
  bool attached = false;
  std::string reason;        // why not attached
  uint64_t run_time_ns = 0;  // kernel.bpf_stats_enabled
  uint64_t run_count = 0;
  // Runs the kernel skipped because the program was already running on that CPU (a tracing
  // program is not re-entered, e.g. a softirq cq_process interrupting a workqueue one): the
  // events those runs would have counted are missing from the counters. Counted by the kernel
  // whether or not kernel.bpf_stats_enabled is set.
  uint64_t recursion_misses = 0;
};

// Events the BPF side could not record, by reason (the collector's drop counters): a full
// per-NAPI or per-CQ map (more NAPIs/CQs than the map holds: their counters are missing), a
// full lifecycle ring buffer. Cumulative since the collector loaded its programs.
struct BpfDropView {
  std::string reason;  // "napi_map_full", "cq_map_full", "ringbuf_full"
  uint64_t total = 0;
};

// One CPU's measured costs (dim::CostEstimator) and saturation rule (dim::SaturationPolicy),
// published while the collector measures CPU times (docs/controller/costs.md).
struct CoreView {
  uint32_t cpu = 0;
  dim::CostConfidence confidence = dim::CostConfidence::kDefaults;
  // The costs the model uses on this core's queues when their rule takes measured costs (0:
  // none measured yet, the rule's values apply): the estimate, quantized (5 % steps).
  double used_interrupt_ns = 0;
  double used_completion_ns = 0;
  dim::CostEstimate estimate;  // what the estimator reports, whatever the confidence
  // The latest period: busy fraction (not idle, at least the hard-IRQ + poll softirq time;
  // without idle times only the latter: CpuTimes::idle_known), rates of the
  // queues polled on the core.
  double busy = 0;
  double interrupts_per_s = 0;  // NAPI wake-ups (polls that re-armed)
  double completions_per_s = 0;
  double exhausted_share = 0;  // share of polls that used their whole budget
  bool saturated = false;
  uint8_t saturation_profile = 0;  // the queues' profile while saturated
  uint32_t saturation_episodes = 0;
  uint64_t saturation_budget_waits = 0;  // throughput steps held back by the change budget
  // The saturation rule's QD~1 probes (one queue, one period, where the profile in force could
  // not batch), by verdict: QD~1 (no climb) or batching (the climb started).
  uint32_t qd1_probes_qd1 = 0;
  uint32_t qd1_probes_batching = 0;
  // The saturation rule's descents (one profile below a best held with idle left), by verdict:
  // kept (the new best) or back (to the best).
  uint32_t descents_kept = 0;
  uint32_t descents_back = 0;
  // Passive saturation episodes ended to be judged again because the batch rose under the verdict
  // (otherwise seen only as a new episode).
  uint32_t rejudged = 0;
  uint32_t model_queues = 0;  // model queues with packets on the core
};

struct ControllerState {
  int64_t time_ns = 0;
  uint64_t loops_total = 0;
  double last_loop_seconds = 0;
  uint64_t sample_errors_total = 0;
  Mode default_mode = Mode::kShadow;
  std::string config_path;
  bool ready = false;  // collector attached, first snapshot taken
  std::vector<QueueView> queues;
  std::vector<CqView> cqs;
  // The comparisons of the queues and CQs whose rule compares, in index order. Beside the views
  // rather than in them, so that publishing 10k queues without a compare rule costs nothing more.
  std::vector<Comparison> queue_comparisons;
  std::vector<Comparison> cq_comparisons;
  std::vector<DeviceView> devices;
  std::vector<ProgramView> programs;
  std::vector<BpfDropView> bpf_drops;
  // Per CPU, only while CPU times are measured (empty otherwise).
  std::vector<CoreView> cores;
  uint64_t model_cost_tables_built_total = 0;  // tables built for measured costs (a few per bucket)
};

// The comparison of entry `index` (of queues or cqs, with the matching vector), or null.
inline const PolicyComparison* comparison_at(const std::vector<Comparison>& comparisons,
                                             size_t index) {
  auto it = std::lower_bound(comparisons.begin(), comparisons.end(), index,
                             [](const Comparison& c, size_t i) { return c.index < i; });
  return it != comparisons.end() && it->index == index ? &it->picks : nullptr;
}

}  // namespace dimctl::seam
