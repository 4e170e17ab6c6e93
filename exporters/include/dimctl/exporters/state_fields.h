// The state JSON's field tables: every key of GET /api/v1/state (and of `dimctl list --json`'s
// queue and CQ counters) is listed once here, with the member it holds. The writer
// (state_to_json, queue_counters_to_json, cq_counters_to_json) and the reader (state_from_json)
// both walk these tables, so a field added here is written and read alike; one added anywhere
// else is neither.
//
// A table is `fields(v, x)` for a visitor `v` and a model value `x`, const when writing. Each
// entry says how its key is rendered, and so how it is read:
//   v.field(key, member)                    a number, bool or string
//   v.enumeration(key, member, name, parse) an enum, as the names of names.h
//   v.nullable(key, member, known)          null when !known (an unknown CPU, no bytes); read
//                                           as absent
//   v.optional(key, member, Absent)         std::optional: null or left out when empty
//   v.derived(key, compute)                 written only: computed from other fields, which
//                                           the reader reads instead
//   v.object(key, body)                     a nested object, its entries in body(v')
//   v.optional_object(key, member)          std::optional of a struct with a table: null when
//                                           empty
//   v.comparison(key, comparisons, index)   the PolicyComparison of entry `index`, or null
//   v.array(key, items, body)               an array of objects, body(v', item, index) each
// Output is nlohmann::json, whose objects keep their keys sorted: the order of the entries does
// not change the document, but follows the document's for the reader's sake.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "dimctl/exporters/names.h"
#include "dimctl/seam/controller_state.h"

namespace dimctl::exporters {

// An empty std::optional: written as null (requested/applied/rdma_dim_enabled: "unknown"), or
// left out (a coalesce parameter the driver does not have).
enum class Absent { kNull, kLeftOut };

// `T` is `Model` or `const Model`: one table serves the writer and the reader.
template <typename T, typename Model>
concept FieldsOf = std::is_same_v<std::remove_const_t<T>, Model>;

template <typename V, FieldsOf<seam::DimView> D>
void fields(V& v, D& d) {
  v.field("active", d.active);
  v.field("model", d.model);
  v.field("profile_ix", d.profile_ix);
  v.field("applied_ix", d.applied_ix);
  v.field("tune_state", d.tune_state);
  v.derived("tune_state_name", [&d] { return tune_state_name(d.tune_state); });
  v.field("measure_state", d.measure_state);
  v.field("tired", d.tired);
  v.object("verdicts_total", [&d](auto& o) {
    o.field("worse", d.verdicts_total[0]);
    o.field("same", d.verdicts_total[1]);
    o.field("better", d.verdicts_total[2]);
  });
  v.field("profile_changes_total", d.profile_changes_total);
  v.field("ppms", d.ppms);
  v.field("bpms", d.bpms);
  v.field("epms", d.epms);
  v.field("cpms", d.cpms);
  v.field("cpe_ratio", d.cpe_ratio);
}

template <typename V, FieldsOf<seam::PolicyComparison> C>
void fields(V& v, C& c) {
  v.field("dim_ix", c.dim_ix);
  v.field("model_ix", c.model_ix);
  v.field("dim_changes_total", c.dim_changes_total);
  v.field("model_changes_total", c.model_changes_total);
}

// Only the parameters the driver has: an absent one is left out, never invented as 0.
template <typename V, FieldsOf<seam::Coalesce> C>
void fields(V& v, C& c) {
  v.optional("rx_usecs", c.rx_usecs, Absent::kLeftOut);
  v.optional("rx_max_frames", c.rx_max_frames, Absent::kLeftOut);
  v.optional("tx_usecs", c.tx_usecs, Absent::kLeftOut);
  v.optional("tx_max_frames", c.tx_max_frames, Absent::kLeftOut);
  v.optional("use_adaptive_rx", c.use_adaptive_rx, Absent::kLeftOut);
  v.optional("use_adaptive_tx", c.use_adaptive_tx, Absent::kLeftOut);
  v.optional("use_cqe_mode_rx", c.use_cqe_mode_rx, Absent::kLeftOut);
  v.optional("use_cqe_mode_tx", c.use_cqe_mode_tx, Absent::kLeftOut);
}

// Method napi: a software profile (what dimctl writes) and a NAPI's settings (napi-get).
template <typename V, FieldsOf<seam::SoftwareProfile> P>
void fields(V& v, P& p) {
  v.field("defer_hard_irqs", p.defer_hard_irqs);
  v.field("gro_flush_timeout_ns", p.gro_flush_timeout_ns);
}

template <typename V, FieldsOf<seam::NapiConfig> C>
void fields(V& v, C& c) {
  v.optional("defer_hard_irqs", c.defer_hard_irqs, Absent::kLeftOut);
  v.optional("gro_flush_timeout_ns", c.gro_flush_timeout_ns, Absent::kLeftOut);
  v.optional("irq_suspend_timeout_ns", c.irq_suspend_timeout_ns, Absent::kLeftOut);
}

// The cost model's trade-off (seam::ModelTrade).
template <typename V, FieldsOf<seam::ModelTrade> T>
void fields(V& v, T& t) {
  v.enumeration("objective", t.objective, &objective_name, &parse_objective);
  v.field("latency_budget_ns", t.latency_budget_ns);
  v.field("chosen_ix", t.chosen_ix);
  v.field("none_ix", t.none_ix);
  v.field("chosen_added_delay_ns", t.chosen_added_delay_ns);
  v.field("chosen_cpu_per_completion_ns", t.chosen_cpu_per_completion_ns);
  v.field("none_added_delay_ns", t.none_added_delay_ns);
  v.field("none_cpu_per_completion_ns", t.none_cpu_per_completion_ns);
}

// A queue's identity and counters (counters_json.h). The counters hold no name, only an index
// into their snapshot's name table: `device` is the queue's ifname, held beside them.
template <typename V, FieldsOf<seam::QueueCounters> C, FieldsOf<std::string> S>
void fields(V& v, C& c, S& device) {
  v.field("device", device);
  v.field("queue", c.queue);
  v.derived("queue_label", [&c] { return queue_label(c); });
  v.field("ifindex", c.key.ifindex);
  v.field("napi_id", c.key.napi_id);
  v.field("irq", c.irq);
  v.nullable("cpu", c.cpu, c.cpu != seam::QueueCounters::kNoCpu);
  v.field("polls", c.polls);
  v.derived("events", [&c] { return c.events(); });
  v.field("packets", c.packets);
  v.field("budget_exhausted", c.budget_exhausted);
  v.field("empty_polls", c.empty_polls);
  v.field("has_bytes", c.has_bytes);
  v.nullable("bytes", c.bytes, c.has_bytes);  // unknown is not 0
}

// A CQ's identity and counters (counters_json.h), under the Prometheus label names.
template <typename V, FieldsOf<seam::CqCounters> C>
void fields(V& v, C& c) {
  v.field("device", c.ibdev);
  v.field("dev_index", c.key.dev_index);
  v.field("cq", c.key.cq_id);
  v.enumeration("poll_ctx", c.poll_ctx, &poll_context_name, &parse_poll_context);
  v.field("nr_cqe", c.nr_cqe);
  v.field("comp_vector", c.comp_vector);
  // The CPU of the CQ's latest poll: the core its completions cost.
  v.nullable("cpu", c.cpu, c.cpu != seam::QueueCounters::kNoCpu);
  v.field("schedules", c.schedules);
  v.field("reschedules", c.reschedules);
  v.field("events", c.events);
  v.field("polls", c.polls);
  v.field("completions", c.completions);
  v.field("poll_errors", c.poll_errors);
  v.field("budget_exhausted", c.budget_exhausted);
  v.field("kernel_modifies", c.kernel_modifies);
  v.field("kernel_comps", c.kernel_comps);
  v.field("kernel_usec", c.kernel_usec);
}

// Without `compare`, which ControllerState holds beside the views (its table adds it).
template <typename V, FieldsOf<seam::QueueView> Q>
void fields(V& v, Q& q) {
  fields(v, q.counters, q.device);
  v.field("direction", q.direction);
  v.field("packets_per_second", q.packets_per_second);
  v.field("events_per_second", q.events_per_second);
  v.field("polls_per_second", q.polls_per_second);
  v.field("model_sharers", q.model_sharers);
  v.object("dim", [&q](auto& o) { fields(o, q.dim); });
  v.field("wanted_usecs", q.wanted_usecs);
  v.field("wanted_frames", q.wanted_frames);
  v.optional_object("wanted_software", q.wanted_software);
  v.optional_object("napi_config", q.napi_config);
  v.optional_object("model_trade", q.model_trade);
}

template <typename V, FieldsOf<seam::CqView> Q>
void fields(V& v, Q& q) {
  fields(v, q.counters);
  v.field("completions_per_second", q.completions_per_second);
  v.field("events_per_second", q.events_per_second);
  v.field("model_sharers", q.model_sharers);
  v.object("dim", [&q](auto& o) { fields(o, q.dim); });
  v.field("wanted_usec", q.wanted_usec);
  v.field("wanted_comps", q.wanted_comps);
  v.optional_object("model_trade", q.model_trade);
}

template <typename V, FieldsOf<seam::DeviceView> D>
void fields(V& v, D& d) {
  v.enumeration("kind", d.kind, &device_kind_name, &parse_device_kind);
  v.field("name", d.name);
  v.field("driver", d.driver);
  v.enumeration("mode", d.mode, &mode_name, &parse_mode);
  v.enumeration("algorithm", d.algorithm, &algorithm_name, &parse_algorithm);
  v.field("compare", d.compare);
  v.field("rule", d.rule);
  v.field("allowlisted", d.allowlisted);
  v.enumeration("method", d.method, &method_name, &parse_method);
  v.optional("coalescing", d.coalescing, Absent::kNull);
  v.optional_object("requested", d.requested);
  v.optional_object("applied", d.applied);
  v.optional("rdma_dim_enabled", d.rdma_dim_enabled, Absent::kNull);
  v.field("applies_ok_total", d.applies_ok_total);
  v.field("applies_failed_total", d.applies_failed_total);
  v.field("applies_rate_limited_total", d.applies_rate_limited_total);
  v.field("drift_total", d.drift_total);
  v.field("drifted", d.drifted);
  v.field("last_error", d.last_error);
}

template <typename V, FieldsOf<seam::ProgramView> P>
void fields(V& v, P& p) {
  v.field("name", p.name);
  v.field("attached", p.attached);
  v.field("reason", p.reason);
  v.field("run_time_ns", p.run_time_ns);
  v.field("run_count", p.run_count);
  v.field("recursion_misses", p.recursion_misses);
}

template <typename V, FieldsOf<seam::BpfDropView> B>
void fields(V& v, B& b) {
  v.field("reason", b.reason);
  v.field("total", b.total);
}

template <typename V, FieldsOf<seam::CoreView> C>
void fields(V& v, C& c) {
  v.field("cpu", c.cpu);
  v.enumeration("confidence", c.confidence, &cost_confidence_name, &parse_cost_confidence);
  v.field("used_interrupt_ns", c.used_interrupt_ns);
  v.field("used_completion_ns", c.used_completion_ns);
  v.object("estimate", [&c](auto& o) {
    o.field("interrupt_ns", c.estimate.interrupt_ns);
    o.field("completion_ns", c.estimate.completion_ns);
    o.field("handler_ns", c.estimate.handler_ns);
    o.field("wakeup_ns", c.estimate.wakeup_ns);
    o.field("fit_completion_ns", c.estimate.fit_completion_ns);
    o.field("combined_ns", c.estimate.combined_ns);
    o.field("batch", c.estimate.batch);
    o.field("spread", c.estimate.spread);
    o.field("relative_error", c.estimate.relative_error);
    o.field("residual_rms", c.estimate.residual_rms);
    o.field("periods", c.estimate.periods);
    o.field("kept", c.estimate.kept);
    o.field("background", c.estimate.background);
  });
  v.field("busy", c.busy);
  v.field("interrupts_per_second", c.interrupts_per_s);
  v.field("completions_per_second", c.completions_per_s);
  v.field("exhausted_share", c.exhausted_share);
  v.field("saturated", c.saturated);
  v.field("saturation_profile", c.saturation_profile);
  v.field("saturation_episodes_total", c.saturation_episodes);
  v.field("saturation_budget_waits_total", c.saturation_budget_waits);
  v.field("qd1_probes_qd1_total", c.qd1_probes_qd1);
  v.field("qd1_probes_batching_total", c.qd1_probes_batching);
  v.field("saturation_descents_kept_total", c.descents_kept);
  v.field("saturation_descents_back_total", c.descents_back);
  v.field("saturation_rejudged_total", c.rejudged);
  v.field("model_queues", c.model_queues);
}

template <typename V, FieldsOf<seam::ControllerState> S>
void fields(V& v, S& s) {
  v.field("time_ns", s.time_ns);
  v.field("loops_total", s.loops_total);
  v.field("last_loop_seconds", s.last_loop_seconds);
  v.field("sample_errors_total", s.sample_errors_total);
  v.enumeration("default_mode", s.default_mode, &mode_name, &parse_mode);
  v.field("config_path", s.config_path);
  v.field("ready", s.ready);
  v.array("queues", s.queues, [&s](auto& o, auto& q, std::size_t i) {
    fields(o, q);
    o.comparison("compare", s.queue_comparisons, i);
  });
  v.array("cqs", s.cqs, [&s](auto& o, auto& q, std::size_t i) {
    fields(o, q);
    o.comparison("compare", s.cq_comparisons, i);
  });
  v.array("devices", s.devices, [](auto& o, auto& d, std::size_t) { fields(o, d); });
  v.array("programs", s.programs, [](auto& o, auto& p, std::size_t) { fields(o, p); });
  v.array("bpf_drops", s.bpf_drops, [](auto& o, auto& b, std::size_t) { fields(o, b); });
  v.array("cores", s.cores, [](auto& o, auto& c, std::size_t) { fields(o, c); });
  v.field("model_cost_tables_built_total", s.model_cost_tables_built_total);
}

}  // namespace dimctl::exporters
