// `dimctl trace show FILE...`: a trace file (docs/TRACE.md) as text — the header of each file,
// per frame the per-queue and per-CQ deltas (quiet queues counted, not listed), and totals with
// rates. Several files, or --rotation-set, are read in order as one trace. A truncated last frame
// is a warning on stderr; a corrupt or unreadable file exits 2 after the totals of what was read.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/exporters/names.h"
#include "dimctl/exporters/state_json.h"
#include "dimctl/trace/rotation.h"
#include "dimctl/trace/trace_reader.h"
#include "dimctl/trace/trace_text.h"
#include "dimctl/trace_costs/shadow_replay.h"

namespace dimctl::cli {
namespace {

struct ShowArgs {
  std::vector<std::string> files;
  bool summary = false;
  bool rotation_set = false;
  // trace costs
  std::string every = "1s";
  bool json = false;
};

// The files to read in order: as given, or each one's rotation set. Empty on error (printed).
std::optional<std::vector<std::string>> input_files(const ShowArgs& a, const char* cmd) {
  std::vector<std::string> files;
  for (const auto& f : a.files) {
    if (!a.rotation_set) {
      files.push_back(f);
      continue;
    }
    auto set = trace::rotation_set(f);
    if (!set) {
      std::cerr << "dimctl trace " << cmd << ": " << set.error().message() << "\n";
      return std::nullopt;
    }
    files.insert(files.end(), set->begin(), set->end());
  }
  return files;
}

int run_show(const ShowArgs& a) {
  const auto inputs = input_files(a, "show");
  if (!inputs) return kExitUsage;
  const std::vector<std::string>& files = *inputs;
  trace::TraceShow show(trace::ShowOptions{.frames = !a.summary});
  std::string out;
  int rc = kExitOk;
  for (const auto& f : files) {
    auto r = trace::TraceReader::open(f);
    if (!r) {
      std::cerr << "dimctl trace show: " << r.error().message() << "\n";
      rc = kExitUsage;
      break;
    }
    std::cout << trace::TraceShow::header_text(r->header(), f, r->size());
    for (;;) {
      auto frame = r->next();
      if (!frame) {
        std::cout << std::flush;
        std::cerr << "dimctl trace show: " << frame.error().message() << "\n";
        rc = kExitUsage;
        break;
      }
      if (!frame->has_value()) break;
      out.clear();
      show.frame(**frame, out);
      std::cout << out;
    }
    if (r->warning()) std::cerr << "dimctl trace show: warning: " << *r->warning() << "\n";
    if (rc != kExitOk) break;
  }
  std::cout << show.summary();
  return rc;
}

std::string us(double ns) {
  return fmt::format("{:.2f}us", ns / 1000);
}

std::string core_line(const seam::CoreView& c) {
  return fmt::format(
      "  cpu {:<4} {:<9} interrupt {:>9} completion {:>9}  busy {:5.1f}%  interrupts/s {:>9.0f}  "
      "completions/s {:>9.0f}{}\n",
      c.cpu, exporters::cost_confidence_name(c.confidence), us(c.estimate.interrupt_ns),
      us(c.estimate.completion_ns), 100 * c.busy, c.interrupts_per_s, c.completions_per_s,
      c.saturated ? "  saturated" : "");
}

// `dimctl trace costs`: the daemon's controller in shadow mode with the model policy over the
// trace; per CPU the costs and busy share it measures, every --every of trace time and at the end.
int run_costs(const ShowArgs& a) {
  const auto every = parse_duration(a.every);
  if (!every || *every <= 0) {
    std::cerr << "dimctl trace costs: --every '" << a.every
              << "' is not a positive duration (e.g. 500ms, 1s)\n";
    return kExitUsage;
  }
  const auto inputs = input_files(a, "costs");
  if (!inputs) return kExitUsage;
  trace_costs::ShadowReplay replay;
  nlohmann::json timeline = nlohmann::json::array();
  uint64_t frames = 0, with_cpus = 0, refused = 0;
  int64_t first = 0, last = 0, next_report = 0;
  bool any_cores = false;
  int rc = kExitOk;
  const auto cores_json = [](const seam::ControllerState& st) {
    nlohmann::json cores = nlohmann::json::array();
    for (const auto& c : st.cores) cores.push_back(exporters::core_to_json(c));
    return cores;
  };
  for (const auto& f : *inputs) {
    auto r = trace::TraceReader::open(f);
    if (!r) {
      std::cerr << "dimctl trace costs: " << r.error().message() << "\n";
      return kExitUsage;
    }
    if (!a.json) {
      std::cout << fmt::format("file {} (format version {}, host {}, kernel {})\n", f,
                               r->header().version, r->header().host, r->header().kernel_release);
    }
    for (;;) {
      auto frame = r->next();
      if (!frame) {
        std::cerr << "dimctl trace costs: " << frame.error().message() << "\n";
        rc = kExitUsage;
        break;
      }
      if (!frame->has_value()) break;
      const seam::Snapshot& s = **frame;
      if (frames == 0) first = next_report = s.time_ns;
      ++frames;
      last = s.time_ns;
      with_cpus += s.cpus.empty() ? 0 : 1;
      if (auto fed = replay.feed(s); !fed) {
        if (refused++ == 0) {
          std::cerr << "dimctl trace costs: " << f << ": frame " << r->frames_read()
                    << " refused: " << fed.error().message() << "\n";
        }
        continue;
      }
      const auto state = replay.state();
      any_cores |= !state->cores.empty();
      if (s.time_ns < next_report || state->cores.empty()) continue;
      next_report = s.time_ns + *every;
      const double t = static_cast<double>(s.time_ns - first) / 1e9;
      if (a.json) {
        timeline.push_back({{"t_s", t}, {"cores", cores_json(*state)}});
      } else {
        std::cout << fmt::format("t=+{:.3f}s\n", t);
        for (const auto& c : state->cores) std::cout << core_line(c);
      }
    }
    if (r->warning()) std::cerr << "dimctl trace costs: warning: " << *r->warning() << "\n";
    if (rc != kExitOk) break;
  }
  if (frames == 0) {
    std::cerr << "dimctl trace costs: no frame in the trace\n";
    return kExitUsage;
  }
  if (with_cpus == 0) {
    std::cerr << "dimctl trace costs: the trace has no CPU times (format 1, or recorded with "
                 "--no-cpu-times): nothing to measure costs from\n";
    return kExitUsage;
  }
  const auto state = replay.state();
  const dim::CostParams defaults;
  if (a.json) {
    nlohmann::json out = {{"frames", frames},
                          {"frames_with_cpu_times", with_cpus},
                          {"frames_refused", refused},
                          {"span_s", static_cast<double>(last - first) / 1e9},
                          {"defaults",
                           {{"interrupt_ns", defaults.interrupt_cost_ns},
                            {"completion_ns", defaults.completion_cost_ns}}},
                          {"cores", cores_json(*state)},
                          {"timeline", std::move(timeline)}};
    std::cout << out.dump(2) << "\n";
    return rc;
  }
  std::cout << fmt::format(
      "at the end ({} frames over {:.3f} s; the model's defaults: interrupt {}, completion {}):\n",
      frames, static_cast<double>(last - first) / 1e9, us(defaults.interrupt_cost_ns),
      us(defaults.completion_cost_ns));
  if (!any_cores) {
    std::cout << "(no CPU polled a queue or CQ: no costs)\n";
    return rc;
  }
  std::cout << fmt::format(
      "{:<5} {:<10} {:>10} {:>11} {:>9} {:>9} {:>10} {:>7} {:>7} {:>6} {:>7} "
      "{:>8}\n",
      "CPU", "CONFIDENCE", "INTERRUPT", "COMPLETION", "HANDLER", "WAKEUP", "FIT_COMPL", "BATCH",
      "SPREAD", "ERROR", "BUSY%", "PERIODS");
  for (const auto& c : state->cores) {
    const dim::CostEstimate& e = c.estimate;
    std::cout << fmt::format(
        "{:<5} {:<10} {:>10} {:>11} {:>9} {:>9} {:>10} {:>7.2f} {:>7.3f} {:>5.1f}% {:>7.1f} "
        "{:>4}/{:<3}\n",
        c.cpu, exporters::cost_confidence_name(c.confidence), us(e.interrupt_ns),
        us(e.completion_ns), us(e.handler_ns), us(e.wakeup_ns), us(e.fit_completion_ns), e.batch,
        e.spread, 100 * e.relative_error, 100 * c.busy, e.kept, e.periods);
  }
  return rc;
}

const Registrar kRegisterTrace{
    "trace", [](CLI::App& app, Runner& run) {
      auto a = std::make_shared<ShowArgs>();
      CLI::App* sub = app.add_subcommand("trace", "Inspect trace files written by dimctl record");
      sub->require_subcommand(1);
      CLI::App* show = sub->add_subcommand(
          "show", "Print a trace: header, per-frame per-queue deltas, totals and rates");
      show->add_option("FILE", a->files, "Trace file(s), read in order as one trace")->required();
      show->add_flag("--summary", a->summary, "Header and totals only, no per-frame lines");
      show->add_flag("--rotation-set", a->rotation_set,
                     "Read FILE's whole rotation set, oldest first (FILE.N .. FILE.1, FILE)");
      run = [a] { return run_show(*a); };
      auto c = std::make_shared<ShowArgs>();
      CLI::App* costs = sub->add_subcommand(
          "costs",
          "The per-CPU interrupt and completion costs the daemon would have measured on the "
          "recording host (its controller, shadow mode, model policy)");
      costs->add_option("FILE", c->files, "Trace file(s), read in order as one trace")->required();
      costs->add_flag("--rotation-set", c->rotation_set,
                      "Read FILE's whole rotation set, oldest first (FILE.N .. FILE.1, FILE)");
      costs->add_option("--every", c->every,
                        "Print the costs every this much trace time (default 1s)");
      costs->add_flag("--json", c->json, "One JSON document: the final costs and the timeline");
      run = [a, c, costs] { return costs->parsed() ? run_costs(*c) : run_show(*a); };
      return sub;
    }};

}  // namespace
}  // namespace dimctl::cli
