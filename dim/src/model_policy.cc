#include "dim/model_policy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

namespace dim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxDtNs = 1000LL * 1'000'000'000;  // longer periods count as 1000 s
// Rates the thresholds are searched over: 1/s .. 1e10/s in steps of 2^(1/8) (9 %), then each
// threshold is bisected to ~0.1 % within its step.
constexpr double kGridLow = 1.0;
constexpr double kGridHigh = 1e10;
constexpr double kGridStep = 1.0905077326652577;  // 2^(1/8)
constexpr int kBisections = 7;                    // 9 % / 2^7 ≈ 0.07 %
// Two predicted latencies this close count as a tie (which goes to the lower index).
constexpr double kTieRelative = 0.01;
constexpr double kTieAbsoluteNs = 1.0;
// CPU costs this close are equal (two profiles that never reach their count threshold differ by
// rounding only), so a min_saving of 0 does not split the map on rounding noise.
constexpr double kCpuTieRelative = 1e-9;

uint32_t count_of(const Profile& p, ProfileCount c) {
  return c == ProfileCount::kPackets ? p.pkts : p.comps;
}

}  // namespace

ModelTable::ModelTable(std::span<const Profile> profiles, ProfileCount count,
                       const ModelParams& params, uint8_t min_ix, uint8_t max_ix)
    : params_(params) {
  // Parameters into their documented ranges.
  ModelParams& p = params_;
  p.up_margin = std::clamp(p.up_margin, 0.0, 10.0);
  p.down_margin = std::clamp(p.down_margin, 0.0, 0.99);
  p.up_periods = std::max<uint8_t>(p.up_periods, 1);
  if (!(p.fast_up_factor > 0)) {
    p.fast_up_factor = 0;
  } else {
    p.fast_up_factor = std::max(p.fast_up_factor, 1 + p.up_margin);
  }
  p.qd1_completions_per_event = std::max(0.0, p.qd1_completions_per_event);
  p.max_changes_per_s = std::clamp<uint32_t>(p.max_changes_per_s, 1, 1000);
  p.bounce_hold_ms = std::min<uint32_t>(p.bounce_hold_ms, 60'000);
  p.bounce_release = std::max(1.0, p.bounce_release);
  p.throttle_drop = std::clamp(p.throttle_drop, 0.0, 1.0);
  if (p.objective != Objective::kEfficiency) p.objective = Objective::kLatency;
  p.latency_budget_ns = p.latency_budget_ns > 0 ? p.latency_budget_ns : 0.0;  // NaN too
  p.min_saving = p.min_saving > 0 ? std::min(p.min_saving, 0.9) : 0.0;

  std::array<Profile, kMaxProfiles> table{};
  n_ = static_cast<uint8_t>(std::clamp<size_t>(profiles.size(), 1, kMaxProfiles));
  std::copy_n(profiles.begin(), std::min<size_t>(profiles.size(), n_), table.begin());
  profiles_ = table;
  count_ = count;
  lo_ = std::min<uint8_t>(min_ix, n_ - 1);
  hi_ = std::max(lo_, std::min<uint8_t>(max_ix, n_ - 1));

  // The latency profile: no moderation at all if the table has one, else the shortest timer.
  uint32_t best_key = UINT32_MAX;
  for (uint8_t i = lo_; i <= hi_; ++i) {
    const uint32_t n = count_of(table[i], count);
    const uint32_t key = n == 1 || table[i].usec == 0 ? 0 : table[i].usec;
    if (key < best_key) {
      best_key = key;
      latency_ix_ = i;
    }
  }

  // The cost model's choice at one rate: the latency objective's (objective.h).
  std::array<Prediction, kMaxProfiles> pr{};
  auto choose_latency = [&](double rate) {
    double best = kInf;
    uint8_t most_batching = lo_;
    double most_batch = 0;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      pr[i] = predict(p.timer, table[i].usec, count_of(table[i], count), rate, p.cost);
      best = std::min(best, pr[i].latency_ns);
      if (pr[i].batch > most_batch) {
        most_batch = pr[i].batch;
        most_batching = i;
      }
    }
    if (best == kInf) return most_batching;
    const double tie = best * (1 + kTieRelative) + kTieAbsoluteNs;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      if (pr[i].latency_ns <= tie) return i;
    }
    return lo_;
  };
  // The efficiency objective's: the least CPU within the budget, only for a saving of at least
  // min_saving over the latency choice, near-ties in CPU to the least latency (objective.h).
  auto choose_efficiency = [&](double rate) {
    const uint8_t latency = choose_latency(rate);  // fills pr
    const Prediction& base = pr[latency_ix_];
    // The latency objective's map (built above), so a saturated core is judged as under it.
    if (!base.feasible) return latency_pick(rate);
    auto within = [&](uint8_t i) {
      return pr[i].feasible && pr[i].latency_ns - base.latency_ns <= p.latency_budget_ns;
    };
    // The latency choice may sit just above the base (its tie margin); the base never does.
    const uint8_t ref = within(latency) ? latency : latency_ix_;
    const double enough = pr[ref].cpu_per_completion_ns * (1 - p.min_saving);
    auto saves = [&](uint8_t i) { return within(i) && pr[i].cpu_per_completion_ns <= enough; };
    double least_cpu = kInf;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      if (saves(i)) least_cpu = std::min(least_cpu, pr[i].cpu_per_completion_ns);
    }
    if (least_cpu == kInf) return ref;
    auto cheap = [&](uint8_t i) {
      return saves(i) &&
             pr[i].cpu_per_completion_ns * (1 - p.min_saving) <= least_cpu * (1 + kCpuTieRelative);
    };
    double best = kInf;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      if (cheap(i)) best = std::min(best, pr[i].latency_ns);
    }
    const double tie = best * (1 + kTieRelative) + kTieAbsoluteNs;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      if (cheap(i) && pr[i].latency_ns <= tie) return i;
    }
    return ref;  // not reached: the least-CPU profile is cheap
  };

  theta_.fill(kInf);
  uint8_t reached = choose_latency(kGridLow);
  for (uint8_t i = 0; i <= reached; ++i) theta_[i] = 0;
  double prev = kGridLow;
  for (double rate = kGridLow * kGridStep; rate <= kGridHigh && reached < hi_; rate *= kGridStep) {
    const uint8_t c = choose_latency(rate);
    if (c > reached) {
      // Each newly reached index starts where choose_latency() first returns it or more within
      // (prev, rate]; the running maximum over rates keeps the map monotone.
      for (uint8_t i = reached + 1; i <= c; ++i) {
        double below = prev, above = rate;
        for (int b = 0; b < kBisections; ++b) {
          const double mid = std::sqrt(below * above);
          (choose_latency(mid) >= i ? above : below) = mid;
        }
        theta_[i] = std::max(above, theta_[i - 1]);
      }
      reached = c;
    }
    prev = rate;
  }

  if (p.objective == Objective::kEfficiency) {
    // The map as segments over the same grid, each boundary bisected like a threshold. It has no
    // running maximum: a profile is held only where the objective takes it (objective.h).
    segment_ix_[0] = choose_efficiency(kGridLow);
    segments_ = 1;
    double below_rate = kGridLow;
    for (double rate = kGridLow * kGridStep; rate <= kGridHigh; rate *= kGridStep) {
      const uint8_t c = choose_efficiency(rate);
      const uint8_t last = segment_ix_[segments_ - 1];
      if (c != last) {
        double below = below_rate, above = rate;
        for (int b = 0; b < kBisections; ++b) {
          const double mid = std::sqrt(below * above);
          (choose_efficiency(mid) != last ? above : below) = mid;
        }
        if (segments_ < kMaxSegments) {
          segment_from_[segments_] = above;
          segment_ix_[segments_] = c;
          ++segments_;
        } else {
          // Out of room (no table of 16 profiles seen comes near): the last segment takes the
          // lesser of the two, the side of the latency objective.
          segment_ix_[segments_ - 1] = std::min(last, c);
        }
      }
      below_rate = rate;
    }
  }

  // Where QD~1 evidence counts. kLatency: everywhere, the latency profile being its choice at
  // low load anyway. kEfficiency: where the profile should batch (the predicted batch grows with
  // the rate for every timer semantics), so that one completion per interrupt says the flow
  // cannot be batched, not that the profile does not batch.
  qd1_from_.fill(0);
  if (p.objective == Objective::kEfficiency) {
    const double target = kQd1BatchFactor * p.qd1_completions_per_event;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      auto batches = [&](double rate) {
        return predict(p.timer, table[i].usec, count_of(table[i], count), rate, p.cost).batch >=
               target;
      };
      qd1_from_[i] = batches(kGridLow) ? 0 : kInf;
      double below_rate = kGridLow;
      for (double rate = kGridLow * kGridStep; rate <= kGridHigh && qd1_from_[i] == kInf;
           rate *= kGridStep) {
        if (batches(rate)) {
          double below = below_rate, above = rate;
          for (int b = 0; b < kBisections; ++b) {
            const double mid = std::sqrt(below * above);
            (batches(mid) ? above : below) = mid;
          }
          qd1_from_[i] = above;
        }
        below_rate = rate;
      }
    }
  }

  for (uint8_t i = 0; i < kMaxProfiles; ++i) {
    const double t = theta_[i];
    down_[i] = t * (1 - p.down_margin);
    up_[i] = t * (1 + p.up_margin);
    fast_[i] = p.fast_up_factor > 0 ? t * p.fast_up_factor : kInf;
  }
  qd1_ratio_ = p.qd1_completions_per_event;
  qd1_min_events_ = p.qd1_min_events;
  // At most b changes in any one-second window: capacity c = ceil(b/2) plus a refill just under
  // b - c + 1 per second never adds up to b + 1 whole changes within a second.
  const uint32_t b = p.max_changes_per_s;
  const uint32_t cap = (b + 1) / 2;
  token_cap_ = cap * kOneChange;
  token_per_s_ = uint64_t{b - cap + 1} * kOneChange - 1;
  hold_base_us_ = p.bounce_hold_ms * 1000;
  release_ = static_cast<float>(p.bounce_release);
  throttle_keep_ = static_cast<float>(1 - p.throttle_drop);
  up_periods_ = p.up_periods;
  bounce_periods_ = p.bounce_periods;
}

uint16_t ModelTable::segment_mask(double from, double to) const {
  uint16_t mask = 0;
  for (uint8_t s = 0; s < segments_; ++s) {
    const double end = s + 1 < segments_ ? segment_from_[s + 1] : kInf;
    if (segment_from_[s] <= to && end > from)
      mask = static_cast<uint16_t>(mask | 1u << segment_ix_[s]);
  }
  return mask;
}

// The profiles the kEfficiency map takes over the band of rates the margins allow,
// [rate / (1 + up_margin), rate / (1 − down_margin)]: the current profile is kept while the map
// takes it anywhere in the band, else the policy moves down (fast) to the highest the band takes
// below it, or up (slow) to the lowest above it. On a monotone map this reads as the threshold
// arrays do (down_to the band's highest profile, up_to its lowest).
std::pair<uint8_t, uint8_t> ModelTable::efficiency_targets(double rate, uint8_t ix) const {
  const uint16_t mask =
      segment_mask(rate / (1 + params_.up_margin), rate / (1 - params_.down_margin));
  if (mask & (uint16_t{1} << ix)) return {ix, ix};
  const auto lower = static_cast<uint16_t>(mask & ((1u << ix) - 1));
  if (lower != 0) {
    const auto to = static_cast<uint8_t>(15 - std::countl_zero(lower));
    return {to, to};
  }
  const auto to = static_cast<uint8_t>(std::countr_zero(mask));
  return {to, to};
}

// In one period when the load is fast_up_factor past the move: the map at `to` or above over the
// band down to rate / fast_up_factor (on a monotone map: the rate at or above θ·fast_up_factor).
bool ModelTable::efficiency_fast_up(double rate, uint8_t to) const {
  if (!(params_.fast_up_factor > 0)) return false;
  const uint16_t mask = segment_mask(rate / params_.fast_up_factor, rate / (1 + params_.up_margin));
  return mask != 0 && std::countr_zero(mask) >= to;
}

bool ModelTable::unbatched(uint8_t ix, double rate, double events, double completions) const {
  if (ix == latency_ix_ || !(events > 0)) return false;
  const double gain = prediction(ix, rate).batch - 1;
  return gain >= kQd1MinGain && events * gain >= kQd1MinExtra &&
         completions / events - 1 <= kQd1GainShare * gain;
}

ModelPolicy::ModelPolicy(const ModelTable& table)
    : tokens_(table.token_cap_), ix_(table.latency_ix_) {}

bool ModelPolicy::update(const ModelTable& t, const ModelInput& in) {
  if (in.dt_ns <= 0) return false;
  if (!measured_) {
    if (in.events == 0 && in.completions == 0) return false;
    measured_ = true;
  }
  const auto dt = static_cast<uint64_t>(std::min(in.dt_ns, kMaxDtNs));
  // The budget refills in at most ~1 s; capping the time at 2 s keeps the product in range.
  const uint64_t earned = std::min<uint64_t>(dt, 2'000'000'000) * t.token_per_s_ / 1'000'000'000;
  tokens_ = static_cast<uint32_t>(std::min<uint64_t>(tokens_ + earned, t.token_cap_));
  if (ceiling_ix_ != kNoCeiling) {
    const uint64_t dt_us = dt / 1000;
    if (dt_us >= hold_us_) {
      ceiling_ix_ = kNoCeiling;
      hold_us_ = 0;
    } else {
      hold_us_ -= static_cast<uint32_t>(dt_us);
    }
  }
  if (since_up_ != 0xff) ++since_up_;
  if (since_up_ == t.bounce_periods_ + 1) bounces_ = 0;  // the latest up move held

  const double rate = static_cast<double>(in.completions) * 1e9 / static_cast<double>(in.dt_ns);
  uint8_t down_to, up_to;
  if (t.segments_ == 0) {
    down_to = t.highest_at_or_below(t.down_, rate);
    up_to = t.highest_at_or_below(t.up_, rate);
  } else {
    std::tie(down_to, up_to) = t.efficiency_targets(rate, ix_);
  }
  // Under kEfficiency a QD~1 move down holds the latency profile as a bounce does: the map still
  // asks for the profile the flow cannot batch under, and each retry would cost it a period.
  bool qd1_down = false;
  if (in.events >= t.qd1_min_events_ &&
      static_cast<double>(in.completions) <= t.qd1_ratio_ * static_cast<double>(in.events) &&
      (t.segments_ == 0 || rate >= t.qd1_from_[ix_] ||
       t.unbatched(ix_, rate, static_cast<double>(in.events),
                   static_cast<double>(in.completions)))) {
    down_to = up_to = t.latency_ix_;
    qd1_down = t.segments_ != 0;
  }
  if (up_from_ != kNoCeiling) {
    if (since_up_ > t.bounce_periods_ || up_from_ >= ix_) {
      up_from_ = kNoCeiling;  // the move held (or the profile came down since)
    } else if (rate < static_cast<double>(ref_rate_) * static_cast<double>(t.throttle_keep_)) {
      down_to = std::min(down_to, up_from_);
      up_to = std::min(up_to, up_from_);
    }
  }

  uint8_t want = ix_;
  if (down_to < ix_) {
    want = down_to;
    streak_ = 0;
  } else if (up_to > ix_) {
    streak_target_ = streak_ == 0 ? up_to : std::min(streak_target_, up_to);
    if (streak_ != 0xff) ++streak_;
    if (t.segments_ == 0 ? rate >= t.fast_[up_to] : t.efficiency_fast_up(rate, up_to)) {
      want = up_to;
    } else if (streak_ >= t.up_periods_) {
      want = streak_target_;
    }
    if (want > ix_ && ceiling_ix_ != kNoCeiling) {
      if (rate >= static_cast<double>(ref_rate_) * static_cast<double>(t.release_)) {
        ceiling_ix_ = kNoCeiling;
        hold_us_ = 0;
      } else if (want >= ceiling_ix_) {
        want = std::max<uint8_t>(ix_, ceiling_ix_ - 1);
      }
    }
  } else {
    streak_ = 0;
  }
  if (want == ix_ || tokens_ < kOneChange) return false;

  tokens_ -= kOneChange;
  if (want < ix_) {
    if (since_up_ <= t.bounce_periods_ || qd1_down) {
      ceiling_ix_ = std::min<uint8_t>(ceiling_ix_, qd1_down ? t.latency_ix_ + 1 : ix_);
      hold_us_ = t.hold_base_us_ << std::min<uint8_t>(bounces_, 4);
      if (bounces_ != 0xff) ++bounces_;
    }
    since_up_ = 0xff;
  } else {
    const auto r = static_cast<float>(rate);
    // Under a ceiling the reference is the larger of the failed move's rate and this one's: the
    // guard watches the move only when that is within 10 % of this move's own rate.
    up_from_ = ceiling_ix_ == kNoCeiling || r >= ref_rate_ * 0.9f ? ix_ : kNoCeiling;
    ref_rate_ = ceiling_ix_ == kNoCeiling ? r : std::max(ref_rate_, r);
    since_up_ = 0;
  }
  ix_ = want;
  streak_ = 0;
  ++changes_;
  return true;
}

}  // namespace dim
