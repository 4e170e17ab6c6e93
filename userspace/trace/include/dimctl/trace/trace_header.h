// TraceHeader: what a trace file says about itself before its first frame (docs/TRACE.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dimctl::trace {

// The first 8 bytes of every trace file.
inline constexpr std::string_view kMagic{"DIMTRACE", 8};
// The format version this code writes, and the oldest it reads. A reader refuses any other: a
// frame layout it does not know cannot be skipped safely (deltas chain from frame to frame).
// Version 2 added the per-core CPU times (docs/TRACE.md); version 1 files read as
// snapshots without them.
inline constexpr uint16_t kFormatVersion = 2;
inline constexpr uint16_t kOldestFormatVersion = 1;

struct TraceHeader {
  uint16_t version = kFormatVersion;
  std::string host;              // uname nodename of the recording host
  std::string kernel_release;    // uname release
  std::string recorder_version;  // e.g. "dimctl 0.1.0"
  std::string note;              // free text: how the trace was recorded (the command line)
  // When this file was started, on both clocks: a frame's wall-clock time is
  // start_realtime_ns + (frame time_ns - start_monotonic_ns). Frame times are CLOCK_MONOTONIC,
  // like seam::Snapshot::time_ns.
  int64_t start_monotonic_ns = 0;
  int64_t start_realtime_ns = 0;
  int64_t interval_ns = 0;  // the recorder's sampling interval, 0 when unknown
  bool operator==(const TraceHeader&) const = default;
};

}  // namespace dimctl::trace
