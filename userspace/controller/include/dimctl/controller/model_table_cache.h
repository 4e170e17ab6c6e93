// ModelTableCache: cost-model tables by their inputs. Building one evaluates the model over the
// whole rate range (~0.2 ms), and every device with the same profile table, bounds, parameters and
// sharers can share it. Cleared at each reload (devices keep the tables they hold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dim/model_policy.h"
#include "dim/profile.h"
#include "dimctl/seam/policy.h"

namespace dimctl::controller {

class ModelTableCache {
 public:
  // The table for `profiles` counted in `count`, judged with `policy`'s model settings and
  // bounds and `sharers` (dim::CostParams::sharers); `table_timer` unless the settings name a
  // timer. Built on first use, shared after.
  std::shared_ptr<const dim::ModelTable> get(std::span<const dim::Profile> profiles,
                                             dim::ProfileCount count, dim::TimerMode table_timer,
                                             const seam::DevicePolicy& policy, double sharers);
  // Tables built since construction or the last clear().
  size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    std::vector<dim::Profile> profiles;
    dim::ProfileCount count;
    dim::TimerMode timer;
    seam::ModelSettings settings;
    uint8_t min_ix, max_ix;
    double sharers;
    std::shared_ptr<const dim::ModelTable> table;
  };
  std::vector<Entry> entries_;
};

}  // namespace dimctl::controller
