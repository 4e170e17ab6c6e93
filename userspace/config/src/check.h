// The semantic pass of the config loader, after the structural one (read.cc): what a rule's
// fields mean together, and what rules mean beside each other. Private to the config library.
#pragma once

#include <string>
#include <vector>

#include "dimctl/common/yaml_reader.h"
#include "dimctl/config/config.h"

namespace dimctl::config {

inline constexpr int kNetLastIndex = 4;   // net DIM tables have 5 entries
inline constexpr int kRdmaLastIndex = 8;  // the RDMA DIM table has 9

// Positions of rule fields that the semantic pass may blame.
struct RuleMarks {
  SourceMark name, match, mode, algorithm, min, max, rx_profile, tx_profile, kernel_dim, compare,
      model, method, software_profiles;
  std::string path;
};

// One rule's cross-field constraints (kinds, profile ranges, compare, model settings); run only
// on a rule that was read without errors, so that one typo yields one error. `global` is the
// mode the rule inherits.
void check_rule(yaml::Ctx& ctx, const Rule& rule, const RuleMarks& marks, seam::Mode global);

// Across the rules of `cfg` (marks[i] for cfg.rules[i]): duplicate names, and rules with the same
// selectors but different settings.
void check_rules(yaml::Ctx& ctx, const Config& cfg, const std::vector<RuleMarks>& marks);

}  // namespace dimctl::config
