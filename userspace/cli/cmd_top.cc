// dimctl top: a live table of what the daemon sees and decides, per queue and per CQ, refreshed
// every interval. Rates come from the published state (the controller computes them from the
// same snapshots DIM sees), so top shows exactly what DIM acted on. --once prints one frame
// without clearing the screen and exits (scripts, tests).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <thread>

#include "command.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/exporters/names.h"
#include "state_view.h"

namespace dimctl::cli {
namespace {

struct TopOptions {
  EndpointFlags endpoint;
  std::string interval = "1s";
  bool once = false;
};

// A duration (dimctl/common/duration.h), or as before durations were one grammar a bare number
// of seconds (0.5) or minutes (2m).
Result<std::chrono::nanoseconds> parse_interval(const std::string& text) {
  DurationError why = DurationError::kSyntax;
  std::optional<int64_t> ns = parse_duration_or_seconds(text, &why);
  if (!ns && text.size() > 1 && text.back() == 'm') {
    const std::string number = text.substr(0, text.size() - 1);
    DurationError bare = DurationError::kSyntax;
    if (!parse_duration(number, &bare) && bare == DurationError::kNoUnit)
      if (auto s = parse_duration(number + "s"); s && *s <= INT64_MAX / 60) ns = *s * 60;
  }
  if (!ns) return DIMCTL_FAIL(0, "--interval {}", duration_error(text, why, "s"));
  // Below 100 ms the daemon's own period (and the rates) would not change between frames.
  if (*ns < 100'000'000 || *ns > 3'600'000'000'000) {
    return DIMCTL_FAIL(0, "--interval \"{}\": must be between 100ms and 1h", text);
  }
  return std::chrono::nanoseconds(*ns);
}

std::string ratio(double num, double den) {
  return den > 0 ? fmt::format("{:.1f}", num / den) : std::string("-");
}

std::string profile(const seam::DimView& d) {
  if (!d.active) return "-";
  if (d.profile_ix == d.applied_ix) return std::to_string(d.profile_ix);
  return fmt::format("{}->{}", d.profile_ix, d.applied_ix);  // DIM's choice -> after bounds
}

// Rules with compare: both policies' picks after bounds, "dim/model" (e.g. "3/1").
std::string compared(const seam::PolicyComparison* c) {
  return c != nullptr ? fmt::format("{}/{}", c->dim_ix, c->model_ix) : std::string("-");
}

// A software profile as `defer x timer` ("1x128us"; "0x0" = no moderation), "-" when unknown.
std::string software_text(std::optional<uint32_t> defer, std::optional<uint64_t> timeout_ns) {
  if (!defer && !timeout_ns) return "-";
  const std::string d = defer ? std::to_string(*defer) : "?";
  if (!timeout_ns) return d + "x?";
  if (*timeout_ns == 0) return d + "x0";
  if (*timeout_ns % 1000 == 0) return fmt::format("{}x{}us", d, *timeout_ns / 1000);
  return fmt::format("{}x{}ns", d, *timeout_ns);
}

// A duration in ns, compactly: "850ns", "12.5us", "1.25ms".
std::string ns_text(double ns) {
  if (ns < 999.5) return fmt::format("{:.0f}ns", ns);
  if (ns < 999'950) return fmt::format("{:.1f}us", ns / 1e3);
  return fmt::format("{:.2f}ms", ns / 1e6);
}

// The cost model's trade-off (model_trade), as three cells: the objective with its budget
// ("latency", "efficiency 50.0us"), then the predicted added latency and CPU per completion of
// the model's pick and of no moderation (the latency profile), "chosen/none"; "-" where no model
// runs.
void add_trade_cells(std::vector<std::string>& row, const std::optional<seam::ModelTrade>& t) {
  if (!t) {
    row.insert(row.end(), {"-", "-", "-"});
    return;
  }
  std::string objective(exporters::objective_name(t->objective));
  if (t->objective == dim::Objective::kEfficiency) {
    objective += " " + ns_text(static_cast<double>(t->latency_budget_ns));
  }
  row.push_back(std::move(objective));
  row.push_back(ns_text(t->chosen_added_delay_ns) + "/" + ns_text(t->none_added_delay_ns));
  row.push_back(ns_text(t->chosen_cpu_per_completion_ns) + "/" +
                ns_text(t->none_cpu_per_completion_ns));
}

constexpr const char* kTradeColumns[] = {"OBJECTIVE", "+LATENCY chosen/none",
                                         "CPU/COMP chosen/none"};

std::string render_frame(const seam::ControllerState& s, const TopOptions& o) {
  std::string out = fmt::format(
      "dimctl top  {}  {}  loops {}  last loop {:.2f} ms  sample errors {}  (every {}{})\n\n",
      o.endpoint.address, s.ready ? "ready" : "NOT READY", s.loops_total, s.last_loop_seconds * 1e3,
      s.sample_errors_total, o.interval, o.once ? "" : ", Ctrl-C quits");

  std::vector<const seam::QueueView*> queues;
  for (const auto& q : s.queues) queues.push_back(&q);
  std::sort(queues.begin(), queues.end(), [](const auto* a, const auto* b) {
    auto key = [](const seam::QueueView* q) {
      return std::tuple(q->device, q->counters.queue < 0, q->counters.queue,
                        q->counters.key.napi_id, q->direction);
    };
    return key(a) < key(b);
  });
  // The comparison column only when some rule compares (compare: dim|model).
  const bool any_compare = !s.queue_comparisons.empty();
  // The cost model's sharers, where some queue runs the model.
  const bool any_model =
      std::any_of(queues.begin(), queues.end(), [](const auto* q) { return q->model_sharers > 0; });
  std::vector<std::string> qheader{"DEVICE",
                                   "QUEUE",
                                   "DIR",
                                   "CPU",
                                   "MODE",
                                   "PKTS/S",
                                   "EVENTS/S",
                                   "PKTS/EVENT",
                                   "PROFILE",
                                   "USECS want/applied",
                                   "FRAMES want/applied"};
  if (any_model) qheader.push_back("SHARERS");
  // What the model's objective buys: where some queue's model has measured traffic.
  const bool any_trade = std::any_of(queues.begin(), queues.end(),
                                     [](const auto* q) { return q->model_trade.has_value(); });
  if (any_trade) qheader.insert(qheader.end(), std::begin(kTradeColumns), std::end(kTradeColumns));
  if (any_compare) qheader.push_back("DIM/MODEL");
  // Software moderation (method napi), where some queue has it: defer-hard-irqs x
  // gro-flush-timeout, wanted / as the NAPI holds it.
  const bool any_software = std::any_of(queues.begin(), queues.end(), [](const auto* q) {
    return q->wanted_software.has_value() || q->napi_config.has_value();
  });
  if (any_software) qheader.push_back("NAPI want/applied");
  Table qt(std::move(qheader));
  for (const auto* q : queues) {
    const auto* dev = find_device(s, q->device);
    const bool tx = q->direction == "tx";
    std::optional<uint32_t> app_usecs, app_frames;
    if (dev && dev->applied) {
      app_usecs = tx ? dev->applied->tx_usecs : dev->applied->rx_usecs;
      app_frames = tx ? dev->applied->tx_max_frames : dev->applied->rx_max_frames;
    }
    const bool want = q->dim.active;
    std::vector<std::string> row{
        q->device,
        exporters::queue_label(q->counters),
        q->direction,
        q->counters.cpu != seam::QueueCounters::kNoCpu ? std::to_string(q->counters.cpu) : "-",
        dev ? std::string(exporters::mode_name(dev->mode)) : "-",
        human(q->packets_per_second),
        human(q->events_per_second),
        ratio(q->packets_per_second, q->events_per_second),
        profile(q->dim),
        (want ? std::to_string(q->wanted_usecs) : "-") + "/" + opt_str(app_usecs),
        (want ? std::to_string(q->wanted_frames) : "-") + "/" + opt_str(app_frames)};
    if (any_model) {
      row.push_back(q->model_sharers > 0 ? fmt::format("{:g}", q->model_sharers) : "-");
    }
    if (any_trade) add_trade_cells(row, q->model_trade);
    if (any_compare) {
      row.push_back(compared(seam::comparison_at(s.queue_comparisons, q - s.queues.data())));
    }
    if (any_software) {
      const auto& w = q->wanted_software;
      const auto& a = q->napi_config;
      row.push_back(
          (w ? software_text(w->defer_hard_irqs, w->gro_flush_timeout_ns) : std::string("-")) +
          "/" +
          (a ? software_text(a->defer_hard_irqs, a->gro_flush_timeout_ns) : std::string("-")));
    }
    qt.add(std::move(row));
  }
  out += qt.size() ? qt.str() : "no queues\n";

  if (!s.cqs.empty()) {
    std::vector<const seam::CqView*> cqs;
    for (const auto& c : s.cqs) cqs.push_back(&c);
    std::sort(cqs.begin(), cqs.end(), [](const auto* a, const auto* b) {
      return std::tuple(a->counters.ibdev, a->counters.key.cq_id) <
             std::tuple(b->counters.ibdev, b->counters.key.cq_id);
    });
    const bool cq_compare = !s.cq_comparisons.empty();
    // The cost model's sharers (CostParams::sharers), where some CQ runs the model.
    const bool cq_model =
        std::any_of(cqs.begin(), cqs.end(), [](const auto* c) { return c->model_sharers > 0; });
    std::vector<std::string> cheader{
        "DEVICE",           "CQ",       "POLL_CTX",    "VEC",     "MODE",
        "COMPS/S",          "EVENTS/S", "COMPS/EVENT", "PROFILE", "USEC want/kernel",
        "COMPS want/kernel"};
    if (cq_model) cheader.push_back("SHARERS");
    const bool cq_trade = std::any_of(cqs.begin(), cqs.end(),
                                      [](const auto* c) { return c->model_trade.has_value(); });
    if (cq_trade) {
      cheader.insert(cheader.end(), std::begin(kTradeColumns), std::end(kTradeColumns));
    }
    if (cq_compare) cheader.push_back("DIM/MODEL");
    Table ct(std::move(cheader));
    for (const auto* c : cqs) {
      const auto* dev = find_device(s, c->counters.ibdev);
      const bool k = c->counters.kernel_modifies > 0;  // kernel values unknown before cq_modify
      const bool want = c->dim.active;
      std::vector<std::string> row{
          c->counters.ibdev,
          std::to_string(c->counters.key.cq_id),
          std::string(exporters::poll_context_name(c->counters.poll_ctx)),
          c->counters.comp_vector >= 0 ? std::to_string(c->counters.comp_vector) : "-",
          dev ? std::string(exporters::mode_name(dev->mode)) : "-",
          human(c->completions_per_second),
          human(c->events_per_second),
          ratio(c->completions_per_second, c->events_per_second),
          profile(c->dim),
          (want ? std::to_string(c->wanted_usec) : "-") + "/" +
              (k ? std::to_string(c->counters.kernel_usec) : "-"),
          (want ? std::to_string(c->wanted_comps) : "-") + "/" +
              (k ? std::to_string(c->counters.kernel_comps) : "-")};
      if (cq_model) {
        row.push_back(c->model_sharers > 0 ? fmt::format("{:g}", c->model_sharers) : "-");
      }
      if (cq_trade) add_trade_cells(row, c->model_trade);
      if (cq_compare) {
        row.push_back(compared(seam::comparison_at(s.cq_comparisons, c - s.cqs.data())));
      }
      ct.add(std::move(row));
    }
    out += "\nRDMA CQs\n" + ct.str();
  }
  if (const std::string cores = cores_table(s); !cores.empty()) {
    out += "\ncores (measured costs, saturation)\n" + cores;
  }
  return out;
}

int run_top(const TopOptions& o) {
  auto interval = parse_interval(o.interval);
  if (!interval) {
    fmt::print(stderr, "dimctl top: {}\n", interval.error().message());
    return kExitUsage;
  }
  auto endpoint = resolve_endpoint(o.endpoint);
  if (!endpoint) {
    fmt::print(stderr, "dimctl top: {}\n", endpoint.error().message());
    return kExitUsage;
  }
  if (o.once) {
    auto fetched = fetch_state(*endpoint);
    if (!fetched) {
      fmt::print(stderr, "dimctl top: {}\n", fetched.error().message());
      return kExitFailure;
    }
    std::fputs(render_frame(fetched->state, o).c_str(), stdout);
    return kExitOk;
  }
  // Live mode: an unreachable daemon is shown in the frame and retried (it may be restarting);
  // Ctrl-C ends the command through the default SIGINT action.
  for (;;) {
    auto fetched = fetch_state(*endpoint);
    std::string frame = fetched ? render_frame(fetched->state, o)
                                : fmt::format("dimctl top  {}\n\n{}\n", o.endpoint.address,
                                              fetched.error().message());
    std::fputs("\x1b[H\x1b[2J", stdout);  // cursor home + clear screen
    std::fputs(frame.c_str(), stdout);
    std::fflush(stdout);
    std::this_thread::sleep_for(*interval);
  }
}

const Registrar kRegistrar("top", [](CLI::App& app, Runner& run) {
  auto opts = std::make_shared<TopOptions>();
  CLI::App* sub = app.add_subcommand(
      "top",
      "Live per-queue / per-CQ table: rates, packets per event, DIM profile, wanted vs "
      "applied moderation, the cost model's objective and predicted trade-off where it runs, "
      "and both policies' picks where a rule compares them "
      "(reads /api/v1/state)");
  add_endpoint_flags(sub, opts->endpoint);
  sub->add_option("--interval", opts->interval, "Refresh interval (e.g. 1s, 500ms)")
      ->capture_default_str();
  sub->add_flag("--once", opts->once, "Print one frame and exit");
  run = [opts] { return run_top(*opts); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
