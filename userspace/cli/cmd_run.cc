// `dimctl run --config FILE`: the daemon.
//
// Start-up order is chosen so that nothing is half-applied: the config is validated first
// (exit 2), then the effective capabilities are checked against what the config needs (exit 2,
// each missing capability named with the feature that needs it), then a stale state file from a
// crashed run is restored, then the collector, actuators and HTTP server are opened (any failure
// exits 1 before a single write), and only then does the control loop run. SIGTERM/SIGINT are taken
// synchronously by the control thread (sigtimedwait), which owns the actuators and restores every
// original before exiting 0. SIGHUP reloads the config (an invalid new config is logged and the old
// one kept): what can change live does (config::diff_for_reload), each key that needs a restart is
// logged and kept.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "dimctl/actuators/ethtool_netlink.h"
#include "dimctl/actuators/napi_netlink.h"
#include "dimctl/actuators/rdma_netlink.h"
#include "dimctl/collector/bpf_collector.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/common/net_driver.h"
#include "dimctl/config/capabilities.h"
#include "dimctl/config/config.h"
#include "dimctl/config/config_policy.h"
#include "dimctl/config/reload.h"
#include "dimctl/controller/controller.h"
#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/state_collector.h"
#include "dimctl/exporters/web_config.h"
#include "dimctl/seam/clock.h"
#include "dimctl/state/json_originals_store.h"

namespace dimctl::cli {
namespace {

struct RunArgs {
  std::string config_path;
  std::string state_file;  // overrides the config's state_file
  std::string listen;      // overrides metrics.listen
  // `listen` parsed by run_daemon() before anything starts (parse_listen_address, as the config
  // reads metrics.listen): what was checked is what binds, and what a reload keeps.
  std::optional<ListenAddress> listen_address;
  std::string web_config;  // --web.config.file: TLS, basic auth, headers for /metrics
  bool health_without_auth = false;
  // --no-capability-check: the kernel alone refuses what the process may not do (how
  // tests/kernel/privilege measures what each feature needs); hidden from --help.
  bool check_capabilities = true;
  std::string log_level = "info";
};

// The policy the controller holds a reference to; SIGHUP swaps the config underneath.
class ReloadablePolicy final : public seam::PolicySource {
 public:
  explicit ReloadablePolicy(config::Config cfg)
      : current_(std::make_unique<config::ConfigPolicy>(std::move(cfg))) {}
  seam::DevicePolicy policy_for(const seam::DeviceInfo& dev) const override {
    return current_->policy_for(dev);
  }
  void replace(config::Config cfg) {
    current_ = std::make_unique<config::ConfigPolicy>(std::move(cfg));
  }

 private:
  std::unique_ptr<config::ConfigPolicy> current_;
};

void log_restore(const state::RestoreReport& report, const std::string& why) {
  for (const auto& r : report.results) {
    if (r.outcome == state::RestoreOutcome::kFailed) {
      spdlog::error("{}: {} {}: {}", why, r.device, state::to_string(r.outcome), r.detail);
    } else {
      spdlog::info("{}: {} {}: {}", why, r.device, state::to_string(r.outcome), r.detail);
    }
  }
  if (report.file_error) spdlog::error("{}: state file: {}", why, report.file_error->message());
}

// netdev netlink for restoring NAPI originals when the daemon has none of its own (no rule asks
// for napi), opened only when the file holds some; null when it cannot be opened: those
// records then fail and stay in the file for `dimctl restore`.
std::unique_ptr<actuators::NapiNetlink> open_napi_for(const state::JsonOriginalsStore& store) {
  if (store.originals().napi.empty()) return nullptr;
  auto n = actuators::NapiNetlink::open();
  if (!n) {
    spdlog::error("netdev netlink: {}", n.error().message());
    return nullptr;
  }
  return std::move(*n);
}

// /healthz: the control loop published within three publish intervals (or three periods, if
// longer). Both can change on reload while the HTTP threads ask.
class Liveness {
 public:
  Liveness(exporters::StateGetter state, int64_t period_ns) : state_(std::move(state)) {
    set_period(period_ns);
  }
  void set_period(int64_t period_ns) {
    auto alive = exporters::liveness_from_state(state_, std::chrono::nanoseconds(period_ns));
    std::lock_guard<std::mutex> lock(mu_);
    alive_ = std::move(alive);
  }
  bool operator()() const {
    std::lock_guard<std::mutex> lock(mu_);
    return alive_();
  }

 private:
  exporters::StateGetter state_;
  mutable std::mutex mu_;
  std::function<bool()> alive_;  // guarded by mu_
};

// Logs (as errors, after `who: `) each need whose capability the process lacks; true when none
// is missing (or the check is off). When the set cannot be read at all the kernel decides later (a
// warning, true).
bool capabilities_held(const RunArgs& args, const std::vector<config::CapabilityNeed>& needs,
                       std::string_view who) {
  if (!args.check_capabilities) return true;
  auto eff = config::effective_capabilities();
  if (!eff) {
    spdlog::warn("{}: capabilities not checked: {}", who, eff.error().message());
    return true;
  }
  const auto missing = config::missing_capabilities(needs, *eff);
  for (const auto& line : config::describe_missing(missing)) spdlog::error("{}: {}", who, line);
  return missing.empty();
}

int64_t liveness_period(const config::Config& cfg) {
  return std::max(cfg.interval_ns, cfg.metrics.publish_interval_ns);
}

timespec to_timespec(int64_t ns) {
  if (ns < 0) ns = 0;
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

// Whether a rule runs or compares the cost model: only then are cpu_time.bpf.c's programs loaded
// (they run on every interrupt and softirq of the host) for the per-core costs and saturation
// (docs/controller/costs.md).
bool config_runs_model(const config::Config& c) {
  for (const config::Rule& r : c.rules) {
    if (r.algorithm == seam::Algorithm::kModel || r.algorithm == seam::Algorithm::kModelCqe ||
        r.compare == config::CompareWith::kModel) {
      return true;
    }
  }
  return false;
}

// SIGHUP: loads the file again; an invalid one changes nothing. Applies what can change live
// (config::diff_for_reload), logs every change and each key that needs a restart, and leaves
// `running` equal to what now runs.
void reload(const RunArgs& args, config::Config& running, collector::BpfCollector& collector,
            controller::Controller& ctl, ReloadablePolicy& policy, Liveness& alive,
            exporters::StateCollector& metrics) {
  auto fresh = config::load_config(args.config_path);
  if (!fresh) {
    spdlog::error("reload: {} (keeping the running config)", fresh.error().message());
    return;
  }
  if (!args.state_file.empty()) fresh->state_file = args.state_file;
  if (args.listen_address) fresh->metrics.listen = *args.listen_address;
  if (!args.web_config.empty()) fresh->metrics.web_config = args.web_config;
  config::ReloadDiff diff = config::diff_for_reload(running, *fresh);
  config::Config& next = diff.next;
  // A reload that would make the daemon write (or load) what it has no capability for is refused
  // like an invalid file: nothing of it is applied.
  if (!capabilities_held(args, config::required_capabilities(next, config::probe_host()),
                         "reload")) {
    spdlog::error(
        "reload: {} needs capabilities this process does not have; keeping the running "
        "config",
        args.config_path);
    return;
  }

  if (next.collectors.skb_bytes != running.collectors.skb_bytes) {
    if (auto r = collector.set_byte_counter_devices(next.collectors.skb_bytes); !r) {
      // Not attached with a device filter (e.g. the program failed to attach at start).
      spdlog::warn("reload: collectors.skb_bytes cannot change live: {}", r.error().message());
      auto it = std::find_if(diff.applied.begin(), diff.applied.end(),
                             [](const auto& c) { return c.key == "collectors.skb_bytes"; });
      if (it != diff.applied.end()) {
        diff.needs_restart.push_back(*it);
        diff.applied.erase(it);
      }
      next.collectors.skb_bytes = running.collectors.skb_bytes;
    }
  }
  if (config_runs_model(next) != config_runs_model(running)) {
    spdlog::warn(
        "reload: the per-core CPU times (cpu_time programs) follow the rules at start; "
        "restart for the cost model's measured costs to {}",
        config_runs_model(next) ? "start" : "stop");
  }
  ctl.set_reloadable_options(next.metrics.publish_interval_ns, next.mode);
  alive.set_period(liveness_period(next));
  metrics.set_series_caps(next.metrics.max_queue_series, next.metrics.max_cq_series);
  policy.replace(next);
  ctl.reload_policies();

  for (const auto& c : diff.applied) {
    spdlog::info("reload: {}: {} -> {} (applied)", c.key, c.old_value, c.new_value);
  }
  for (const auto& c : diff.needs_restart) {
    spdlog::warn("reload: {}: {} -> {} takes effect after a restart; keeping {}", c.key,
                 c.old_value, c.new_value, c.old_value);
  }
  if (auto devs = collector.byte_counter_devices();
      devs && next.collectors.skb_bytes != running.collectors.skb_bytes) {
    spdlog::info("collectors.skb_bytes [{}]: per-skb byte counter on [{}]{}",
                 fmt::join(next.collectors.skb_bytes, ", "), fmt::join(*devs, ", "),
                 devs->empty() ? " (no device matches yet)" : "");
  }
  spdlog::info("reload: {} loaded: {} change(s) applied, {} need a restart", args.config_path,
               diff.applied.size(), diff.needs_restart.size());
  running = std::move(next);
}

int run_daemon(RunArgs args) {
  auto level = spdlog::level::from_str(args.log_level);
  if (level == spdlog::level::off && args.log_level != "off") {
    spdlog::error("dimctl run: unknown --log-level '{}'", args.log_level);
    return kExitUsage;
  }
  spdlog::set_level(level);
  if (!args.listen.empty()) {
    auto a = parse_listen_address(args.listen);
    if (!a) {
      spdlog::error("dimctl run: --web.listen-address: {}", a.error().message());
      return kExitUsage;
    }
    args.listen_address = *a;
  }

  auto cfg = config::load_config(args.config_path);
  if (!cfg) {
    spdlog::error("dimctl run: {}", cfg.error().message());
    return kExitUsage;
  }
  if (!args.state_file.empty()) cfg->state_file = args.state_file;
  if (args.listen_address) cfg->metrics.listen = *args.listen_address;
  int64_t period_ns = cfg->interval_ns;
  // Refused like the config (exit 2): a daemon that cannot secure its endpoint as asked must not
  // serve it unsecured.
  std::shared_ptr<const exporters::WebConfig> web;
  if (!args.web_config.empty()) cfg->metrics.web_config = args.web_config;
  if (!cfg->metrics.web_config.empty()) {
    auto w = exporters::load_web_config(cfg->metrics.web_config);
    if (!w) {
      spdlog::error("dimctl run: {}: {}",
                    args.web_config.empty() ? "metrics.web_config" : "--web.config.file",
                    w.error().message());
      return kExitUsage;
    }
    web = std::make_shared<const exporters::WebConfig>(std::move(*w));
  }

  // Before anything is opened, loaded or written: the capabilities the config needs (bounding set,
  // container securityContext or ambient set too small), each missing one named with the feature
  // that needs it. Exit 2, like a config error: the operator fixes the grant or the config.
  const auto needs = config::required_capabilities(*cfg, config::probe_host());
  if (!capabilities_held(args, needs, "dimctl run")) {
    spdlog::error(
        "dimctl run: nothing was loaded or changed; grant the capabilities above or change the "
        "configuration (docs/SECURITY.md)");
    return kExitUsage;
  }
  spdlog::debug("capabilities needed by {}: {}", args.config_path,
                needs.empty() ? std::string("none") : config::capability_list(needs));

  // Signals are taken synchronously by this thread; block them before any thread starts so
  // the HTTP and libbpf threads never receive them.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto ethtool = actuators::EthtoolNetlink::open();
  if (!ethtool) {
    spdlog::error("dimctl run: ethtool netlink: {}", ethtool.error().message());
    return kExitFailure;
  }
  actuators::RdmaNetlink rdma_nl;
  seam::RdmaDimSwitch* rdma = rdma_nl.available() ? &rdma_nl : nullptr;
  if (!rdma)
    spdlog::info("rdma netlink unavailable ({}); RDMA DIM switch not managed",
                 rdma_nl.unavailable_reason());

  // Software moderation per NAPI, when a rule may write it (method napi or auto). A rule that
  // asks for napi on a kernel without napi-set is refused like a config error (exit 2, before
  // anything is written); auto falls back to ethtool.
  std::unique_ptr<actuators::NapiNetlink> napi_nl;
  seam::NapiActuator* napi = nullptr;
  const auto rule_with = [&](seam::Method m) -> const config::Rule* {
    for (const auto& r : cfg->rules) {
      if (r.method == m) return &r;
    }
    return nullptr;
  };
  const config::Rule* napi_rule = rule_with(seam::Method::kNapi);
  const config::Rule* auto_rule = rule_with(seam::Method::kAuto);
  if (napi_rule != nullptr || auto_rule != nullptr) {
    auto opened = actuators::NapiNetlink::open();
    Result<void> usable = opened ? (*opened)->available() : fail(opened.error());
    if (usable) {
      napi_nl = std::move(*opened);
      napi = napi_nl.get();
    } else if (napi_rule != nullptr) {
      spdlog::error(
          "dimctl run: rule '{}' (line {}) has method napi, which needs netdev napi-set "
          "(Linux >= 6.13): {}; nothing was written",
          napi_rule->name, napi_rule->mark.line, usable.error().message());
      return kExitUsage;
    } else {
      spdlog::warn(
          "rule '{}' (line {}) has method auto: no per-NAPI software moderation here "
          "({}); its devices are written with ethtool where the driver has coalescing",
          auto_rule->name, auto_rule->mark.line, usable.error().message());
    }
  }

  // A state file left by a run that died (SIGKILL, crash) holds the true originals: put them
  // back before anything else, unless its writer is still alive (two daemons must not fight).
  state::JsonOriginalsStore store(cfg->state_file);
  if (auto loaded = store.load(); !loaded) {
    spdlog::error("dimctl run: {}", loaded.error().message());
    return loaded.error().code() == 0 ? kExitUsage : kExitFailure;
  }
  if (!store.originals().empty()) {
    if (store.writer() && state::JsonOriginalsStore::writer_alive(*store.writer()) &&
        store.writer()->pid != getpid()) {
      spdlog::error("dimctl run: {} belongs to a running dimctl (pid {}); refusing to start",
                    cfg->state_file, store.writer()->pid);
      return kExitFailure;
    }
    if (!capabilities_held(args, {config::restore_need(cfg->state_file)}, "dimctl run")) {
      spdlog::error("dimctl run: nothing was changed; run `dimctl restore` with CAP_NET_ADMIN");
      return kExitUsage;
    }
    spdlog::warn("found state from a previous run in {}: restoring its originals first",
                 cfg->state_file);
    auto own_napi = napi == nullptr ? open_napi_for(store) : nullptr;
    auto report = store.restore_all(**ethtool, rdma, napi != nullptr ? napi : own_napi.get());
    log_restore(report, "stale-state restore");
    if (!report.all_restored()) {
      spdlog::error(
          "dimctl run: could not restore every original from {}; fix and run "
          "`dimctl restore`",
          cfg->state_file);
      return kExitFailure;
    }
  }

  collector::CollectorOptions copts;
  copts.enable_napi = cfg->collectors.napi;
  copts.enable_rdma = cfg->collectors.rdma;
  copts.count_bytes = !cfg->collectors.skb_bytes.empty();
  copts.count_bytes_devices = cfg->collectors.skb_bytes;
  copts.enable_cpu_times = config_runs_model(*cfg);
  auto collector = collector::BpfCollector::open(copts);
  if (!collector) {
    spdlog::error("dimctl run: BPF collector: {}", collector.error().message());
    return kExitFailure;
  }
  if (auto devs = (*collector)->byte_counter_devices()) {
    // The set follows devices as they come and go; the collector logs each change.
    spdlog::info("collectors.skb_bytes [{}]: per-skb byte counter on [{}]{}",
                 fmt::join(cfg->collectors.skb_bytes, ", "), fmt::join(*devs, ", "),
                 devs->empty() ? " (no device matches yet)" : "");
  }
  // The collector logged the programs that did not attach, once per cause (a missing module
  // leaves several idle).
  for (const auto& p : (*collector)->programs()) {
    if (p.attached) spdlog::info("bpf program {} attached", p.name);
  }

  ReloadablePolicy policy(*cfg);
  seam::MonotonicClock clock;
  controller::ControllerOptions ctl_opts;
  ctl_opts.publish_interval_ns = cfg->metrics.publish_interval_ns;
  ctl_opts.default_mode = cfg->mode;
  ctl_opts.config_path = args.config_path;
  ctl_opts.net_driver = [](const std::string& ifname) { return net_driver(ifname); };
  ctl_opts.rdma_driver = [](const std::string& ibdev) { return rdma_driver(ibdev); };
  ctl_opts.list_net_devices = [] { return net_device_names(); };
  ctl_opts.net_ifindex = [](const std::string& ifname) { return net_ifindex(ifname); };
  ctl_opts.net_name = [](uint32_t ifindex) { return net_name(ifindex); };
  controller::Controller ctl(**collector, **ethtool, rdma, napi, store, policy, clock, ctl_opts);

  exporters::StateGetter getter = [&ctl] { return ctl.state(); };
  exporters::CollectorOptions eopts;
  eopts.max_queue_series = cfg->metrics.max_queue_series;
  eopts.max_cq_series = cfg->metrics.max_cq_series;
  eopts.netlink_requests = [] { return netlink_requests(); };
  auto metrics = exporters::StateCollector::create(getter, eopts);
  if (!metrics) {
    spdlog::error("dimctl run: metrics: {}", metrics.error().message());
    return kExitFailure;
  }
  exporters::HttpServerOptions hopts;
  hopts.address = cfg->metrics.listen;
  hopts.collectables.push_back(*metrics);
  hopts.state = getter;
  // A view is published once per publish interval (or every period, if longer).
  auto alive = std::make_shared<Liveness>(getter, liveness_period(*cfg));
  hopts.alive = [alive] { return (*alive)(); };
  hopts.web = web;
  hopts.health_without_auth = args.health_without_auth;
  auto http = exporters::HttpServer::start(hopts);
  if (!http) {
    spdlog::error("dimctl run: metrics server: {}", http.error().message());
    return kExitFailure;
  }
  spdlog::info(
      "dimctl {} running: mode {}, period {}, {} rule(s), metrics on {}://{}/metrics{}",
      exporters::built_in_version(), config::mode_name(cfg->mode), format_duration(period_ns),
      cfg->rules.size(), (*http)->tls() ? "https" : "http", (*http)->bound_address(),
      web && !web->users.empty()
          ? (args.health_without_auth ? " (basic auth; health paths open)" : " (basic auth)")
          : "");

  uint64_t consecutive_errors = 0;
  int64_t next = clock.now_ns();
  for (;;) {
    if (auto r = ctl.step(); !r) {
      // One line per burst, not per period: a vanished collector would flood the log.
      if (consecutive_errors++ == 0) spdlog::error("sample failed: {}", r.error().message());
    } else if (consecutive_errors != 0) {
      spdlog::info("sampling recovered after {} failed period(s)", consecutive_errors);
      consecutive_errors = 0;
    }
    next += period_ns;
    const int64_t now = clock.now_ns();
    if (next < now) next = now;  // overran: skip, never burst to catch up
    timespec wait = to_timespec(next - now);
    siginfo_t info{};
    int sig = sigtimedwait(&sigs, &info, &wait);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("{}: restoring originals and exiting", strsignal(sig));
      break;
    }
    if (sig == SIGHUP) {
      reload(args, *cfg, **collector, ctl, policy, *alive, **metrics);
      period_ns = cfg->interval_ns;
    }
  }

  http->reset();
  int rc = kExitOk;
  if (auto r = ctl.restore(); !r) {
    spdlog::error("restore: {}", r.error().message());
    rc = kExitFailure;
  }
  // A device someone else changed after us (drift) now holds their value, not ours: neither this
  // exit nor a later `dimctl restore` may put our recorded original back over it.
  for (const auto& dev : ctl.state()->devices) {
    if (!dev.drifted) continue;
    spdlog::warn("not restoring {}: changed by someone else while dimctl managed it", dev.name);
    if (auto f = store.forget(dev.name); !f) {
      spdlog::error("{}", f.error().message());
      rc = kExitFailure;
    }
  }
  // The controller forgot in the store what it put back (one write per device); what remains (a
  // device that vanished, a failed write, originals of a device it never saw this run) gets its
  // own attempt here, and the file goes away only when everything is back.
  auto own_napi = napi == nullptr ? open_napi_for(store) : nullptr;
  auto report = store.restore_all(**ethtool, rdma, napi != nullptr ? napi : own_napi.get());
  log_restore(report, "exit restore");
  if (!report.all_restored()) rc = kExitFailure;
  return rc;
}

const Registrar kRun{
    "run", [](CLI::App& app, Runner& run) {
      auto args = std::make_shared<RunArgs>();
      CLI::App* sub =
          app.add_subcommand("run", "Run the controller: sample, decide, (enforce) apply, export");
      sub->add_option("-c,--config", args->config_path, "YAML config file")
          ->required()
          ->check(CLI::ExistingFile);
      sub->add_option("--state-file", args->state_file,
                      "Where originals are recorded (overrides the config)");
      sub->add_option("--web.listen-address", args->listen,
                      "host:port for /metrics (overrides metrics.listen)");
      sub->add_option("--web.config.file", args->web_config,
                      "exporter-toolkit web config: TLS, client certificates, basic auth, "
                      "headers (overrides metrics.web_config; docs/METRICS.md, \"Securing the "
                      "endpoint\")");
      sub->add_flag("--web.health-without-auth", args->health_without_auth,
                    "with basic_auth_users, /healthz and /readyz answer without credentials "
                    "(kubelet probes)");
      sub->add_option("--log-level", args->log_level, "trace|debug|info|warn|error|critical|off");
      sub->add_flag("!--no-capability-check", args->check_capabilities,
                    "Do not check the effective capabilities at start (measuring what the kernel "
                    "refuses)")
          ->group("");
      run = [args] { return run_daemon(*args); };
      return sub;
    }};

}  // namespace
}  // namespace dimctl::cli
