#include "dim/cost_estimator.h"

#include <algorithm>
#include <cmath>

namespace dim {
namespace {

constexpr int64_t kMaxDtNs = 1000LL * 1'000'000'000;
constexpr uint64_t kMaxCount = uint64_t{1} << 40;
// Below this 1 − cos² the two columns are one: fit the softirq time per interrupt alone (for
// trimming), never a split.
constexpr double kCollinear = 1e-9;

using Mask = std::array<bool, CostEstimator::kWindow>;

double median_of(std::array<double, CostEstimator::kWindow>& v, uint32_t n) {
  auto mid = v.begin() + n / 2;
  std::nth_element(v.begin(), mid, v.begin() + n);
  return *mid;
}

}  // namespace

CostEstimator::CostEstimator(const CostParams& defaults)
    : default_completion_ns_(
          std::clamp(defaults.completion_cost_ns, kMinCompletionNs, kMaxCompletionNs)),
      default_interrupt_ns_(
          std::clamp(defaults.interrupt_cost_ns, kMinInterruptNs, kMaxInterruptNs)) {
  // NaN defaults (clamp passes them through) fall back to the built-in ones.
  if (!(default_completion_ns_ == default_completion_ns_)) default_completion_ns_ = 1000;
  if (!(default_interrupt_ns_ == default_interrupt_ns_)) default_interrupt_ns_ = 2000;
  est_.completion_ns = default_completion_ns_;
  est_.interrupt_ns = default_interrupt_ns_;
}

bool CostEstimator::plausible(const CoreMeasurement& m) {
  if (m.dt_ns <= 0 || m.dt_ns > kMaxDtNs) return false;
  if (m.interrupts < kMinInterrupts || m.completions == 0) return false;
  if (m.interrupts > kMaxCount || m.completions > kMaxCount || m.hardirq_ns > kMaxCount * 1000 ||
      m.softirq_ns > kMaxCount * 1000) {
    return false;
  }
  // A core cannot spend more than the period in IRQ context; twice is room for edge effects.
  return static_cast<double>(m.hardirq_ns) + static_cast<double>(m.softirq_ns) <=
         2 * static_cast<double>(m.dt_ns);
}

void CostEstimator::Recent::push(double x) {
  v[next] = x;
  next = (next + 1) % kDirectPeriods;
  n = std::min<uint32_t>(n + 1, kDirectPeriods);
}

double CostEstimator::Recent::lower_median() const {
  std::array<double, kDirectPeriods> w = v;
  auto mid = w.begin() + (n - 1) / 2;
  std::nth_element(w.begin(), mid, w.begin() + n);
  return *mid;
}

bool CostEstimator::observe(const CoreMeasurement& m) {
  if (!plausible(m)) return false;
  if (m.other_known) {
    other_share_.push(std::clamp(static_cast<double>(m.other_ns) / static_cast<double>(m.dt_ns),
                                 0.0, kMaxBackground));
    const double now = other_share_.lower_median();
    if (std::abs(now - background_) > kBackgroundBand || (now == 0) != (background_ == 0)) {
      background_ = now;
    }
  }
  handler_per_irq_.push(static_cast<double>(m.hardirq_ns) / static_cast<double>(m.interrupts));
  softirq_per_completion_.push(static_cast<double>(m.softirq_ns) /
                               static_cast<double>(m.completions));
  if (handler_per_irq_.n >= kMinDirectPeriods) {
    // Held within the band: a cost that followed every period's batch would move with the
    // model's own picks.
    const auto hold = [](double& in_use, double now) {
      if (in_use == 0 || now > in_use * kDirectBand || now * kDirectBand < in_use) in_use = now;
    };
    hold(direct_interrupt_ns_,
         std::clamp(handler_per_irq_.lower_median(), kMinInterruptNs, kMaxInterruptNs));
    hold(direct_completion_ns_,
         std::clamp(softirq_per_completion_.lower_median(), kMinCompletionNs, kMaxCompletionNs));
  }
  apply_direct(est_);
  return true;
}

void CostEstimator::apply_direct(CostEstimate& e) const {
  e.background = background_;
  if (e.confidence == CostConfidence::kMeasured || direct_interrupt_ns_ == 0) return;
  e.completion_ns = direct_completion_ns_;
  e.interrupt_ns = direct_interrupt_ns_;
  if (e.confidence == CostConfidence::kDefaults) e.confidence = CostConfidence::kDirect;
}

bool CostEstimator::update(const CoreMeasurement& m) {
  if (!plausible(m)) return false;
  const auto dt = static_cast<double>(m.dt_ns);
  const auto hard = static_cast<double>(m.hardirq_ns);
  const auto soft = static_cast<double>(m.softirq_ns);
  const double per_s = 1e9 / dt;
  const auto irqs = static_cast<double>(m.interrupts);
  window_[next_] = {irqs * per_s, static_cast<double>(m.completions) * per_s, soft * per_s,
                    hard / irqs};
  next_ = (next_ + 1) % kWindow;
  size_ = std::min<uint32_t>(size_ + 1, kWindow);
  refit();
  return true;
}

void CostEstimator::refit() {
  const uint32_t n = size_;
  std::array<double, kWindow> scratch{};

  // The handler time per interrupt: entries far from the median are outliers.
  Mask keep{};
  for (uint32_t i = 0; i < n; ++i) scratch[i] = window_[i].handler;
  const double h_med = median_of(scratch, n);
  for (uint32_t i = 0; i < n; ++i) scratch[i] = std::abs(window_[i].handler - h_med);
  const double h_tol = std::max(kTrimScale * median_of(scratch, n), kTrimFloor * h_med);
  for (uint32_t i = 0; i < n; ++i) keep[i] = std::abs(window_[i].handler - h_med) <= h_tol;
  const Mask handler_keep = keep;

  struct Fit {
    double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0, det = 0, spread = 0;
    double w = 0, c = 0;
    uint32_t n = 0;
    bool split = false;
  };
  auto fit = [&](const Mask& k) {
    Fit f;
    for (uint32_t i = 0; i < n; ++i) {
      if (!k[i]) continue;
      const Entry& e = window_[i];
      f.s11 += e.irq_rate * e.irq_rate;
      f.s12 += e.irq_rate * e.comp_rate;
      f.s22 += e.comp_rate * e.comp_rate;
      f.s1y += e.irq_rate * e.softirq;
      f.s2y += e.comp_rate * e.softirq;
      ++f.n;
    }
    if (f.n == 0 || !(f.s11 > 0) || !(f.s22 > 0)) return f;
    f.det = f.s11 * f.s22 - f.s12 * f.s12;
    f.spread = std::max(0.0, f.det / (f.s11 * f.s22));
    if (f.spread >= kCollinear && f.n >= 2) {
      f.w = (f.s22 * f.s1y - f.s12 * f.s2y) / f.det;
      f.c = (f.s11 * f.s2y - f.s12 * f.s1y) / f.det;
      f.split = true;
    } else {
      f.w = f.s1y / f.s11;  // softirq time per interrupt at the one batch
    }
    return f;
  };
  auto predicted = [&](const Fit& f, const Entry& e) {
    return f.w * e.irq_rate + f.c * e.comp_rate;
  };
  auto rel_residual = [&](const Fit& f, const Entry& e) {
    const double p = predicted(f, e);
    return (e.softirq - p) / std::max(std::abs(p), 1.0);
  };

  // An ordinary fit, then twice: residuals of every entry against the latest fit, keep those
  // within the trim threshold (an entry dropped once may come back), refit.
  Fit f = fit(handler_keep);
  std::array<double, kWindow> abs_rel{};
  for (int pass = 0; pass < 2 && f.n > 0; ++pass) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (!handler_keep[i]) continue;
      abs_rel[i] = std::abs(rel_residual(f, window_[i]));
      scratch[m++] = abs_rel[i];
    }
    const double tol = std::max(kTrimScale * median_of(scratch, m), kTrimFloor);
    for (uint32_t i = 0; i < n; ++i) keep[i] = handler_keep[i] && abs_rel[i] <= tol;
    f = fit(keep);
  }

  CostEstimate e;
  e.periods = n;
  e.kept = f.n;
  e.completion_ns = default_completion_ns_;
  e.interrupt_ns = default_interrupt_ns_;
  if (f.n > 0) {
    double irq = 0, comp = 0, soft = 0, handler = 0, ssr = 0, ssr_rel = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (!keep[i]) continue;
      const Entry& x = window_[i];
      irq += x.irq_rate;
      comp += x.comp_rate;
      soft += x.softirq;
      handler += x.handler * x.irq_rate;
      const double r = x.softirq - predicted(f, x);
      ssr += r * r;
      const double rr = rel_residual(f, x);
      ssr_rel += rr * rr;
    }
    e.handler_ns = handler / irq;
    e.combined_ns = (handler + soft) / irq;
    e.batch = comp / irq;
    e.spread = f.spread;
    e.residual_rms = std::sqrt(ssr_rel / f.n);
    if (f.split) {
      e.wakeup_ns = f.w;
      e.fit_completion_ns = f.c;
      const double irq_ns = e.handler_ns + f.w;
      const double s2 = f.n > 2 ? ssr / (f.n - 2) : 0;
      const double se_w = std::sqrt(s2 * f.s22 / f.det);
      const double se_c = std::sqrt(s2 * f.s11 / f.det);
      e.relative_error = f.c > 0 && irq_ns > 0 ? std::max(se_w / irq_ns, se_c / f.c) : 1;
      const bool in_bounds = f.c >= kMinCompletionNs && f.c <= kMaxCompletionNs &&
                             irq_ns >= kMinInterruptNs && irq_ns <= kMaxInterruptNs;
      if (f.n >= kMinPeriods && f.spread >= kMinSpread && e.relative_error <= kMaxRelError &&
          in_bounds) {
        e.confidence = CostConfidence::kMeasured;
        e.completion_ns = f.c;
        e.interrupt_ns = irq_ns;
      }
    } else {
      e.wakeup_ns = f.w;
    }
    if (e.confidence != CostConfidence::kMeasured && f.n >= kMinPeriods) {
      e.confidence = CostConfidence::kCombined;
    }
  }
  // A NaN anywhere (it cannot come from the checked inputs) must not reach the model.
  if (!(e.completion_ns == e.completion_ns) || !(e.interrupt_ns == e.interrupt_ns)) {
    e.confidence = CostConfidence::kDefaults;
    e.completion_ns = default_completion_ns_;
    e.interrupt_ns = default_interrupt_ns_;
  }
  apply_direct(e);
  est_ = e;
}

}  // namespace dim
