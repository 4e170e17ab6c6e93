// ConfigPolicy: model::PolicySource over a validated Config.
//
// Allowlist: only a device matched by a rule can get mode enforce. A device matched by no rule
// gets the global mode capped at shadow. A device matched by several rules gets their policy
// when the rules agree on every setting that applies to it; otherwise it is refused (mode
// observe, DevicePolicy::conflict says which rules and how they differ), following NVIDIA
// NCO's "two matches apply none" rule rather than letting file order decide.
//
// Thread-safety: immutable after construction; policy_for() may be called concurrently.
#pragma once

#include <string>
#include <vector>

#include "dimctl/config/config.h"
#include "dimctl/model/policy.h"

namespace dimctl::config {

class ConfigPolicy final : public model::PolicySource {
 public:
  explicit ConfigPolicy(Config cfg) : cfg_(std::move(cfg)) {}

  model::DevicePolicy policy_for(const model::DeviceInfo& dev) const override;

  // Names of the rules that match `dev`, in file order (for `check-config --devices`).
  std::vector<std::string> matching_rules(const model::DeviceInfo& dev) const;

  const Config& config() const { return cfg_; }

 private:
  Config cfg_;
};

// Whether `rule` selects `dev` (kind, then every selector that applies to that kind).
bool rule_matches(const Rule& rule, const model::DeviceInfo& dev);

// The policy `rule` gives a device of `kind` under global mode `global`.
model::DevicePolicy policy_from_rule(const Rule& rule, model::DeviceKind kind, model::Mode global);

// The policy of a device matched by no rule.
model::DevicePolicy default_policy(model::DeviceKind kind, model::Mode global);

// Human-readable differences between two policies ("mode enforce" vs "mode shadow" ...), one
// pair of strings per differing field, ignoring `rule` and `conflict`.
struct PolicyDiff {
  std::string left;
  std::string right;
};
std::vector<PolicyDiff> diff_policies(const model::DevicePolicy& a, const model::DevicePolicy& b);

}  // namespace dimctl::config
