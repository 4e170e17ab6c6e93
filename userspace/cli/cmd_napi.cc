// dimctl napi show [DEV...] [--json]: the NAPIs of the network namespace's devices (or of the
// named ones) and their software moderation (netdev napi-get), for operators and the kernel
// tests. Read-only: per-NAPI settings are written by the daemon (or by `ynl ... --do napi-set`).
//
// Exit codes: 0 ok, 1 runtime failure (a kernel without napi-set: the message names Linux >=
// 6.13), 2 usage (an unknown device).
#include <net/if.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command.h"
#include "dimctl/actuators/napi_netlink.h"
#include "dimctl/common/exit_codes.h"

namespace dimctl::cli {
namespace {

struct NapiOptions {
  bool json = false;
  std::vector<std::string> devices;
};

// (name, ifindex) of the named devices, or of every device of the namespace.
Result<std::vector<std::pair<std::string, uint32_t>>> devices_of(const NapiOptions& opt) {
  std::vector<std::pair<std::string, uint32_t>> out;
  if (!opt.devices.empty()) {
    for (const auto& d : opt.devices) {
      const unsigned idx = if_nametoindex(d.c_str());
      if (idx == 0) return DIMCTL_FAIL(ENODEV, "no network device \"{}\"", d);
      out.emplace_back(d, idx);
    }
    return out;
  }
  struct if_nameindex* all = if_nameindex();
  if (all == nullptr) return DIMCTL_ERRNO("list network devices");
  for (const struct if_nameindex* p = all; p->if_index != 0; ++p)
    out.emplace_back(p->if_name, p->if_index);
  if_freenameindex(all);
  return out;
}

template <typename T>
std::string opt_str(const std::optional<T>& v) {
  return v ? std::to_string(*v) : std::string("-");
}
template <typename T>
nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

int run_show(const NapiOptions& opt) {
  auto devs = devices_of(opt);
  if (!devs) {
    std::cerr << fmt::format("dimctl napi show: {}\n", devs.error().message());
    return devs.error().code() == ENODEV ? kExitUsage : kExitFailure;
  }
  auto napi = actuators::NapiNetlink::open();
  if (!napi) {
    std::cerr << fmt::format("dimctl napi show: {}\n", napi.error().message());
    return kExitFailure;
  }
  if (auto a = (*napi)->available(); !a) {
    std::cerr << fmt::format("dimctl napi show: {}\n", a.error().message());
    return kExitFailure;
  }
  std::vector<std::pair<std::string, seam::Napi>> rows;
  for (const auto& [name, idx] : *devs) {
    auto l = (*napi)->list(idx);
    if (!l && l.error().code() == ENODEV && opt.devices.empty()) continue;  // went away meanwhile
    if (!l) {
      std::cerr << fmt::format("dimctl napi show: {}: {}\n", name, l.error().message());
      return kExitFailure;
    }
    for (auto& n : *l) rows.emplace_back(name, std::move(n));
  }
  if (opt.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [name, n] : rows) {
      j.push_back({{"device", name},
                   {"ifindex", n.ifindex},
                   {"napi_id", n.id},
                   {"irq", opt_json(n.irq)},
                   {"defer_hard_irqs", opt_json(n.config.defer_hard_irqs)},
                   {"gro_flush_timeout_ns", opt_json(n.config.gro_flush_timeout_ns)},
                   {"irq_suspend_timeout_ns", opt_json(n.config.irq_suspend_timeout_ns)}});
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  if (rows.empty()) {
    std::cout << "no NAPIs (veth has one only while GRO or XDP is on)\n";
    return kExitOk;
  }
  std::cout << fmt::format("{:<16} {:>8} {:>6} {:>15} {:>22} {:>24}\n", "DEVICE", "NAPI", "IRQ",
                           "DEFER-HARD-IRQS", "GRO-FLUSH-TIMEOUT(ns)", "IRQ-SUSPEND-TIMEOUT(ns)");
  for (const auto& [name, n] : rows) {
    std::cout << fmt::format("{:<16} {:>8} {:>6} {:>15} {:>22} {:>24}\n", name, n.id,
                             opt_str(n.irq), opt_str(n.config.defer_hard_irqs),
                             opt_str(n.config.gro_flush_timeout_ns),
                             opt_str(n.config.irq_suspend_timeout_ns));
  }
  return kExitOk;
}

const Registrar registrar("napi", [](CLI::App& app, Runner& runner) {
  auto opt = std::make_shared<NapiOptions>();
  CLI::App* sub = app.add_subcommand("napi", "NAPIs and their software moderation (netdev)");
  sub->require_subcommand(1);
  CLI::App* show =
      sub->add_subcommand("show", "List NAPIs with defer-hard-irqs and the timeouts (napi-get)");
  show->add_option("DEV", opt->devices, "devices (default: every device of the namespace)");
  show->add_flag("--json", opt->json, "JSON output");
  runner = [opt, show] {
    if (show->parsed()) return run_show(*opt);
    return kExitUsage;
  };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
