// The constructor; the decision (feed, on_sample) is inline in net_dim.h.
#include "dim/net_dim.h"

#include <algorithm>

namespace dim {

NetDim::NetDim(CqPeriodMode mode, Direction dir, uint8_t start_ix) : mode_(mode), dir_(dir) {
  tuner_.profile_ix = std::min<uint8_t>(start_ix, kNetNumProfiles - 1);
}

}  // namespace dim
