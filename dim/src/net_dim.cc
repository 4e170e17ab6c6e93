// The constructor and close_window(); the decision itself (feed, on_sample) is inline in
// net_dim.h.
#include "dim/net_dim.h"

#include <algorithm>
#include <cstddef>

namespace dim {

NetDim::NetDim(CqPeriodMode mode, Direction dir, uint8_t start_ix) : mode_(mode), dir_(dir) {
  tuner_.profile_ix = std::min<uint8_t>(start_ix, kNetNumProfiles - 1);
  static_assert(offsetof(NetDim, changes_) < kHotBytes && offsetof(NetDim, prev_) < kHotBytes &&
                    offsetof(NetDim, last_) + sizeof(Rates) <= kHotBytes,
                "what a decision touches belongs in the instance's first 64 bytes");
}

void NetDim::fold_counts() {
  windows_total_ += windows_;
  windows_ = 0;
  for (size_t i = 0; i < 3; ++i) {
    verdicts_total_[i] += verdicts_[i];
    verdicts_[i] = 0;
  }
  changes_total_ += changes_;
  changes_ = 0;
}

// Flattened: the whole decision (calc_stats, decide, the tuner) is one function, called once per
// closing window by a controller with the sample in registers and the outcome in one. Aligned,
// like the controller's loop, so that its speed does not depend on the code linked before it.
[[gnu::flatten, gnu::aligned(64)]] NetDim::Outcome NetDim::close_window(
    int64_t time_ns, uint32_t pkt_ctr, uint32_t byte_ctr, uint16_t event_ctr, RateDivider& div) {
  Sample s;
  s.time_ns = time_ns;
  s.pkt_ctr = pkt_ctr;
  s.byte_ctr = byte_ctr;
  s.event_ctr = event_ctr;
  return close(s, &div);
}

}  // namespace dim
