// CoreCosts: per CPU, while the snapshot carries CPU times (Snapshot::cpus), what the cost model
// learns of the core: the period's CPU times and the counts of the queues and CQs polled on it
// fed to one dim::CostEstimator (the measured costs, quantized into buckets the model's tables
// are built for) and one dim::SaturationPolicy (the saturation rule and its QD~1 probe), and the
// per-core pick the model pass reads and writes (docs/CONTROLLER.md, "Measured costs" and
// "Saturation").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "dim/cost_estimator.h"
#include "dim/model_policy.h"
#include "dim/saturation.h"
#include "dimctl/controller/wish_budget.h"
#include "dimctl/seam/controller_state.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::controller {

// What the model pass reads and writes per queue for the queue's core: small, in an array of
// its own (CoreCosts::picks()), so that 10k queues spread over hundreds of cores touch a few
// KiB rather than the cores' estimator windows.
struct CorePick {
  static constexpr uint16_t kNoBucket = 0xffff;
  uint64_t rep_packets = 0;  // the busiest model queue of the pass stamped rep_step: its packets
  uint32_t rep_index = 0;    // its slot
  uint32_t rep_step = 0;     // (uint32_t) StepClock::count() of that pass
  // Cost bucket the model uses on this core (CoreCosts: its quantized costs), kNoBucket: defaults.
  uint16_t bucket = kNoBucket;
  uint16_t model_queues = 0;    // model queues with packets on the core in that pass
  uint8_t rep_level = 0;        // the busiest queue's share level
  uint8_t wish = 0;             // the throughput profile the queues follow while saturated_wish
  bool saturated_wish = false;  // the queues' wish is `wish` (saturated and in budget)
  bool rep_cq = false;  // rep_index is a CQ slot (the controller's CQ slots), not a queue slot
  // The saturation rule's QD~1 probe (dim::SaturationPolicy::probing()): this period, the one
  // queue or CQ probe_index (the core's busiest when the probe started) takes probe_wish.
  bool probe = false;
  bool probe_cq = false;
  uint8_t probe_wish = 0;
  uint32_t probe_index = 0;

  // A model queue or CQ with `count` completions this pass: the busiest speaks for the core.
  void offer(uint32_t step, uint64_t count, uint32_t index, uint8_t level, bool cq) {
    if (rep_step != step) {
      rep_step = step;
      rep_packets = 0;
      model_queues = 0;
    }
    ++model_queues;
    if (count >= rep_packets) {
      rep_packets = count;
      rep_index = index;
      rep_level = level;
      rep_cq = cq;
    }
  }
};

// One CPU's measured costs and saturation rule (core_costs.cc), kept while the snapshot carries
// CPU times.
struct CoreState {
  seam::CpuTimes prev;  // cumulative times of the previous snapshot
  bool have_prev = false;
  dim::CostEstimator est;
  dim::SaturationPolicy sat;
  // The periods summed since the estimator was last fed (it is fed once per kCostFeedNs: a
  // refit costs ~1.7 us, too much for every core every period), and when it is next fed.
  dim::CoreMeasurement acc;
  int64_t feed_after_ns = 0;
  dim::CoreMeasurement last;  // the latest period (export)
  uint64_t exhausted = 0;     // its budget-exhausted polls
  double busy = 0;            // its busy fraction (not idle, at least hard-IRQ + softirq time)
  uint8_t rep_model_ix = 0;   // the busiest model queue's pick after the last model pass
  std::shared_ptr<const dim::ModelTable> rep_table;  // its table (null: no model queue)
  WishBudget budget;                                 // the saturation wish's changes
  uint64_t budget_waits = 0;                         // saturation changes held back by the budget
};

// The loads of one step on one CPU: packets (completions), and the wake-ups, polls and
// budget-exhausted polls the per-core costs count. A sum is valid in the step its stamp names, so
// nothing is cleared between steps.
struct CpuLoad {
  uint64_t step = 0;
  uint64_t packets = 0;
  uint64_t events = 0, polls = 0, exhausted = 0;
};

class CoreCosts {
 public:
  static constexpr uint16_t kNoBucket = CorePick::kNoBucket;
  // The saturation rule's QD~1 probe queue's or CQ's counts this period (probe_events and
  // probe_completions of the input), from the caller's slots.
  using ProbeCounts = std::function<void(const CorePick&, dim::SaturationInput&)>;

  // Adds a queue's or CQ's counts of step `step` to its CPU's sum. Inline: the per-queue loop
  // calls it for every queue.
  [[gnu::always_inline]] void add_load(uint16_t cpu, uint64_t step, uint64_t packets,
                                       uint64_t events, uint64_t polls, uint64_t exhausted) {
    if (cpu >= loads_.size()) [[unlikely]]
      loads_.resize(cpu + size_t{1});
    CpuLoad& l = loads_[cpu];
    if (l.step != step) l = {step, 0};
    l.packets += packets;
    l.events += events;
    l.polls += polls;
    l.exhausted += exhausted;
  }
  // The CPU's sum; valid in the step its stamp names (only read for a CPU a queue stamped).
  const CpuLoad& load(uint16_t cpu) const { return loads_[cpu]; }

  // Once per step, before the model pass: each core's period (its CPU times against the last
  // snapshot's, and the loads of step `step`) fed to its estimator and saturation rule; the
  // bucket and the saturation wish its picks follow. No CPU times: no cores.
  void measure(const seam::Snapshot& snap, int64_t step_dt_ns, uint64_t step,
               const ProbeCounts& probe_counts);

  bool empty() const { return picks_.empty(); }
  size_t size() const { return cores_.size(); }
  CoreState& state(size_t cpu) { return cores_[cpu]; }
  std::vector<CorePick>& picks() { return picks_; }
  const std::vector<CorePick>& picks() const { return picks_; }

  // The (completion, interrupt) costs in ns of a bucket, as the tables for it are built.
  std::pair<int64_t, int64_t> bucket_costs(uint16_t bucket) const;
  // Cost-model tables built for measured costs (exported).
  void count_tables_built(uint64_t n) { tables_built_ += n; }

  void fill_views(seam::ControllerState& st) const;

 private:
  std::vector<CpuLoad> loads_;
  std::vector<CoreState> cores_;
  std::vector<CorePick> picks_;  // beside cores_, same size
  // Quantized (completion, interrupt) cost pairs the cores' estimates fell in: a core names its
  // pair by index, and each device keeps its tables by that index (NetDevice::cost_tables).
  std::vector<std::pair<int16_t, int16_t>> buckets_;
  uint64_t tables_built_ = 0;
};

}  // namespace dimctl::controller
