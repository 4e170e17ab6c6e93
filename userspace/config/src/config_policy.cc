// ConfigPolicy: rules -> DevicePolicy, with the allowlist cap and conflict refusal.
#include "dimctl/config/config_policy.h"

#include <algorithm>

#include "dimctl/common/duration.h"
#include "dimctl/common/glob.h"

namespace dimctl::config {

using seam::Algorithm;
using seam::DeviceKind;
using seam::DevicePolicy;
using seam::Mode;

namespace {

Algorithm default_algorithm(DeviceKind kind) {
  return kind == DeviceKind::kNet ? Algorithm::kNetEqe : Algorithm::kRdma;
}

std::string table_text(const std::optional<std::array<dim::Profile, 5>>& t) {
  if (!t) return "default";
  std::string out = "[";
  for (size_t i = 0; i < t->size(); ++i) {
    const dim::Profile& p = (*t)[i];
    out += fmt::format("{}{}/{}", i ? " " : "", p.usec, p.pkts);
    if (p.comps) out += fmt::format("/{}", p.comps);
  }
  return out + "]";
}

bool same_table(const std::optional<std::array<dim::Profile, 5>>& a,
                const std::optional<std::array<dim::Profile, 5>>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  for (size_t i = 0; i < a->size(); ++i) {
    const dim::Profile& x = (*a)[i];
    const dim::Profile& y = (*b)[i];
    if (x.usec != y.usec || x.pkts != y.pkts || x.comps != y.comps) return false;
  }
  return true;
}

std::string model_text(const seam::ModelSettings& m) {
  return fmt::format(
      "{{completion_cost {}{}, interrupt_cost {}{}, max_changes {}, timer {}, shared_load {}, "
      "costs {}, objective {}}}",
      format_duration(m.completion_cost_ns), m.completion_cost_set ? "" : " (default)",
      format_duration(m.interrupt_cost_ns), m.interrupt_cost_set ? "" : " (default)",
      m.max_changes_per_s, m.timer ? timer_name(*m.timer) : "by table", m.shared_load,
      m.measured_costs ? "measured" : "defaults",
      m.objective == dim::Objective::kEfficiency
          ? fmt::format("efficiency (latency_budget {})", format_duration(m.latency_budget_ns))
          : std::string("latency"));
}

std::string software_text(const std::optional<std::array<seam::SoftwareProfile, 5>>& t) {
  if (!t) return "software_profiles default";
  std::string out = "software_profiles [";
  for (size_t i = 0; i < t->size(); ++i) {
    out += fmt::format("{}{}/{}", i ? " " : "",
                       format_duration(static_cast<int64_t>((*t)[i].gro_flush_timeout_ns)),
                       (*t)[i].defer_hard_irqs);
  }
  return out + "]";
}

std::string kernel_dim_text(const std::optional<bool>& v) {
  if (!v) return "kernel_dim unset";
  return *v ? "kernel_dim on" : "kernel_dim off";
}

}  // namespace

bool rule_matches(const Rule& rule, const seam::DeviceInfo& dev) {
  if (dev.kind == DeviceKind::kNet) {
    if (!rule.applies_to_net()) return false;
    if (!rule.match.interface.empty() && !matches_any_glob(rule.match.interface, dev.name))
      return false;
  } else {
    if (!rule.applies_to_rdma()) return false;
    if (!rule.match.rdma_device.empty() && !matches_any_glob(rule.match.rdma_device, dev.name))
      return false;
  }
  // An unknown driver ("") matches no driver selector: a rule that names a driver must not
  // reach a device whose driver could not be established.
  if (!rule.match.driver.empty() &&
      (dev.driver.empty() || !matches_any_glob(rule.match.driver, dev.driver)))
    return false;
  return true;
}

DevicePolicy default_policy(DeviceKind kind, Mode global) {
  DevicePolicy p;
  p.mode = std::min(global, Mode::kShadow);  // allowlist: unnamed devices are never written
  p.algorithm = default_algorithm(kind);
  return p;
}

DevicePolicy policy_from_rule(const Rule& rule, DeviceKind kind, Mode global) {
  DevicePolicy p;
  p.mode = rule.mode.value_or(global);
  p.algorithm = rule.algorithm.value_or(default_algorithm(kind));
  p.static_index = p.algorithm == Algorithm::kStatic ? rule.static_index : 0;
  if (rule.min_profile) p.min_profile = *rule.min_profile;
  if (rule.max_profile) p.max_profile = *rule.max_profile;
  if (kind == DeviceKind::kNet) {
    p.rx_profiles = rule.rx_profile;
    p.tx_profiles = rule.tx_profile;
    p.method = rule.method.value_or(seam::Method::kEthtool);
    p.software_profiles = rule.software_profiles;
  } else {
    p.rdma_kernel_dim = rule.kernel_dim;
  }
  p.compare = rule.compare.has_value();
  p.model = rule.model.value_or(seam::ModelSettings{});
  p.rate_limit_ns = rule.rate_limit_ns;
  p.combine = rule.combine;
  p.take_over_adaptive = rule.take_over_adaptive;
  p.rule = rule.name;
  return p;
}

std::vector<PolicyDiff> diff_policies(const DevicePolicy& a, const DevicePolicy& b) {
  std::vector<PolicyDiff> out;
  auto add = [&](bool differ, std::string l, std::string r) {
    if (differ) out.push_back({std::move(l), std::move(r)});
  };
  add(a.mode != b.mode, fmt::format("mode {}", mode_name(a.mode)),
      fmt::format("mode {}", mode_name(b.mode)));
  add(a.algorithm != b.algorithm || a.static_index != b.static_index,
      fmt::format("algorithm {}", algorithm_name(a.algorithm, a.static_index)),
      fmt::format("algorithm {}", algorithm_name(b.algorithm, b.static_index)));
  add(a.min_profile != b.min_profile, fmt::format("profiles.min {}", a.min_profile),
      fmt::format("profiles.min {}", b.min_profile));
  auto max_text = [](uint8_t v) {
    return v == 255 ? std::string("profiles.max unset") : fmt::format("profiles.max {}", v);
  };
  add(a.max_profile != b.max_profile, max_text(a.max_profile), max_text(b.max_profile));
  add(!same_table(a.rx_profiles, b.rx_profiles), "rx_profile " + table_text(a.rx_profiles),
      "rx_profile " + table_text(b.rx_profiles));
  add(!same_table(a.tx_profiles, b.tx_profiles), "tx_profile " + table_text(a.tx_profiles),
      "tx_profile " + table_text(b.tx_profiles));
  add(a.rate_limit_ns != b.rate_limit_ns,
      fmt::format("rate_limit {}", format_duration(a.rate_limit_ns)),
      fmt::format("rate_limit {}", format_duration(b.rate_limit_ns)));
  add(a.combine != b.combine, fmt::format("combine {}", combine_name(a.combine)),
      fmt::format("combine {}", combine_name(b.combine)));
  add(a.take_over_adaptive != b.take_over_adaptive,
      a.take_over_adaptive ? "adaptive take-over" : "adaptive leave",
      b.take_over_adaptive ? "adaptive take-over" : "adaptive leave");
  add(a.rdma_kernel_dim != b.rdma_kernel_dim, kernel_dim_text(a.rdma_kernel_dim),
      kernel_dim_text(b.rdma_kernel_dim));
  add(a.compare != b.compare, a.compare ? "compare on" : "compare off",
      b.compare ? "compare on" : "compare off");
  add(a.model != b.model, "model " + model_text(a.model), "model " + model_text(b.model));
  add(a.method != b.method, fmt::format("method {}", method_name(a.method)),
      fmt::format("method {}", method_name(b.method)));
  add(a.software_profiles != b.software_profiles, software_text(a.software_profiles),
      software_text(b.software_profiles));
  return out;
}

std::vector<std::string> ConfigPolicy::matching_rules(const seam::DeviceInfo& dev) const {
  std::vector<std::string> out;
  for (const Rule& r : cfg_.rules)
    if (rule_matches(r, dev)) out.push_back(r.name);
  return out;
}

DevicePolicy ConfigPolicy::policy_for(const seam::DeviceInfo& dev) const {
  const Rule* first = nullptr;
  DevicePolicy chosen;
  std::vector<std::string> clashes;
  for (const Rule& r : cfg_.rules) {
    if (!rule_matches(r, dev)) continue;
    DevicePolicy p = policy_from_rule(r, dev.kind, cfg_.mode);
    if (!first) {
      first = &r;
      chosen = std::move(p);
      continue;
    }
    // Identical settings are harmless overlap (e.g. a driver rule and a name rule that agree);
    // anything else is refused rather than resolved by file order.
    auto diffs = diff_policies(chosen, p);
    if (diffs.empty()) continue;
    std::vector<std::string> l, rr;
    for (auto& d : diffs) {
      l.push_back(std::move(d.left));
      rr.push_back(std::move(d.right));
    }
    clashes.push_back(fmt::format("'{}' ({}) and '{}' ({})", first->name, fmt::join(l, ", "),
                                  r.name, fmt::join(rr, ", ")));
  }
  if (!first) return default_policy(dev.kind, cfg_.mode);
  if (clashes.empty()) return chosen;
  DevicePolicy refused = default_policy(dev.kind, cfg_.mode);
  refused.mode = Mode::kObserve;
  refused.conflict = fmt::format("matched by rules {}", fmt::join(clashes, "; and by "));
  return refused;
}

}  // namespace dimctl::config
