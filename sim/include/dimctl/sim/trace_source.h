// Trace replay: the arrivals of a `dimctl record` trace (docs/TRACE.md) as an open-loop source
// (SourceSpec kTrace). Per recorded interval of a net queue its packets, of a CQ its completions,
// arrive at uniformly random times inside the interval (the trace does not say when within it);
// trace time is shifted so the first frame is simulated time 0. The trace's queues are numbered
// net queues first (in key order), then CQs; simulated queue k replays trace queue k.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::sim {

struct TraceInfo {
  uint32_t queues = 0;             // after the device filter
  int64_t duration_ns = 0;         // first frame to last
  uint64_t arrivals = 0;           // packets + completions over the trace
  int64_t interval_ns = 0;         // the recorder's sampling interval (0 = unknown)
  std::vector<std::string> names;  // per trace queue: "eth1 queue 3 (napi 8195)", "mlx5_0 cq 12"
  // Set when the file ends in a partial frame (a recorder killed mid-write): the replay stops at
  // the last whole frame, and the user should know the tail was dropped (file, offset, bytes).
  std::optional<std::string> warning;
};

// Reads FILE (one file of a rotation set) and says what a replay would contain. `device` keeps
// only that net or IB device's queues ("" = all). Errors name the file: unreadable, corrupt, fewer
// than two frames, no queue left after the filter (the devices seen are listed).
Result<TraceInfo> inspect_trace(const std::string& path, const std::string& device = "");

}  // namespace dimctl::sim
