// RDMA helpers, mostly for the lab:
//   dimctl rdma show [--json]          IB devices and their kernel DIM switch (rdma netlink)
//   dimctl rdma set-dim DEV on|off     set the switch, print the read-back
//   dimctl verbs-probe --device DEV    open DEV, create a CQ, run VerbsCqModerator's capability
//                                      check and (when supported) one moderation
//
// Exit codes: 0 ok (verbs-probe: the probe ran, even if moderation is unsupported), 1 runtime
// failure, 2 usage (bad arguments, unknown device).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command.h"
#include "dimctl/actuators/rdma_netlink.h"
#include "dimctl/actuators/verbs_cq_moderator.h"
#include "dimctl/common/exit_codes.h"

namespace dimctl::cli {
namespace {

struct RdmaOptions {
  bool json = false;
  std::string device;
  std::string state;  // on|off
};

int run_show(const RdmaOptions& opt) {
  actuators::RdmaNetlink rdma;
  auto list = rdma.list();
  if (!list) {
    std::cerr << fmt::format("dimctl rdma show: {}\n", list.error().message());
    return kExitFailure;
  }
  if (opt.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& d : *list) {
      j.push_back({{"index", d.index}, {"name", d.name}, {"adaptive_moderation", d.dim_enabled}});
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  if (list->empty()) {
    std::cout << (rdma.available()
                      ? std::string("no RDMA devices\n")
                      : fmt::format("no RDMA devices ({})\n", rdma.unavailable_reason()));
    return kExitOk;
  }
  std::cout << fmt::format("{:<6} {:<20} {}\n", "INDEX", "DEVICE", "ADAPTIVE-MODERATION");
  for (const auto& d : *list) {
    std::cout << fmt::format("{:<6} {:<20} {}\n", d.index, d.name, d.dim_enabled ? "on" : "off");
  }
  return kExitOk;
}

int run_set_dim(const RdmaOptions& opt) {
  const bool on = opt.state == "on";
  actuators::RdmaNetlink rdma;
  auto r = rdma.set_dim(opt.device, on);
  if (!r) {
    std::cerr << fmt::format("dimctl rdma set-dim: {}\n", r.error().message());
    return r.error().code() == ENODEV ? kExitUsage : kExitFailure;
  }
  std::cout << fmt::format(
      "{}: adaptive-moderation {} (read back; affects CQs created from now "
      "on)\n",
      opt.device, *r ? "on" : "off");
  return *r == on ? kExitOk : kExitFailure;
}

int run_verbs_probe(const std::string& device) {
  auto ctx = actuators::VerbsContext::open(device);
  if (!ctx) {
    std::cerr << fmt::format("dimctl verbs-probe: {}\n", ctx.error().message());
    return ctx.error().code() == ENODEV ? kExitUsage : kExitFailure;
  }
  auto cq = actuators::VerbsCq::create(*ctx, 64);
  if (!cq) {
    std::cerr << fmt::format("dimctl verbs-probe: {}\n", cq.error().message());
    return kExitFailure;
  }
  auto mod = actuators::VerbsCqModerator::create(ctx->get(), cq->get());
  if (!mod) {
    std::cerr << fmt::format("dimctl verbs-probe: {}\n", mod.error().message());
    return kExitFailure;
  }
  std::cout << fmt::format("{}: cq_mod_caps max_cq_count={} max_cq_period={}us\n", device,
                           mod->caps().max_count, mod->caps().max_period_us);
  if (auto c = mod->check(); !c) {
    std::cout << c.error().message() << "\n";
    return kExitOk;  // the probe ran; unsupported is a result, not a failure
  }
  // Supported: apply a mid-range moderation (RDMA DIM profile 2: 8 us / 64 comps) clamped to
  // the caps, then leave the CQ to be destroyed.
  auto applied = mod->moderate_clamped(64, 8);
  if (!applied) {
    std::cerr << fmt::format("dimctl verbs-probe: {}\n", applied.error().message());
    return kExitFailure;
  }
  std::cout << fmt::format("{}: moderation supported; applied cq_count={} cq_period={}us\n", device,
                           applied->count, applied->period_us);
  return kExitOk;
}

const Registrar rdma_registrar("rdma", [](CLI::App& app, Runner& runner) {
  auto opt = std::make_shared<RdmaOptions>();
  CLI::App* sub = app.add_subcommand("rdma", "RDMA devices and the kernel RDMA DIM switch");
  sub->require_subcommand(1);
  CLI::App* show = sub->add_subcommand("show", "List IB devices and their kernel DIM switch");
  show->add_flag("--json", opt->json, "JSON output");
  CLI::App* set = sub->add_subcommand(
      "set-dim", "Set a device's kernel DIM switch (affects CQs created afterwards)");
  set->add_option("DEV", opt->device, "IB device")->required();
  set->add_option("STATE", opt->state, "on or off")
      ->required()
      ->check(CLI::IsMember({"on", "off"}));
  runner = [opt, show, set] {
    if (show->parsed()) return run_show(*opt);
    if (set->parsed()) return run_set_dim(*opt);
    return kExitUsage;
  };
  return sub;
});

const Registrar probe_registrar("verbs-probe", [](CLI::App& app, Runner& runner) {
  auto device = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "verbs-probe", "Create a CQ on a verbs device and check whether it can be moderated");
  sub->add_option("--device", *device, "verbs device (e.g. rxe0)")->required();
  runner = [device] { return run_verbs_probe(*device); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
