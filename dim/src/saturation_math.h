// What the parts of SaturationPolicy (saturation.cc: the detector; saturation_climb.cc: the
// climb search; saturation_verdicts.cc: the verdicts while holding) compute alike: rates and
// busy fractions from one period's counts and the cost model.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dim/cost_model.h"
#include "dim/model_policy.h"

namespace dim::saturation {

inline constexpr int64_t kMaxDtNs = 1000LL * 1'000'000'000;

inline double per_queue_rate(double completions, double dt_ns, double queues) {
  return completions * 1e9 / dt_ns / (queues > 1 ? queues : 1.0);  // NaN queues count as 1
}

// The core's busy fraction projected to profile ix: `busy` measured over `dt_ns` with
// `completions` at `batch_now` completions per interrupt, the interrupts ix would take instead
// (the cost model's batch there, at the measured per-queue rate) priced at `irq_factor` times the
// core's interrupt cost. Batching is what frees a core, so a profile's headroom is judged at its
// own batch, not at the one measured (the leave and the descent).
inline double busy_at(const ModelTable& t, const CostParams& cost, uint8_t ix, double busy,
                      double completions, double batch_now, double dt_ns, double queues,
                      double irq_factor) {
  const double rate = per_queue_rate(completions, dt_ns, queues);
  const double b_ix = predict(t.params().timer, t.profile(ix).usec, t.count(ix), rate, cost).batch;
  const double c_irq = std::max(0.0, cost.interrupt_cost_ns);
  return busy + completions * c_irq * irq_factor * (1 / b_ix - 1 / batch_now) / dt_ns;
}

}  // namespace dim::saturation
