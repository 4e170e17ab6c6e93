// host_costs: what one interrupt and one completion cost on the host a trace was recorded on, for
// a replay of that trace's queues (`dimctl sim --trace FILE --cost trace`): the daemon's per-core
// estimates at the end of the trace (ShadowReplay), averaged over the CPUs that polled the
// replayed queues and CQs, each weighted by the completions they polled there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dim/cost_estimator.h"
#include "dimctl/common/result.h"

namespace dimctl::trace_costs {

struct CpuShare {
  uint32_t cpu = 0;
  uint64_t completions = 0;  // of the replayed queues, polled on this CPU
  dim::CostEstimate estimate;
};

struct HostCosts {
  double interrupt_ns = 0;     // the weighted C_irq
  double completion_ns = 0;    // the weighted C_c
  uint64_t completions = 0;    // weighed (polled on a CPU with an estimate)
  std::vector<CpuShare> cpus;  // the CPUs weighed, by CPU number
};

// Reads the trace at `path` (its queues of net device or IB device `device`, every queue when
// empty). Fails naming the file when it cannot be read, has no CPU times, or none of its
// replayed completions was polled on a CPU whose estimate left the defaults.
Result<HostCosts> host_costs(const std::string& path, const std::string& device = "");

}  // namespace dimctl::trace_costs
