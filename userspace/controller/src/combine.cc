#include "dimctl/controller/combine.h"

#include <algorithm>

namespace dimctl::controller {

void ProfileCombiner::add(const model::QueueKey& key, uint8_t profile_ix, uint64_t events) {
  if (!any_) {
    any_ = true;
    max_ix_ = min_ix_ = profile_ix;
    busiest_key_ = key;
    busiest_events_ = events;
    busiest_ix_ = profile_ix;
    return;
  }
  max_ix_ = std::max(max_ix_, profile_ix);
  min_ix_ = std::min(min_ix_, profile_ix);
  bool take = false;
  if (events != busiest_events_) {
    take = events > busiest_events_;
  } else if (previous_busiest_ && busiest_key_ == *previous_busiest_) {
    take = false;  // the incumbent keeps a tie
  } else if (previous_busiest_ && key == *previous_busiest_) {
    take = true;
  } else {
    take = key < busiest_key_;
  }
  if (take) {
    busiest_key_ = key;
    busiest_events_ = events;
    busiest_ix_ = profile_ix;
  }
}

std::optional<uint8_t> ProfileCombiner::result() const {
  if (!any_) return std::nullopt;
  switch (policy_) {
    case model::CombinePolicy::kBusiestQueue:
      return busiest_ix_;
    case model::CombinePolicy::kMaxProfile:
      return max_ix_;
    case model::CombinePolicy::kMinProfile:
      return min_ix_;
  }
  return busiest_ix_;
}

std::optional<model::QueueKey> ProfileCombiner::busiest() const {
  if (!any_) return std::nullopt;
  return busiest_key_;
}

}  // namespace dimctl::controller
