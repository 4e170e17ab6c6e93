// ArrivalSchedule: open-loop arrivals replayed from a `dimctl record` trace (SourceSpec kTrace).
// Per recorded interval (t_i, t_{i+1}] of trace queue k, the interval's packets (CQ: completions)
// arrive at uniformly random times inside it, sorted; trace time is shifted so the first frame
// is simulated time 0. Simulated queue k replays trace queue k.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/sim/rng.h"
#include "dimctl/sim/workload.h"

namespace dimctl::sim {

class ArrivalSchedule {
 public:
  // One interval of one queue: `count` arrivals in (start_ns, end_ns].
  struct Interval {
    int64_t start_ns;
    int64_t end_ns;
    uint64_t count;
  };

  static Result<std::unique_ptr<ArrivalSchedule>> open(const SourceSpec& spec, uint32_t queues,
                                                       uint64_t seed);
  // Builds a schedule from intervals per queue (what open() reads from the trace).
  ArrivalSchedule(std::vector<std::vector<Interval>> per_queue, uint64_t seed);

  // The first arrival at or after `from` on `queue`, -1 when the trace has no more.
  int64_t next(uint32_t queue, int64_t from);
  // Trace queues found (after the device filter).
  size_t queues() const { return per_queue_.size(); }
  int64_t duration_ns() const { return duration_ns_; }

 private:
  struct Cursor {
    size_t interval = 0;
    std::vector<int64_t> times;  // the current interval's arrivals, sorted
    size_t pos = 0;
    bool loaded = false;
  };
  void load(uint32_t queue);

  std::vector<std::vector<Interval>> per_queue_;
  std::vector<Cursor> cursors_;
  std::vector<Rng> rng_;
  int64_t duration_ns_ = 0;
};

}  // namespace dimctl::sim
