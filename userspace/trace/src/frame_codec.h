// FrameEncoder / FrameDecoder: one seam::Snapshot <-> one frame payload, delta-encoded against
// the previous frame of the same file (docs/TRACE.md, "Frame payload"). The encoder writes the
// current format version; the decoder reads every version from kOldestFormatVersion. The two keep
// the same state (the previous snapshot and an index of its keys), so whatever the encoder writes
// the decoder restores exactly. Internal to dimctl::trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "dimctl/common/result.h"
#include "dimctl/seam/snapshot.h"
#include "dimctl/trace/trace_header.h"

namespace dimctl::trace::detail {

// Frame flags.
inline constexpr uint64_t kFlagDevices = 1u << 0;    // the device table follows
inline constexpr uint64_t kFlagQueueKeys = 1u << 1;  // the queue keys follow (set changed)
inline constexpr uint64_t kFlagCqKeys = 1u << 2;     // the CQ keys follow (set changed)
inline constexpr uint64_t kKnownFlags = kFlagDevices | kFlagQueueKeys | kFlagCqKeys;

// Queue entry mask: bits 0-4 one per counter (polls, packets, budget_exhausted, empty_polls,
// bytes) whose value follows, then:
inline constexpr uint64_t kQueueAbs = 1u << 5;   // counter values are absolute, not deltas
inline constexpr uint64_t kQueueMeta = 1u << 6;  // queue, irq, device_ix, has_bytes follow
inline constexpr uint64_t kQueueCpu = 1u << 7;   // version 2: the poll CPU follows
inline constexpr int kQueueCounters = 5;

// CQ entry mask: one bit per counter whose value follows (schedules, reschedules, events, polls,
// completions, poll_errors, kernel_modifies, and from version 2 budget_exhausted), then the flag
// bits, which version 2 moved up by one to make room for that counter.
struct CqMask {
  int counters;
  uint64_t abs, meta, kernel, cpu;  // cpu: 0 in version 1 (not recorded)
};
inline constexpr CqMask kCqMaskV1{7, 1u << 7, 1u << 8, 1u << 9, 0};
inline constexpr CqMask kCqMaskV2{8, 1u << 8, 1u << 9, 1u << 10, 1u << 11};
inline constexpr int kCqCountersMax = 8;

// Version 2's per-CPU entry mask: bits 0-12 one per counter of seam::CpuTimes (in declaration
// order, idle_ns last), then:
inline constexpr uint64_t kCpuAbs = 1u << 13;
inline constexpr uint64_t kCpuIdleKnown = 1u << 14;  // the value of idle_known
inline constexpr int kCpuCounters = 13;
// Version 2's per-IRQ entry mask: bits 0-2 ns, count, timed, then:
inline constexpr uint64_t kIrqAbs = 1u << 3;
inline constexpr int kIrqCounters = 3;

// The state both sides keep: the previous frame of this file, and where each of its keys is.
// A key present twice maps to its first entry (the same rule on both sides keeps them in step).
struct FrameState {
  seam::Snapshot prev;
  std::unordered_map<uint64_t, uint32_t> queue_ix;  // packed(QueueKey) -> index in prev.queues
  std::unordered_map<uint64_t, uint32_t> cq_ix;     // packed(CqKey) -> index in prev.cqs
  std::unordered_map<uint32_t, uint32_t> irq_ix;    // IRQ number -> index in prev.irqs
  uint16_t version = kFormatVersion;

  // A new file: no previous frame; the first frame's time is a delta from `time_base_ns`.
  void reset(int64_t time_base_ns, uint16_t format_version);
  // Makes `s` the previous frame; the key indexes are rebuilt only when the key sets changed.
  void advance(const seam::Snapshot& s, bool queue_keys_changed, bool cq_keys_changed);
};

class FrameEncoder {
 public:
  void reset(int64_t time_base_ns) { state_.reset(time_base_ns, kFormatVersion); }
  // Appends the payload of `s` to `out` and makes `s` the previous frame. EINVAL, with nothing
  // appended and the state unchanged, for a queue whose device_ix is outside the device table.
  Result<void> encode(const seam::Snapshot& s, std::string& out);

 private:
  FrameState state_;
};

class FrameDecoder {
 public:
  // `format_version` is the file's (kOldestFormatVersion..kFormatVersion).
  void reset(int64_t time_base_ns, uint16_t format_version) {
    state_.reset(time_base_ns, format_version);
  }
  // Decodes one payload into `out` (its storage reused) and makes it the previous frame. On
  // error (the context names what was wrong, with the offset inside the payload) the state is
  // unchanged and `out` is unspecified.
  Result<void> decode(std::string_view payload, seam::Snapshot& out);

 private:
  FrameState state_;
};

}  // namespace dimctl::trace::detail
