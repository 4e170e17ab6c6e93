// FrameEncoder / FrameDecoder: one model::Snapshot <-> one frame payload, delta-encoded against
// the previous frame of the same file (docs/TRACE.md, "Frame payload"). The two keep the same
// state (the previous snapshot and an index of its keys), so whatever the encoder writes the
// decoder restores exactly. Internal to dimctl::trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "dimctl/common/result.h"
#include "dimctl/model/snapshot.h"

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
inline constexpr int kQueueCounters = 5;
// CQ entry mask: bits 0-6 one per counter (schedules, reschedules, events, polls, completions,
// poll_errors, kernel_modifies), then:
inline constexpr uint64_t kCqAbs = 1u << 7;
inline constexpr uint64_t kCqMeta = 1u << 8;    // ibdev, poll_ctx, nr_cqe, comp_vector follow
inline constexpr uint64_t kCqKernel = 1u << 9;  // kernel_comps, kernel_usec follow
inline constexpr int kCqCounters = 7;

// The state both sides keep: the previous frame of this file, and where each of its keys is.
// A key present twice maps to its first entry (the same rule on both sides keeps them in step).
struct FrameState {
  model::Snapshot prev;
  std::unordered_map<uint64_t, uint32_t> queue_ix;  // packed(QueueKey) -> index in prev.queues
  std::unordered_map<uint64_t, uint32_t> cq_ix;     // packed(CqKey) -> index in prev.cqs

  // A new file: no previous frame; the first frame's time is a delta from `time_base_ns`.
  void reset(int64_t time_base_ns);
  // Makes `s` the previous frame; the key indexes are rebuilt only when the key sets changed.
  void advance(const model::Snapshot& s, bool queue_keys_changed, bool cq_keys_changed);
};

class FrameEncoder {
 public:
  void reset(int64_t time_base_ns) { state_.reset(time_base_ns); }
  // Appends the payload of `s` to `out` and makes `s` the previous frame. EINVAL, with nothing
  // appended and the state unchanged, for a queue whose device_ix is outside the device table.
  Result<void> encode(const model::Snapshot& s, std::string& out);

 private:
  FrameState state_;
};

class FrameDecoder {
 public:
  void reset(int64_t time_base_ns) { state_.reset(time_base_ns); }
  // Decodes one payload into `out` (its storage reused) and makes it the previous frame. On
  // error (the context names what was wrong, with the offset inside the payload) the state is
  // unchanged and `out` is unspecified.
  Result<void> decode(std::string_view payload, model::Snapshot& out);

 private:
  FrameState state_;
};

}  // namespace dimctl::trace::detail
