#include "dim/model_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

  // The cost model's choice at one rate.
  auto choose = [&](double rate) {
    double best = kInf;
    std::array<double, kMaxProfiles> lat{};
    uint8_t most_batching = lo_;
    double most_batch = 0;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      const Prediction pr =
          predict(p.timer, table[i].usec, count_of(table[i], count), rate, p.cost);
      lat[i] = pr.latency_ns;
      best = std::min(best, pr.latency_ns);
      if (pr.batch > most_batch) {
        most_batch = pr.batch;
        most_batching = i;
      }
    }
    if (best == kInf) return most_batching;
    const double tie = best * (1 + kTieRelative) + kTieAbsoluteNs;
    for (uint8_t i = lo_; i <= hi_; ++i) {
      if (lat[i] <= tie) return i;
    }
    return lo_;
  };

  theta_.fill(kInf);
  uint8_t reached = choose(kGridLow);
  for (uint8_t i = 0; i <= reached; ++i) theta_[i] = 0;
  double prev = kGridLow;
  for (double rate = kGridLow * kGridStep; rate <= kGridHigh && reached < hi_; rate *= kGridStep) {
    const uint8_t c = choose(rate);
    if (c > reached) {
      // Each newly reached index starts where choose() first returns it or more within
      // (prev, rate]; the running maximum over rates keeps the map monotone.
      for (uint8_t i = reached + 1; i <= c; ++i) {
        double below = prev, above = rate;
        for (int b = 0; b < kBisections; ++b) {
          const double mid = std::sqrt(below * above);
          (choose(mid) >= i ? above : below) = mid;
        }
        theta_[i] = std::max(above, theta_[i - 1]);
      }
      reached = c;
    }
    prev = rate;
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
  uint8_t down_to = t.highest_at_or_below(t.down_, rate);
  uint8_t up_to = t.highest_at_or_below(t.up_, rate);
  if (in.events >= t.qd1_min_events_ &&
      static_cast<double>(in.completions) <= t.qd1_ratio_ * static_cast<double>(in.events)) {
    down_to = up_to = t.latency_ix_;
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
    if (rate >= t.fast_[up_to]) {
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
    if (since_up_ <= t.bounce_periods_) {
      ceiling_ix_ = std::min(ceiling_ix_, ix_);
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
