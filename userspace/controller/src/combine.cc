#include "dimctl/controller/combine.h"

#include <algorithm>

namespace dimctl::controller {

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
