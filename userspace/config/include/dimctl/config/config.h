// Config: the operator's YAML configuration as one plain aggregate, plus its loader.
//
// The loader validates everything it can without touching the host (types, ranges, globs,
// cross-field rules) and reports every problem as "file:line:column: key.path: reason", so a
// bad config is refused before any device is looked at. The format is documented in
// docs/CONFIG.md and described by deploy/config/dimctl.schema.json; keep the three in step.
//
// Durations are dimctl/common/duration.h's; the names of values are dimctl/seam/names.h's
// tables (one spelling everywhere), with the config's own below.
//
// Thread-safety: plain values; parsing has no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dim/profile.h"
#include "dimctl/common/control_period.h"
#include "dimctl/common/diagnostic.h"
#include "dimctl/common/listen_address.h"
#include "dimctl/common/name_table.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/policy.h"

namespace dimctl::config {

// Where a value came from, for diagnostics produced after parsing (1-based, 0 = unknown).
using SourceMark = dimctl::SourceMark;

// Device selectors of a rule. A selector that is given must match; selectors that do not apply
// to a device's kind are ignored for it (see Rule::applies_to_net / applies_to_rdma).
struct Match {
  std::vector<std::string> interface;    // net device name globs (fnmatch(3))
  std::vector<std::string> driver;       // kernel driver name globs, net and RDMA devices
  std::vector<std::string> rdma_device;  // IB device name globs
};

// `compare:` of a rule: the policy run beside the algorithm for comparison (never written).
enum class CompareWith : uint8_t {
  kDim,    // kernel-identical DIM beside algorithm model / model-cqe
  kModel,  // the cost model beside a DIM algorithm (net-eqe, net-cqe, rdma)
};
inline constexpr NameTable<CompareWith, 2> kCompareNames{{{
    {CompareWith::kDim, "dim"},
    {CompareWith::kModel, "model"},
}}};

// One `devices:` entry. Optional fields left unset fall back to the global mode or to the
// per-kind defaults of seam::DevicePolicy.
struct Rule {
  std::string name;  // unique, used as the `rule` label of metrics
  Match match;
  std::optional<seam::Mode> mode;            // unset: the global `mode`
  std::optional<seam::Algorithm> algorithm;  // unset: net-eqe for net, rdma for RDMA devices
  uint8_t static_index = 0;                  // with Algorithm::kStatic only
  std::optional<uint8_t> min_profile;        // profiles.min
  std::optional<uint8_t> max_profile;        // profiles.max
  std::optional<std::array<dim::Profile, 5>> rx_profile;  // custom net DIM tables
  std::optional<std::array<dim::Profile, 5>> tx_profile;
  int64_t rate_limit_ns = 100'000'000;  // minimum time between two writes to a device
  seam::CombinePolicy combine = seam::CombinePolicy::kBusiestQueue;
  bool take_over_adaptive = true;  // adaptive: take-over (true) | leave (false)
  std::optional<bool> kernel_dim;  // RDMA only; unset = leave the kernel switch alone
  std::optional<CompareWith> compare;
  std::optional<seam::ModelSettings> model;  // `model:`; unset = the defaults
  // `method:`; unset = ethtool (a config from before napi keeps writing what it wrote).
  std::optional<seam::Method> method;
  // `software_profiles:` (methods napi and auto): per profile index; unset = the defaults.
  std::optional<std::array<seam::SoftwareProfile, 5>> software_profiles;
  SourceMark mark;  // where the rule starts in the file

  // Which device kinds the rule can match: `interface` names net devices, `rdma_device` names
  // RDMA devices, a driver-only rule names both; a net or RDMA algorithm narrows it further.
  bool applies_to_net() const;
  bool applies_to_rdma() const;
};

struct MetricsConfig {
  // IPv4/IPv6 literal, "localhost", or "" (":port": every IPv4 and IPv6 address, dual-stack);
  // what the exporter binds (the daemon's --web.listen-address replaces it, read by the same
  // parse_listen_address()).
  ListenAddress listen = default_listen_address();
  uint32_t max_queue_series = 4096;  // per-queue series cap (1..1000000)
  uint32_t max_cq_series = 4096;     // per-CQ series cap (1..1000000)
  // How often the state behind /metrics, /api/v1/state, `dimctl status` and `dimctl top` is
  // rebuilt (0..60s; at most once per interval, 0 = every interval). DIM decides every
  // interval regardless; building the view of every queue is most of a period's cost.
  int64_t publish_interval_ns = 1'000'000'000;
  // The exporter-toolkit web config (TLS, client certificates, basic auth, headers; docs/
  // METRICS.md, "Securing the endpoint"), an absolute path; "" = plain HTTP, no authentication.
  // --web.config.file overrides it. Checked by the exporter's loader, not here.
  std::string web_config;
};

struct CollectorsConfig {
  bool napi = true;                    // napi:napi_poll counters per NIC queue
  bool rdma = true;                    // rdma_core CQ counters (needs ib_core)
  std::vector<std::string> skb_bytes;  // net device globs for the per-skb byte counter (costly)
};

struct Config {
  // Global default mode: the mode of rules that do not set one. Devices matched by no rule get
  // this mode capped at shadow, so nothing the operator did not name is ever written.
  seam::Mode mode = seam::Mode::kShadow;
  int64_t interval_ns = kDefaultControlPeriodNs;      // sampling period, 1ms..10s
  std::string state_file = "/run/dimctl/state.json";  // originals for restore; absolute path
  MetricsConfig metrics;
  CollectorsConfig collectors;
  std::vector<Rule> rules;  // `devices:`, in file order
  std::string source;       // file name the config was read from (diagnostics, status)
};

// One validation problem. to_string() is "source:line:column: path: reason".
using Diagnostic = dimctl::Diagnostic;

// Parses and validates; on failure `diags` holds every problem found (in file order, capped),
// and the returned Config must not be used.
bool parse_config_diagnostics(std::string_view yaml, std::string_view source_name, Config& out,
                              std::vector<Diagnostic>& diags);

// Result-style wrappers. On failure the Error's context is the diagnostics' to_string(), one
// per line (errno 0), or the OS error for an unreadable file (errno set).
Result<Config> parse_config(std::string_view yaml, std::string_view source_name);

Result<Config> load_config(const std::string& path);

// The words of values, for check-config, reload diffs and messages (names.cc).
std::string_view mode_name(seam::Mode m);
// As a rule writes it: "net-eqe", "static:2".
std::string algorithm_name(seam::Algorithm a, uint8_t static_index = 0);
std::string_view combine_name(seam::CombinePolicy c);
std::string_view compare_name(CompareWith c);
std::string_view timer_name(dim::TimerMode t);
std::string_view method_name(seam::Method m);

}  // namespace dimctl::config
