#include "dimctl/sim/simulator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include "engine.h"

namespace dimctl::sim {

namespace {

Result<void> check_dist(const Dist& d, const std::string& where) {
  if (!(d.mean_ns >= 0) || !std::isfinite(d.mean_ns)) {
    return DIMCTL_FAIL(0, "{}: mean must be a finite duration >= 0", where);
  }
  if (d.kind == Dist::Kind::kLogNormal && (!(d.cv >= 0) || !(d.mean_ns > 0))) {
    return DIMCTL_FAIL(0, "{}: log-normal needs mean > 0 and cv >= 0", where);
  }
  return ok();
}

}  // namespace

Result<void> validate(const Workload& w) {
  if (w.queues == 0) return DIMCTL_FAIL(0, "workload {}: queues must be >= 1", w.name);
  if (w.stages.empty()) return DIMCTL_FAIL(0, "workload {}: no stages", w.name);
  if (w.sources.empty()) return DIMCTL_FAIL(0, "workload {}: no sources", w.name);
  if (w.phases.empty()) return DIMCTL_FAIL(0, "workload {}: no phases", w.name);
  if (w.window_ns <= 0) return DIMCTL_FAIL(0, "workload {}: window must be > 0", w.name);
  if (w.apply_delay_ns < 0) return DIMCTL_FAIL(0, "workload {}: apply_delay must be >= 0", w.name);
  for (size_t i = 0; i < w.phases.size(); ++i) {
    const Phase& p = w.phases[i];
    if (p.duration_ns <= 0) {
      return DIMCTL_FAIL(0, "workload {}: phase {} ({}): duration must be > 0", w.name, i, p.name);
    }
    if (!(p.load >= 0) || !std::isfinite(p.load)) {
      return DIMCTL_FAIL(0, "workload {}: phase {} ({}): load must be >= 0", w.name, i, p.name);
    }
    if (p.depth && *p.depth == 0) {
      return DIMCTL_FAIL(0, "workload {}: phase {} ({}): depth must be >= 1", w.name, i, p.name);
    }
  }
  if (w.warmup_ns < 0 || w.warmup_ns >= w.duration_ns()) {
    return DIMCTL_FAIL(0, "workload {}: warmup must be >= 0 and shorter than the run", w.name);
  }
  for (size_t i = 0; i < w.stages.size(); ++i) {
    const StageSpec& s = w.stages[i];
    const std::string where = "workload " + w.name + ": stage " + s.name;
    auto d = check_dist(s.service, where + ": service");
    if (!d) return d;
    if (s.poll_budget == 0) return DIMCTL_FAIL(0, "{}: poll_budget must be >= 1", where);
    if (s.cores == 0) return DIMCTL_FAIL(0, "{}: cores must be >= 1", where);
    if (s.fixed.count == 0 || s.fixed.timer_ns < 0) {
      return DIMCTL_FAIL(0, "{}: fixed moderation needs count >= 1 and timer >= 0", where);
    }
    if (s.cpu.irq_ns < 0 || s.cpu.completion_ns < 0 || s.cpu.poll_ns < 0) {
      return DIMCTL_FAIL(0, "{}: CPU costs must be >= 0", where);
    }
  }
  for (size_t i = 0; i < w.sources.size(); ++i) {
    const SourceSpec& s = w.sources[i];
    const std::string where =
        "workload " + w.name + ": source " + std::to_string(i) + " (" + s.flow + ")";
    switch (s.kind) {
      case SourceSpec::Kind::kClosed: {
        if (s.depth == 0) return DIMCTL_FAIL(0, "{}: depth must be >= 1", where);
        auto d = check_dist(s.think, where + ": think");
        if (!d) return d;
        break;
      }
      case SourceSpec::Kind::kPoisson:
        if (!(s.rate >= 0) || !std::isfinite(s.rate)) {
          return DIMCTL_FAIL(0, "{}: rate must be >= 0", where);
        }
        break;
      case SourceSpec::Kind::kOnOff:
        if (!(s.rate >= 0) || !std::isfinite(s.rate) || s.on_ns <= 0 || s.off_ns <= 0) {
          return DIMCTL_FAIL(0, "{}: on/off needs rate >= 0, on > 0 and off > 0", where);
        }
        break;
      case SourceSpec::Kind::kTrace:
        if (s.trace_path.empty()) return DIMCTL_FAIL(0, "{}: trace needs a file", where);
        break;
    }
  }
  return ok();
}

Result<RunResult> run(const Workload& w, const PolicySpec& policy, const RunOptions& opt) {
  if (auto v = validate(w); !v) return fail(std::move(v).error());
  if (policy.kind == PolicySpec::Kind::kOracle) {
    return run_oracle(w, w.table, opt, policy.phase_lag_ns);
  }
  const int size = table_size(policy.table(w.table));
  if (policy.kind == PolicySpec::Kind::kStatic && policy.static_index >= size) {
    return DIMCTL_FAIL(0, "policy {}: the table has {} profiles (0..{})", policy.name, size,
                       size - 1);
  }
  for (size_t ph = 0; ph < policy.phase_static.size(); ++ph) {
    if (policy.phase_static[ph] >= size) {
      return DIMCTL_FAIL(0, "policy {}: phase {}'s profile {} is not in the table (0..{})",
                         policy.name, ph, policy.phase_static[ph], size - 1);
    }
  }
  Engine e(w, policy);
  return e.run(opt);
}

namespace {

// True when `a` did better than `b` in a phase: throughput within 1 % of the best candidate's
// (`best_tput`), or within 100 completions over the phase (a low-rate phase's throughput is its
// demand; the last requests of the phase, still in flight at its end, are not a difference),
// then the lower p99, then the least CPU per completion.
bool better(const PhaseMetrics& a, const PhaseMetrics& b, double best_tput) {
  const double slack = std::max(0.01 * best_tput, a.seconds() > 0 ? 100 / a.seconds() : 0.0);
  const bool a_ok = a.throughput() >= best_tput - slack;
  const bool b_ok = b.throughput() >= best_tput - slack;
  if (a_ok != b_ok) return a_ok;
  const double pa = a.latency.quantile(0.99), pb = b.latency.quantile(0.99);
  if (pa != pb) return pa < pb;
  return a.cpu_per_completion_ns() < b.cpu_per_completion_ns();
}

}  // namespace

namespace {

// An oracle's schedule as a static policy, each phase's profile `lag_ns` after the phase starts.
Result<RunResult> run_schedule(const Workload& w, std::vector<uint8_t> schedule, int64_t lag_ns) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::kStatic;
  p.name = "oracle";
  p.phase_static = std::move(schedule);
  p.phase_lag_ns = lag_ns;
  return run(w, p);
}

}  // namespace

Result<RunResult> run_oracle(const Workload& w, ProfileTable table, const RunOptions& opt,
                             int64_t lag_ns) {
  if (auto v = validate(w); !v) return fail(std::move(v).error());
  const int n = table_size(table);
  const size_t phases = w.phases.size();
  // Each phase's candidates run until that phase's end: the work is n runs of the whole
  // duration times (sum of the phases' end times) / duration.
  std::vector<int64_t> ends;
  int64_t t = 0;
  for (const Phase& p : w.phases) ends.push_back(t += p.duration_ns);
  double work = 0, done = 0;
  for (int64_t e : ends) work += static_cast<double>(e) * n;
  std::vector<uint8_t> schedule;
  double wall = 0;
  uint64_t completions = 0, events = 0;
  RunResult out;
  for (size_t ph = 0; ph < phases; ++ph) {
    const bool last = ph + 1 == phases;
    std::vector<RunResult> runs;
    for (int ix = 0; ix < n; ++ix) {
      PolicySpec p;
      p.kind = PolicySpec::Kind::kStatic;
      p.phase_static = schedule;
      p.phase_static.push_back(static_cast<uint8_t>(ix));
      p.name = "static:" + std::to_string(ix);
      RunOptions sub;
      sub.stop_ns = last ? 0 : ends[ph];
      if (opt.progress) {
        const double span = static_cast<double>(ends[ph]);
        sub.progress = [&, span](double f) { opt.progress((done + f * span) / work); };
      }
      Engine e(w, p);
      auto r = e.run(sub);
      if (!r) return fail(std::move(r).error());
      done += static_cast<double>(ends[ph]);
      wall += r->wall_seconds;
      completions += r->simulated_completions;
      events += r->simulated_events;
      runs.push_back(std::move(*r));
    }
    double best_tput = 0;
    for (const RunResult& r : runs) best_tput = std::max(best_tput, r.phases[ph].throughput());
    size_t choice = 0;
    for (size_t i = 1; i < runs.size(); ++i) {
      if (better(runs[i].phases[ph], runs[choice].phases[ph], best_tput)) choice = i;
    }
    schedule.push_back(static_cast<uint8_t>(choice));
    if (last) out = std::move(runs[choice]);
  }
  if (lag_ns > 0) {
    auto r = run_schedule(w, schedule, lag_ns);
    if (!r) return fail(std::move(r).error());
    wall += r->wall_seconds;
    completions += r->simulated_completions;
    events += r->simulated_events;
    out = std::move(*r);
  }
  out.policy = "oracle";
  out.wall_seconds = wall;
  out.simulated_completions = completions;
  out.simulated_events = events;
  for (size_t ph = 0; ph < phases; ++ph) {
    out.phases[ph].oracle_choice = "static:" + std::to_string(schedule[ph]);
  }
  return out;
}

Result<RunResult> run_oracle_late(const Workload& w, const RunResult& oracle, int64_t lag_ns) {
  std::vector<uint8_t> schedule;
  constexpr std::string_view kStatic = "static:";
  for (const PhaseMetrics& m : oracle.phases) {
    const std::string_view c = m.oracle_choice;
    unsigned ix = 0;
    const char* end = c.data() + c.size();
    if (!c.starts_with(kStatic) || std::from_chars(c.data() + kStatic.size(), end, ix).ptr != end ||
        ix > 255) {
      return DIMCTL_FAIL(0, "oracle@LAG: phase {} has no oracle choice ('{}')", m.phase, c);
    }
    schedule.push_back(static_cast<uint8_t>(ix));
  }
  auto r = run_schedule(w, std::move(schedule), lag_ns);
  if (!r) return fail(std::move(r).error());
  for (size_t ph = 0; ph < r->phases.size() && ph < oracle.phases.size(); ++ph) {
    r->phases[ph].oracle_choice = oracle.phases[ph].oracle_choice;
  }
  return r;
}

void fill_convergence(RunResult& run, const RunResult& ref) {
  if (run.windows.size() != ref.windows.size() || run.phases.size() != ref.phases.size()) return;
  auto within = [](double x, double r) {
    if (r == 0) return x == 0;
    return std::abs(x - r) <= 0.10 * r;
  };
  for (PhaseMetrics& m : run.phases) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < run.windows.size(); ++i) {
      const int64_t t = run.windows[i].t_ns;
      if (t >= m.start_ns && t < m.end_ns) idx.push_back(i);
    }
    m.convergence_ns = -2;
    if (idx.size() < 10) continue;
    // The longest run of agreeing windows that reaches the phase's end.
    size_t k = idx.size();
    while (k > 0) {
      const Window& a = run.windows[idx[k - 1]];
      const Window& b = ref.windows[idx[k - 1]];
      const bool same = (a.completions == 0 && b.completions == 0) ||
                        (a.completions > 0 && b.completions > 0 &&
                         within(a.mean_latency_ns(), b.mean_latency_ns()) &&
                         within(a.cpu_per_completion_ns(), b.cpu_per_completion_ns()));
      if (!same) break;
      --k;
    }
    m.convergence_ns = idx.size() - k >= 10 ? run.windows[idx[k]].t_ns - m.start_ns : -1;
  }
}

Result<std::vector<RunResult>> compare(const Workload& w, const std::vector<PolicySpec>& policies,
                                       const RunOptions& opt) {
  std::vector<RunResult> out;
  const RunResult* oracle = nullptr;
  for (size_t i = 0; i < policies.size(); ++i) {
    RunOptions sub;
    if (opt.progress) {
      const auto n = static_cast<double>(policies.size());
      sub.progress = [&, i, n](double f) { opt.progress((static_cast<double>(i) + f) / n); };
    }
    auto r = run(w, policies[i], sub);
    if (!r) return fail(std::move(r).error().wrap("policy " + policies[i].name));
    out.push_back(std::move(*r));
  }
  for (const RunResult& r : out) {
    if (r.policy == "oracle") oracle = &r;
  }
  if (oracle != nullptr) {
    const RunResult ref = *oracle;
    for (RunResult& r : out) fill_convergence(r, ref);
  }
  return out;
}

}  // namespace dimctl::sim
