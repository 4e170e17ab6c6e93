// Counter discontinuities: the cases where a queue's or CQ's cumulative counters stop being one
// continuous series (driver or queue reset, a NAPI re-created under the same identity, a
// collector restart). DIM's wrap arithmetic would read such a jump as almost 2^bits events or
// packets (dim-spec 3.2, vector N12), so the controller restarts the measurement window instead.
// Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dimctl/seam/snapshot.h"

namespace dimctl::controller {

// The counters and identity details of a queue that must stay continuous between two snapshots:
// a compact copy (48 bytes, no strings), so the controller keeps it per queue instead of the
// previous snapshot. Whether the queue has a byte counter is kept apart (the controller packs it
// into its flags, beside this in one cache line).
struct QueueCounts {
  uint64_t polls = 0, packets = 0, budget_exhausted = 0, empty_polls = 0, bytes = 0;
  int32_t queue = -1, irq = -1;
  static QueueCounts of(const seam::QueueCounters& q) {
    return {q.polls, q.packets, q.budget_exhausted, q.empty_polls, q.bytes, q.queue, q.irq};
  }
};

// One queue's change between two snapshots: its DIM events this period, or that its counters
// are no longer one series.
struct QueueDelta {
  uint64_t events = 0;  // 0 on a discontinuity
  bool discontinuity = false;
};

namespace detail {
// Two 64-bit lanes (GCC/Clang vector extension: SSE2 on x86-64, NEON on arm64). The counters
// come in pairs laid out alike in QueueCounters and QueueCounts (asserted below), so the
// per-queue check is a few two-lane operations instead of a dozen scalar ones.
using U64x2 = uint64_t __attribute__((vector_size(16)));
inline U64x2 load2(const uint64_t* p) {
  U64x2 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store2(uint64_t* p, U64x2 v) {
  std::memcpy(p, &v, sizeof v);
}
// queue and irq as one 64-bit value (adjacent int32s in both structs).
inline uint64_t ids(const int32_t* queue_then_irq) {
  uint64_t v;
  std::memcpy(&v, queue_then_irq, sizeof v);
  return v;
}
}  // namespace detail

// Advances `prev` to `cur` and returns the period's change. A discontinuity is any counter going
// backwards, the byte counter appearing or vanishing (`prev_has_bytes` vs cur.has_bytes; the
// caller then takes cur.has_bytes), or the queue's identity details (queue index, IRQ) changing
// under the same (ifindex, napi_id); then `prev` takes those details too.
// (A device rename is handled by the controller: the queue moves to another device and gets a
// fresh DIM.)
// Inline, one pass: the controller calls it once per queue and period. A counter that went
// backwards shows as a "negative" 64-bit difference (the counters, sums of per-poll increments,
// stay far below 2^63), so the check is the sign of the OR of the differences.
inline QueueDelta advance(QueueCounts& prev, bool prev_has_bytes, const seam::QueueCounters& cur) {
  static_assert(offsetof(seam::QueueCounters, packets) ==
                    offsetof(seam::QueueCounters, polls) + 8 &&
                offsetof(seam::QueueCounters, empty_polls) ==
                    offsetof(seam::QueueCounters, budget_exhausted) + 8 &&
                offsetof(seam::QueueCounters, irq) == offsetof(seam::QueueCounters, queue) + 4);
  static_assert(offsetof(QueueCounts, packets) == offsetof(QueueCounts, polls) + 8 &&
                offsetof(QueueCounts, empty_polls) == offsetof(QueueCounts, budget_exhausted) + 8 &&
                offsetof(QueueCounts, irq) == offsetof(QueueCounts, queue) + 4);
  using detail::U64x2;
  const U64x2 cur_pp = detail::load2(&cur.polls);             // polls, packets
  const U64x2 cur_be = detail::load2(&cur.budget_exhausted);  // budget_exhausted, empty_polls
  const U64x2 d_pp = cur_pp - detail::load2(&prev.polls);
  const U64x2 d_be = cur_be - detail::load2(&prev.budget_exhausted);
  detail::store2(&prev.polls, cur_pp);
  detail::store2(&prev.budget_exhausted, cur_be);
  const uint64_t d_events = d_pp[0] - d_be[0];
  const bool both_bytes = prev_has_bytes & cur.has_bytes;
  const uint64_t d_bytes = both_bytes ? cur.bytes - prev.bytes : 0;
  prev.bytes = cur.bytes;
  const U64x2 any2 = d_pp | d_be;
  const uint64_t any = any2[0] | any2[1] | d_events | d_bytes;
  // Bytes appearing or disappearing changes what DIM compares (bpms), so it is a new series.
  const bool discontinuity = (static_cast<int64_t>(any) < 0) |
                             (detail::ids(&cur.queue) != detail::ids(&prev.queue)) |
                             (prev_has_bytes != cur.has_bytes);
  if (discontinuity) [[unlikely]] {
    prev.queue = cur.queue;
    prev.irq = cur.irq;
    return {0, true};
  }
  return {d_events, false};
}

// Any counter went backwards, or the CQ's allocation details (device, size, vector, poll
// context) changed under the same (device index, cq id): restrack ids are reused.
bool is_discontinuity(const seam::CqCounters& prev, const seam::CqCounters& cur);

}  // namespace dimctl::controller
