#include "dimctl/controller/combine.h"

#include <algorithm>

namespace dimctl::controller {

std::optional<uint8_t> ProfileCombiner::result() const {
  if (!any_) return std::nullopt;
  switch (policy_) {
    case seam::CombinePolicy::kBusiestQueue:
      return static_cast<uint8_t>(busiest_ix_);
    case seam::CombinePolicy::kMaxProfile:
      return static_cast<uint8_t>(max_ix_);
    case seam::CombinePolicy::kMinProfile:
      return static_cast<uint8_t>(min_ix_);
  }
  return static_cast<uint8_t>(busiest_ix_);
}

std::optional<seam::QueueKey> ProfileCombiner::busiest() const {
  if (!any_) return std::nullopt;
  return seam::QueueKey{static_cast<uint32_t>(busiest_ >> 32), static_cast<uint32_t>(busiest_)};
}

}  // namespace dimctl::controller
