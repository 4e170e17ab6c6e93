// Counter discontinuities: the cases where a queue's or CQ's cumulative counters stop being one
// continuous series (driver or queue reset, a NAPI re-created under the same identity, a
// collector restart). DIM's wrap arithmetic would read such a jump as almost 2^bits events or
// packets (dim-spec 3.2, vector N12), so the controller restarts the measurement window instead.
// Pure functions.
#pragma once

#include "dimctl/model/snapshot.h"

namespace dimctl::controller {

// What must stay continuous in a queue's counters between two snapshots: a compact copy (no
// strings), so the controller keeps it per queue instead of the previous snapshot.
struct QueueContinuity {
  uint64_t polls = 0, packets = 0, budget_exhausted = 0, empty_polls = 0, bytes = 0;
  int32_t queue = -1, irq = -1;
  bool has_bytes = false;
  static QueueContinuity of(const model::QueueCounters& q) {
    return {q.polls, q.packets, q.budget_exhausted, q.empty_polls, q.bytes,
            q.queue, q.irq,     q.has_bytes};
  }
  uint64_t events() const { return polls - budget_exhausted; }
  // The counters only: the identity details stay equal unless queue_delta() says otherwise.
  void take_counters(const model::QueueCounters& q) {
    polls = q.polls;
    packets = q.packets;
    budget_exhausted = q.budget_exhausted;
    empty_polls = q.empty_polls;
    bytes = q.bytes;
  }
};

// One queue's change between two snapshots: what it did this period, or that its counters are
// no longer one series.
struct QueueDelta {
  uint64_t events = 0, packets = 0, polls = 0;  // 0 on a discontinuity
  bool discontinuity = false;
};

// A discontinuity is any counter going backwards, the byte counter appearing or vanishing, or
// the queue's identity details (queue index, IRQ) changing under the same (ifindex, napi_id).
// (A device rename is handled by the controller: the queue moves to another device and gets a
// fresh DIM.)
// Inline, one pass: the controller asks once per queue and period, and the differences that
// detect a discontinuity are the period's deltas. A counter that went backwards shows as a
// "negative" 64-bit difference (the counters, sums of per-poll increments, stay far below
// 2^63), so the check is the sign of the OR of the differences: one branch instead of nine.
inline QueueDelta queue_delta(const QueueContinuity& prev, const model::QueueCounters& cur) {
  const uint64_t d_polls = cur.polls - prev.polls;
  const uint64_t d_budget = cur.budget_exhausted - prev.budget_exhausted;
  const uint64_t d_packets = cur.packets - prev.packets;
  const uint64_t d_events = d_polls - d_budget;
  const uint64_t d_bytes = (prev.has_bytes & cur.has_bytes) ? cur.bytes - prev.bytes : 0;
  const uint64_t any =
      d_polls | d_budget | d_packets | (cur.empty_polls - prev.empty_polls) | d_events | d_bytes;
  // Bytes appearing or disappearing changes what DIM compares (bpms), so it is a new series.
  const bool discontinuity = (static_cast<int64_t>(any) < 0) | (prev.has_bytes != cur.has_bytes) |
                             (cur.queue != prev.queue) | (cur.irq != prev.irq);
  const uint64_t keep = discontinuity ? 0 : ~uint64_t{0};
  return {d_events & keep, d_packets & keep, d_polls & keep, discontinuity};
}

inline bool is_discontinuity(const QueueContinuity& prev, const model::QueueCounters& cur) {
  return queue_delta(prev, cur).discontinuity;
}

// Any counter went backwards, or the CQ's allocation details (device, size, vector, poll
// context) changed under the same (device index, cq id): restrack ids are reused.
bool is_discontinuity(const model::CqCounters& prev, const model::CqCounters& cur);

}  // namespace dimctl::controller
