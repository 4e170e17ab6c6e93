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
#include "dimctl/seam/clock.h"
#include "metric_table.h"

#ifndef DIMCTL_EXPORTERS_VERSION
#define DIMCTL_EXPORTERS_VERSION "unknown"
#endif

namespace dimctl::exporters {
namespace {

using prometheus::MetricType;

const std::vector<MetricSpec>& catalogue() {
  static const std::vector<MetricSpec> k = [] {
    std::vector<MetricSpec> out;
    out.reserve(kMetricCount);
    for (const MetricDef& m : kMetrics) {
      MetricSpec& spec = out.emplace_back();
      spec.name = m.name.data();
      spec.type = m.type;
      spec.help = m.help.data();
      for (const char* l : m.labels) {
        if (l != nullptr) spec.labels.push_back(l);
      }
    }
    return out;
  }();
  return k;
}

using Labels = std::vector<std::string_view>;

// Builds the families of one scrape. Label values are passed in the catalogue's label order.
class Builder {
 public:
  Builder() : fams_(kMetricCount) {
    const auto& cat = catalogue();
    for (std::size_t i = 0; i < kMetricCount; ++i) {
      fams_[i].name = cat[i].name;
      fams_[i].help = cat[i].help;
      fams_[i].type = cat[i].type;
    }
  }

  void add(std::size_t id, const Labels& values, double v) {
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
void render_dim(Builder& out, const seam::DimView& dim, bool cq, const Labels& labels) {
  auto with = [&labels](std::string_view extra) {
    Labels l = labels;
    l.push_back(extra);
    return l;
  };
  out.add(cq ? metric("dimctl_rdma_cq_dim_active") : metric("dimctl_dim_active"), labels,
          b(dim.active));
  // An inactive DIM has no meaningful profile or state: leave its series out rather than
  // export zeros that look like "profile 0".
  if (!dim.active) return;
  const std::size_t profile =
      cq ? metric("dimctl_rdma_cq_dim_profile_index") : metric("dimctl_dim_profile_index");
  out.add(profile, with("dim"), dim.profile_ix);
  out.add(profile, with("applied"), dim.applied_ix);
  // The cost model has no tune state, tired counter or windows: those series are absent.
  if (dim.model) {
    out.add(cq ? metric("dimctl_rdma_cq_dim_profile_changes_total")
               : metric("dimctl_dim_profile_changes_total"),
            labels, d(dim.profile_changes_total));
    return;
  }
  out.add(cq ? metric("dimctl_rdma_cq_dim_tune_state") : metric("dimctl_dim_tune_state"), labels,
          dim.tune_state);
  // RDMA DIM has no tired counter (dim-spec: no parking on the RDMA side).
  if (!cq) out.add(metric("dimctl_dim_tired"), labels, dim.tired);
  for (int v = 0; v < 3; ++v) {
    out.add(
        cq ? metric("dimctl_rdma_cq_dim_decisions_total") : metric("dimctl_dim_decisions_total"),
        with(verdict_name(v)), d(dim.verdicts_total[v]));
  }
  out.add(cq ? metric("dimctl_rdma_cq_dim_profile_changes_total")
             : metric("dimctl_dim_profile_changes_total"),
          labels, d(dim.profile_changes_total));
}

// Both policies' picks of a queue or CQ whose rule compares them.
void render_compare(Builder& out, const seam::PolicyComparison* c, bool cq, const Labels& labels) {
  if (!c) return;
  auto with = [&labels](std::string_view policy) {
    Labels l = labels;
    l.push_back(policy);
    return l;
  };
  const std::size_t index =
      cq ? metric("dimctl_rdma_cq_compare_profile_index") : metric("dimctl_compare_profile_index");
  const std::size_t changes = cq ? metric("dimctl_rdma_cq_compare_profile_changes_total")
                                 : metric("dimctl_compare_profile_changes_total");
  out.add(index, with("dim"), c->dim_ix);
  out.add(index, with("model"), c->model_ix);
  out.add(changes, with("dim"), d(c->dim_changes_total));
  out.add(changes, with("model"), d(c->model_changes_total));
}

// The cost model's objective, budget and predicted trade-off of a queue or CQ that runs it.
void render_model_trade(Builder& out, const std::optional<seam::ModelTrade>& t, bool cq,
                        const Labels& labels) {
  if (!t) return;
  auto with = [&labels](std::string_view extra) {
    Labels l = labels;
    l.push_back(extra);
    return l;
  };
  out.add(cq ? metric("dimctl_rdma_cq_model_objective") : metric("dimctl_model_objective"),
          with(objective_name(t->objective)), 1);
  if (t->objective == dim::Objective::kEfficiency) {
    out.add(cq ? metric("dimctl_rdma_cq_model_latency_budget_seconds")
               : metric("dimctl_model_latency_budget_seconds"),
            labels, static_cast<double>(t->latency_budget_ns) / 1e9);
  }
  const std::size_t delay = cq ? metric("dimctl_rdma_cq_model_predicted_added_latency_seconds")
                               : metric("dimctl_model_predicted_added_latency_seconds");
  const std::size_t cpu = cq ? metric("dimctl_rdma_cq_model_predicted_cpu_per_completion_seconds")
                             : metric("dimctl_model_predicted_cpu_per_completion_seconds");
  out.add(delay, with("chosen"), t->chosen_added_delay_ns / 1e9);
  out.add(delay, with("none"), t->none_added_delay_ns / 1e9);
  out.add(cpu, with("chosen"), t->chosen_cpu_per_completion_ns / 1e9);
  out.add(cpu, with("none"), t->none_cpu_per_completion_ns / 1e9);
}

void render_coalesce(Builder& out, const std::string& dev, const std::optional<seam::Coalesce>& c,
                     std::string_view source) {
  if (!c) return;
  auto put = [&](std::size_t id, const auto& v) {
    if (v) out.add(id, {dev, source}, static_cast<double>(*v));
  };
  put(metric("dimctl_coalesce_rx_usecs"), c->rx_usecs);
  put(metric("dimctl_coalesce_rx_frames"), c->rx_max_frames);
  put(metric("dimctl_coalesce_tx_usecs"), c->tx_usecs);
  put(metric("dimctl_coalesce_tx_frames"), c->tx_max_frames);
  put(metric("dimctl_coalesce_adaptive_rx"), c->use_adaptive_rx);
  put(metric("dimctl_coalesce_adaptive_tx"), c->use_adaptive_tx);
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
    options.now_ns = [] { return seam::MonotonicClock().now_ns(); };
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
  std::shared_ptr<const seam::ControllerState> s = state_();
  // Read once: the limit gauges and the selection below must agree even if a reload lands now.
  const uint64_t caps = caps_.load(std::memory_order_relaxed);
  const std::size_t max_queues = static_cast<uint32_t>(caps >> 32);
  const std::size_t max_cqs = static_cast<uint32_t>(caps);

  out.add(metric("dimctl_build_info"), {options_.version}, 1);
  out.add(metric("dimctl_ready"), {}, b(s && s->ready));
  out.add(metric("dimctl_series_limit"), {"queue"}, d(max_queues));
  out.add(metric("dimctl_series_limit"), {"cq"}, d(max_cqs));
  if (options_.netlink_requests) {
    const auto counts = options_.netlink_requests();
    for (size_t f = 0; f < counts.size(); ++f) {
      out.add(metric("dimctl_netlink_requests_total"), {std::string(kNetlinkFamilyNames[f])},
              d(counts[f]));
    }
  }

  std::set<std::string> dropped[2];
  std::size_t n_dropped[2] = {0, 0};
  if (s) {
    out.add(metric("dimctl_loops_total"), {}, d(s->loops_total));
    out.add(metric("dimctl_last_loop_duration_seconds"), {}, s->last_loop_seconds);
    out.add(metric("dimctl_sample_errors_total"), {}, d(s->sample_errors_total));
    out.add(metric("dimctl_state_age_seconds"), {},
            static_cast<double>(options_.now_ns() - s->time_ns) / 1e9);
    out.add(metric("dimctl_config_info"), {s->config_path, mode_name(s->default_mode)}, 1);

    std::set<std::string> programs;
    for (const auto& p : s->programs) {
      if (!programs.insert(p.name).second) continue;  // duplicate series would fail the scrape
      out.add(metric("dimctl_bpf_program_attached"), {p.name}, b(p.attached));
      out.add(metric("dimctl_bpf_program_run_seconds_total"), {p.name},
              static_cast<double>(p.run_time_ns) / 1e9);
      out.add(metric("dimctl_bpf_program_runs_total"), {p.name}, d(p.run_count));
      out.add(metric("dimctl_bpf_program_recursion_misses_total"), {p.name}, d(p.recursion_misses));
    }
    std::set<std::string> drop_reasons;
    for (const auto& dr : s->bpf_drops) {
      if (!drop_reasons.insert(dr.reason).second) continue;
      out.add(metric("dimctl_bpf_events_dropped_total"), {dr.reason}, d(dr.total));
    }

    // Cores.
    if (!s->cores.empty())
      out.add(metric("dimctl_model_cost_tables_built_total"), {},
              d(s->model_cost_tables_built_total));
    for (const auto& c : s->cores) {
      const std::string cpu = std::to_string(c.cpu);
      out.add(metric("dimctl_model_cost_seconds"), {cpu, "interrupt"},
              c.estimate.interrupt_ns / 1e9);
      out.add(metric("dimctl_model_cost_seconds"), {cpu, "completion"},
              c.estimate.completion_ns / 1e9);
      out.add(metric("dimctl_model_cost_confidence"), {cpu}, static_cast<double>(c.confidence));
      out.add(metric("dimctl_core_busy_ratio"), {cpu}, c.busy);
      out.add(metric("dimctl_core_saturated"), {cpu}, b(c.saturated));
      out.add(metric("dimctl_core_saturation_episodes_total"), {cpu}, d(c.saturation_episodes));
      out.add(metric("dimctl_core_qd1_probes_total"), {cpu, "qd1"}, d(c.qd1_probes_qd1));
      out.add(metric("dimctl_core_qd1_probes_total"), {cpu, "batching"}, d(c.qd1_probes_batching));
      out.add(metric("dimctl_core_saturation_descents_total"), {cpu, "kept"}, d(c.descents_kept));
      out.add(metric("dimctl_core_saturation_descents_total"), {cpu, "back"}, d(c.descents_back));
      out.add(metric("dimctl_core_saturation_rejudged_total"), {cpu}, d(c.rejudged));
    }

    // Queues.
    auto qkey = [](const seam::QueueView& q) {
      // Numeric queue order (queue 10 after queue 9); unknown indices (-1) after known ones.
      int32_t qi = q.counters.queue >= 0 ? q.counters.queue : INT32_MAX;
      return std::tuple(std::string_view(q.device), qi, q.counters.key.napi_id,
                        std::string_view(q.direction));
    };
    auto qid = [](const seam::QueueView& q) {
      return q.device + "/" + queue_label(q.counters) + "/" + q.direction;
    };
    for (std::size_t i : select(s->queues, max_queues, qkey, qid, dropped[0], n_dropped[0])) {
      const auto& q = s->queues[i];
      const auto& c = q.counters;
      const std::string& dev = q.device;
      const std::string ql = queue_label(c);
      const std::string& dir = q.direction;
      out.add(metric("dimctl_queue_info"),
              {dev, ql, dir, std::to_string(c.key.napi_id), std::to_string(c.irq)}, 1);
      out.add(metric("dimctl_napi_polls_total"), {dev, ql, dir}, d(c.polls));
      out.add(metric("dimctl_napi_events_total"), {dev, ql, dir}, d(c.events()));
      out.add(metric("dimctl_napi_packets_total"), {dev, ql, dir}, d(c.packets));
      if (c.has_bytes) out.add(metric("dimctl_napi_bytes_total"), {dev, ql, dir}, d(c.bytes));
      out.add(metric("dimctl_napi_budget_exhausted_total"), {dev, ql, dir}, d(c.budget_exhausted));
      out.add(metric("dimctl_napi_empty_polls_total"), {dev, ql, dir}, d(c.empty_polls));
      render_dim(out, q.dim, /*cq=*/false, {dev, ql, dir});
      if (q.model_sharers > 0)
        out.add(metric("dimctl_model_sharers"), {dev, ql, dir}, q.model_sharers);
      render_model_trade(out, q.model_trade, /*cq=*/false, {dev, ql, dir});
      if (q.dim.active) {
        out.add(metric("dimctl_dim_wanted_usecs"), {dev, ql, dir}, q.wanted_usecs);
        out.add(metric("dimctl_dim_wanted_frames"), {dev, ql, dir}, q.wanted_frames);
      }
      if (q.wanted_software) {
        out.add(metric("dimctl_napi_defer_hard_irqs"), {dev, ql, dir, "requested"},
                q.wanted_software->defer_hard_irqs);
        out.add(metric("dimctl_napi_gro_flush_timeout_seconds"), {dev, ql, dir, "requested"},
                static_cast<double>(q.wanted_software->gro_flush_timeout_ns) / 1e9);
      }
      if (q.napi_config) {
        if (q.napi_config->defer_hard_irqs) {
          out.add(metric("dimctl_napi_defer_hard_irqs"), {dev, ql, dir, "applied"},
                  *q.napi_config->defer_hard_irqs);
        }
        if (q.napi_config->gro_flush_timeout_ns) {
          out.add(metric("dimctl_napi_gro_flush_timeout_seconds"), {dev, ql, dir, "applied"},
                  static_cast<double>(*q.napi_config->gro_flush_timeout_ns) / 1e9);
        }
      }
      render_compare(out, seam::comparison_at(s->queue_comparisons, i), /*cq=*/false,
                     {dev, ql, dir});
    }

    // CQs.
    auto ckey = [](const seam::CqView& q) {
      return std::tuple(std::string_view(q.counters.ibdev), q.counters.key.dev_index,
                        q.counters.key.cq_id);
    };
    auto cid = [](const seam::CqView& q) {
      return q.counters.ibdev + "/" + std::to_string(q.counters.key.cq_id);
    };
    for (std::size_t i : select(s->cqs, max_cqs, ckey, cid, dropped[1], n_dropped[1])) {
      const auto& q = s->cqs[i];
      const auto& c = q.counters;
      const std::string& dev = c.ibdev;
      const std::string cq = std::to_string(c.key.cq_id);
      out.add(metric("dimctl_rdma_cq_info"),
              {dev, cq, poll_context_name(c.poll_ctx), std::to_string(c.comp_vector),
               std::to_string(c.nr_cqe)},
              1);
      out.add(metric("dimctl_rdma_cq_events_total"), {dev, cq}, d(c.events));
      out.add(metric("dimctl_rdma_cq_polls_total"), {dev, cq}, d(c.polls));
      out.add(metric("dimctl_rdma_cq_completions_total"), {dev, cq}, d(c.completions));
      out.add(metric("dimctl_rdma_cq_schedules_total"), {dev, cq}, d(c.schedules));
      out.add(metric("dimctl_rdma_cq_reschedules_total"), {dev, cq}, d(c.reschedules));
      out.add(metric("dimctl_rdma_cq_poll_errors_total"), {dev, cq}, d(c.poll_errors));
      out.add(metric("dimctl_rdma_cq_budget_exhausted_total"), {dev, cq}, d(c.budget_exhausted));
      out.add(metric("dimctl_rdma_cq_kernel_modifies_total"), {dev, cq}, d(c.kernel_modifies));
      // Before the first cq_modify the kernel values are unknown, not 0.
      if (c.kernel_modifies > 0) {
        out.add(metric("dimctl_rdma_cq_kernel_usecs"), {dev, cq}, c.kernel_usec);
        out.add(metric("dimctl_rdma_cq_kernel_comps"), {dev, cq}, c.kernel_comps);
      }
      render_dim(out, q.dim, /*cq=*/true, {dev, cq});
      if (q.dim.active) {
        out.add(metric("dimctl_rdma_cq_dim_wanted_usecs"), {dev, cq}, q.wanted_usec);
        out.add(metric("dimctl_rdma_cq_dim_wanted_comps"), {dev, cq}, q.wanted_comps);
      }
      if (q.model_sharers > 0)
        out.add(metric("dimctl_rdma_cq_model_sharers"), {dev, cq}, q.model_sharers);
      render_model_trade(out, q.model_trade, /*cq=*/true, {dev, cq});
      render_compare(out, seam::comparison_at(s->cq_comparisons, i), /*cq=*/true, {dev, cq});
    }

    // Devices: bounded by the host's NICs, so not capped; duplicates are still skipped.
    std::set<std::string> devices;
    for (const auto& dv : s->devices) {
      if (!devices.insert(dv.name).second) continue;
      const std::string& dev = dv.name;
      out.add(metric("dimctl_device_info"),
              {dev, device_kind_name(dv.kind), dv.driver, mode_name(dv.mode),
               algorithm_name(dv.algorithm), dv.rule},
              1);
      out.add(metric("dimctl_device_allowlisted"), {dev}, b(dv.allowlisted));
      out.add(metric("dimctl_device_error"), {dev}, b(!dv.last_error.empty()));
      if (dv.kind == seam::DeviceKind::kNet)
        out.add(metric("dimctl_device_method"), {dev, method_name(dv.method)}, 1);
      if (dv.coalescing) out.add(metric("dimctl_device_coalescing"), {dev}, b(*dv.coalescing));
      render_coalesce(out, dev, dv.requested, "requested");
      render_coalesce(out, dev, dv.applied, "applied");
      out.add(metric("dimctl_apply_total"), {dev, "ok"}, d(dv.applies_ok_total));
      out.add(metric("dimctl_apply_total"), {dev, "failed"}, d(dv.applies_failed_total));
      out.add(metric("dimctl_apply_total"), {dev, "rate_limited"},
              d(dv.applies_rate_limited_total));
      out.add(metric("dimctl_drift_total"), {dev}, d(dv.drift_total));
      out.add(metric("dimctl_drifted"), {dev}, b(dv.drifted));
      if (dv.rdma_dim_enabled)
        out.add(metric("dimctl_rdma_dim_enabled"), {dev}, b(*dv.rdma_dim_enabled));
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
    out.add(metric("dimctl_series_dropped"), {"queue"}, d(n_dropped[0]));
    out.add(metric("dimctl_series_dropped"), {"cq"}, d(n_dropped[1]));
    out.add(metric("dimctl_series_dropped_total"), {"queue"}, d(dropped_total_[0]));
    out.add(metric("dimctl_series_dropped_total"), {"cq"}, d(dropped_total_[1]));
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
