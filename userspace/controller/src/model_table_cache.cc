#include "dimctl/controller/model_table_cache.h"

#include <algorithm>

namespace dimctl::controller {

std::shared_ptr<const dim::ModelTable> ModelTableCache::get(std::span<const dim::Profile> profiles,
                                                            dim::ProfileCount count,
                                                            dim::TimerMode table_timer,
                                                            const seam::DevicePolicy& policy,
                                                            double sharers) {
  // A software table's timer is the NAPI's deferral whatever model.timer says (that names the
  // device's hardware timer).
  const dim::TimerMode timer = table_timer == dim::TimerMode::kDeferral
                                   ? table_timer
                                   : policy.model.timer.value_or(table_timer);
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
  // Software moderation: the cost per interrupt is the cost per poll (CostEstimator's w: a NAPI
  // without device interrupts counts its polls as its events), and a timer's poll is one more.
  params.cost.poll_cost_ns = params.cost.interrupt_cost_ns;
  params.cost.timer_latency_ns = static_cast<double>(policy.model.timer_latency_ns);
  params.max_changes_per_s = policy.model.max_changes_per_s;
  params.objective = policy.model.objective;
  params.latency_budget_ns = static_cast<double>(policy.model.latency_budget_ns);
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
