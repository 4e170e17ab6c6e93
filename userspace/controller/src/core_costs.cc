// Per core, every period: the CPU times the collector measured (Snapshot::cpus) and the counts of
// the queues polled on the core (gathered in the per-queue pass, CoreCosts::add_load) are fed
// to one dim::CostEstimator and one dim::SaturationPolicy. The model pass then judges each model
// queue with its core's measured costs (a table per quantized cost, cached per device) and, on a
// saturated core, gives it the saturation rule's profile (docs/CONTROLLER.md, "Measured costs"
// and "Saturation").
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "dim/cost_estimator.h"
#include "dim/saturation.h"
#include "dimctl/controller/controller.h"
#include "dimctl/controller/core_costs.h"
#include "dimctl/seam/cpu_period.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

namespace {

// Cost buckets: 5 % steps on a log scale. An estimate moves to another bucket only when it is
// three quarters of a step outside its own, so an estimate on a boundary does not flip the
// table every period.
const double kLogStep = std::log(1.05);
constexpr double kLeaveBucket = 0.75;
constexpr size_t kMaxBuckets = 1024;  // beyond: cores keep the bucket they have

// The estimator is fed the sum of the periods of about one second (CoreState::acc): a refit
// costs ~1.7 us, 0.4 ms a period for 256 busy cores at 20 Hz, and a second of traffic is a
// steadier entry than one 50 ms period. The first feed of each core is staggered over the
// second (by CPU number), so the refits spread over the periods instead of falling together.
constexpr int64_t kCostFeedNs = 1'000'000'000;
constexpr int kFeedStagger = 20;

int16_t bucket_of(double ns) {
  return static_cast<int16_t>(std::lround(std::log(std::max(ns, 1.0)) / kLogStep));
}
double ns_of(int16_t bucket) {
  return std::round(std::exp(bucket * kLogStep));
}
bool outside(double ns, int16_t bucket) {
  return std::abs(std::log(std::max(ns, 1.0)) / kLogStep - bucket) > kLeaveBucket;
}

}  // namespace

void CoreCosts::measure(const seam::Snapshot& snap, int64_t step_dt_ns, uint64_t step,
                        const ProbeCounts& probe_counts) {
  if (snap.cpus.empty()) {
    cores_.clear();
    picks_.clear();
    return;
  }
  if (cores_.size() != snap.cpus.size()) {
    const size_t before = cores_.size();
    cores_.resize(snap.cpus.size());
    picks_.resize(snap.cpus.size());
    for (size_t cpu = before; cpu < cores_.size(); ++cpu) {
      cores_[cpu].feed_after_ns =
          kCostFeedNs + static_cast<int64_t>(cpu % kFeedStagger) * (kCostFeedNs / kFeedStagger);
    }
  }
  for (size_t cpu = 0; cpu < cores_.size(); ++cpu) {
    CoreState& c = cores_[cpu];
    CorePick& pick = picks_[cpu];
    const seam::CpuTimes& t = snap.cpus[cpu];
    if (!c.have_prev || step_dt_ns <= 0 || seam::went_backwards(t, c.prev)) {
      c.prev = t;
      c.have_prev = true;
      c.acc = {};
      continue;
    }
    const seam::CpuTimes& p = c.prev;
    const seam::CpuPeriod period = seam::cpu_period(t, p);
    const double hard = period.hardirq_ns;
    const double soft = period.softirq_ns;
    c.busy = seam::busy_fraction(t, p, hard + soft, step_dt_ns);
    const bool idle_known = t.idle_known && p.idle_known;
    c.prev = t;
    // The queues polled on this core this period (feed_queue(): a sum is this step's when its
    // stamp is).
    CpuLoad load;
    if (cpu < loads_.size() && loads_[cpu].step == step) load = loads_[cpu];
    dim::CoreMeasurement m;
    m.dt_ns = step_dt_ns;
    m.hardirq_ns = static_cast<uint64_t>(std::llround(hard));
    m.softirq_ns = static_cast<uint64_t>(std::llround(soft));
    m.interrupts = load.events;
    m.polls = load.polls;
    m.completions = load.packets;
    if (idle_known) {
      m.other_known = true;
      m.other_ns = static_cast<uint64_t>(
          std::llround(std::max(0.0, c.busy * static_cast<double>(step_dt_ns) - hard - soft)));
    }
    c.last = m;
    c.exhausted = load.exhausted;
    c.est.observe(m);
    c.acc.dt_ns += m.dt_ns;
    c.acc.hardirq_ns += m.hardirq_ns;
    c.acc.softirq_ns += m.softirq_ns;
    c.acc.interrupts += m.interrupts;
    c.acc.polls += m.polls;
    c.acc.completions += m.completions;
    if (c.acc.dt_ns >= c.feed_after_ns) {
      c.est.update(c.acc);
      c.acc = {};
      c.feed_after_ns = kCostFeedNs;
    }

    // The bucket the model's tables are built for: re-picked only when the estimate leaves it.
    // The model's costs are the estimate's stretched by the core's background work.
    const dim::CostEstimate& e = c.est.estimate();
    const auto [completion_ns, interrupt_ns] = c.est.model_costs();
    if (e.confidence == dim::CostConfidence::kDefaults) {
      pick.bucket = CorePick::kNoBucket;
    } else if (pick.bucket == CorePick::kNoBucket ||
               outside(completion_ns, buckets_[pick.bucket].first) ||
               outside(interrupt_ns, buckets_[pick.bucket].second)) {
      const std::pair<int16_t, int16_t> b{bucket_of(completion_ns), bucket_of(interrupt_ns)};
      auto it = std::find(buckets_.begin(), buckets_.end(), b);
      if (it != buckets_.end()) {
        pick.bucket = static_cast<uint16_t>(it - buckets_.begin());
      } else if (buckets_.size() < kMaxBuckets) {
        pick.bucket = static_cast<uint16_t>(buckets_.size());
        buckets_.push_back(b);
      }
    }

    // Saturation, judged at the profile the core's busiest model queue had during the period.
    dim::SaturationInput in;
    in.dt_ns = step_dt_ns;
    in.busy_ns = static_cast<uint64_t>(std::llround(c.busy * static_cast<double>(step_dt_ns)));
    in.interrupts = m.interrupts;
    in.completions = m.completions;
    in.polls = m.polls;
    in.exhausted_polls = c.exhausted;
    in.model_ix = c.rep_model_ix;
    in.queues = std::max<double>(pick.model_queues, 1);
    if (pick.probe && probe_counts) probe_counts(pick, in);
    if (c.rep_table == nullptr) {
      // No model queue with packets on the core last period: nothing to hand a profile to. A rule
      // that starts again starts from the latency objective; the pressure of a core whose first
      // model queue shows up this period counts already.
      if (c.sat.saturated()) c.sat.restart();
      c.sat.pressure_without_objective(in);
      pick.saturated_wish = false;
      pick.probe = false;
      continue;
    }
    const dim::ModelTable& table = *c.rep_table;
    // The period just measured ran at the rule's profile only if the budget let the wish through
    // at the last step.
    in.wish_in_force =
        !c.sat.overrides() || (pick.saturated_wish && pick.wish == c.sat.profile_ix());
    c.sat.update(table, table.params().cost, in);
    // A probe starts on the queue that spoke for the core last period (its busiest).
    if (c.sat.probing() && !pick.probe) {
      pick.probe_index = pick.rep_index;
      pick.probe_cq = pick.rep_cq;
    }
    pick.probe = c.sat.probing();
    pick.probe_wish = c.sat.profile_ix();

    // The wish follows the rule within the change budget (WishBudget: a trial goes only with
    // the change back in hand); leaving is at once.
    c.budget.refill(table.params().max_changes_per_s, step_dt_ns);
    if (!c.sat.overrides()) {
      pick.saturated_wish = false;
    } else if (!pick.saturated_wish || pick.wish != c.sat.profile_ix()) {
      if (c.budget.take(c.sat.profile_ix() != c.sat.best_ix())) {
        pick.wish = c.sat.profile_ix();
        pick.saturated_wish = true;
      } else {
        ++c.budget_waits;
      }
    }
  }
}

template <typename Device>
const std::shared_ptr<const dim::ModelTable>& Controller::cost_table(Device& dev, uint8_t level,
                                                                     uint16_t bucket) {
  const seam::ModelSettings& ms = dev.policy.model;
  if (bucket == CorePick::kNoBucket || !ms.measured_costs ||
      (ms.completion_cost_set && ms.interrupt_cost_set) || dev.model_table == nullptr) {
    return shared_table(dev, level);
  }
  if (dev.cost_base != dev.model_table) {
    dev.cost_tables.clear();
    dev.cost_base = dev.model_table;
  }
  if (bucket >= dev.cost_tables.size()) dev.cost_tables.resize(bucket + size_t{1});
  std::shared_ptr<const dim::ModelTable>& t = dev.cost_tables[bucket][level];
  if (t == nullptr) {
    // Explicit values win over the measurement, field by field.
    seam::DevicePolicy p = dev.policy;
    const auto [completion_ns, interrupt_ns] = cores_.bucket_costs(bucket);
    if (!ms.completion_cost_set) p.model.completion_cost_ns = completion_ns;
    if (!ms.interrupt_cost_set) p.model.interrupt_cost_ns = interrupt_ns;
    const size_t before = model_tables_.size();
    t = device_table(dev, p, kShareLevels[level]);
    cores_.count_tables_built(model_tables_.size() - before);
  }
  return t;
}

const std::shared_ptr<const dim::ModelTable>& Controller::core_table(NetDevice& dev, uint8_t level,
                                                                     uint16_t bucket) {
  return cost_table(dev, level, bucket);
}

const std::shared_ptr<const dim::ModelTable>& Controller::core_table(RdmaDevice& dev, uint8_t level,
                                                                     uint16_t bucket) {
  return cost_table(dev, level, bucket);
}

// The probe queue's counts this period: a net queue's from the model pass's work list (filled by
// the feed, before the model pass), a CQ's from its slot (measured first in the step).
void Controller::probe_counts(const CorePick& pick, dim::SaturationInput& in) const {
  if (pick.probe_cq) {
    if (pick.probe_index < cqs_.slots.size() && cqs_.slots[pick.probe_index].fresh) {
      in.probe_events = cqs_.slots[pick.probe_index].d_schedules;  // its interrupts, as the core's
      in.probe_completions = cqs_.slots[pick.probe_index].d_comps;
    }
    return;
  }
  for (const ModelWork& w : queues_.model_work) {
    if (w.index == pick.probe_index) {
      if (!w.reset) {
        in.probe_events = w.d_events;
        in.probe_completions = w.d_packets;
      }
      return;
    }
  }
}

std::pair<int64_t, int64_t> CoreCosts::bucket_costs(uint16_t bucket) const {
  return {std::llround(ns_of(buckets_[bucket].first)),
          std::llround(ns_of(buckets_[bucket].second))};
}

void Controller::finish_cores() {
  for (size_t cpu = 0; cpu < cores_.size(); ++cpu) {
    CoreState& c = cores_.state(cpu);
    const CorePick& pick = cores_.picks()[cpu];
    if (pick.rep_step != static_cast<uint32_t>(steps_.count()) ||
        pick.rep_index >= (pick.rep_cq ? cqs_.slots.size() : queues_.slots.size())) {
      c.rep_table.reset();
      continue;
    }
    // The representative's pick and table; the table is held here too: the next period's rule
    // reads it, whatever a reload does to the device.
    const auto represent = [&](auto& dev, uint8_t model_ix) {
      c.rep_model_ix = model_ix;
      const std::shared_ptr<const dim::ModelTable>& t =
          core_table(dev, pick.rep_level, pick.bucket);
      if (c.rep_table != t) c.rep_table = t;
    };
    if (!pick.rep_cq) {
      QueueSlot& rep = queues_.slots[pick.rep_index];
      represent(*rep.dev, rep.model.profile_ix());
    } else if (const CqSlot& rep = cqs_.slots[pick.rep_index]; rep.model) {
      represent(*rep.dev, rep.model->profile_ix());
    } else {
      c.rep_table.reset();
    }
  }
}

void CoreCosts::fill_views(seam::ControllerState& st) const {
  st.cores.resize(cores_.size());
  for (size_t cpu = 0; cpu < cores_.size(); ++cpu) {
    const CoreState& c = cores_[cpu];
    const CorePick& pick = picks_[cpu];
    seam::CoreView& v = st.cores[cpu];
    v = {};
    v.cpu = static_cast<uint32_t>(cpu);
    v.estimate = c.est.estimate();
    v.confidence = v.estimate.confidence;
    if (pick.bucket != CorePick::kNoBucket) {
      v.used_completion_ns = ns_of(buckets_[pick.bucket].first);
      v.used_interrupt_ns = ns_of(buckets_[pick.bucket].second);
    }
    v.busy = c.busy;
    if (c.last.dt_ns > 0) {
      const double dt_s = static_cast<double>(c.last.dt_ns) / 1e9;
      v.interrupts_per_s = static_cast<double>(c.last.interrupts) / dt_s;
      v.completions_per_s = static_cast<double>(c.last.completions) / dt_s;
    }
    v.exhausted_share = c.last.polls > 0
                            ? static_cast<double>(std::min(c.exhausted, c.last.polls)) /
                                  static_cast<double>(c.last.polls)
                            : 0;
    v.saturated = c.sat.saturated();
    v.saturation_profile = pick.wish;
    v.saturation_episodes = c.sat.episodes();
    v.qd1_probes_qd1 = c.sat.probes().qd1;
    v.qd1_probes_batching = c.sat.probes().batching;
    v.descents_kept = c.sat.descents().kept;
    v.descents_back = c.sat.descents().back;
    v.rejudged = c.sat.rejudged();
    v.saturation_budget_waits = c.budget_waits;
    v.model_queues = c.rep_table != nullptr ? pick.model_queues : 0;
  }
  st.model_cost_tables_built_total = tables_built_;
}

}  // namespace dimctl::controller
