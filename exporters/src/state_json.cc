#include "dimctl/exporters/state_json.h"

#include <string>

#include "dimctl/exporters/counters_json.h"
#include "dimctl/exporters/names.h"

namespace dimctl::exporters {
namespace {

using nlohmann::json;

json dim_to_json(const model::DimView& d) {
  return json{
      {"active", d.active},
      {"model", d.model},
      {"profile_ix", d.profile_ix},
      {"applied_ix", d.applied_ix},
      {"tune_state", d.tune_state},
      {"tune_state_name", tune_state_name(d.tune_state)},
      {"measure_state", d.measure_state},
      {"tired", d.tired},
      {"verdicts_total",
       {{"worse", d.verdicts_total[0]},
        {"same", d.verdicts_total[1]},
        {"better", d.verdicts_total[2]}}},
      {"profile_changes_total", d.profile_changes_total},
      {"ppms", d.ppms},
      {"bpms", d.bpms},
      {"epms", d.epms},
      {"cpms", d.cpms},
      {"cpe_ratio", d.cpe_ratio},
  };
}

json compare_to_json(const model::PolicyComparison* c) {
  if (c == nullptr) return json(nullptr);
  return json{
      {"dim_ix", c->dim_ix},
      {"model_ix", c->model_ix},
      {"dim_changes_total", c->dim_changes_total},
      {"model_changes_total", c->model_changes_total},
  };
}

json optional_coalesce(const std::optional<model::Coalesce>& c) {
  return c ? coalesce_to_json(*c) : json(nullptr);
}

// A parse error carries the JSON path so a bad document is diagnosable from the message alone.
struct ParseError {
  std::string where;
  std::string what;
};

// Reads `key` into `out` when present; leaves the default otherwise. Throws ParseError on a type
// mismatch (nlohmann's own exceptions do not say which field).
template <typename T>
void get(const json& j, const char* key, T& out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception& e) {
    throw ParseError{where + "." + key, e.what()};
  }
}

template <typename E>
void get_enum(const json& j, const char* key, E& out, std::optional<E> (*parse)(std::string_view),
              const std::string& where) {
  std::string s;
  get(j, key, s, where);
  if (s.empty()) return;
  auto v = parse(s);
  if (!v) throw ParseError{where + "." + key, "unknown value \"" + s + "\""};
  out = *v;
}

template <typename T>
void get_opt(const json& j, const char* key, std::optional<T>& out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  T v{};
  get(j, key, v, where);
  out = v;
}

const json& object_at(const json& j, const char* key, const std::string& where) {
  static const json kEmpty = json::object();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return kEmpty;
  if (!it->is_object()) throw ParseError{where + "." + key, "not an object"};
  return *it;
}

const json& array_at(const json& j, const char* key, const std::string& where) {
  static const json kEmpty = json::array();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return kEmpty;
  if (!it->is_array()) throw ParseError{where + "." + key, "not an array"};
  return *it;
}

model::DimView dim_from_json(const json& j, const std::string& w) {
  model::DimView d;
  get(j, "active", d.active, w);
  get(j, "model", d.model, w);
  get(j, "profile_ix", d.profile_ix, w);
  get(j, "applied_ix", d.applied_ix, w);
  get(j, "tune_state", d.tune_state, w);
  get(j, "measure_state", d.measure_state, w);
  get(j, "tired", d.tired, w);
  const json& v = object_at(j, "verdicts_total", w);
  get(v, "worse", d.verdicts_total[0], w + ".verdicts_total");
  get(v, "same", d.verdicts_total[1], w + ".verdicts_total");
  get(v, "better", d.verdicts_total[2], w + ".verdicts_total");
  get(j, "profile_changes_total", d.profile_changes_total, w);
  get(j, "ppms", d.ppms, w);
  get(j, "bpms", d.bpms, w);
  get(j, "epms", d.epms, w);
  get(j, "cpms", d.cpms, w);
  get(j, "cpe_ratio", d.cpe_ratio, w);
  return d;
}

// Absent or null (older daemons, rules without compare): no comparison. Entry `index` of its
// vector, appended to `out`.
void compare_from_json(const json& j, const std::string& w, size_t index,
                       std::vector<model::Comparison>& out) {
  auto it = j.find("compare");
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object()) throw ParseError{w + ".compare", "not an object"};
  model::PolicyComparison c;
  const std::string cw = w + ".compare";
  get(*it, "dim_ix", c.dim_ix, cw);
  get(*it, "model_ix", c.model_ix, cw);
  get(*it, "dim_changes_total", c.dim_changes_total, cw);
  get(*it, "model_changes_total", c.model_changes_total, cw);
  out.push_back({static_cast<uint32_t>(index), c});
}

model::Coalesce coalesce_from_json(const json& j, const std::string& w) {
  if (!j.is_object()) throw ParseError{w, "not an object"};
  model::Coalesce c;
  get_opt(j, "rx_usecs", c.rx_usecs, w);
  get_opt(j, "rx_max_frames", c.rx_max_frames, w);
  get_opt(j, "tx_usecs", c.tx_usecs, w);
  get_opt(j, "tx_max_frames", c.tx_max_frames, w);
  get_opt(j, "use_adaptive_rx", c.use_adaptive_rx, w);
  get_opt(j, "use_adaptive_tx", c.use_adaptive_tx, w);
  get_opt(j, "use_cqe_mode_rx", c.use_cqe_mode_rx, w);
  get_opt(j, "use_cqe_mode_tx", c.use_cqe_mode_tx, w);
  return c;
}

model::ControllerState parse_state(const json& j) {
  if (!j.is_object()) throw ParseError{"$", "state is not a JSON object"};
  model::ControllerState s;
  const std::string w = "$";
  get(j, "time_ns", s.time_ns, w);
  get(j, "loops_total", s.loops_total, w);
  get(j, "last_loop_seconds", s.last_loop_seconds, w);
  get(j, "sample_errors_total", s.sample_errors_total, w);
  get_enum(j, "default_mode", s.default_mode, &parse_mode, w);
  get(j, "config_path", s.config_path, w);
  get(j, "ready", s.ready, w);

  const json& queues = array_at(j, "queues", w);
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const json& q = queues[i];
    const std::string qw = w + ".queues[" + std::to_string(i) + "]";
    model::QueueView v;
    auto& c = v.counters;
    get(q, "ifindex", c.key.ifindex, qw);
    get(q, "napi_id", c.key.napi_id, qw);
    get(q, "device", v.device, qw);
    get(q, "queue", c.queue, qw);
    get(q, "irq", c.irq, qw);
    get(q, "cpu", c.cpu, qw);
    get(q, "polls", c.polls, qw);
    get(q, "packets", c.packets, qw);
    get(q, "budget_exhausted", c.budget_exhausted, qw);
    get(q, "empty_polls", c.empty_polls, qw);
    get(q, "has_bytes", c.has_bytes, qw);
    get(q, "bytes", c.bytes, qw);
    get(q, "direction", v.direction, qw);
    get(q, "packets_per_second", v.packets_per_second, qw);
    get(q, "events_per_second", v.events_per_second, qw);
    get(q, "polls_per_second", v.polls_per_second, qw);
    get(q, "model_sharers", v.model_sharers, qw);
    v.dim = dim_from_json(object_at(q, "dim", qw), qw + ".dim");
    get(q, "wanted_usecs", v.wanted_usecs, qw);
    get(q, "wanted_frames", v.wanted_frames, qw);
    compare_from_json(q, qw, i, s.queue_comparisons);
    s.queues.push_back(std::move(v));
  }

  const json& cqs = array_at(j, "cqs", w);
  for (std::size_t i = 0; i < cqs.size(); ++i) {
    const json& q = cqs[i];
    const std::string qw = w + ".cqs[" + std::to_string(i) + "]";
    model::CqView v;
    auto& c = v.counters;
    get(q, "dev_index", c.key.dev_index, qw);
    get(q, "cq", c.key.cq_id, qw);
    get(q, "device", c.ibdev, qw);
    get_enum(q, "poll_ctx", c.poll_ctx, &parse_poll_context, qw);
    get(q, "nr_cqe", c.nr_cqe, qw);
    get(q, "comp_vector", c.comp_vector, qw);
    get(q, "schedules", c.schedules, qw);
    get(q, "reschedules", c.reschedules, qw);
    get(q, "events", c.events, qw);
    get(q, "polls", c.polls, qw);
    get(q, "completions", c.completions, qw);
    get(q, "poll_errors", c.poll_errors, qw);
    get(q, "kernel_modifies", c.kernel_modifies, qw);
    get(q, "kernel_comps", c.kernel_comps, qw);
    get(q, "kernel_usec", c.kernel_usec, qw);
    get(q, "completions_per_second", v.completions_per_second, qw);
    get(q, "events_per_second", v.events_per_second, qw);
    get(q, "model_sharers", v.model_sharers, qw);
    v.dim = dim_from_json(object_at(q, "dim", qw), qw + ".dim");
    get(q, "wanted_usec", v.wanted_usec, qw);
    get(q, "wanted_comps", v.wanted_comps, qw);
    compare_from_json(q, qw, i, s.cq_comparisons);
    s.cqs.push_back(std::move(v));
  }

  const json& devices = array_at(j, "devices", w);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const json& d = devices[i];
    const std::string dw = w + ".devices[" + std::to_string(i) + "]";
    model::DeviceView v;
    get_enum(d, "kind", v.kind, &parse_device_kind, dw);
    get(d, "name", v.name, dw);
    get(d, "driver", v.driver, dw);
    get_enum(d, "mode", v.mode, &parse_mode, dw);
    get_enum(d, "algorithm", v.algorithm, &parse_algorithm, dw);
    get(d, "compare", v.compare, dw);
    get(d, "rule", v.rule, dw);
    get(d, "allowlisted", v.allowlisted, dw);
    if (auto it = d.find("requested"); it != d.end() && !it->is_null()) {
      v.requested = coalesce_from_json(*it, dw + ".requested");
    }
    if (auto it = d.find("applied"); it != d.end() && !it->is_null()) {
      v.applied = coalesce_from_json(*it, dw + ".applied");
    }
    get_opt(d, "rdma_dim_enabled", v.rdma_dim_enabled, dw);
    get(d, "applies_ok_total", v.applies_ok_total, dw);
    get(d, "applies_failed_total", v.applies_failed_total, dw);
    get(d, "applies_rate_limited_total", v.applies_rate_limited_total, dw);
    get(d, "drift_total", v.drift_total, dw);
    get(d, "drifted", v.drifted, dw);
    get(d, "last_error", v.last_error, dw);
    s.devices.push_back(std::move(v));
  }

  const json& programs = array_at(j, "programs", w);
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const json& p = programs[i];
    const std::string pw = w + ".programs[" + std::to_string(i) + "]";
    model::ProgramView v;
    get(p, "name", v.name, pw);
    get(p, "attached", v.attached, pw);
    get(p, "reason", v.reason, pw);
    get(p, "run_time_ns", v.run_time_ns, pw);
    get(p, "run_count", v.run_count, pw);
    get(p, "recursion_misses", v.recursion_misses, pw);
    s.programs.push_back(std::move(v));
  }
  const json& drops = array_at(j, "bpf_drops", w);  // absent from older daemons: none
  for (std::size_t i = 0; i < drops.size(); ++i) {
    const std::string dw = w + ".bpf_drops[" + std::to_string(i) + "]";
    model::BpfDropView v;
    get(drops[i], "reason", v.reason, dw);
    get(drops[i], "total", v.total, dw);
    s.bpf_drops.push_back(std::move(v));
  }
  return s;
}

}  // namespace

json coalesce_to_json(const model::Coalesce& c) {
  json j = json::object();
  auto put = [&j](const char* k, const auto& v) {
    if (v) j[k] = *v;
  };
  put("rx_usecs", c.rx_usecs);
  put("rx_max_frames", c.rx_max_frames);
  put("tx_usecs", c.tx_usecs);
  put("tx_max_frames", c.tx_max_frames);
  put("use_adaptive_rx", c.use_adaptive_rx);
  put("use_adaptive_tx", c.use_adaptive_tx);
  put("use_cqe_mode_rx", c.use_cqe_mode_rx);
  put("use_cqe_mode_tx", c.use_cqe_mode_tx);
  return j;
}

json state_to_json(const model::ControllerState& s) {
  json queues = json::array();
  for (size_t i = 0; i < s.queues.size(); ++i) {
    const model::QueueView& q = s.queues[i];
    json o = queue_counters_to_json(q.counters, q.device);
    o["direction"] = q.direction;
    o["packets_per_second"] = q.packets_per_second;
    o["events_per_second"] = q.events_per_second;
    o["polls_per_second"] = q.polls_per_second;
    o["model_sharers"] = q.model_sharers;
    o["dim"] = dim_to_json(q.dim);
    o["wanted_usecs"] = q.wanted_usecs;
    o["wanted_frames"] = q.wanted_frames;
    o["compare"] = compare_to_json(model::comparison_at(s.queue_comparisons, i));
    queues.push_back(std::move(o));
  }
  json cqs = json::array();
  for (size_t i = 0; i < s.cqs.size(); ++i) {
    const model::CqView& q = s.cqs[i];
    json o = cq_counters_to_json(q.counters);
    o["completions_per_second"] = q.completions_per_second;
    o["events_per_second"] = q.events_per_second;
    o["model_sharers"] = q.model_sharers;
    o["dim"] = dim_to_json(q.dim);
    o["wanted_usec"] = q.wanted_usec;
    o["wanted_comps"] = q.wanted_comps;
    o["compare"] = compare_to_json(model::comparison_at(s.cq_comparisons, i));
    cqs.push_back(std::move(o));
  }
  json devices = json::array();
  for (const auto& d : s.devices) {
    devices.push_back(json{
        {"kind", device_kind_name(d.kind)},
        {"name", d.name},
        {"driver", d.driver},
        {"mode", mode_name(d.mode)},
        {"algorithm", algorithm_name(d.algorithm)},
        {"compare", d.compare},
        {"rule", d.rule},
        {"allowlisted", d.allowlisted},
        {"requested", optional_coalesce(d.requested)},
        {"applied", optional_coalesce(d.applied)},
        {"rdma_dim_enabled", d.rdma_dim_enabled ? json(*d.rdma_dim_enabled) : json(nullptr)},
        {"applies_ok_total", d.applies_ok_total},
        {"applies_failed_total", d.applies_failed_total},
        {"applies_rate_limited_total", d.applies_rate_limited_total},
        {"drift_total", d.drift_total},
        {"drifted", d.drifted},
        {"last_error", d.last_error},
    });
  }
  json programs = json::array();
  for (const auto& p : s.programs) {
    programs.push_back(json{
        {"name", p.name},
        {"attached", p.attached},
        {"reason", p.reason},
        {"run_time_ns", p.run_time_ns},
        {"run_count", p.run_count},
        {"recursion_misses", p.recursion_misses},
    });
  }
  json drops = json::array();
  for (const auto& dr : s.bpf_drops)
    drops.push_back(json{{"reason", dr.reason}, {"total", dr.total}});
  return json{
      {"time_ns", s.time_ns},
      {"loops_total", s.loops_total},
      {"last_loop_seconds", s.last_loop_seconds},
      {"sample_errors_total", s.sample_errors_total},
      {"default_mode", mode_name(s.default_mode)},
      {"config_path", s.config_path},
      {"ready", s.ready},
      {"queues", std::move(queues)},
      {"cqs", std::move(cqs)},
      {"devices", std::move(devices)},
      {"programs", std::move(programs)},
      {"bpf_drops", std::move(drops)},
  };
}

Result<model::ControllerState> state_from_json(const json& j) {
  try {
    return parse_state(j);
  } catch (const ParseError& e) {
    return DIMCTL_FAIL(0, "state JSON: {}: {}", e.where, e.what);
  }
}

Result<model::ControllerState> state_from_json_text(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DIMCTL_FAIL(0, "state JSON: not valid JSON");
  return state_from_json(j);
}

}  // namespace dimctl::exporters
