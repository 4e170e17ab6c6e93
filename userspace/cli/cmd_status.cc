// dimctl status: one-shot summary of a running daemon, read from its /api/v1/state endpoint.
// With --json the raw state document is printed for scripts (jq).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "command.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/exporters/names.h"
#include "state_view.h"

namespace dimctl::cli {
namespace {

struct StatusOptions {
  EndpointFlags endpoint;
  bool json = false;
};

std::string req_app(const std::optional<seam::Coalesce>& req,
                    const std::optional<seam::Coalesce>& app,
                    std::optional<uint32_t> seam::Coalesce::*field) {
  auto one = [field](const std::optional<seam::Coalesce>& c) {
    return c ? opt_str((*c).*field) : std::string("-");
  };
  return one(req) + "/" + one(app);
}

// The algorithm, and the policy compared with it (rule key compare): "model vs dim".
std::string algorithm_text(const seam::DeviceView& d) {
  std::string out(exporters::algorithm_name(d.algorithm));
  if (d.compare) out += seam::is_model(d.algorithm) ? " vs dim" : " vs model";
  // Written per NAPI with napi-set: the coalesce columns stay empty, `dimctl top` shows the
  // software profile of each NAPI.
  if (d.method == seam::Method::kNapi) {
    out += " via napi";
  } else if (d.coalescing == false) {
    out += " (no coalescing)";  // decided, never written: only napi could moderate it
  }
  return out;
}

std::string render_status(const seam::ControllerState& s, const std::string& address) {
  std::string out =
      fmt::format("dimctl daemon at {}: {}, {} loops, last loop {:.2f} ms, {} sample errors\n",
                  address, s.ready ? "ready" : "NOT ready", s.loops_total,
                  s.last_loop_seconds * 1e3, s.sample_errors_total);
  out += fmt::format("config: {} (default mode {})\n",
                     s.config_path.empty() ? "(none)" : s.config_path,
                     exporters::mode_name(s.default_mode));
  for (const auto& p : s.programs) {
    out += fmt::format("bpf program {}: {}{}\n", p.name, p.attached ? "attached" : "NOT attached",
                       p.attached || p.reason.empty() ? "" : " (" + p.reason + ")");
  }
  for (const auto& d : s.bpf_drops) {
    // Only when it happened: a full map means some NAPIs or CQs are not counted at all.
    if (d.total > 0) out += fmt::format("BPF events dropped ({}): {}\n", d.reason, d.total);
  }
  out += fmt::format("{} queues, {} CQs, {} devices\n\n", s.queues.size(), s.cqs.size(),
                     s.devices.size());

  Table t({"DEVICE", "KIND", "DRIVER", "MODE", "ALGORITHM", "RULE", "RX-USECS req/app",
           "RX-FRAMES req/app", "TX-USECS req/app", "TX-FRAMES req/app", "APPLIES ok/fail/limited",
           "DRIFT", "ERROR"});
  std::string errors;
  for (const auto& d : s.devices) {
    std::string drift = std::to_string(d.drift_total) + (d.drifted ? " DRIFTED" : "");
    if (d.kind == seam::DeviceKind::kRdma) {
      drift += d.rdma_dim_enabled ? (*d.rdma_dim_enabled ? " (kernel DIM on)" : " (kernel DIM off)")
                                  : "";
    }
    t.add({d.name, std::string(exporters::device_kind_name(d.kind)),
           d.driver.empty() ? "-" : d.driver, std::string(exporters::mode_name(d.mode)),
           algorithm_text(d), d.rule.empty() ? "-" : d.rule,
           req_app(d.requested, d.applied, &seam::Coalesce::rx_usecs),
           req_app(d.requested, d.applied, &seam::Coalesce::rx_max_frames),
           req_app(d.requested, d.applied, &seam::Coalesce::tx_usecs),
           req_app(d.requested, d.applied, &seam::Coalesce::tx_max_frames),
           fmt::format("{}/{}/{}", d.applies_ok_total, d.applies_failed_total,
                       d.applies_rate_limited_total),
           drift, d.last_error.empty() ? "-" : "yes"});
    if (!d.last_error.empty()) errors += fmt::format("  {}: {}\n", d.name, d.last_error);
  }
  out += t.str();
  if (const std::string cores = cores_table(s); !cores.empty()) {
    out += "\ncores (measured costs, saturation)\n" + cores;
  }
  if (!errors.empty()) out += "\nlast errors:\n" + errors;
  return out;
}

int run_status(const StatusOptions& o) {
  auto endpoint = resolve_endpoint(o.endpoint);
  if (!endpoint) {
    fmt::print(stderr, "dimctl status: {}\n", endpoint.error().message());
    return kExitUsage;
  }
  auto fetched = fetch_state(*endpoint);
  if (!fetched) {
    fmt::print(stderr, "dimctl status: {}\n", fetched.error().message());
    return kExitFailure;
  }
  if (o.json) {
    std::fwrite(fetched->body.data(), 1, fetched->body.size(), stdout);
    if (!fetched->body.empty() && fetched->body.back() != '\n') std::fputc('\n', stdout);
    return kExitOk;
  }
  std::fputs(render_status(fetched->state, o.endpoint.address).c_str(), stdout);
  return kExitOk;
}

const Registrar kRegistrar("status", [](CLI::App& app, Runner& run) {
  auto opts = std::make_shared<StatusOptions>();
  CLI::App* sub =
      app.add_subcommand("status",
                         "Summarise a running daemon: per device mode, rule, requested vs applied "
                         "moderation, drift and errors (reads /api/v1/state)");
  add_endpoint_flags(sub, opts->endpoint);
  sub->add_flag("--json", opts->json, "Print the raw state document (JSON) instead");
  run = [opts] { return run_status(*opts); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
