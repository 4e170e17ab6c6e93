// dimctl check-config [FILE] [--devices] [--web.config.file WEB]: validate a config, and the web
// config the daemon would serve with, without touching any device.
//
// Exit 0 when the files are valid (conflicts found by --devices are reported, not fatal: they are
// what the daemon would refuse, and the operator may be checking on another host), 2 when a
// file cannot be read or is invalid (for the web config: what `dimctl run` would refuse at
// start-up, certificate and key loaded).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "command.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/common/net_driver.h"
#include "dimctl/config/config.h"
#include "dimctl/config/config_policy.h"
#include "dimctl/exporters/web_config.h"

namespace dimctl::cli {
namespace {

namespace fs = std::filesystem;
using config::Config;
using seam::DeviceInfo;
using seam::DeviceKind;

struct Options {
  std::string file;
  bool devices = false;
  std::string sysfs = "/sys";
  std::string web_config;
};

std::vector<DeviceInfo> host_devices(const Options& opt) {
  std::vector<DeviceInfo> out;
  const bool real_sysfs = opt.sysfs == "/sys";
  for (auto [kind, cls] : {std::pair{DeviceKind::kNet, "class/net"},
                           std::pair{DeviceKind::kRdma, "class/infiniband"}}) {
    std::error_code ec;
    fs::directory_iterator it(fs::path(opt.sysfs) / cls, ec);
    if (ec) continue;  // no RDMA devices (or no ib_core) is normal
    for (const auto& entry : it) {
      DeviceInfo dev;
      dev.kind = kind;
      dev.name = entry.path().filename().string();
      // On the real /sys, net devices are resolved exactly as the daemon does (net_driver():
      // ethtool first, which also names virtual devices' drivers); elsewhere sysfs is all we have.
      if (kind == DeviceKind::kNet && real_sysfs)
        dev.driver = net_driver(dev.name);
      else
        dev.driver = sysfs_driver(entry.path());
      out.push_back(std::move(dev));
    }
  }
  std::sort(out.begin(), out.end(), [](const DeviceInfo& a, const DeviceInfo& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  });
  return out;
}

std::string match_text(const config::Match& m) {
  std::vector<std::string> parts;
  if (!m.interface.empty())
    parts.push_back(fmt::format("interface={}", fmt::join(m.interface, ",")));
  if (!m.driver.empty()) parts.push_back(fmt::format("driver={}", fmt::join(m.driver, ",")));
  if (!m.rdma_device.empty())
    parts.push_back(fmt::format("rdma_device={}", fmt::join(m.rdma_device, ",")));
  return fmt::format("{}", fmt::join(parts, " "));
}

void print_summary(const Config& cfg) {
  std::cout << fmt::format("{}: OK\n", cfg.source);
  std::cout << fmt::format("  mode: {} (devices named by no rule: {}, never written)\n",
                           config::mode_name(cfg.mode),
                           config::mode_name(std::min(cfg.mode, seam::Mode::kShadow)));
  std::cout << fmt::format("  interval: {}, metrics: {}, state_file: {}\n",
                           format_duration(cfg.interval_ns), cfg.metrics.listen.to_string(),
                           cfg.state_file);
  std::cout << fmt::format("  rules: {}\n", cfg.rules.size());
  for (const auto& r : cfg.rules) {
    std::string algo =
        r.algorithm ? config::algorithm_name(*r.algorithm, r.static_index) : std::string("default");
    if (r.compare) algo += fmt::format(" (compare: {})", config::compare_name(*r.compare));
    std::cout << fmt::format("    {}: mode {}, algorithm {}, match {}\n", r.name,
                             config::mode_name(r.mode.value_or(cfg.mode)), algo,
                             match_text(r.match));
  }
}

// The algorithm, and the policy compared with it ("model vs dim").
std::string algorithm_text(const seam::DevicePolicy& p) {
  std::string out = config::algorithm_name(p.algorithm, p.static_index);
  if (p.compare) out += seam::is_model(p.algorithm) ? " vs dim" : " vs model";
  return out;
}

int print_devices(const config::ConfigPolicy& policy, const Options& opt) {
  auto devices = host_devices(opt);
  std::cout << fmt::format("devices on this host ({}):\n", opt.sysfs);
  if (devices.empty()) {
    std::cout << "  none found\n";
    return 0;
  }
  std::cout << fmt::format("  {:<5} {:<16} {:<14} {:<16} {:<8} {:<10} {}\n", "KIND", "DEVICE",
                           "DRIVER", "RULE", "MODE", "ALGORITHM", "NOTE");
  int conflicts = 0;
  std::vector<bool> used(policy.config().rules.size(), false);
  for (const auto& dev : devices) {
    seam::DevicePolicy p = policy.policy_for(dev);
    auto names = policy.matching_rules(dev);
    for (size_t i = 0; i < policy.config().rules.size(); ++i)
      if (std::find(names.begin(), names.end(), policy.config().rules[i].name) != names.end())
        used[i] = true;
    std::string note;
    if (!p.conflict.empty()) {
      note = "CONFLICT, refused: " + p.conflict;
      ++conflicts;
    } else if (p.rule.empty()) {
      note = "no rule: never written";
    } else if (p.mode == seam::Mode::kEnforce) {
      note = "allowlisted: written";
    } else {
      note = "allowlisted";
    }
    std::cout << fmt::format("  {:<5} {:<16} {:<14} {:<16} {:<8} {:<10} {}\n",
                             dev.kind == DeviceKind::kNet ? "net" : "rdma", dev.name,
                             dev.driver.empty() ? "-" : dev.driver, p.rule.empty() ? "-" : p.rule,
                             config::mode_name(p.mode), algorithm_text(p), note);
  }
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      std::cout << fmt::format("  note: rule '{}' matches no device on this host\n",
                               policy.config().rules[i].name);
  if (conflicts)
    std::cout << fmt::format("  {} device(s) in conflict: the daemon observes them only\n",
                             conflicts);
  return conflicts;
}

// The web config's summary, or its problems on stderr (false).
bool check_web_config(const std::string& path) {
  auto web = exporters::load_web_config(path);
  if (!web) {
    std::string text = web.error().message();
    size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    std::cerr << text << "\n";
    std::cerr << fmt::format("{}: invalid ({} error{})\n", path, n, n == 1 ? "" : "s");
    return false;
  }
  std::cout << fmt::format("{}: OK\n", path);
  std::cout << fmt::format("  tls: {}, basic auth users: {}, headers: {}\n",
                           web->tls.enabled() ? "on" : "off", web->users.size(),
                           web->headers.size());
  return true;
}

int run(const Options& opt) {
  if (opt.file.empty() && opt.web_config.empty()) {
    std::cerr << "dimctl check-config: give a config FILE, --web.config.file WEB, or both\n";
    return kExitUsage;
  }
  const bool web_ok = opt.web_config.empty() || check_web_config(opt.web_config);
  if (opt.file.empty()) return web_ok ? kExitOk : kExitUsage;
  auto cfg = config::load_config(opt.file);
  if (!cfg) {
    std::string text = cfg.error().message();
    size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    std::cerr << text << "\n";
    std::cerr << fmt::format("{}: invalid ({} error{})\n", opt.file, n, n == 1 ? "" : "s");
    return kExitUsage;
  }
  print_summary(*cfg);
  // The web config the file names, when the command line names none.
  const bool named_ok = !opt.web_config.empty() || cfg->metrics.web_config.empty() ||
                        check_web_config(cfg->metrics.web_config);
  if (opt.devices) {
    config::ConfigPolicy policy(std::move(*cfg));
    print_devices(policy, opt);
  }
  return web_ok && named_ok ? kExitOk : kExitUsage;
}

const Registrar registrar("check-config", [](CLI::App& app, Runner& runner) {
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "check-config", "Validate a config file (errors name file:line:column, key, reason; exit 2)");
  sub->add_option("FILE", opt->file, "config file (YAML)");
  sub->add_option("--web.config.file", opt->web_config,
                  "also check this web config (TLS, basic auth, headers) as `dimctl run` loads it");
  sub->add_flag("--devices", opt->devices,
                "also evaluate the rules against this host's net and RDMA devices");
  sub->add_option("--sysfs", opt->sysfs,
                  "sysfs root to enumerate devices from (tests, containers with the host's /sys "
                  "mounted elsewhere)")
      ->capture_default_str();
  runner = [opt] { return run(*opt); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
