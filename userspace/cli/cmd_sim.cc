// dimctl sim --workload FILE.yaml|--trace FILE --policy P[,P...]: runs the discrete-event
// simulator (docs/SIMULATOR.md) on one workload under each policy, with the same seed (the same
// arrivals and service times for every policy), and prints the metrics per phase with the
// policies side by side, or everything as JSON (what bench/sim/report.py reads).
//
// Exit 0 success, 1 a run failed, 2 bad flags, a bad workload file (its file:line:column errors
// on stderr, as check-config) or a policy name the simulator does not know.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "dim/profile.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/seam/names.h"
#include "dimctl/seam/policy.h"
#include "dimctl/sim/simulator.h"
#include "dimctl/sim/trace_source.h"
#include "dimctl/sim/workload_yaml.h"
#include "dimctl/trace_costs/host_costs.h"
#include "sim_report.h"

namespace dimctl::cli {
namespace {

namespace fs = std::filesystem;
using namespace dimctl::sim;

struct SimArgs {
  std::string workload;
  std::string trace;
  std::string trace_device;
  std::vector<std::string> policies;
  bool json = false;
  bool timeline = false;
  bool progress = false;
  bool dry_run = false;
  std::optional<uint64_t> seed;
  std::string duration;
  std::optional<uint32_t> queues;
  std::string cost;
  std::string timer;
  std::string service;
  std::string table;
};

int usage(const std::string& msg) {
  std::cerr << "dimctl sim: " << msg << "\n";
  return kExitUsage;
}

int table_size(ProfileTable t) {
  return t == ProfileTable::kRdma ? dim::kRdmaNumProfiles : dim::kNetNumProfiles;
}

// ---- building the workload ----

// The run of a recorded trace: one stage and one trace source, each trace queue (after
// --trace-device) replayed on its own simulated queue for the trace's length. A trace of CQs
// only is storage (rdma table, cost 4k, irq_poll's budget); anything else a NIC (net-eqe, cost
// net, NAPI's budget). Flags change any of it afterwards.
Result<Workload> trace_workload(const SimArgs& a, TraceInfo& info) {
  auto inspected = inspect_trace(a.trace, a.trace_device);
  if (!inspected) return fail(std::move(inspected).error());
  info = std::move(*inspected);
  const bool cqs = !info.names.empty() &&
                   std::all_of(info.names.begin(), info.names.end(), [](const std::string& n) {
                     return n.find(" cq ") != std::string::npos;
                   });
  Workload w;
  w.name = "trace-" + fs::path(a.trace).stem().string();
  w.description = fmt::format("replay of {}{}: {} queue{}, {} arrivals over {}", a.trace,
                              a.trace_device.empty() ? "" : " (" + a.trace_device + ")",
                              info.queues, info.queues == 1 ? "" : "s", info.arrivals,
                              sim_report::human_duration(info.duration_ns));
  w.queues = std::max<uint32_t>(1, info.queues);
  w.table = cqs ? ProfileTable::kRdma : ProfileTable::kNetEqe;
  StageSpec& st = w.stages[0];
  st.name = "host";
  st.cpu = *builtin_cost_model(cqs ? "4k" : "net");
  st.poll_budget = cqs ? 256 : 64;
  st.timer = cqs ? TimerMode::kIdleGap : TimerMode::kRateLimit;
  st.cores = w.queues;  // each queue's interrupt on its own core, as RSS / IRQ affinity spread them
  SourceSpec& src = w.sources[0];
  src.kind = SourceSpec::Kind::kTrace;
  src.flow = "trace";
  src.trace_path = a.trace;
  src.trace_device = a.trace_device;
  w.phases[0].name = "trace";
  w.phases[0].duration_ns = std::max<int64_t>(1, info.duration_ns);
  // Whole windows of the recorder's interval at most, so the timeline follows the trace.
  if (info.interval_ns > 0) w.window_ns = std::min(w.window_ns, info.interval_ns);
  return w;
}

// `--cost trace`: the costs the daemon's estimator measures from the replayed trace itself.
constexpr std::string_view kTraceCost = "trace";

// Applies the override flags; "" on success, else what is wrong.
std::string apply_overrides(const SimArgs& a, Workload& w) {
  if (a.seed) w.seed = *a.seed;
  if (a.queues) w.queues = *a.queues;
  if (!a.table.empty()) w.table = *parse_table(a.table);  // checked by CLI11
  if (a.cost == kTraceCost) {
    if (a.trace.empty()) return "--cost trace: the costs measured in a trace, needs --trace FILE";
    auto h = trace_costs::host_costs(a.trace, a.trace_device);
    if (!h) return fmt::format("--cost trace: {}", h.error().message());
    // The estimator's interrupt cost holds the handler and the poll's wake-up, its completion cost
    // the rest of the poll: the simulator's irq and completion costs, nothing per poll call or
    // outside the poll (the recording host's application work is not in the trace).
    CostModel c;
    c.name = "trace";
    c.irq_ns = std::llround(h->interrupt_ns);
    c.completion_ns = std::llround(h->completion_ns);
    for (StageSpec& s : w.stages) s.cpu = c;
  } else if (!a.cost.empty()) {
    for (StageSpec& s : w.stages) s.cpu = *builtin_cost_model(a.cost);
  }
  if (!a.timer.empty()) {
    for (StageSpec& s : w.stages) s.timer = *parse_timer_mode(a.timer);
  }
  if (!a.service.empty()) {
    auto d = parse_dist(a.service);
    if (!d)
      return fmt::format(
          "--service '{}': want a duration (5us), exp:MEAN or lognormal:MEAN:CV (e.g. "
          "lognormal:10us:0.5)",
          a.service);
    for (StageSpec& s : w.stages) s.service = *d;
  }
  if (!a.duration.empty()) {
    auto d = parse_duration(a.duration);
    if (!d || *d <= 0)
      return fmt::format("--duration '{}': want a positive duration such as 500ms or 2s",
                         a.duration);
    // Every phase (and the warm-up) in proportion, so the workload keeps its shape.
    const double k = static_cast<double>(*d) / static_cast<double>(w.duration_ns());
    int64_t left = *d;
    for (size_t i = 0; i < w.phases.size(); ++i) {
      const int64_t scaled =
          i + 1 == w.phases.size()
              ? left
              : std::max<int64_t>(1,
                                  std::llround(static_cast<double>(w.phases[i].duration_ns) * k));
      w.phases[i].duration_ns = std::max<int64_t>(1, scaled);
      left -= w.phases[i].duration_ns;
    }
    if (left < 0 || w.phases.back().duration_ns <= 0)
      return fmt::format("--duration {}: too short for {} phases", a.duration, w.phases.size());
    w.warmup_ns = std::llround(static_cast<double>(w.warmup_ns) * k);
  }
  return "";
}

// ---- progress bar ----

// On stderr, once a run has taken a second, only when stderr is a terminal (or --progress).
class ProgressBar {
 public:
  explicit ProgressBar(bool force) : enabled_(force || isatty(STDERR_FILENO) == 1) {}
  void start(std::string label) {
    label_ = std::move(label);
    t0_ = Clock::now();
    last_ = t0_;
  }
  void update(double f) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (now - t0_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    f = std::clamp(f, 0.0, 1.0);
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(f * kWidth);
    const double elapsed = std::chrono::duration<double>(now - t0_).count();
    std::string eta = f > 0.01 ? fmt::format(", {:.0f}s left", elapsed * (1 - f) / f) : "";
    std::cerr << fmt::format("\r{} [{}{}] {:3.0f}%{}  ", label_, std::string(filled, '#'),
                             std::string(kWidth - filled, ' '), f * 100, eta)
              << std::flush;
    shown_ = true;
  }
  void done() {
    if (!shown_) return;
    std::cerr << "\r" << std::string(label_.size() + 60, ' ') << "\r" << std::flush;
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool shown_ = false;
  std::string label_;
  Clock::time_point t0_, last_;
};

// ---- the command ----

int run(const SimArgs& a) {
  // stdout carries the tables / JSON. The simulated daemon's Controller logs every device it
  // meets at info level: noise here, so warnings and errors only, on stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dimctl-sim"));
  spdlog::set_level(spdlog::level::warn);
  if (a.workload.empty() == a.trace.empty())
    return usage("give exactly one of --workload FILE.yaml and --trace FILE");
  if (!a.trace_device.empty() && a.trace.empty())
    return usage("--trace-device applies to --trace only");

  std::vector<PolicySpec> specs;
  for (const std::string& p : a.policies) {
    auto spec = parse_policy(p);
    if (!spec) return usage(spec.error().message());
    for (const PolicySpec& s : specs)
      if (s.name == spec->name) return usage(fmt::format("policy '{}' is given twice", p));
    specs.push_back(std::move(*spec));
  }
  if (specs.empty()) return usage("--policy needs at least one policy");

  Workload w;
  std::string source;
  TraceInfo trace_info;
  if (!a.workload.empty()) {
    auto loaded = load_workload(a.workload);
    if (!loaded) {
      const std::string text = loaded.error().message();
      std::cerr << text << "\n";
      if (loaded.error().code() == 0) {
        const auto n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
        std::cerr << fmt::format("{}: invalid ({} error{})\n", a.workload, n, n == 1 ? "" : "s");
      }
      return kExitUsage;
    }
    w = std::move(*loaded);
    source = a.workload;
  } else {
    auto t = trace_workload(a, trace_info);
    if (!t) return usage(t.error().message());
    w = std::move(*t);
    source = a.trace;
    // On stderr so that --json output stays one document; the run goes on with the whole frames.
    if (trace_info.warning) std::cerr << "dimctl sim: warning: " << *trace_info.warning << "\n";
  }
  if (std::string why = apply_overrides(a, w); !why.empty()) return usage(why);
  if (auto v = validate(w); !v) return usage(v.error().message());
  for (const PolicySpec& s : specs) {
    const ProfileTable t = s.table(w.table);
    if (s.kind == PolicySpec::Kind::kStatic && s.static_index >= table_size(t))
      return usage(fmt::format("policy '{}': the {} table has profiles 0..{}", s.name,
                               table_name(t), table_size(t) - 1));
  }
  if (a.dry_run) {
    sim_report::print_header(std::cout, w, source, trace_info);
    std::vector<std::string> names;
    for (const PolicySpec& s : specs) names.push_back(s.name);
    std::cout << fmt::format("  policies: {}\n", fmt::join(names, ", "));
    return kExitOk;
  }

  ProgressBar bar(a.progress);
  std::vector<RunResult> runs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const PolicySpec& s = specs[i];
    RunOptions opt;
    opt.progress = [&bar](double f) { bar.update(f); };
    bar.start(fmt::format("dimctl sim: {} {}/{} {}", w.name, i + 1, specs.size(), s.name));
    // A lagged oracle reuses the on-time oracle's schedule when that ran first.
    const RunResult* on_time = nullptr;
    for (const RunResult& done : runs) {
      if (done.policy == "oracle") on_time = &done;
    }
    auto r = s.kind != PolicySpec::Kind::kOracle ? sim::run(w, s, opt)
             : s.phase_lag_ns > 0 && on_time != nullptr
                 ? run_oracle_late(w, *on_time, s.phase_lag_ns)
                 : run_oracle(w, s.table(w.table), opt, s.phase_lag_ns);
    bar.done();
    if (!r) {
      std::cerr << fmt::format("dimctl sim: policy {}: {}\n", s.name, r.error().message());
      return kExitFailure;
    }
    r->policy = s.name;  // as written (e.g. dimctl-rdma@1ms)
    runs.push_back(std::move(*r));
  }
  // Convergence against the oracle's steady state, when it ran (same arrivals: paired).
  for (const RunResult& ref : runs) {
    if (ref.policy != "oracle") continue;
    const RunResult oracle = ref;
    for (RunResult& r : runs)
      if (r.policy != "oracle") fill_convergence(r, oracle);
    break;
  }

  if (a.json) {
    std::cout << sim_report::json_document(w, source, a.trace.empty() ? nullptr : &trace_info, runs,
                                           specs, a.timeline)
              << "\n";
    return kExitOk;
  }
  sim_report::print_text(std::cout, w, source, trace_info, runs);
  if (a.timeline) sim_report::print_timeline(std::cout, w, runs);
  return kExitOk;
}

const Registrar kSim("sim", [](CLI::App& app, Runner& runner) {
  auto a = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand(
      "sim", "Simulate a workload under moderation policies side by side (docs/SIMULATOR.md)");
  sub->add_option("--workload", a->workload, "workload file (YAML, docs/SIMULATOR.md)");
  sub->add_option("--trace", a->trace,
                  "a `dimctl record` trace: each of its queues replayed on a simulated queue for "
                  "the trace's length, one stage (change it with --cost, --timer, --service, "
                  "--table, --queues, --duration)");
  sub->add_option("--trace-device", a->trace_device, "--trace: keep only this net device's queues");
  sub->add_option("--policy", a->policies,
                  std::string("policies, comma-separated: ") + std::string(policy_help()))
      ->required()
      ->delimiter(',');
  sub->add_flag("--json", a->json,
                "everything as one JSON document (phases, flows, quantiles, CDF; windows with "
                "--timeline)");
  sub->add_flag("--timeline", a->timeline,
                "per-window profile, latency and CPU (the workload's window; convergence uses "
                "them)");
  sub->add_option("--seed", a->seed, "override the workload's seed");
  sub->add_option("--duration", a->duration,
                  "run length (e.g. 500ms, 2s): every phase and the warm-up scaled to it");
  sub->add_option("--queues", a->queues, "override the number of queues")
      ->check(CLI::Range(1, 65'536));
  std::vector<std::string> costs;
  for (const CostModel& c : builtin_cost_models()) costs.push_back(c.name);
  costs.emplace_back(kTraceCost);
  sub->add_option("--cost", a->cost,
                  "cost model of every stage: a built-in name, or `trace` (with --trace: the "
                  "recording host's costs, measured from the trace's CPU times)")
      ->check(CLI::IsMember(costs));
  sub->add_option("--timer", a->timer, "timer semantics of every stage")
      ->check(CLI::IsMember(seam::kTimerModeNames.words()));
  sub->add_option("--service", a->service,
                  "service time of every stage: 5us, exp:MEAN or lognormal:MEAN:CV");
  sub->add_option("--table", a->table, "profile table static:IX and the oracle index")
      ->check(CLI::IsMember(kProfileTableNames.words()));
  sub->add_flag("--progress", a->progress,
                "a progress bar on stderr even when it is not a terminal (runs over a second)");
  sub->add_flag("--dry-run", a->dry_run,
                "check the workload, flags and policies and print the run; simulate nothing");
  runner = [a] { return run(*a); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
