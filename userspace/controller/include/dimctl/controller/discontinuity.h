// Counter discontinuities: the cases where a queue's or CQ's cumulative counters stop being one
// continuous series (driver or queue reset, a NAPI re-created under the same identity, a
// collector restart). DIM's wrap arithmetic would read such a jump as almost 2^bits events or
// packets (dim-spec 3.2, vector N12), so the controller restarts the measurement window instead.
// Pure functions.
#pragma once

#include "dimctl/model/snapshot.h"

namespace dimctl::controller {

// Any counter went backwards, or the queue's identity details (device name, queue index, IRQ)
// changed under the same (ifindex, napi_id).
bool is_discontinuity(const model::QueueCounters& prev, const model::QueueCounters& cur);

// Any counter went backwards, or the CQ's allocation details (device, size, vector, poll
// context) changed under the same (device index, cq id): restrack ids are reused.
bool is_discontinuity(const model::CqCounters& prev, const model::CqCounters& cur);

}  // namespace dimctl::controller
