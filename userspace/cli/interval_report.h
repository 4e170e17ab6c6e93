// IntervalReport: what `dimctl list` shows — counters of every queue and CQ over one interval
// (delta of two snapshots of one attached collector), rates, and program attach status.
// Rendering as a table or as JSON lives here, beside the command, so it is unit-testable
// (tests/unit/cli) and the collector does not depend on the exporters' rendering. The JSON of
// each queue and CQ uses the keys of GET /api/v1/state (dimctl/exporters/counters_json.h) plus
// the interval's rates.
#pragma once

#include <string>
#include <vector>

#include "dimctl/collector/bpf_collector.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::cli {

struct IntervalReport {
  double interval_s = 0;
  std::vector<collector::ProgramStatus> programs;
  std::vector<seam::QueueCounters> queues;  // counters = deltas over the interval
  std::vector<std::string> devices;         // the queues' names (device_ix), as in `after`
  std::vector<seam::CqCounters> cqs;        // counters = deltas (kernel_comps/usec: last value)
  uint64_t drops = 0;

  const std::string& device_of(const seam::QueueCounters& q) const { return devices[q.device_ix]; }
};

// Deltas after - before per key. A key absent from `before` counts from zero (the collector was
// attached before `before` was taken and its entries start at zero); a key absent from `after`
// is gone and not reported.
IntervalReport make_interval_report(const seam::Snapshot& before, const seam::Snapshot& after,
                                    std::vector<collector::ProgramStatus> programs,
                                    uint64_t drops = 0);

std::string render_json(const IntervalReport& report);
std::string render_table(const IntervalReport& report);

}  // namespace dimctl::cli
