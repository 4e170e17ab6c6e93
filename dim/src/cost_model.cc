#include "dim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dim {
namespace {

// Sums over the Poisson survival function of X ~ Poisson(mu), the number of arrivals in one
// timer period (mu = λT):
//   first  = Σ_{j=1..J} P(X >= j)
//   second = Σ_{k=0..J-1} k · P(X >= k+1)
// Both use the identity ∫_0^T P(N(t) = k) dt = P(X >= k+1) / λ, which turns every "expected
// number pending, integrated over the timer period" below into one of these sums. Terms far
// below the mean have survival 1 (closed form), terms far above it survival 0, so only about
// 24·sqrt(mu) terms around the mean are summed: the cost is bounded whatever mu and J are.
struct SurvivalSums {
  double first = 0;
  double second = 0;
};

SurvivalSums survival_sums(double mu, uint32_t j_max) {
  SurvivalSums s;
  if (j_max == 0) return s;
  const double sd = std::sqrt(mu);
  const double lo_d = std::max(0.0, std::floor(mu - 12 * sd - 5));
  const double hi_d = mu + 12 * sd + 20;
  const auto j_cap = static_cast<double>(j_max);
  // j <= lo: survival is 1 to within 1e-30.
  const double a = std::min(j_cap, lo_d);
  s.first = a;
  s.second = a * (a - 1) / 2;
  if (j_cap <= lo_d) return s;
  const auto lo = static_cast<uint32_t>(lo_d);
  const auto hi = static_cast<uint32_t>(std::min(j_cap, hi_d));
  // pmf(lo) directly (e^-mu underflows for large mu), then the recurrence pmf(k) = pmf(k-1)·mu/k.
  double pmf = lo == 0
                   ? std::exp(-mu)
                   : std::exp(-mu + lo * std::log(mu) - std::lgamma(static_cast<double>(lo) + 1));
  double cdf = pmf;  // P(X <= lo); the mass below lo is negligible
  for (uint32_t j = lo + 1; j <= hi; ++j) {
    const double survival = std::max(0.0, 1.0 - cdf);  // P(X >= j)
    s.first += survival;
    s.second += static_cast<double>(j - 1) * survival;
    pmf *= mu / j;
    cdf += pmf;
  }
  return s;
}

struct BatchDelay {
  double batch = 1;
  double delay_s = 0;
};

// Rate-limit timer. A cycle starts at an interrupt. Completions pile up until the timer (T) has
// run and one is pending, or until N are pending. So the wait integrates the pending count
// N(t) over [0, T) while N(t) < N:
//   E[wait]  = ∫_0^T E[N(t)·1{N(t) < N}] dt = (1/λ) Σ_{k<N} k·P(X >= k+1)
//   E[batch] = E[min(X, N)] + P(X = 0)   (X = 0: the next completion fires at once, alone)
// Without the cap: D = (λT²/2) / (λT + e^{-λT}) (research 5.2).
BatchDelay rate_limit(double lambda, double t_s, uint32_t n) {
  const double mu = lambda * t_s;
  const SurvivalSums s = survival_sums(mu, n);
  const double batch = s.first + std::exp(-mu);
  return {batch, s.second / lambda / batch};
}

// Absolute timer. A batch starts with its first completion and fires T later or when N - 1 more
// have arrived:
//   E[wait]  = ∫_0^T E[(1 + N(t))·1{N(t) < N-1}] dt = (1/λ) Σ_{k<N-1} (1+k)·P(X >= k+1)
//   E[batch] = 1 + E[min(X, N-1)]
// Without the cap: D = T(1 + λT/2) / (1 + λT).
BatchDelay absolute(double lambda, double t_s, uint32_t n) {
  const double mu = lambda * t_s;
  const SurvivalSums s = survival_sums(mu, n - 1);
  const double batch = 1 + s.first;
  return {batch, (s.first + s.second) / lambda / batch};
}

// Idle-gap timer. A batch grows while the gap to the next completion is shorter than T
// (probability q = 1 - e^{-λT}) and ends with a gap >= T or at its Nth completion:
//   P(K = k) = q^{k-1}(1-q) for k < N, P(K = N) = q^{N-1}.
// A batch of k < N ended by the timer waits k·T plus each gap g_j times the j completions before
// it: E = k·T + m·k(k-1)/2, m = E[g | g < T] = 1/λ - T·e^{-λT}/(1 - e^{-λT}). A batch ended by
// the count fires at its Nth arrival: E = m·N(N-1)/2. D = E[total wait] / E[K].
// Without the cap: D = T + (e^{λT} - 1)·m (research 5.2), which diverges with λT.
BatchDelay idle_gap(double lambda, double t_s, uint32_t n) {
  const double mu = lambda * t_s;
  const double e = std::exp(-mu);
  const double q = -std::expm1(-mu);
  // m = T·(1/mu - 1/(e^mu - 1)); its series below 1e-4 avoids the cancellation.
  const double m = mu < 1e-4 ? t_s * (0.5 - mu / 12) : 1 / lambda - t_s * e / q;
  const double nd = static_cast<double>(n);
  // Gaps shorter than T are all but certain: every batch runs to the count.
  if (e * nd < 1e-12) return {nd, m * (nd - 1) / 2};
  double expected_k = 0, total = 0;
  double p = 1;  // q^{k-1}
  for (uint32_t k = 1; k < n; ++k) {
    const double pk = p * e;
    const double kd = k;
    expected_k += kd * pk;
    total += pk * (kd * t_s + m * kd * (kd - 1) / 2);
    p *= q;
    if (p < 1e-18) break;  // the rest of the distribution carries nothing
  }
  expected_k += nd * p;
  total += p * m * nd * (nd - 1) / 2;
  return {expected_k, total / expected_k};
}

// Software moderation (cost_model.h): polls and completions per episode, and the completions'
// summed wait. The exponent d·μ is capped where e^{dμ} would overflow: there the episode
// outlasts any control period (a flood), and only the ratios of P, Q and the wait matter, which
// P >= e^600 leaves at their limits (1/μ polls per completion, W/2 of delay).
struct Episode {
  double timer_polls = 0;  // P
  double empty = 0;        // P·p
  double completions = 1;  // Q
  double wait_s = 0;       // summed over the episode's completions
};

Episode deferral(double lambda, double w_s, uint32_t d) {
  Episode e;
  const double mu = lambda * w_s;
  if (mu <= 0) {
    e.timer_polls = d;  // λ -> 0: the wake-up's completion alone, then d empty polls
    e.empty = d;
    return e;
  }
  e.timer_polls = std::expm1(std::min(d * mu, 600.0)) / -std::expm1(-mu);
  e.empty = e.timer_polls * std::exp(-mu);
  e.completions = 1 + e.timer_polls * mu;
  e.wait_s = e.timer_polls * mu * w_s / 2;
  return e;
}

Prediction finish(Prediction p, double lambda, double cpu_ns, const CostParams& cost) {
  p.cpu_per_completion_ns = cpu_ns;
  const double sharers = cost.sharers > 1 ? cost.sharers : 1.0;  // NaN too
  p.utilisation = sharers * lambda * p.cpu_per_completion_ns * 1e-9;
  // Above 1 the queueing term would turn negative: a core cannot be more than busy.
  p.feasible = p.utilisation < std::clamp(cost.max_utilisation, 0.0, 0.999);
  p.latency_ns = p.feasible ? p.added_delay_ns + p.cpu_per_completion_ns / (1 - p.utilisation)
                            : std::numeric_limits<double>::infinity();
  return p;
}

Prediction predict_deferral(uint32_t usec, uint32_t defer, double lambda, const CostParams& cost) {
  const double c_c = std::max(0.0, cost.completion_cost_ns);
  const double c_irq = std::max(0.0, cost.interrupt_cost_ns);
  Prediction p;
  if (usec == 0 || defer == 0) return finish(p, lambda, c_c + c_irq, cost);
  const double w_s = usec * 1e-6 + std::max(0.0, cost.timer_latency_ns) * 1e-9;
  const Episode e = deferral(lambda, w_s, defer);
  p.batch = e.completions / (1 + e.timer_polls);
  p.added_delay_ns = e.wait_s / e.completions * 1e9;
  p.polls_per_completion = (1 + e.timer_polls) / e.completions;
  p.empty_polls_per_completion = e.empty / e.completions;
  const double c_poll = std::max(0.0, cost.poll_cost_ns);
  return finish(p, lambda, c_c + (c_irq + e.timer_polls * c_poll) / e.completions, cost);
}

}  // namespace

Prediction predict(TimerMode mode, uint32_t usec, uint32_t count, double rate_per_s,
                   const CostParams& cost) {
  BatchDelay bd;
  const double lambda = rate_per_s > 0 ? rate_per_s : 0;
  if (mode == TimerMode::kDeferral) return predict_deferral(usec, count, lambda, cost);
  const uint32_t n = count == 0 ? kMaxModelCount : std::min(count, kMaxModelCount);
  if (usec != 0 && n > 1 && lambda > 0) {
    const double t_s = usec * 1e-6;
    switch (mode) {
      case TimerMode::kRateLimit:
        bd = rate_limit(lambda, t_s, n);
        break;
      case TimerMode::kIdleGap:
        bd = idle_gap(lambda, t_s, n);
        break;
      case TimerMode::kAbsolute:
        bd = absolute(lambda, t_s, n);
        break;
      case TimerMode::kDeferral:  // returned above
        break;
    }
  } else if (usec != 0 && n > 1) {
    // λ -> 0: one completion per batch; it waits T unless the timer is a rate limit.
    bd.delay_s = mode == TimerMode::kRateLimit ? 0 : usec * 1e-6;
  }
  Prediction p;
  p.batch = std::max(1.0, bd.batch);
  p.added_delay_ns = bd.delay_s * 1e9;
  const double c_c = std::max(0.0, cost.completion_cost_ns);
  const double c_irq = std::max(0.0, cost.interrupt_cost_ns);
  p.polls_per_completion = 1 / p.batch;
  return finish(p, lambda, c_c + c_irq / p.batch, cost);
}

}  // namespace dim
