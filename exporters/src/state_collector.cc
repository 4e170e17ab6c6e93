#include "dimctl/exporters/state_collector.h"

#include <prometheus/check_names.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cassert>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "dimctl/exporters/names.h"
#include "dimctl/model/clock.h"

#ifndef DIMCTL_EXPORTERS_VERSION
#define DIMCTL_EXPORTERS_VERSION "unknown"
#endif

namespace dimctl::exporters {
namespace {

using prometheus::MetricType;

// Index into the catalogue. Order must match kCatalogue below (checked by a static_assert on the
// count and by the unit test that renders every family).
enum M : std::size_t {
  // self
  kBuildInfo,
  kReady,
  kLoops,
  kLastLoopDuration,
  kSampleErrors,
  kStateAge,
  kConfigInfo,
  kBpfAttached,
  kBpfRunSeconds,
  kBpfRuns,
  kBpfMisses,
  kBpfDrops,
  kSeriesDropped,
  kSeriesDroppedTotal,
  kSeriesLimit,
  kNetlinkRequests,
  // per core (while CPU times are measured)
  kModelCost,
  kModelCostConfidence,
  kCoreBusy,
  kCoreSaturated,
  kCoreSaturationEpisodes,
  kCoreQd1Probes,
  kCoreDescents,
  kCoreRejudged,
  kModelCostTablesBuilt,
  // per queue
  kQueueInfo,
  kNapiPolls,
  kNapiEvents,
  kNapiPackets,
  kNapiBytes,
  kNapiBudgetExhausted,
  kNapiEmptyPolls,
  kDimActive,
  kDimProfileIndex,
  kDimTuneState,
  kDimTired,
  kDimDecisions,
  kDimProfileChanges,
  kModelSharers,
  kDimWantedUsecs,
  kDimWantedFrames,
  kNapiDeferHardIrqs,
  kNapiGroFlushTimeout,
  kCompareProfileIndex,
  kCompareProfileChanges,
  // per device
  kDeviceInfo,
  kDeviceAllowlisted,
  kDeviceError,
  kDeviceMethod,
  kDeviceCoalescing,
  kCoalesceRxUsecs,
  kCoalesceRxFrames,
  kCoalesceTxUsecs,
  kCoalesceTxFrames,
  kCoalesceAdaptiveRx,
  kCoalesceAdaptiveTx,
  kApply,
  kDrift,
  kDrifted,
  kRdmaDimEnabled,
  // per CQ
  kCqInfo,
  kCqEvents,
  kCqPolls,
  kCqCompletions,
  kCqSchedules,
  kCqReschedules,
  kCqPollErrors,
  kCqBudgetExhausted,
  kCqKernelModifies,
  kCqKernelUsecs,
  kCqKernelComps,
  kCqDimActive,
  kCqDimProfileIndex,
  kCqDimTuneState,
  kCqDimDecisions,
  kCqDimProfileChanges,
  kCqDimWantedUsecs,
  kCqDimWantedComps,
  kCqModelSharers,
  kCqCompareProfileIndex,
  kCqCompareProfileChanges,
  kCount,
};

#define Q "device", "queue", "direction"
#define C "device", "cq"
const std::vector<MetricSpec>& catalogue() {
  static const std::vector<MetricSpec> k{
      {"dimctl_build_info", MetricType::Gauge, "dimctl build information (value 1).", {"version"}},
      {"dimctl_ready",
       MetricType::Gauge,
       "1 when the collector is attached and the first snapshot was taken.",
       {}},
      {"dimctl_loops_total", MetricType::Counter, "Control loop iterations completed.", {}},
      {"dimctl_last_loop_duration_seconds",
       MetricType::Gauge,
       "Duration of the last control loop iteration.",
       {}},
      {"dimctl_sample_errors_total",
       MetricType::Counter,
       "Snapshots the collector failed to take.",
       {}},
      {"dimctl_state_age_seconds",
       MetricType::Gauge,
       "Time since the control loop published the state this scrape rendered.",
       {}},
      {"dimctl_config_info",
       MetricType::Gauge,
       "Configuration in use (value 1): file and default mode.",
       {"path", "default_mode"}},
      {"dimctl_bpf_program_attached",
       MetricType::Gauge,
       "1 when the BPF program is attached, 0 when it could not be (see `dimctl status`).",
       {"program"}},
      {"dimctl_bpf_program_run_seconds_total",
       MetricType::Counter,
       "Kernel run time of the BPF program (needs kernel.bpf_stats_enabled=1, else 0).",
       {"program"}},
      {"dimctl_bpf_program_runs_total",
       MetricType::Counter,
       "Runs of the BPF program (needs kernel.bpf_stats_enabled=1, else 0).",
       {"program"}},
      {"dimctl_bpf_program_recursion_misses_total",
       MetricType::Counter,
       "Runs the kernel skipped because the program was already running on that CPU; their "
       "events are missing from the counters.",
       {"program"}},
      {"dimctl_bpf_events_dropped_total",
       MetricType::Counter,
       "Events the BPF programs could not record: napi_map_full / cq_map_full (more NAPIs or CQs "
       "than the maps hold; their counters are missing), ringbuf_full (CQ lifecycle events lost).",
       {"reason"}},
      {"dimctl_series_dropped",
       MetricType::Gauge,
       "Queues or CQs not exported at this scrape (beyond the series cap or duplicate labels).",
       {"kind"}},
      {"dimctl_series_dropped_total",
       MetricType::Counter,
       "Times a queue or CQ became dropped from export, as seen by successive scrapes.",
       {"kind"}},
      {"dimctl_series_limit",
       MetricType::Gauge,
       "Maximum queues or CQs exported per scrape.",
       {"kind"}},
      {"dimctl_netlink_requests_total",
       MetricType::Counter,
       "Netlink requests the daemon sent, by family (a dump counts once).",
       {"family"}},

      {"dimctl_model_cost_seconds",
       MetricType::Gauge,
       "A core's cost of one interrupt or one completion as its estimator reports it: the "
       "measured split once confident, the recent periods' hard-IRQ time per interrupt and "
       "softirq time per completion until then (see dimctl_model_cost_confidence).",
       {"cpu", "kind"}},
      {"dimctl_model_cost_confidence",
       MetricType::Gauge,
       "A core's cost estimate: 0 defaults (no data), 1 direct (the recent periods' hard-IRQ "
       "time per interrupt and softirq time per completion), 2 combined (one batch size: the "
       "split is unknown, still the direct costs), 3 measured (the split is measured). Rules with "
       "model.costs measured use what it reports.",
       {"cpu"}},
      {"dimctl_core_busy_ratio",
       MetricType::Gauge,
       "Share of the last period a core was not idle (at least its hard-interrupt and "
       "queue-polling softirq time; that time alone where idle time is not measured).",
       {"cpu"}},
      {"dimctl_core_saturated",
       MetricType::Gauge,
       "1 while the core is saturated: its model queues follow the throughput objective.",
       {"cpu"}},
      {"dimctl_core_saturation_episodes_total",
       MetricType::Counter,
       "Times the core entered saturation.",
       {"cpu"}},
      {"dimctl_core_qd1_probes_total",
       MetricType::Counter,
       "QD~1 probes of the saturation rule (one queue, one period, where the profile in force "
       "could not batch), by verdict: qd1 (no climb) or batching (the climb started).",
       {"cpu", "verdict"}},
      {"dimctl_core_saturation_descents_total",
       MetricType::Counter,
       "Descents of the saturation rule (one profile below a best held with idle left), by "
       "verdict: kept (the new best) or back (to the best).",
       {"cpu", "verdict"}},
      {"dimctl_core_saturation_rejudged_total",
       MetricType::Counter,
       "Passive saturation episodes ended to be judged again because the batch rose under the "
       "passive verdict (each re-judgment also starts a new episode).",
       {"cpu"}},
      {"dimctl_model_cost_tables_built_total",
       MetricType::Counter,
       "Cost-model tables built for measured costs (one per cost bucket, device table and share "
       "level in use).",
       {}},

      {"dimctl_queue_info",
       MetricType::Gauge,
       "NAPI instance of a queue (value 1): napi_id and irq (\"-1\" when unknown).",
       {Q, "napi_id", "irq"}},
      {"dimctl_napi_polls_total", MetricType::Counter, "napi_poll calls (budget > 0).", {Q}},
      {"dimctl_napi_events_total",
       MetricType::Counter,
       "DIM events: polls that completed NAPI and re-armed interrupts (work < budget).",
       {Q}},
      {"dimctl_napi_packets_total", MetricType::Counter, "Packets processed (sum of work).", {Q}},
      {"dimctl_napi_bytes_total",
       MetricType::Counter,
       "Bytes processed (only for queues whose driver reports bytes).",
       {Q}},
      {"dimctl_napi_budget_exhausted_total",
       MetricType::Counter,
       "Polls that used their whole budget (NAPI stayed scheduled).",
       {Q}},
      {"dimctl_napi_empty_polls_total", MetricType::Counter, "Polls that found no work.", {Q}},
      {"dimctl_dim_active",
       MetricType::Gauge,
       "1 when a DIM instance runs for the queue (0: algorithm off/static, observe mode, a model "
       "queue before a period with traffic).",
       {Q}},
      {"dimctl_dim_profile_index",
       MetricType::Gauge,
       "DIM profile index: DIM's own choice (source=dim; the cost model's with algorithm model) "
       "and after policy bounds (source=applied).",
       {Q, "source"}},
      {"dimctl_dim_tune_state",
       MetricType::Gauge,
       "DIM tune state: 0 parking_on_top, 1 parking_tired, 2 going_right, 3 going_left.",
       {Q}},
      {"dimctl_dim_tired", MetricType::Gauge, "DIM tired counter.", {Q}},
      {"dimctl_dim_decisions_total",
       MetricType::Counter,
       "DIM windows evaluated, by the verdict of comparing with the previous window.",
       {Q, "verdict"}},
      {"dimctl_dim_profile_changes_total",
       MetricType::Counter,
       "Times DIM changed the profile index of the queue.",
       {Q}},
      {"dimctl_model_sharers",
       MetricType::Gauge,
       "Cost model (as the algorithm or compared): the queues' worth of load its CPU carries, as "
       "the model judged this queue (the packets of the queues polled on its CPU over its own, "
       "rounded to 1, 2, 3, 4, 6, 8, 12 or 16; 1 when alone or the CPU is unknown).",
       {Q}},
      {"dimctl_dim_wanted_usecs",
       MetricType::Gauge,
       "Moderation time (ethtool usecs) of the profile DIM chose for the queue.",
       {Q}},
      {"dimctl_dim_wanted_frames",
       MetricType::Gauge,
       "Moderation frame count (ethtool frames) of the profile DIM chose for the queue.",
       {Q}},
      {"dimctl_napi_defer_hard_irqs",
       MetricType::Gauge,
       "Method napi: defer-hard-irqs of the software profile chosen for the queue's NAPI "
       "(source=requested; applied in enforce, what would be in shadow) and as the NAPI holds it "
       "(source=applied: napi-get, or the read-back of dimctl's napi-set).",
       {Q, "source"}},
      {"dimctl_napi_gro_flush_timeout_seconds",
       MetricType::Gauge,
       "Method napi: gro-flush-timeout of the software profile chosen for the queue's NAPI "
       "(source=requested) and as the NAPI holds it (source=applied).",
       {Q, "source"}},
      {"dimctl_compare_profile_index",
       MetricType::Gauge,
       "Rules with compare: the profile index kernel-identical DIM (policy=dim) and the cost "
       "model (policy=model) pick for the queue, after the device's profile bounds.",
       {Q, "policy"}},
      {"dimctl_compare_profile_changes_total",
       MetricType::Counter,
       "Rules with compare: times each policy changed its profile index for the queue.",
       {Q, "policy"}},

      {"dimctl_device_info",
       MetricType::Gauge,
       "Device policy (value 1): kind, driver, mode, algorithm and matching config rule.",
       {"device", "kind", "driver", "mode", "algorithm", "rule"}},
      {"dimctl_device_allowlisted",
       MetricType::Gauge,
       "1 when a config rule names the device (it may be written in enforce mode).",
       {"device"}},
      {"dimctl_device_error",
       MetricType::Gauge,
       "1 when the last operation on the device failed (message in `dimctl status`).",
       {"device"}},
      {"dimctl_device_method",
       MetricType::Gauge,
       "Net devices (value 1): how dimctl writes the device's moderation, ethtool (hardware "
       "coalescing) or napi (software moderation per NAPI, netdev napi-set).",
       {"device", "method"}},
      {"dimctl_device_coalescing",
       MetricType::Gauge,
       "Net devices: 1 when the driver has rx interrupt coalescing (ethtool), 0 when it has none "
       "(veth, ifb, bridges, tunnels: only method napi moderates them).",
       {"device"}},
      {"dimctl_coalesce_rx_usecs",
       MetricType::Gauge,
       "ethtool rx-usecs: last requested by dimctl and read back from the device.",
       {"device", "source"}},
      {"dimctl_coalesce_rx_frames",
       MetricType::Gauge,
       "ethtool rx-frames: last requested by dimctl and read back from the device.",
       {"device", "source"}},
      {"dimctl_coalesce_tx_usecs",
       MetricType::Gauge,
       "ethtool tx-usecs: last requested by dimctl and read back from the device.",
       {"device", "source"}},
      {"dimctl_coalesce_tx_frames",
       MetricType::Gauge,
       "ethtool tx-frames: last requested by dimctl and read back from the device.",
       {"device", "source"}},
      {"dimctl_coalesce_adaptive_rx",
       MetricType::Gauge,
       "ethtool adaptive-rx (the driver's own DIM), requested and read back.",
       {"device", "source"}},
      {"dimctl_coalesce_adaptive_tx",
       MetricType::Gauge,
       "ethtool adaptive-tx (the driver's own DIM), requested and read back.",
       {"device", "source"}},
      {"dimctl_apply_total",
       MetricType::Counter,
       "Moderation writes to the device by result (ok, failed, rate_limited).",
       {"device", "result"}},
      {"dimctl_drift_total",
       MetricType::Counter,
       "Moderation changes made by someone else that dimctl noticed.",
       {"device"}},
      {"dimctl_drifted",
       MetricType::Gauge,
       "1 when dimctl stopped writing because someone else changed the device.",
       {"device"}},
      {"dimctl_rdma_dim_enabled",
       MetricType::Gauge,
       "Kernel RDMA DIM switch (adaptive-moderation) as read back from the IB device.",
       {"device"}},

      {"dimctl_rdma_cq_info",
       MetricType::Gauge,
       "ib_core CQ (value 1): poll context, completion vector, size.",
       {C, "poll_ctx", "comp_vector", "nr_cqe"}},
      {"dimctl_rdma_cq_events_total",
       MetricType::Counter,
       "CQ process passes (one rdma_dim event each).",
       {C}},
      {"dimctl_rdma_cq_polls_total", MetricType::Counter, "CQ poll batches.", {C}},
      {"dimctl_rdma_cq_completions_total", MetricType::Counter, "Completions polled.", {C}},
      {"dimctl_rdma_cq_schedules_total",
       MetricType::Counter,
       "CQ schedules (completion interrupts).",
       {C}},
      {"dimctl_rdma_cq_reschedules_total",
       MetricType::Counter,
       "CQ passes re-queued because re-arming found completions (rdma_core:cq_reschedule).",
       {C}},
      {"dimctl_rdma_cq_poll_errors_total", MetricType::Counter, "CQ polls that failed.", {C}},
      {"dimctl_rdma_cq_budget_exhausted_total",
       MetricType::Counter,
       "CQ poll passes that used their whole budget (the CQ stayed scheduled).",
       {C}},
      {"dimctl_rdma_cq_kernel_modifies_total",
       MetricType::Counter,
       "Moderation changes made by the in-kernel RDMA DIM (rdma_core:cq_modify).",
       {C}},
      {"dimctl_rdma_cq_kernel_usecs",
       MetricType::Gauge,
       "Last moderation period (usec) the kernel RDMA DIM set.",
       {C}},
      {"dimctl_rdma_cq_kernel_comps",
       MetricType::Gauge,
       "Last moderation completion count the kernel RDMA DIM set.",
       {C}},
      {"dimctl_rdma_cq_dim_active",
       MetricType::Gauge,
       "1 when a DIM instance runs for the CQ (0: a model CQ before a period with completions).",
       {C}},
      {"dimctl_rdma_cq_dim_profile_index",
       MetricType::Gauge,
       "RDMA DIM profile index: DIM's own choice (source=dim) and after bounds (source=applied).",
       {C, "source"}},
      {"dimctl_rdma_cq_dim_tune_state",
       MetricType::Gauge,
       "RDMA DIM tune state: 0 parking_on_top, 1 parking_tired, 2 going_right, 3 going_left.",
       {C}},
      {"dimctl_rdma_cq_dim_decisions_total",
       MetricType::Counter,
       "RDMA DIM windows evaluated, by verdict.",
       {C, "verdict"}},
      {"dimctl_rdma_cq_dim_profile_changes_total",
       MetricType::Counter,
       "Times RDMA DIM changed the profile index of the CQ.",
       {C}},
      {"dimctl_rdma_cq_dim_wanted_usecs",
       MetricType::Gauge,
       "Moderation period (usec) of the profile RDMA DIM chose for the CQ.",
       {C}},
      {"dimctl_rdma_cq_dim_wanted_comps",
       MetricType::Gauge,
       "Moderation completion count of the profile RDMA DIM chose for the CQ.",
       {C}},
      {"dimctl_rdma_cq_model_sharers",
       MetricType::Gauge,
       "Cost model (as the algorithm or compared): the CQs' worth of load its core carries, as "
       "the model judged this CQ (its completion vector's completion rate over its own, rounded "
       "to 1, 2, 3, 4, 6, 8, 12 or 16; 1 when alone).",
       {C}},
      {"dimctl_rdma_cq_compare_profile_index",
       MetricType::Gauge,
       "Rules with compare: the profile index RDMA DIM (policy=dim) and the cost model "
       "(policy=model) pick for the CQ, after the device's profile bounds.",
       {C, "policy"}},
      {"dimctl_rdma_cq_compare_profile_changes_total",
       MetricType::Counter,
       "Rules with compare: times each policy changed its profile index for the CQ.",
       {C, "policy"}},
  };
  return k;
}
#undef Q
#undef C

using Labels = std::vector<std::string_view>;

// Builds the families of one scrape. Label values are passed in the catalogue's label order.
class Builder {
 public:
  Builder() : fams_(kCount) {
    const auto& cat = catalogue();
    for (std::size_t i = 0; i < kCount; ++i) {
      fams_[i].name = cat[i].name;
      fams_[i].help = cat[i].help;
      fams_[i].type = cat[i].type;
    }
  }

  void add(M id, const Labels& values, double v) {
    const MetricSpec& spec = catalogue()[id];
    assert(values.size() == spec.labels.size());
    prometheus::ClientMetric m;
    m.label.reserve(values.size());
    std::size_t i = 0;
    for (std::string_view value : values) {
      m.label.push_back({spec.labels[i++], std::string(value)});
    }
    if (spec.type == MetricType::Counter) {
      m.counter.value = v;
    } else {
      m.gauge.value = v;
    }
    fams_[id].metric.push_back(std::move(m));
  }

  // Families without samples are left out: an empty family is noise in the exposition.
  std::vector<prometheus::MetricFamily> take() && {
    std::vector<prometheus::MetricFamily> out;
    out.reserve(fams_.size());
    for (auto& f : fams_) {
      if (!f.metric.empty()) out.push_back(std::move(f));
    }
    return out;
  }

 private:
  std::vector<prometheus::MetricFamily> fams_;
};

double b(bool v) {
  return v ? 1.0 : 0.0;
}
double d(uint64_t v) {
  return static_cast<double>(v);
}

uint64_t pack_caps(uint32_t queues, uint32_t cqs) {
  return (uint64_t{queues} << 32) | cqs;
}
uint32_t cap32(std::size_t cap) {
  return static_cast<uint32_t>(std::min<std::size_t>(cap, UINT32_MAX));
}

// Selects the entries to export: sorted by `key`, first `cap` unique label sets. Returns indices
// into the input and fills `dropped` with the label-set strings of what was cut.
template <typename T, typename KeyFn, typename IdFn>
std::vector<std::size_t> select(const std::vector<T>& items, std::size_t cap, KeyFn key, IdFn id,
                                std::set<std::string>& dropped, std::size_t& n_dropped) {
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t bb) { return key(items[a]) < key(items[bb]); });
  std::vector<std::size_t> keep;
  std::set<std::string> seen;
  for (std::size_t i : order) {
    std::string ident = id(items[i]);
    if (seen.count(ident) != 0 || keep.size() >= cap) {
      // A duplicate keeps the first entry's series; the duplicate is recorded under a distinct
      // key so it is counted even when its label set is also exported.
      dropped.insert(seen.count(ident) != 0 ? ident + "#dup" : ident);
      ++n_dropped;
      continue;
    }
    seen.insert(ident);
    keep.push_back(i);
  }
  return keep;
}

// DIM series of one queue (labels device, queue, direction) or CQ (labels device, cq).
void render_dim(Builder& out, const model::DimView& dim, bool cq, const Labels& labels) {
  auto with = [&labels](std::string_view extra) {
    Labels l = labels;
    l.push_back(extra);
    return l;
  };
  out.add(cq ? kCqDimActive : kDimActive, labels, b(dim.active));
  // An inactive DIM has no meaningful profile or state: leave its series out rather than
  // export zeros that look like "profile 0".
  if (!dim.active) return;
  const M profile = cq ? kCqDimProfileIndex : kDimProfileIndex;
  out.add(profile, with("dim"), dim.profile_ix);
  out.add(profile, with("applied"), dim.applied_ix);
  // The cost model has no tune state, tired counter or windows: those series are absent.
  if (dim.model) {
    out.add(cq ? kCqDimProfileChanges : kDimProfileChanges, labels, d(dim.profile_changes_total));
    return;
  }
  out.add(cq ? kCqDimTuneState : kDimTuneState, labels, dim.tune_state);
  // RDMA DIM has no tired counter (dim-spec: no parking on the RDMA side).
  if (!cq) out.add(kDimTired, labels, dim.tired);
  for (int v = 0; v < 3; ++v) {
    out.add(cq ? kCqDimDecisions : kDimDecisions, with(verdict_name(v)), d(dim.verdicts_total[v]));
  }
  out.add(cq ? kCqDimProfileChanges : kDimProfileChanges, labels, d(dim.profile_changes_total));
}

// Both policies' picks of a queue or CQ whose rule compares them.
void render_compare(Builder& out, const model::PolicyComparison* c, bool cq, const Labels& labels) {
  if (!c) return;
  auto with = [&labels](std::string_view policy) {
    Labels l = labels;
    l.push_back(policy);
    return l;
  };
  const M index = cq ? kCqCompareProfileIndex : kCompareProfileIndex;
  const M changes = cq ? kCqCompareProfileChanges : kCompareProfileChanges;
  out.add(index, with("dim"), c->dim_ix);
  out.add(index, with("model"), c->model_ix);
  out.add(changes, with("dim"), d(c->dim_changes_total));
  out.add(changes, with("model"), d(c->model_changes_total));
}

void render_coalesce(Builder& out, const std::string& dev, const std::optional<model::Coalesce>& c,
                     std::string_view source) {
  if (!c) return;
  auto put = [&](M id, const auto& v) {
    if (v) out.add(id, {dev, source}, static_cast<double>(*v));
  };
  put(kCoalesceRxUsecs, c->rx_usecs);
  put(kCoalesceRxFrames, c->rx_max_frames);
  put(kCoalesceTxUsecs, c->tx_usecs);
  put(kCoalesceTxFrames, c->tx_max_frames);
  put(kCoalesceAdaptiveRx, c->use_adaptive_rx);
  put(kCoalesceAdaptiveTx, c->use_adaptive_tx);
}

}  // namespace

const std::vector<MetricSpec>& metric_catalogue() {
  return catalogue();
}

const char* built_in_version() {
  return DIMCTL_EXPORTERS_VERSION;
}

Result<std::shared_ptr<StateCollector>> StateCollector::create(StateGetter state,
                                                               CollectorOptions options) {
  if (!state) return DIMCTL_FAIL(0, "exporter: no state getter");
  const auto& cat = catalogue();
  if (cat.size() != kCount) {
    return DIMCTL_FAIL(0, "exporter: catalogue has {} entries, expected {}", cat.size(),
                       static_cast<std::size_t>(kCount));
  }
  std::set<std::string> names;
  for (const auto& spec : cat) {
    // prometheus-cpp's name checks can throw on odd input in some versions; treat any throw as
    // a bad name rather than letting it escape start-up.
    try {
      if (!prometheus::CheckMetricName(spec.name)) {
        return DIMCTL_FAIL(0, "exporter: invalid metric name \"{}\"", spec.name);
      }
      for (const char* l : spec.labels) {
        if (!prometheus::CheckLabelName(l)) {
          return DIMCTL_FAIL(0, "exporter: invalid label \"{}\" on {}", l, spec.name);
        }
      }
    } catch (const std::exception& e) {
      return DIMCTL_FAIL(0, "exporter: checking \"{}\": {}", spec.name, e.what());
    }
    if (!names.insert(spec.name).second) {
      return DIMCTL_FAIL(0, "exporter: metric \"{}\" defined twice", spec.name);
    }
  }
  if (!options.now_ns) {
    options.now_ns = [] { return model::MonotonicClock().now_ns(); };
  }
  if (options.version.empty()) options.version = built_in_version();
  return std::shared_ptr<StateCollector>(new StateCollector(std::move(state), std::move(options)));
}

StateCollector::StateCollector(StateGetter state, CollectorOptions options)
    : state_(std::move(state)),
      options_(std::move(options)),
      caps_(pack_caps(cap32(options_.max_queue_series), cap32(options_.max_cq_series))) {}

void StateCollector::set_series_caps(uint32_t queues, uint32_t cqs) {
  // Nothing else is published with the caps, so no ordering is needed beyond the atomic itself.
  caps_.store(pack_caps(queues, cqs), std::memory_order_relaxed);
}

std::vector<prometheus::MetricFamily> StateCollector::Collect() const {
  Builder out;
  std::shared_ptr<const model::ControllerState> s = state_();
  // Read once: the limit gauges and the selection below must agree even if a reload lands now.
  const uint64_t caps = caps_.load(std::memory_order_relaxed);
  const std::size_t max_queues = static_cast<uint32_t>(caps >> 32);
  const std::size_t max_cqs = static_cast<uint32_t>(caps);

  out.add(kBuildInfo, {options_.version}, 1);
  out.add(kReady, {}, b(s && s->ready));
  out.add(kSeriesLimit, {"queue"}, d(max_queues));
  out.add(kSeriesLimit, {"cq"}, d(max_cqs));
  if (options_.netlink_requests) {
    const auto counts = options_.netlink_requests();
    for (size_t f = 0; f < counts.size(); ++f) {
      out.add(kNetlinkRequests, {std::string(kNetlinkFamilyNames[f])}, d(counts[f]));
    }
  }

  std::set<std::string> dropped[2];
  std::size_t n_dropped[2] = {0, 0};
  if (s) {
    out.add(kLoops, {}, d(s->loops_total));
    out.add(kLastLoopDuration, {}, s->last_loop_seconds);
    out.add(kSampleErrors, {}, d(s->sample_errors_total));
    out.add(kStateAge, {}, static_cast<double>(options_.now_ns() - s->time_ns) / 1e9);
    out.add(kConfigInfo, {s->config_path, mode_name(s->default_mode)}, 1);

    std::set<std::string> programs;
    for (const auto& p : s->programs) {
      if (!programs.insert(p.name).second) continue;  // duplicate series would fail the scrape
      out.add(kBpfAttached, {p.name}, b(p.attached));
      out.add(kBpfRunSeconds, {p.name}, static_cast<double>(p.run_time_ns) / 1e9);
      out.add(kBpfRuns, {p.name}, d(p.run_count));
      out.add(kBpfMisses, {p.name}, d(p.recursion_misses));
    }
    std::set<std::string> drop_reasons;
    for (const auto& dr : s->bpf_drops) {
      if (!drop_reasons.insert(dr.reason).second) continue;
      out.add(kBpfDrops, {dr.reason}, d(dr.total));
    }

    // Cores.
    if (!s->cores.empty()) out.add(kModelCostTablesBuilt, {}, d(s->model_cost_tables_built_total));
    for (const auto& c : s->cores) {
      const std::string cpu = std::to_string(c.cpu);
      out.add(kModelCost, {cpu, "interrupt"}, c.estimate.interrupt_ns / 1e9);
      out.add(kModelCost, {cpu, "completion"}, c.estimate.completion_ns / 1e9);
      out.add(kModelCostConfidence, {cpu}, static_cast<double>(c.confidence));
      out.add(kCoreBusy, {cpu}, c.busy);
      out.add(kCoreSaturated, {cpu}, b(c.saturated));
      out.add(kCoreSaturationEpisodes, {cpu}, d(c.saturation_episodes));
      out.add(kCoreQd1Probes, {cpu, "qd1"}, d(c.qd1_probes_qd1));
      out.add(kCoreQd1Probes, {cpu, "batching"}, d(c.qd1_probes_batching));
      out.add(kCoreDescents, {cpu, "kept"}, d(c.descents_kept));
      out.add(kCoreDescents, {cpu, "back"}, d(c.descents_back));
      out.add(kCoreRejudged, {cpu}, d(c.rejudged));
    }

    // Queues.
    auto qkey = [](const model::QueueView& q) {
      // Numeric queue order (queue 10 after queue 9); unknown indices (-1) after known ones.
      int32_t qi = q.counters.queue >= 0 ? q.counters.queue : INT32_MAX;
      return std::tuple(std::string_view(q.device), qi, q.counters.key.napi_id,
                        std::string_view(q.direction));
    };
    auto qid = [](const model::QueueView& q) {
      return q.device + "/" + queue_label(q.counters) + "/" + q.direction;
    };
    for (std::size_t i : select(s->queues, max_queues, qkey, qid, dropped[0], n_dropped[0])) {
      const auto& q = s->queues[i];
      const auto& c = q.counters;
      const std::string& dev = q.device;
      const std::string ql = queue_label(c);
      const std::string& dir = q.direction;
      out.add(kQueueInfo, {dev, ql, dir, std::to_string(c.key.napi_id), std::to_string(c.irq)}, 1);
      out.add(kNapiPolls, {dev, ql, dir}, d(c.polls));
      out.add(kNapiEvents, {dev, ql, dir}, d(c.events()));
      out.add(kNapiPackets, {dev, ql, dir}, d(c.packets));
      if (c.has_bytes) out.add(kNapiBytes, {dev, ql, dir}, d(c.bytes));
      out.add(kNapiBudgetExhausted, {dev, ql, dir}, d(c.budget_exhausted));
      out.add(kNapiEmptyPolls, {dev, ql, dir}, d(c.empty_polls));
      render_dim(out, q.dim, /*cq=*/false, {dev, ql, dir});
      if (q.model_sharers > 0) out.add(kModelSharers, {dev, ql, dir}, q.model_sharers);
      if (q.dim.active) {
        out.add(kDimWantedUsecs, {dev, ql, dir}, q.wanted_usecs);
        out.add(kDimWantedFrames, {dev, ql, dir}, q.wanted_frames);
      }
      if (q.wanted_software) {
        out.add(kNapiDeferHardIrqs, {dev, ql, dir, "requested"},
                q.wanted_software->defer_hard_irqs);
        out.add(kNapiGroFlushTimeout, {dev, ql, dir, "requested"},
                static_cast<double>(q.wanted_software->gro_flush_timeout_ns) / 1e9);
      }
      if (q.napi_config) {
        if (q.napi_config->defer_hard_irqs) {
          out.add(kNapiDeferHardIrqs, {dev, ql, dir, "applied"}, *q.napi_config->defer_hard_irqs);
        }
        if (q.napi_config->gro_flush_timeout_ns) {
          out.add(kNapiGroFlushTimeout, {dev, ql, dir, "applied"},
                  static_cast<double>(*q.napi_config->gro_flush_timeout_ns) / 1e9);
        }
      }
      render_compare(out, model::comparison_at(s->queue_comparisons, i), /*cq=*/false,
                     {dev, ql, dir});
    }

    // CQs.
    auto ckey = [](const model::CqView& q) {
      return std::tuple(std::string_view(q.counters.ibdev), q.counters.key.dev_index,
                        q.counters.key.cq_id);
    };
    auto cid = [](const model::CqView& q) {
      return q.counters.ibdev + "/" + std::to_string(q.counters.key.cq_id);
    };
    for (std::size_t i : select(s->cqs, max_cqs, ckey, cid, dropped[1], n_dropped[1])) {
      const auto& q = s->cqs[i];
      const auto& c = q.counters;
      const std::string& dev = c.ibdev;
      const std::string cq = std::to_string(c.key.cq_id);
      out.add(kCqInfo,
              {dev, cq, poll_context_name(c.poll_ctx), std::to_string(c.comp_vector),
               std::to_string(c.nr_cqe)},
              1);
      out.add(kCqEvents, {dev, cq}, d(c.events));
      out.add(kCqPolls, {dev, cq}, d(c.polls));
      out.add(kCqCompletions, {dev, cq}, d(c.completions));
      out.add(kCqSchedules, {dev, cq}, d(c.schedules));
      out.add(kCqReschedules, {dev, cq}, d(c.reschedules));
      out.add(kCqPollErrors, {dev, cq}, d(c.poll_errors));
      out.add(kCqBudgetExhausted, {dev, cq}, d(c.budget_exhausted));
      out.add(kCqKernelModifies, {dev, cq}, d(c.kernel_modifies));
      // Before the first cq_modify the kernel values are unknown, not 0.
      if (c.kernel_modifies > 0) {
        out.add(kCqKernelUsecs, {dev, cq}, c.kernel_usec);
        out.add(kCqKernelComps, {dev, cq}, c.kernel_comps);
      }
      render_dim(out, q.dim, /*cq=*/true, {dev, cq});
      if (q.dim.active) {
        out.add(kCqDimWantedUsecs, {dev, cq}, q.wanted_usec);
        out.add(kCqDimWantedComps, {dev, cq}, q.wanted_comps);
      }
      if (q.model_sharers > 0) out.add(kCqModelSharers, {dev, cq}, q.model_sharers);
      render_compare(out, model::comparison_at(s->cq_comparisons, i), /*cq=*/true, {dev, cq});
    }

    // Devices: bounded by the host's NICs, so not capped; duplicates are still skipped.
    std::set<std::string> devices;
    for (const auto& dv : s->devices) {
      if (!devices.insert(dv.name).second) continue;
      const std::string& dev = dv.name;
      out.add(kDeviceInfo,
              {dev, device_kind_name(dv.kind), dv.driver, mode_name(dv.mode),
               algorithm_name(dv.algorithm), dv.rule},
              1);
      out.add(kDeviceAllowlisted, {dev}, b(dv.allowlisted));
      out.add(kDeviceError, {dev}, b(!dv.last_error.empty()));
      if (dv.kind == model::DeviceKind::kNet)
        out.add(kDeviceMethod, {dev, method_name(dv.method)}, 1);
      if (dv.coalescing) out.add(kDeviceCoalescing, {dev}, b(*dv.coalescing));
      render_coalesce(out, dev, dv.requested, "requested");
      render_coalesce(out, dev, dv.applied, "applied");
      out.add(kApply, {dev, "ok"}, d(dv.applies_ok_total));
      out.add(kApply, {dev, "failed"}, d(dv.applies_failed_total));
      out.add(kApply, {dev, "rate_limited"}, d(dv.applies_rate_limited_total));
      out.add(kDrift, {dev}, d(dv.drift_total));
      out.add(kDrifted, {dev}, b(dv.drifted));
      if (dv.rdma_dim_enabled) out.add(kRdmaDimEnabled, {dev}, b(*dv.rdma_dim_enabled));
    }
  }

  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int k = 0; k < 2; ++k) {
      for (const auto& ident : dropped[k]) {
        if (prev_dropped_[k].count(ident) == 0) ++dropped_total_[k];
      }
      prev_dropped_[k] = dropped[k];
    }
    out.add(kSeriesDropped, {"queue"}, d(n_dropped[0]));
    out.add(kSeriesDropped, {"cq"}, d(n_dropped[1]));
    out.add(kSeriesDroppedTotal, {"queue"}, d(dropped_total_[0]));
    out.add(kSeriesDroppedTotal, {"cq"}, d(dropped_total_[1]));
  }
  return std::move(out).take();
}

std::string render_text(const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables) {
  std::vector<prometheus::MetricFamily> all;
  for (const auto& w : collectables) {
    if (auto c = w.lock()) {
      auto f = c->Collect();
      all.insert(all.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
    }
  }
  std::ostringstream os;
  prometheus::TextSerializer().Serialize(os, all);
  return os.str();
}

std::string render_text(const prometheus::Collectable& collectable) {
  std::ostringstream os;
  prometheus::TextSerializer().Serialize(os, collectable.Collect());
  return os.str();
}

}  // namespace dimctl::exporters
