// ModelPolicy: dimctl's own moderation policy (config `algorithm: model`). Where kernel DIM
// hill-climbs one profile per 64 events, this one is called once per control period per queue or
// CQ with that period's counter deltas, estimates the load and jumps straight to the profile a
// cost model predicts is best.
//
// Cost model (cost_model.h, research 5.2): for each profile (T, N) of the table and a completion
// rate λ, with the device's timer semantics (rate-limit / idle-gap / absolute), Poisson arrivals
// give the batch B and the added delay D exactly; the host spends C_c per completion and C_irq
// per interrupt, so S = C_c + C_irq/B per completion at utilisation ρ = λS, and the predicted
// latency is
//     L(profile, λ) = D + S / (1 − ρ)        (infeasible when ρ >= max_utilisation).
// The model picks the profile with the least L (ties, within 1 % + 1 ns, to the lower index; no
// feasible profile: the one that batches most). "Minimise latency, and pay for interrupts only
// through the CPU queueing they cause": at low load every ρ is small and the least-delay profile
// wins; towards saturation the queueing term dominates and batching wins. Defaults: C_c = 1 µs,
// C_irq = 2 µs, max_utilisation 0.95 (CostParams); each is a constructor (and config) option.
//
// ModelTable evaluates that model once, when a device's policy is set: it walks λ over 1/s..1e10/s
// (2^(1/8) steps, bisected to 0.1 %) and stores, per profile index p, the rate θ_p from which the
// model picks p or above, taking the running maximum so that the map λ -> profile is monotone by
// construction, whatever the table. A period's decision is then a handful of compares
// (tens of ns; the controller calls it for up to 10k queues per period).
//
// Objective (objective.h, ModelParams::objective): the above is kLatency, the default.
// kEfficiency takes the least CPU per completion within a latency budget; its map is not monotone
// in the rate, so the table stores it as up to 32 rate segments, each boundary found on the same
// grid and bisected the same way (the built-in tables need at most 10). update() then reads the
// profiles the map takes over the margins' band of rates, [λ/(1 + up_margin), λ/(1 − down_margin)]:
// the current profile is kept while the map takes it somewhere in the band, else down fast to
// the highest below it, or up slow to the lowest above it. On a monotone map this is the
// threshold rule below; the bounce and throttle guards and the change budget are the same, QD~1
// differs (below).
//
// Decision rules (update()), all in the table's [min, max] bounds:
//  - Load: λ = completions / Δt of this period; completions per event c = completions / events.
//  - QD~1: with at least qd1_min_events events and c <= qd1_completions_per_event (1.25), the
//    completions arrive one per interrupt whatever the moderation: nothing is batched, so nothing
//    can be saved, and the policy takes the latency profile (latency_ix(): an N <= 1 or T = 0
//    profile, else the smallest T; RDMA index 0 = (1 µs, 1), net EQE/CQE index 0). This is what
//    keeps a QD=1 flow at the static latency profile at any rate. Under kEfficiency it counts
//    only where the current profile is predicted to batch 1.5 times that ratio at this rate
//    (qd1_from()), or where the period shows at most half the batch gain the model predicts
//    there (unbatched()): at the latency profile an open loop shows one completion per interrupt
//    too, and the rule as it stands would keep every queue there whatever the budget. A QD=1 flow
//    moved up comes back down at once, and that move holds the latency profile as a bounce does
//    (a ceiling just above it for bounce_hold, doubling with each retry that fails again): the
//    map still asks for the profile the flow cannot batch under.
//  - Down fast: when λ < θ_ix·(1 − down_margin) the policy moves in this period straight to the
//    highest profile the load still supports (latency first).
//  - Up slow: a higher profile needs λ >= θ·(1 + up_margin) for up_periods (2) periods in a row,
//    and goes to the lowest target those periods agreed on; a load of at least fast_up_factor (2)
//    times θ moves up in one period.
//  - Bounce guard: a move down within bounce_periods (3) of a move up means the higher profile did
//    not hold (a closed loop whose rate falls with more moderation, or a burst): the profile left
//    becomes a ceiling for bounce_hold (2 s, doubling with each bounce in a row, up to 16 times),
//    lifted early when λ reaches bounce_release (1.5) times the rate of the failed move. Without
//    it a closed loop would flip between two profiles forever (a limit cycle).
//  - Throttle guard: a move up after which the rate falls by more than throttle_drop (25 %) of
//    the rate it was made at, within bounce_periods, delayed a closed loop enough to cost it
//    rate (few completions outstanding: the batch the move counted on never comes, and each
//    completion now waits for the timer). Back to the profile it left, and the bounce guard's
//    ceiling applies. Without it a closed loop settles where its own throttled rate justifies the
//    throttling profile (a self-consistent rate below what no moderation carries: in the
//    randomized sweep, sweep-1-022, half the oracle's throughput). The reference is the bounce
//    guard's rate (ref_rate_): for a move made under a ceiling, only when that is within 10 % of
//    the move's own rate.
//  - Change budget: a token bucket of ceil(b/2) changes refilling at just under b - ceil(b/2) + 1
//    per second, so any window of one second holds at most b = max_changes_per_s changes: up to
//    ceil(b/2) at once, b - ceil(b/2) + 1 per second sustained. A change that finds no token
//    waits (the up streak is kept).
//  - Δt <= 0 decides nothing and changes no state; Δt above 1000 s counts as 1000 s for the
//    budget and the ceiling hold. Neither does a period without traffic before the first one
//    with traffic (measured()): there is nothing to decide on yet.
//
// Deterministic (no clock, no randomness: the same inputs give the same decisions), no allocation
// after construction. One ModelTable per device (per table, bounds and parameters), shared by the
// ModelPolicy instances of its queues, which hold 24 bytes of state each and no pointer to it.
// Not thread-safe; one instance per queue, driven by one thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "dim/cost_model.h"
#include "dim/objective.h"
#include "dim/profile.h"

namespace dim {

struct ModelParams {
  CostParams cost;
  TimerMode timer = TimerMode::kRateLimit;
  double up_margin = 0.25;
  double down_margin = 0.10;
  uint8_t up_periods = 2;       // >= 1
  double fast_up_factor = 2.0;  // 0: never move up in one period
  double qd1_completions_per_event = 1.25;
  uint32_t qd1_min_events = 8;
  uint32_t max_changes_per_s = 10;  // 1..1000
  uint8_t bounce_periods = 3;
  uint32_t bounce_hold_ms = 2000;
  double bounce_release = 1.5;
  // Throttle guard: a move up after which the completion rate falls below (1 − throttle_drop)
  // of the rate it was made at, within bounce_periods, throttled a closed loop (its moderation
  // delay cost rate): back to the profile it left, as a bounce (1: off).
  double throttle_drop = 0.25;
  // What the table's choice optimises (objective.h). kLatency ignores the two fields after it.
  Objective objective = Objective::kLatency;
  double latency_budget_ns = 0;  // kEfficiency: predicted latency accepted over the base (>= 0)
  double min_saving = 0.02;      // kEfficiency: least CPU saving that moves the choice (0..0.9)
};

// Which field of a Profile is the count threshold N.
enum class ProfileCount : uint8_t {
  kPackets,      // net tables (rx-frames)
  kCompletions,  // RDMA tables (cq_count)
};

class ModelTable {
 public:
  static constexpr int kMaxProfiles = 16;
  static constexpr uint32_t kOneChange = 1'000'000;  // change-budget units per change

  // `profiles` holds 1..16 profiles (more are ignored; none is treated as one (0, 0) profile).
  // The bounds are clamped to the table; min wins when they cross, as for DIM's applied index.
  // Out-of-range parameters are clamped to their documented ranges.
  ModelTable(std::span<const Profile> profiles, ProfileCount count, const ModelParams& params,
             uint8_t min_ix = 0, uint8_t max_ix = 255);

  // The cost model's profile for a steady rate (no hysteresis), under the table's objective:
  // monotone in the rate for kLatency, piecewise constant for kEfficiency (segments below).
  uint8_t pick(double rate_per_s) const {
    return segments_ == 0 ? latency_pick(rate_per_s) : segment_ix_[segment_at(rate_per_s)];
  }
  // The kLatency choice, whatever the table's objective.
  uint8_t latency_pick(double rate_per_s) const { return highest_at_or_below(theta_, rate_per_s); }
  // θ_ix: the rate from which latency_pick() returns ix or more (0 at and below the lowest pick,
  // +inf for a profile the model never picks).
  double threshold(uint8_t ix) const { return theta_[ix]; }
  // kEfficiency's map as segments: segment s holds segment_ix(s) from segment_from(s) (0 for the
  // first) up to the next segment's start. 0 segments: a kLatency table.
  static constexpr int kMaxSegments = 32;
  uint8_t segments() const { return segments_; }
  double segment_from(uint8_t s) const { return segment_from_[s]; }
  uint8_t segment_ix(uint8_t s) const { return segment_ix_[s]; }
  uint8_t latency_ix() const { return latency_ix_; }
  // The rate from which one completion per interrupt at profile ix counts as QD~1 (update()): 0
  // under kLatency; under kEfficiency where the cost model predicts ix to batch
  // kQd1BatchFactor times qd1_completions_per_event (+inf where it never does).
  double qd1_from(uint8_t ix) const { return qd1_from_[ix]; }
  static constexpr double kQd1BatchFactor = 1.5;
  // kEfficiency, below qd1_from(ix) too: a period at profile ix (not the latency profile) whose
  // completions per event show at most kQd1GainShare of the batching the cost model predicts
  // there, B − 1 with B >= 1 + kQd1MinGain, over events enough that the predicted extra
  // completions number at least kQd1MinExtra. The flow does not batch as an open loop at its
  // rate would (a closed loop at QD~1 throttled by the timer), so that counts as QD~1 too.
  bool unbatched(uint8_t ix, double rate_per_s, double events, double completions) const;
  static constexpr double kQd1GainShare = 0.5;
  static constexpr double kQd1MinGain = 0.05;
  static constexpr double kQd1MinExtra = 4;
  // The cost model's prediction for profile ix at a steady rate, with the table's timer and costs
  // (what the objective weighed; shown to operators beside the latency profile's).
  Prediction prediction(uint8_t ix, double rate_per_s) const {
    const uint8_t i = ix < n_ ? ix : static_cast<uint8_t>(n_ - 1);
    return dim::predict(params_.timer, profiles_[i].usec, count(i), rate_per_s, params_.cost);
  }
  uint8_t min_ix() const { return lo_; }
  uint8_t max_ix() const { return hi_; }
  uint8_t size() const { return n_; }
  const ModelParams& params() const { return params_; }
  // The table's profiles, and the count threshold N of one (pkts or comps by the table's kind).
  const Profile& profile(uint8_t ix) const { return profiles_[ix]; }
  uint32_t count(uint8_t ix) const {
    return count_ == ProfileCount::kPackets ? profiles_[ix].pkts : profiles_[ix].comps;
  }

 private:
  friend class ModelPolicy;
  using Rates = std::array<double, kMaxProfiles>;
  // The highest index p in [lo, hi] with rate >= rates[p]; lo when there is none. `rates` is
  // non-decreasing over [lo, hi].
  uint8_t highest_at_or_below(const Rates& rates, double rate) const {
    uint8_t p = lo_;
    while (p < hi_ && rate >= rates[p + 1]) ++p;
    return p;
  }
  // The segment that holds `rate` (kEfficiency tables).
  uint8_t segment_at(double rate) const {
    uint8_t s = 0;
    while (s + 1 < segments_ && rate >= segment_from_[s + 1]) ++s;
    return s;
  }
  // The profiles the kEfficiency map takes anywhere in [from, to], one bit per index.
  uint16_t segment_mask(double from, double to) const;
  // kEfficiency's targets in update() for this period's rate (down_to, up_to: the highest
  // profile the load still supports, the lowest it asks for; the threshold arrays give them under
  // kLatency), and whether a move up to `to` may be made in one period.
  std::pair<uint8_t, uint8_t> efficiency_targets(double rate, uint8_t ix) const;
  bool efficiency_fast_up(double rate, uint8_t to) const;

  // What update() reads, first.
  Rates down_;  // θ·(1 − down_margin)
  Rates up_;    // θ·(1 + up_margin)
  Rates fast_;  // θ·fast_up_factor (+inf when fast up is off)
  double qd1_ratio_ = 1.25;
  uint32_t qd1_min_events_ = 8;
  uint32_t token_cap_ = 0;    // millionths of a change
  uint64_t token_per_s_ = 0;  // millionths of a change per second
  uint32_t hold_base_us_ = 0;
  float release_ = 1.5f;
  float throttle_keep_ = 0.75f;  // 1 − throttle_drop
  uint8_t lo_ = 0, hi_ = 0, n_ = 1, latency_ix_ = 0;
  uint8_t up_periods_ = 2, bounce_periods_ = 3;
  uint8_t segments_ = 0;

  Rates theta_;
  // What kEfficiency's update() reads besides (segments_, above, is 0 for kLatency).
  Rates qd1_from_;  // QD~1 evidence counts at a profile from this rate (kLatency: 0)
  std::array<uint8_t, kMaxSegments> segment_ix_{};
  std::array<double, kMaxSegments> segment_from_{};
  ModelParams params_;
  std::array<Profile, kMaxProfiles> profiles_{};  // read by SaturationPolicy, not by update()
  ProfileCount count_ = ProfileCount::kPackets;
};

// One period's deltas of a queue or CQ.
struct ModelInput {
  int64_t dt_ns = 0;         // period length; <= 0 decides nothing
  uint64_t events = 0;       // interrupt episodes: NAPI polls that re-armed, ib_core poll passes
  uint64_t completions = 0;  // packets (net) or completions (RDMA)
};

class ModelPolicy {
 public:
  // Index 0 and an empty change budget: only a placeholder until assigned from the table.
  ModelPolicy() = default;
  // Starts at the table's latency profile with a full change budget.
  explicit ModelPolicy(const ModelTable& table);

  // One period. Returns true when the profile index changed (it is then profile_ix()).
  // REQUIRES: `table` is the one this instance was constructed from, or one built from the same
  // profiles, bounds and parameters except the cost (CostParams: a caller may judge a period's
  // load with another number of sharers; only the thresholds differ).
  bool update(const ModelTable& table, const ModelInput& in);

  uint8_t profile_ix() const { return ix_; }
  // Takes n changes from the change budget for a move the caller makes outside update() (the
  // controller's cost probe: one up, one back), if the budget holds them now. Returns whether it
  // did; the profile and the other state are untouched.
  bool take_changes(uint32_t n) {
    const uint64_t need = uint64_t{n} * kOneChange;
    if (tokens_ < need) return false;
    tokens_ -= static_cast<uint32_t>(need);
    return true;
  }
  // Index changes since construction (wraps at 2^32: decades at any allowed budget).
  uint32_t changes() const { return changes_; }
  // The bounce guard's ceiling: ups to this index or above are held back (none: 255).
  uint8_t ceiling_ix() const { return ceiling_ix_; }
  // A period with events or completions has been fed since construction. Until then the policy
  // has measured nothing (updates without traffic decide nothing and change no state) and its
  // profile is only where it starts: the controller writes nothing for it, so a queue taken
  // over keeps the device's own setting until dimctl has seen it carry traffic.
  bool measured() const { return measured_; }
  // The queue's wish: profile_ix() once measured(), none before.
  std::optional<uint8_t> wish() const {
    return measured_ ? std::optional<uint8_t>(ix_) : std::nullopt;
  }

 private:
  static constexpr uint32_t kOneChange = ModelTable::kOneChange;
  static constexpr uint8_t kNoCeiling = 0xff;

  float ref_rate_ = 0;    // rate of the latest up move (the ceiling's release reference)
  uint32_t tokens_ = 0;   // change budget, millionths of a change
  uint32_t hold_us_ = 0;  // time left on the ceiling
  uint32_t changes_ = 0;
  uint8_t ix_ = 0;
  uint8_t streak_ = 0;         // periods in a row whose up target was above ix_
  uint8_t streak_target_ = 0;  // the lowest of those targets
  uint8_t since_up_ = 0xff;    // periods since the latest up move (saturates)
  uint8_t ceiling_ix_ = kNoCeiling;
  uint8_t bounces_ = 0;  // bounces in a row: the hold doubles with each
  // The profile the latest up move left, while the throttle guard watches it (kNoCeiling: not).
  uint8_t up_from_ = kNoCeiling;
  bool measured_ = false;  // a period with traffic has been seen
};
static_assert(sizeof(ModelPolicy) == 24, "the controller keeps one per queue beside its slot");

}  // namespace dim
