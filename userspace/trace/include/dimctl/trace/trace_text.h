// TraceShow: the text of `dimctl trace show` — a header block per file, per-frame per-queue
// deltas, and totals per queue, CQ and CPU over the whole trace.
//
// Deltas are against the previous frame shown (files given in order continue one another, so a
// rotation set read oldest-first adds up exactly). The first frame is the baseline: nothing is
// counted for it. Later, a key absent from the previous frame counts from zero, and so does one
// whose counter went backwards (a reset: its new value is what happened since).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "dimctl/seam/snapshot.h"
#include "dimctl/trace/trace_header.h"

namespace dimctl::trace {

struct QueueTotals {
  seam::QueueKey key;
  std::string device;  // as last seen
  int32_t queue = -1, irq = -1;
  uint64_t frames = 0;  // frames the queue appears in
  uint64_t polls = 0, packets = 0, events = 0, budget_exhausted = 0, empty_polls = 0, bytes = 0;
  uint64_t resets = 0;  // counters that went backwards
  bool has_bytes = false;
};

struct CqTotals {
  seam::CqKey key;
  std::string ibdev;
  uint64_t frames = 0;
  uint64_t events = 0, completions = 0, schedules = 0, polls = 0, budget_exhausted = 0;
  uint64_t resets = 0;
};

// One CPU's interrupt and softirq work over the trace (format 2; CpuTimes). Times are estimated
// from the sampled runs (seam::estimated_ns). Busy time is counted only over the frames whose
// CPU had a known idle time at both ends (idle_span_ns of them): max(dt − idle, hardirq +
// softirq), as the controller counts it.
struct CpuTotals {
  uint32_t cpu = 0;
  uint64_t frames = 0;
  uint64_t hardirqs = 0, softirqs = 0;  // handler runs; NET_RX + BLOCK + IRQ_POLL runs
  double hardirq_ns = 0, softirq_ns = 0;
  int64_t idle_span_ns = 0;
  double busy_ns = 0;
  uint64_t resets = 0;
};

struct ShowOptions {
  bool frames = true;  // per-frame lines; false: header and totals only
};

class TraceShow {
 public:
  explicit TraceShow(ShowOptions o = {}) : opts_(o) {}

  // The header block of one file (`name`, `size` in bytes).
  static std::string header_text(const TraceHeader& h, const std::string& name, uint64_t size);
  // Accounts one frame; appends its lines to `out` when per-frame output is on.
  void frame(const seam::Snapshot& s, std::string& out);
  // Totals per queue and CQ (key order) and rates over the time from the first frame to the last.
  std::string summary() const;

  const std::map<uint64_t, QueueTotals>& queue_totals() const { return queues_; }
  const std::map<uint64_t, CqTotals>& cq_totals() const { return cqs_; }
  const std::map<uint32_t, CpuTotals>& cpu_totals() const { return cpus_; }
  uint64_t frames() const { return frames_; }
  int64_t span_ns() const { return frames_ == 0 ? 0 : last_ns_ - first_ns_; }

 private:
  ShowOptions opts_;
  uint64_t frames_ = 0;
  int64_t first_ns_ = 0, last_ns_ = 0;
  std::unordered_map<uint64_t, seam::QueueCounters> prev_queues_;
  std::unordered_map<uint64_t, seam::CqCounters> prev_cqs_;
  std::map<uint64_t, QueueTotals> queues_;
  std::map<uint64_t, CqTotals> cqs_;
  std::vector<seam::CpuTimes> prev_cpus_;
  std::map<uint32_t, CpuTotals> cpus_;
};

}  // namespace dimctl::trace
