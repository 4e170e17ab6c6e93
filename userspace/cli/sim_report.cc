// What `dimctl sim` writes (cmd_sim.cc): everything as one JSON document, or text tables per
// phase with the policies side by side, and the timelines.
#include "sim_report.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dimctl/common/duration.h"
#include "dimctl/seam/names.h"
#include "dimctl/sim/workload_yaml.h"

namespace dimctl::cli::sim_report {

using namespace dimctl::sim;

// A duration for people: exact when short ("1.5ms", "20us"), else four significant digits in
// the largest unit (a trace's 4001741174 ns is "4.002s", not "4001741.174us"). JSON and
// workload files keep the exact nanoseconds.
std::string human_duration(int64_t ns) {
  std::string exact = format_duration(ns);
  if (exact.size() <= 8) return exact;
  const double v = static_cast<double>(ns);
  if (v >= 1e9) return fmt::format("{:.4g}s", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.4g}ms", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.4g}us", v / 1e3);
  return exact;
}

namespace {

// Keys in the order written: a document a person can read top-down.
using json = nlohmann::ordered_json;

// The quantiles every table and JSON document reports (research 6.3).
struct Quantile {
  const char* name;
  double q;
};
constexpr Quantile kQuantiles[] = {
    {"p50", 0.5}, {"p99", 0.99}, {"p99.9", 0.999}, {"p99.99", 0.9999}, {"p99.999", 0.99999}};
// CDF points in the JSON: tail fractions 1 - q log-spaced from 1 down to 1e-6.
constexpr int kCdfPoints = 200;
constexpr double kCdfTailDecades = 6;
// ---- JSON ----

json dist_json(const Dist& d) {
  return {{"dist", kDistKindNames.name(d.kind)},
          {"mean_ns", d.mean_ns},
          {"cv", d.cv},
          {"text", format_dist(d)}};
}

json cost_json(const CostModel& c) {
  return {{"name", c.name},
          {"irq_ns", c.irq_ns},
          {"completion_ns", c.completion_ns},
          {"poll_ns", c.poll_ns},
          {"app_ns", c.app_ns}};
}

std::string cost_models(const Workload& w) {
  std::vector<std::string> names;
  for (const StageSpec& s : w.stages)
    if (std::find(names.begin(), names.end(), s.cpu.name) == names.end())
      names.push_back(s.cpu.name);
  return fmt::format("{}", fmt::join(names, "+"));
}

json workload_json(const Workload& w, const std::string& source) {
  json stages = json::array();
  for (const StageSpec& s : w.stages) {
    stages.push_back({{"name", s.name},
                      {"service", dist_json(s.service)},
                      {"servers", s.servers},
                      {"shared_servers", s.shared_servers},
                      {"timer", timer_mode_name(s.timer)},
                      {"poll_budget", s.poll_budget},
                      {"cost", cost_json(s.cpu)},
                      {"cores", s.cores},
                      {"moderated", s.moderated},
                      {"fixed", {{"count", s.fixed.count}, {"timer_ns", s.fixed.timer_ns}}}});
    if (s.software) {
      stages.back()["software"] = {{"defer_hard_irqs", s.software->defer_hard_irqs},
                                   {"timer_latency_ns", s.software->timer_latency_ns},
                                   {"timer_cost_ns", s.software->timer_cost_ns}};
    }
  }
  json sources = json::array();
  for (const SourceSpec& s : w.sources) {
    json j = {{"kind", source_kind_name(s.kind)}, {"flow", s.flow}, {"bytes", s.bytes}};
    switch (s.kind) {
      case SourceSpec::Kind::kClosed:
        j["depth"] = s.depth;
        j["think"] = dist_json(s.think);
        break;
      case SourceSpec::Kind::kPoisson:
        j["rate"] = s.rate;
        if (s.periodic) j["periodic"] = true;
        break;
      case SourceSpec::Kind::kOnOff:
        j["rate"] = s.rate;
        j["on_ns"] = s.on_ns;
        j["off_ns"] = s.off_ns;
        j["periodic"] = s.periodic;
        break;
      case SourceSpec::Kind::kTrace:
        j["trace"] = s.trace_path;
        j["trace_device"] = s.trace_device;
        break;
    }
    sources.push_back(std::move(j));
  }
  json phases = json::array();
  for (const Phase& p : w.phases) {
    json j = {{"name", p.name}, {"duration_ns", p.duration_ns}, {"load", p.load}, {"ramp", p.ramp}};
    if (p.depth) j["depth"] = *p.depth;
    phases.push_back(std::move(j));
  }
  return {{"name", w.name},
          {"description", w.description},
          {"source", source},
          {"seed", w.seed},
          {"queues", w.queues},
          {"table", table_name(w.table)},
          {"apply_delay_ns", w.apply_delay_ns},
          {"warmup_ns", w.warmup_ns},
          {"window_ns", w.window_ns},
          {"duration_ns", w.duration_ns()},
          {"cost_model", cost_models(w)},
          {"stages", std::move(stages)},
          {"sources", std::move(sources)},
          {"phases", std::move(phases)}};
}

json latency_json(const LatencyHistogram& h) {
  json quantiles = json::object();
  for (const Quantile& q : kQuantiles)
    quantiles[q.name] = {{"ns", h.quantile(q.q)}, {"significant", h.significant(q.q)}};
  // The CDF to the deepest quantile with at least one sample beyond it, then the maximum.
  json cdf = json::array();
  const auto n = static_cast<double>(h.count());
  for (int i = 0; i < kCdfPoints && n > 0; ++i) {
    const double tail = std::pow(10.0, -kCdfTailDecades * i / (kCdfPoints - 1));
    if (n * tail < 1) break;
    const double q = 1 - tail;
    cdf.push_back({q, h.quantile(q)});
  }
  if (n > 0) cdf.push_back({1.0, static_cast<double>(h.max())});
  return {{"count", h.count()}, {"mean_ns", h.mean()},    {"min_ns", h.min()},
          {"max_ns", h.max()},  {"quantiles", quantiles}, {"cdf", std::move(cdf)}};
}

json phase_json(const PhaseMetrics& m) {
  json flows = json::array();
  for (const FlowMetrics& f : m.flows)
    flows.push_back({{"flow", f.flow}, {"latency", latency_json(f.latency)}});
  json j = {{"phase", m.phase},
            {"start_ns", m.start_ns},
            {"end_ns", m.end_ns},
            {"seconds", m.seconds()},
            {"completions", m.completions},
            {"throughput", m.throughput()},
            {"interrupts", m.interrupts},
            {"interrupts_per_s", m.interrupts_per_s()},
            {"completions_per_interrupt", m.completions_per_interrupt()},
            {"polls", m.polls},
            {"moderation_changes", m.moderation_changes},
            {"changes_per_s", m.changes_per_s()},
            {"cpu_busy_ns", m.cpu_busy_ns},
            {"cores", m.cores},
            {"cpu_per_completion_ns", m.cpu_per_completion_ns()},
            {"cpu_utilisation", m.cpu_utilisation()},
            // null: not computed (no oracle among the policies); -1: never converged.
            {"convergence_ns", m.convergence_ns == -2 ? json(nullptr) : json(m.convergence_ns)},
            {"latency", latency_json(m.latency)},
            {"flows", std::move(flows)}};
  if (!m.oracle_choice.empty()) j["oracle_choice"] = m.oracle_choice;
  return j;
}

// Column-wise: a long run has many windows.
json windows_json(const std::vector<Window>& ws) {
  json t = json::array(), c = json::array(), mean = json::array(), mx = json::array(),
       cpu = json::array(), count = json::array(), timer = json::array(), prof = json::array();
  for (const Window& w : ws) {
    t.push_back(w.t_ns);
    c.push_back(w.completions);
    mean.push_back(std::round(w.mean_latency_ns()));
    mx.push_back(w.latency_max_ns);
    cpu.push_back(std::round(w.cpu_per_completion_ns()));
    count.push_back(w.count);
    timer.push_back(w.timer_ns);
    prof.push_back(w.profile_ix);
  }
  return {{"t_ns", t},
          {"completions", c},
          {"mean_latency_ns", mean},
          {"max_latency_ns", mx},
          {"cpu_per_completion_ns", cpu},
          {"count", count},
          {"timer_ns", timer},
          {"profile", prof}};
}

// What the daemon's Controller ran with under a dimctl-* policy, so that the report reads these
// instead of repeating C++ defaults: its period and, for the model policy, its change budget and
// the costs it was told. The bridge (sim/src/controller_bridge.cc) leaves DevicePolicy::model at
// its defaults except dimctl-model-host's costs, which are the moderated stage's (the workload's
// `cost`, written above), so only the defaults' costs are written here.
json controller_json(const PolicySpec& s) {
  json j = {{"period_ns", s.period_ns}};
  if (seam::is_model(s.algorithm)) {
    const seam::ModelSettings m;
    j["max_changes_per_s"] = m.max_changes_per_s;
    // Told: the workload's cost model; measured: the estimate once it is more than the defaults
    // (the run's model_cores), these defaults before.
    j["costs"] = s.host_costs ? "told" : "measured";
    j["objective"] = s.objective == dim::Objective::kEfficiency ? "efficiency" : "latency";
    if (s.objective == dim::Objective::kEfficiency) j["latency_budget_ns"] = s.latency_budget_ns;
    if (!s.host_costs) {
      j["completion_cost_ns"] = m.completion_cost_ns;
      j["interrupt_cost_ns"] = m.interrupt_cost_ns;
    }
  }
  return j;
}

json run_json(const RunResult& r, const PolicySpec& s, bool timeline) {
  json phases = json::array();
  for (const PhaseMetrics& m : r.phases) phases.push_back(phase_json(m));
  json j = {{"policy", r.policy},
            {"seed", r.seed},
            {"cost_model", r.cost_model},
            {"wall_seconds", r.wall_seconds},
            {"simulated_completions", r.simulated_completions},
            {"simulated_events", r.simulated_events},
            {"total", phase_json(r.total)},
            {"phases", std::move(phases)}};
  if (s.kind == PolicySpec::Kind::kController) j["controller"] = controller_json(s);
  if (!r.model_cores.empty()) {
    // What each core's model judged with at the end, and its saturation rule: the report explains
    // a decision with these, not with the defaults.
    json cores = json::array();
    for (const ModelCore& c : r.model_cores) {
      cores.push_back(
          {{"cpu", c.cpu},
           {"confidence", c.confidence},  // 0 defaults, 1 direct, 2 combined, 3 measured
           {"completion_cost_ns", std::round(c.completion_ns)},
           {"interrupt_cost_ns", std::round(c.interrupt_ns)},
           {"background", std::round(c.background * 1000) / 1000},
           {"saturated", c.saturated},
           {"saturation_profile", c.saturation_profile},
           {"saturation_episodes", c.saturation_episodes},
           {"saturation_descents_kept", c.saturation_descents_kept},
           {"saturation_descents_back", c.saturation_descents_back},
           {"saturation_rejudged", c.saturation_rejudged}});
    }
    j["model_cores"] = std::move(cores);
  }
  if (timeline) j["windows"] = windows_json(r.windows);
  return j;
}

// ---- text ----

std::string fmt_us(double ns) {
  const double us = ns / 1e3;
  if (us < 10) return fmt::format("{:.2f}", us);
  if (us < 1000) return fmt::format("{:.1f}", us);
  return fmt::format("{:.0f}", us);
}

std::string fmt_count(double v) {
  if (v >= 1e9) return fmt::format("{:.2f}G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
  if (v >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2f}", v);
}

std::string fmt_convergence(int64_t ns) {
  if (ns == -2) return "-";
  if (ns == -1) return "never";
  return fmt::format("{:.0f}ms", static_cast<double>(ns) / 1e6);
}

struct Row {
  std::string label;
  std::vector<std::string> cells;
};

void print_table(std::ostream& out, const std::vector<std::string>& heads,
                 const std::vector<Row>& rows) {
  size_t first = 6;
  for (const Row& r : rows) first = std::max(first, r.label.size());
  std::vector<size_t> width;
  for (size_t c = 0; c < heads.size(); ++c) {
    size_t wd = heads[c].size();
    for (const Row& r : rows) wd = std::max(wd, r.cells[c].size());
    width.push_back(wd);
  }
  out << fmt::format("  {:<{}}", "", first);
  for (size_t c = 0; c < heads.size(); ++c) out << fmt::format("  {:>{}}", heads[c], width[c]);
  out << "\n";
  for (const Row& r : rows) {
    out << fmt::format("  {:<{}}", r.label, first);
    for (size_t c = 0; c < r.cells.size(); ++c)
      out << fmt::format("  {:>{}}", r.cells[c], width[c]);
    out << "\n";
  }
}

std::vector<Row> latency_rows(const std::string& prefix,
                              const std::vector<const LatencyHistogram*>& hs, bool& marked) {
  std::vector<Row> rows;
  for (const Quantile& q : kQuantiles) {
    Row r{fmt::format("{}{} (us)", prefix, q.name), {}};
    for (const LatencyHistogram* h : hs) {
      const bool sig = h->significant(q.q);
      marked = marked || (!sig && h->count() > 0);
      r.cells.push_back(h->count() == 0 ? "-" : fmt_us(h->quantile(q.q)) + (sig ? "" : "*"));
    }
    rows.push_back(std::move(r));
  }
  Row mx{prefix + "max (us)", {}};
  for (const LatencyHistogram* h : hs)
    mx.cells.push_back(h->count() == 0 ? "-" : fmt_us(static_cast<double>(h->max())));
  rows.push_back(std::move(mx));
  return rows;
}

void print_phase(std::ostream& out, const std::vector<RunResult>& runs,
                 const std::vector<std::string>& heads, size_t ph, bool& marked) {
  auto m = [&](const RunResult& r) -> const PhaseMetrics& {
    return ph == SIZE_MAX ? r.total : r.phases[ph];
  };
  std::vector<Row> rows;
  auto add = [&](std::string label, auto cell) {
    Row r{std::move(label), {}};
    for (const RunResult& run : runs) r.cells.push_back(cell(m(run)));
    rows.push_back(std::move(r));
  };
  add("completions",
      [](const PhaseMetrics& p) { return fmt_count(static_cast<double>(p.completions)); });
  std::vector<const LatencyHistogram*> hs;
  for (const RunResult& run : runs) hs.push_back(&m(run).latency);
  for (Row& r : latency_rows("latency ", hs, marked)) rows.push_back(std::move(r));
  add("throughput (/s)", [](const PhaseMetrics& p) { return fmt_count(p.throughput()); });
  add("CPU per completion (us)",
      [](const PhaseMetrics& p) { return fmt_us(p.cpu_per_completion_ns()); });
  add("CPU busy (%)",
      [](const PhaseMetrics& p) { return fmt::format("{:.1f}", 100 * p.cpu_utilisation()); });
  add("interrupts/s", [](const PhaseMetrics& p) { return fmt_count(p.interrupts_per_s()); });
  add("completions/interrupt",
      [](const PhaseMetrics& p) { return fmt::format("{:.2f}", p.completions_per_interrupt()); });
  add("changes/s", [](const PhaseMetrics& p) { return fmt::format("{:.1f}", p.changes_per_s()); });
  if (ph != SIZE_MAX) {
    add("convergence", [](const PhaseMetrics& p) { return fmt_convergence(p.convergence_ns); });
    bool oracle = false;
    for (const RunResult& run : runs) oracle = oracle || !m(run).oracle_choice.empty();
    if (oracle) {
      add("oracle's choice", [](const PhaseMetrics& p) {
        return p.oracle_choice.empty() ? std::string("") : p.oracle_choice;
      });
    }
  }
  // Per flow when there is more than one (a flow's latency under another's load, W6).
  const PhaseMetrics& first = m(runs.front());
  if (first.flows.size() > 1) {
    for (const FlowMetrics& f : first.flows) {
      std::vector<const LatencyHistogram*> fh;
      for (const RunResult& run : runs) {
        const FlowMetrics* x = m(run).flow(f.flow);
        fh.push_back(x ? &x->latency : &f.latency);
      }
      for (Row& r : latency_rows("flow " + f.flow + " ", fh, marked)) rows.push_back(std::move(r));
    }
  }
  print_table(out, heads, rows);
}

std::string stage_text(const StageSpec& s) {
  const CostModel& c = s.cpu;
  return fmt::format(
      "stage {}: service {}, {}, timer {}, poll budget {}, {} core{}, {}cost {} (irq {}, "
      "completion {}, poll {}, app {})",
      s.name, format_dist(s.service),
      s.servers == 0 ? std::string("no server limit")
                     : fmt::format("{} server{}{}", s.servers, s.servers == 1 ? "" : "s",
                                   s.shared_servers ? " shared by all queues" : " per queue"),
      s.software
          ? fmt::format("software (napi: timer = gro-flush-timeout, defer-hard-irqs {}, "
                        "timer latency {}, timer cost {})",
                        s.software->defer_hard_irqs, format_duration(s.software->timer_latency_ns),
                        format_duration(s.software->timer_cost_ns))
          : std::string(timer_mode_name(s.timer)),
      s.poll_budget, s.cores, s.cores == 1 ? "" : "s",
      s.moderated ? ""
                  : fmt::format("not moderated (fixed N={} T={}), ", s.fixed.count,
                                format_duration(s.fixed.timer_ns)),
      c.name, format_duration(c.irq_ns), format_duration(c.completion_ns),
      format_duration(c.poll_ns), format_duration(c.app_ns));
}

std::string source_text(const SourceSpec& s) {
  switch (s.kind) {
    case SourceSpec::Kind::kClosed:
      return fmt::format("source {}: closed loop, depth {}, think {}", s.flow, s.depth,
                         format_dist(s.think));
    case SourceSpec::Kind::kPoisson:
      return fmt::format("source {}: {} {}/s per queue", s.flow,
                         s.periodic ? "paced (periodic)" : "Poisson", fmt_count(s.rate));
    case SourceSpec::Kind::kOnOff:
      return fmt::format("source {}: on/off {}/s while on, on {} off {}{}", s.flow,
                         fmt_count(s.rate), format_duration(s.on_ns), format_duration(s.off_ns),
                         s.periodic ? " (periodic)" : "");
    case SourceSpec::Kind::kTrace:
      return fmt::format("source {}: trace {}{}", s.flow, s.trace_path,
                         s.trace_device.empty() ? "" : " device " + s.trace_device);
  }
  return "";
}

}  // namespace

void print_header(std::ostream& out, const Workload& w, const std::string& source,
                  const TraceInfo& trace) {
  out << fmt::format("workload {} ({})\n", w.name, source);
  if (!w.description.empty()) out << "  " << w.description << "\n";
  out << fmt::format(
      "  seed {}, {} queue{}, table {}, apply delay {}, warm-up {}, window {}, {} in all\n", w.seed,
      w.queues, w.queues == 1 ? "" : "s", table_name(w.table), format_duration(w.apply_delay_ns),
      format_duration(w.warmup_ns), format_duration(w.window_ns), human_duration(w.duration_ns()));
  for (const StageSpec& s : w.stages) out << "  " << stage_text(s) << "\n";
  for (const SourceSpec& s : w.sources) out << "  " << source_text(s) << "\n";
  for (size_t i = 0; i < trace.names.size(); ++i) {
    if (i == 8) {
      out << fmt::format("  ... and {} more trace queues\n", trace.names.size() - 8);
      break;
    }
    out << fmt::format("  queue {}: replays {}\n", i, trace.names[i]);
  }
}

void print_text(std::ostream& out, const Workload& w, const std::string& source,
                const TraceInfo& trace, const std::vector<RunResult>& runs) {
  print_header(out, w, source, trace);
  std::vector<std::string> heads;
  for (const RunResult& r : runs) heads.push_back(r.policy);
  bool marked = false;
  for (size_t ph = 0; ph < w.phases.size(); ++ph) {
    const Phase& p = w.phases[ph];
    const PhaseMetrics& m = runs.front().phases[ph];
    out << fmt::format("\nphase {}: {}, load {}{}{} (measured {}..{})\n", p.name,
                       human_duration(p.duration_ns), p.load, p.ramp ? " (ramped)" : "",
                       p.depth ? fmt::format(", depth {}", *p.depth) : "",
                       human_duration(m.start_ns), human_duration(m.end_ns));
    print_phase(out, runs, heads, ph, marked);
  }
  if (w.phases.size() > 1) {
    out << "\nwhole run\n";
    print_phase(out, runs, heads, SIZE_MAX, marked);
  }
  if (marked)
    out << "\n* fewer than 100 completions beyond this quantile: not significant "
           "(performance-research 5.3)\n";
  bool convergence = false;
  for (const RunResult& r : runs)
    for (const PhaseMetrics& m : r.phases) convergence = convergence || m.convergence_ns != -2;
  if (!convergence)
    out << "convergence: needs the oracle among the policies (--policy ...,oracle)\n";
}

void print_timeline(std::ostream& out, const Workload& w, const std::vector<RunResult>& runs) {
  for (const RunResult& r : runs) {
    out << fmt::format(
        "\ntimeline {} (window {}): t_ms completions mean_us max_us "
        "cpu_us N T_us profile\n",
        r.policy, format_duration(w.window_ns));
    for (const Window& x : r.windows)
      out << fmt::format("  {:.3f} {} {:.2f} {:.2f} {:.2f} {} {:.1f} {}\n",
                         static_cast<double>(x.t_ns) / 1e6, x.completions,
                         x.mean_latency_ns() / 1e3, static_cast<double>(x.latency_max_ns) / 1e3,
                         x.cpu_per_completion_ns() / 1e3, x.count,
                         static_cast<double>(x.timer_ns) / 1e3, x.profile_ix);
  }
}

std::string json_document(const Workload& w, const std::string& source, const TraceInfo* trace,
                          const std::vector<RunResult>& runs, const std::vector<PolicySpec>& specs,
                          bool timeline) {
  json runs_json = json::array();
  for (size_t i = 0; i < runs.size(); ++i)
    runs_json.push_back(run_json(runs[i], specs[i], timeline));
  json doc = {
      {"tool", "dimctl sim"}, {"version", DIMCTL_VERSION}, {"workload", workload_json(w, source)}};
  if (trace != nullptr) {
    doc["trace"] = {{"queues", trace->queues},
                    {"duration_ns", trace->duration_ns},
                    {"arrivals", trace->arrivals},
                    {"interval_ns", trace->interval_ns},
                    {"names", trace->names}};
    if (trace->warning) doc["trace"]["warning"] = *trace->warning;
  }
  doc["runs"] = std::move(runs_json);
  return doc.dump();
}

}  // namespace dimctl::cli::sim_report
