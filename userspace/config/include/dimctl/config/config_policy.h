// ConfigPolicy: seam::PolicySource over a validated Config.
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
#include "dimctl/seam/policy.h"

namespace dimctl::config {

class ConfigPolicy final : public seam::PolicySource {
 public:
  explicit ConfigPolicy(Config cfg) : cfg_(std::move(cfg)) {}

  seam::DevicePolicy policy_for(const seam::DeviceInfo& dev) const override;

  // Names of the rules that match `dev`, in file order (for `check-config --devices`).
  std::vector<std::string> matching_rules(const seam::DeviceInfo& dev) const;

  const Config& config() const { return cfg_; }

 private:
  Config cfg_;
};

// Whether `rule` selects `dev` (kind, then every selector that applies to that kind).
bool rule_matches(const Rule& rule, const seam::DeviceInfo& dev);

// The policy `rule` gives a device of `kind` under global mode `global`.
seam::DevicePolicy policy_from_rule(const Rule& rule, seam::DeviceKind kind, seam::Mode global);

// The policy of a device matched by no rule.
seam::DevicePolicy default_policy(seam::DeviceKind kind, seam::Mode global);

// Human-readable differences between two policies ("mode enforce" vs "mode shadow" ...), one
// pair of strings per differing field, ignoring `rule` and `conflict`.
struct PolicyDiff {
  std::string left;
  std::string right;
};
std::vector<PolicyDiff> diff_policies(const seam::DevicePolicy& a, const seam::DevicePolicy& b);

}  // namespace dimctl::config
