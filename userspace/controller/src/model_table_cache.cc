#include "dimctl/controller/model_table_cache.h"

#include <algorithm>

namespace dimctl::controller {

std::shared_ptr<const dim::ModelTable> ModelTableCache::get(std::span<const dim::Profile> profiles,
                                                            dim::ProfileCount count,
                                                            dim::TimerMode table_timer,
                                                            const seam::DevicePolicy& policy,
                                                            double sharers) {
  const dim::TimerMode timer = policy.model.timer.value_or(table_timer);
  for (const auto& e : entries_) {
    if (std::equal(profiles.begin(), profiles.end(), e.profiles.begin(), e.profiles.end()) &&
        e.count == count && e.timer == timer && e.settings == policy.model &&
        e.min_ix == policy.min_profile && e.max_ix == policy.max_profile && e.sharers == sharers) {
      return e.table;
    }
  }
  dim::ModelParams params;
  params.timer = timer;
  params.cost.sharers = sharers;
  params.cost.completion_cost_ns = static_cast<double>(policy.model.completion_cost_ns);
  params.cost.interrupt_cost_ns = static_cast<double>(policy.model.interrupt_cost_ns);
  params.max_changes_per_s = policy.model.max_changes_per_s;
  auto table = std::make_shared<const dim::ModelTable>(profiles, count, params, policy.min_profile,
                                                       policy.max_profile);
  entries_.push_back({{profiles.begin(), profiles.end()},
                      count,
                      timer,
                      policy.model,
                      policy.min_profile,
                      policy.max_profile,
                      sharers,
                      table});
  return table;
}

}  // namespace dimctl::controller
