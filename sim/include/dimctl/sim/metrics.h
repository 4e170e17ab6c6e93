// What one simulation run measured: per phase (and per flow inside it) latency histograms,
// throughput, CPU, interrupts, moderation changes; a timeline of fixed windows; and the
// adaptation figures that need a reference run (convergence against the oracle).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dimctl/sim/histogram.h"
#include "dimctl/sim/workload.h"

namespace dimctl::sim {

struct FlowMetrics {
  std::string flow;
  LatencyHistogram latency;
};

struct PhaseMetrics {
  std::string phase;
  int64_t start_ns = 0;
  int64_t end_ns = 0;              // measured span: [max(start, warmup), end)
  LatencyHistogram latency;        // every flow
  std::vector<FlowMetrics> flows;  // per flow, in the workload's order of first appearance
  uint64_t completions = 0;        // delivered in the span
  uint64_t interrupts = 0;         // summed over queues and stages
  uint64_t polls = 0;
  uint64_t moderation_changes = 0;  // applied (N, T) changes, all CQs
  int64_t cpu_busy_ns = 0;          // summed over cores and stages
  uint32_t cores = 0;               // cores summed over stages
  // Time after the phase start until the run's timeline stays within +-10 % of the oracle's
  // (mean latency and CPU per completion, window by window, same arrivals); -1 = never,
  // -2 = not computed (no reference run, or too few windows).
  int64_t convergence_ns = -2;
  std::string oracle_choice;  // the oracle: the static profile it picked for this phase

  double seconds() const { return static_cast<double>(end_ns - start_ns) / 1e9; }
  double throughput() const {
    return seconds() > 0 ? static_cast<double>(completions) / seconds() : 0;
  }
  double interrupts_per_s() const {
    return seconds() > 0 ? static_cast<double>(interrupts) / seconds() : 0;
  }
  double changes_per_s() const {
    return seconds() > 0 ? static_cast<double>(moderation_changes) / seconds() : 0;
  }
  double completions_per_interrupt() const {
    return interrupts ? static_cast<double>(completions) / static_cast<double>(interrupts) : 0;
  }
  double cpu_per_completion_ns() const {
    return completions ? static_cast<double>(cpu_busy_ns) / static_cast<double>(completions) : 0;
  }
  double cpu_utilisation() const {
    const double span = static_cast<double>(end_ns - start_ns) * cores;
    return span > 0 ? static_cast<double>(cpu_busy_ns) / span : 0;
  }
  const FlowMetrics* flow(const std::string& name) const {
    for (const FlowMetrics& f : flows) {
      if (f.flow == name) return &f;
    }
    return nullptr;
  }
};

// One timeline window [t_ns, t_ns + window).
struct Window {
  int64_t t_ns = 0;
  uint64_t completions = 0;
  double latency_sum_ns = 0;
  int64_t latency_max_ns = 0;
  int64_t cpu_busy_ns = 0;
  // Queue 0's moderation at the end of the window (first moderated stage).
  uint32_t count = 1;
  int64_t timer_ns = 0;
  int profile_ix = -1;  // index in the policy's table, -1 when not a table profile
  double mean_latency_ns() const {
    return completions ? latency_sum_ns / static_cast<double>(completions) : 0;
  }
  double cpu_per_completion_ns() const {
    return completions ? static_cast<double>(cpu_busy_ns) / static_cast<double>(completions) : 0;
  }
};

// One core as the daemon's Controller saw it at the end of a dimctl-model run: the costs its
// model used there and the saturation rule's state (seam::CoreView, for reports that explain a
// decision with the figures it was made with).
struct ModelCore {
  uint32_t cpu = 0;
  uint8_t confidence = 0;    // dim::CostConfidence: 0 defaults .. 3 measured
  double completion_ns = 0;  // C_c the model used (0: the rule's own values)
  double interrupt_ns = 0;   // C_irq the model used (0: the rule's own values)
  double background = 0;     // the core's busy share outside the queues' interrupt paths
  bool saturated = false;
  uint8_t saturation_profile = 0;
  uint32_t saturation_episodes = 0;
  uint32_t saturation_descents_kept = 0;  // the rule's descents from a best held with idle left
  uint32_t saturation_descents_back = 0;
  uint32_t saturation_rejudged = 0;  // passive episodes judged again: the batch rose under them
};

struct RunResult {
  std::string workload;
  std::string policy;
  uint64_t seed = 0;
  std::string cost_model;  // the stages' cost model names, "+"-joined
  std::vector<PhaseMetrics> phases;
  PhaseMetrics total;  // the whole measured run
  std::vector<Window> windows;
  std::vector<ModelCore> model_cores;  // dimctl-* policies with CPU times: each core at the end
  uint64_t simulated_completions = 0;  // including warm-up
  uint64_t simulated_events = 0;       // engine events processed
  double wall_seconds = 0;
};

}  // namespace dimctl::sim
