// The semantic pass over rules that were read cleanly: which device kinds a rule can match, the
// profile ranges and policies that make sense for them, and rules that contradict each other.
#include "check.h"

#include <algorithm>
#include <tuple>

#include "dimctl/config/config_policy.h"

namespace dimctl::config {

using seam::Algorithm;
using seam::Mode;
using yaml::Ctx;
using yaml::join;

namespace {

std::string kinds_text(const Rule& r) {
  if (!r.match.interface.empty() && r.match.rdma_device.empty())
    return "only net devices (match.interface)";
  if (r.match.interface.empty() && !r.match.rdma_device.empty())
    return "only RDMA devices (match.rdma_device)";
  return "net and RDMA devices";
}

bool same_match(const Match& a, const Match& b) {
  auto canon = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  return canon(a.interface) == canon(b.interface) && canon(a.driver) == canon(b.driver) &&
         canon(a.rdma_device) == canon(b.rdma_device);
}

}  // namespace

void check_rule(Ctx& ctx, const Rule& rule, const RuleMarks& m, Mode global) {
  const std::string& p = m.path;
  if (rule.algorithm) {
    Algorithm a = *rule.algorithm;
    bool net_algo = seam::is_net_dim(a) || a == Algorithm::kModelCqe;
    if (net_algo && !rule.match.rdma_device.empty())
      ctx.error(m.algorithm, p + ".algorithm",
                fmt::format("algorithm {} is for net devices but the rule matches {}; split it "
                            "into a net rule and an RDMA rule",
                            algorithm_name(a), kinds_text(rule)));
    if (a == Algorithm::kRdma && !rule.match.interface.empty())
      ctx.error(m.algorithm, p + ".algorithm",
                fmt::format("algorithm rdma is for RDMA devices but the rule matches {}; split it "
                            "into a net rule and an RDMA rule",
                            kinds_text(rule)));
  }
  const bool net = rule.applies_to_net();
  const bool rdma = rule.applies_to_rdma();
  // The largest profile index every device the rule can match understands.
  const int last = net ? kNetLastIndex : kRdmaLastIndex;
  const char* last_why = net ? "net DIM has profiles 0..4" : "RDMA DIM has profiles 0..8";
  if (rule.algorithm == Algorithm::kStatic && rule.static_index > last)
    ctx.error(m.algorithm, p + ".algorithm",
              fmt::format("static index {} is out of range 0..{} ({}{})", rule.static_index, last,
                          last_why, net && rdma ? "; the rule matches net devices too" : ""));
  if (rule.min_profile && *rule.min_profile > last)
    ctx.error(m.min, p + ".profiles.min",
              fmt::format("{} is out of range 0..{} ({})", *rule.min_profile, last, last_why));
  if (rule.max_profile && *rule.max_profile > last)
    ctx.error(m.max, p + ".profiles.max",
              fmt::format("{} is out of range 0..{} ({})", *rule.max_profile, last, last_why));
  if (rule.min_profile && rule.max_profile && *rule.min_profile > *rule.max_profile)
    ctx.error(m.max, p + ".profiles.max",
              fmt::format("max {} is below min {}", *rule.max_profile, *rule.min_profile));
  for (auto [table, mark, key] : {std::tuple{&rule.rx_profile, m.rx_profile, "rx_profile"},
                                  std::tuple{&rule.tx_profile, m.tx_profile, "tx_profile"}}) {
    if (!table->has_value() || net) continue;
    ctx.error(
        mark, fmt::format("{}.{}", p, key),
        rule.algorithm == Algorithm::kRdma
            ? fmt::format("{} is a net DIM table and cannot be used with algorithm rdma", key)
            : fmt::format("{} is a net DIM table but the rule matches {}", key, kinds_text(rule)));
  }
  if (rule.kernel_dim && !rdma)
    ctx.error(m.kernel_dim, p + ".kernel_dim",
              rule.algorithm &&
                      (seam::is_net_dim(*rule.algorithm) || *rule.algorithm == Algorithm::kModelCqe)
                  ? fmt::format("kernel_dim switches the kernel's RDMA DIM and applies to RDMA "
                                "devices only, but algorithm {} limits the rule to net devices",
                                algorithm_name(*rule.algorithm))
                  : fmt::format("kernel_dim switches the kernel's RDMA DIM and applies to RDMA "
                                "devices only, but the rule matches {}",
                                kinds_text(rule)));
  // compare: the other policy. An unset algorithm is DIM (net-eqe or rdma by kind).
  const bool model_algo = rule.algorithm && seam::is_model(*rule.algorithm);
  const bool dim_algo =
      !rule.algorithm || seam::is_net_dim(*rule.algorithm) || *rule.algorithm == Algorithm::kRdma;
  if (rule.compare == CompareWith::kDim && !model_algo)
    ctx.error(m.compare, p + ".compare",
              dim_algo ? fmt::format("compare: dim needs algorithm model or model-cqe; algorithm "
                                     "{} is DIM already (compare it with: model)",
                                     rule.algorithm ? algorithm_name(*rule.algorithm) : "default")
                       : fmt::format("compare: dim needs algorithm model or model-cqe, not {}",
                                     algorithm_name(*rule.algorithm, rule.static_index)));
  if (rule.compare == CompareWith::kModel && !dim_algo)
    ctx.error(m.compare, p + ".compare",
              model_algo ? fmt::format("compare: model needs a DIM algorithm (net-eqe, net-cqe, "
                                       "rdma); algorithm {} is the model already (compare it "
                                       "with: dim)",
                                       algorithm_name(*rule.algorithm))
                         : fmt::format("compare: model needs a DIM algorithm (net-eqe, net-cqe, "
                                       "rdma), not {}: nothing would run to compare with",
                                       algorithm_name(*rule.algorithm, rule.static_index)));
  if (rule.model && !model_algo && rule.compare != CompareWith::kModel)
    ctx.error(m.model, p + ".model",
              "model settings apply to algorithm model or model-cqe, or with compare: model; "
              "here they would have no effect");
  // method: how a net device is written. napi/auto on a rule that can match only RDMA devices
  // would mean nothing; software profiles are what napi writes, so they need it.
  const seam::Method method = rule.method.value_or(seam::Method::kEthtool);
  if (rule.method && *rule.method != seam::Method::kEthtool && !net)
    ctx.error(m.method, p + ".method",
              rule.algorithm == Algorithm::kRdma
                  ? fmt::format("method {} writes net devices' NAPIs and cannot be used with "
                                "algorithm rdma",
                                method_name(*rule.method))
                  : fmt::format("method {} writes net devices' NAPIs but the rule matches {}",
                                method_name(*rule.method), kinds_text(rule)));
  if (rule.software_profiles && method == seam::Method::kEthtool)
    ctx.error(m.software_profiles, p + ".software_profiles",
              rule.method ? "software_profiles are written by method napi (or auto), but the "
                            "rule says method: ethtool; they would have no effect"
                          : "software_profiles are written by method napi (or auto), but the "
                            "rule has no method (ethtool by default); add method: napi or auto");
  const Mode mode = rule.mode.value_or(global);
  if (mode == Mode::kEnforce && rule.algorithm == Algorithm::kOff && !rule.kernel_dim)
    ctx.error(rule.mode ? m.mode : m.algorithm, p + (rule.mode ? ".mode" : ".algorithm"),
              "mode enforce with algorithm off would write nothing; use mode observe or shadow "
              "(or, for RDMA devices, set kernel_dim)");
}

void check_rules(Ctx& ctx, const Config& cfg, const std::vector<RuleMarks>& marks) {
  for (size_t b = 0; b < cfg.rules.size(); ++b) {
    const Rule& rb = cfg.rules[b];
    if (rb.name.empty()) continue;
    for (size_t a = 0; a < b; ++a) {
      const Rule& ra = cfg.rules[a];
      if (ra.name == rb.name) {
        ctx.error(marks[b].name, marks[b].path + ".name",
                  fmt::format("duplicate rule name '{}' (first used by the rule at line {})",
                              rb.name, ra.mark.line));
        break;
      }
      if (ra.name.empty() || !same_match(ra.match, rb.match)) continue;
      // Same selectors: every device one names, the other names too. Different settings would
      // refuse all of them at run time, which is never what the author meant.
      for (auto kind : {seam::DeviceKind::kNet, seam::DeviceKind::kRdma}) {
        bool applies = kind == seam::DeviceKind::kNet
                           ? ra.applies_to_net() && rb.applies_to_net()
                           : ra.applies_to_rdma() && rb.applies_to_rdma();
        if (!applies) continue;
        auto diffs = diff_policies(policy_from_rule(ra, kind, cfg.mode),
                                   policy_from_rule(rb, kind, cfg.mode));
        if (diffs.empty()) continue;
        std::vector<std::string> what;
        for (const auto& d : diffs) what.push_back(fmt::format("{} vs {}", d.left, d.right));
        ctx.error(marks[b].match, marks[b].path + ".match",
                  fmt::format("rule '{}' has the same match as rule '{}' (line {}) but different "
                              "settings ({}); every device it names would be refused",
                              rb.name, ra.name, ra.mark.line, join(what, ", ")));
        break;
      }
    }
  }
}

bool Rule::applies_to_net() const {
  bool sel = !match.interface.empty() || match.rdma_device.empty();
  return sel && algorithm != Algorithm::kRdma;
}

bool Rule::applies_to_rdma() const {
  bool sel = !match.rdma_device.empty() || match.interface.empty();
  return sel && algorithm != Algorithm::kNetEqe && algorithm != Algorithm::kNetCqe &&
         algorithm != Algorithm::kModelCqe;
}

}  // namespace dimctl::config
