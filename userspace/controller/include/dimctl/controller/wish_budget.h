// WishBudget: the change budget of one core's saturation wish (core_costs.cc). A token bucket like
// ModelPolicy's: b changes a second (the rule's `max_changes_per_s`) as ceil(b/2) at once plus a
// refill of b - ceil(b/2) + 1 a second, so that no window shorter than a second holds more than b
// changes.
//
// A trial (a wish away from the rule's best) goes only with the change back in hand too, as far
// as the bucket holds two: the return to the best then never waits a refill. Without that, a trial
// that overloaded the core held it there until the bucket refilled (sweep-1-019 run for 5 s: a
// trial down on an empty bucket, eight periods never idle). Below b = 3 the bucket holds one
// change and a trial goes with it.
//
// Plain value type; time is an input.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dim/model_policy.h"

namespace dimctl::controller {

class WishBudget {
 public:
  static constexpr uint32_t kOne = dim::ModelTable::kOneChange;

  // Adds what `dt_ns` earns at `per_s` changes a second (the bucket starts full).
  void refill(uint32_t per_s, int64_t dt_ns) {
    const uint32_t b = std::max<uint32_t>(per_s, 1);
    cap_ = (b + 1) / 2 * kOne;
    const double earned = static_cast<double>(b - (b + 1) / 2 + 1) * kOne *
                          static_cast<double>(std::clamp<int64_t>(dt_ns, 0, 1'000'000'000)) / 1e9;
    tokens_ = static_cast<uint32_t>(std::min<double>(cap_, tokens_ + earned));
  }

  // Whether a change of the wish may go now, taking one change when it may. `trial`: the wish is
  // away from the rule's best.
  bool take(bool trial) {
    const uint32_t need = trial ? std::min(2 * kOne, std::max(cap_, kOne)) : kOne;
    if (tokens_ < need) return false;
    tokens_ -= kOne;
    return true;
  }

  uint32_t tokens() const { return tokens_; }

 private:
  uint32_t tokens_ = UINT32_MAX;  // full at the start: clamped to the cap at the first refill
  uint32_t cap_ = 0;
};

}  // namespace dimctl::controller
