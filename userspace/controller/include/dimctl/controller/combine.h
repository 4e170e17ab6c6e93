// ProfileCombiner: collapses the per-queue profile indices DIM wants into one device-wide index
// for drivers that only have device-wide coalescing (ethtool netlink COALESCE_SET is per
// device; dim-spec 8.3, ecosystem-research 0.3).
//
// Indices are compared, not usec values: "right" (a higher index) means more moderation in
// every kernel table, and custom tables are expected to keep that order.
//
// kBusiestQueue picks the queue with the most events in this period (all queues of a snapshot
// share one period, so the event count orders them exactly like the event rate). Ties go to
// the queue that was busiest last time (so an idle device does not flip between queues), then
// to the smallest QueueKey, so the result never depends on snapshot order.
//
// Plain value type, no shared state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "dimctl/seam/policy.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::controller {

class ProfileCombiner {
 public:
  explicit ProfileCombiner(seam::CombinePolicy policy = seam::CombinePolicy::kBusiestQueue,
                           std::optional<seam::QueueKey> previous_busiest = std::nullopt)
      : policy_(policy),
        has_previous_(previous_busiest.has_value()),
        previous_(previous_busiest ? seam::packed(*previous_busiest) : 0) {}

  // One queue's wish: the profile index its DIM holds and its events in this period.
  void add(const seam::QueueKey& key, uint8_t profile_ix, uint64_t events);

  // The device-wide index; nullopt when no queue was added.
  std::optional<uint8_t> result() const;
  // The busiest queue seen (whatever the policy, for the next period's tie-break and export).
  std::optional<seam::QueueKey> busiest() const;

 private:
  seam::CombinePolicy policy_;
  bool any_ = false;
  bool has_previous_ = false;
  bool incumbent_is_previous_ = false;  // the busiest so far is last period's busiest
  uint64_t previous_ = 0;               // last period's busiest (seam::packed)
  uint64_t busiest_ = 0;                // packed
  uint64_t busiest_events_ = 0;
  // Indices are kept 32-bit: a byte-sized store may alias anything, and add() runs in the
  // controller's per-queue loop, where it would force reloads of the caller's state.
  uint32_t busiest_ix_ = 0;
  uint32_t max_ix_ = 0;
  uint32_t min_ix_ = 0;
};

// Inline: called once per queue and period. Ties (idle queues all have 0 events) are the common
// case on a quiet host, so the tie-break is a few word compares.
inline void ProfileCombiner::add(const seam::QueueKey& key, uint8_t profile_ix, uint64_t events) {
  // The packed key only where a tie or a take needs it: most queues of a busy device neither tie
  // nor take.
  bool take;
  if (!any_) {
    any_ = true;
    max_ix_ = min_ix_ = profile_ix;
    take = true;
  } else {
    max_ix_ = std::max<uint32_t>(max_ix_, profile_ix);
    min_ix_ = std::min<uint32_t>(min_ix_, profile_ix);
    if (events != busiest_events_) {
      take = events > busiest_events_;
    } else if (incumbent_is_previous_) {
      take = false;  // the incumbent keeps a tie
    } else if (has_previous_ && seam::packed(key) == previous_) {
      take = true;
    } else {
      take = seam::packed(key) < busiest_;
    }
  }
  if (take) {
    const uint64_t k = seam::packed(key);
    busiest_ = k;
    busiest_events_ = events;
    busiest_ix_ = profile_ix;
    incumbent_is_previous_ = has_previous_ && k == previous_;
  }
}

}  // namespace dimctl::controller
