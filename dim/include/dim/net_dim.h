// NetDim: one net DIM instance (lib/dim/net_dim.c), bit-for-bit: the same decisions, indices
// and tune states as the kernel for the same samples (dim-spec section 4).
//
// Contract:
//  - on_sample() is one net_dim() call with the queue's cumulative counters. It returns true
//    when the profile index changed; state() is then kApplyNewProfile and the caller (the
//    kernel's deferred work) applies profile() and calls profile_applied(). Until then samples
//    are ignored, as in the kernel.
//  - A decision needs >= 64 events since the window start (BIT_GAP on u16) and a window of at
//    least 1 us; a window shorter than that leaves everything untouched.
//  - Windows are back to back while nothing changes: the deciding sample starts the next one.
//  - restart_window() is the caller's answer to a counter discontinuity (queue reset, counters
//    going backwards): the next sample starts a new window; the tuning state is kept.
//  - Completions (Sample::comp_ctr) are not read: net_dim() compares bytes, packets and events
//    per ms only, and drivers pass no completions, so the completion rates of every window are 0
//    (last_stats(), prev_stats()).
// Not thread-safe; one instance per queue, driven by one thread.
#pragma once

#include <cstdint>
#include <optional>

#include "dim/profile.h"
#include "dim/sample.h"
#include "dim/state.h"
#include "dim/stats.h"
#include "dim/tune.h"

namespace dim {

class NetDim {
 public:
  // start_ix is clamped to the table (drivers start at 0, which the kernel assumes in range).
  explicit NetDim(CqPeriodMode mode = CqPeriodMode::kEqe, Direction dir = Direction::kRx,
                  uint8_t start_ix = 0);

  // The common case, a window still short of 64 events, is inline: a controller calls this once
  // per queue and period, and most calls return here.
  bool on_sample(const Sample& s) {
    if (keeps_measuring(s)) return false;
    return feed(s).changed();
  }
  // What one net_dim() call did, in one value, for a caller that keeps totals of decisions:
  // a controller feeding 10k instances would otherwise re-read the instance after every call.
  // Packed in one integer, so that it comes back in a register: a controller calls close_window()
  // for every busy queue in every period.
  class Outcome {
   public:
    bool changed() const { return (bits_ & kChanged) != 0; }  // the index moved, kApplyNewProfile
    // A window was evaluated and compared (last_verdict() is set), with verdict().
    bool has_verdict() const { return (bits_ & kHasVerdict) != 0; }
    Verdict verdict() const { return static_cast<Verdict>((bits_ >> kVerdictShift) & 3); }
    bool new_window() const { return (bits_ & kNewWindow) != 0; }  // the sample started one
    uint8_t profile_ix() const { return static_cast<uint8_t>(bits_ >> kIxShift); }  // after

   private:
    friend class NetDim;
    static constexpr uint32_t kChanged = 1, kHasVerdict = 2, kNewWindow = 16;
    static constexpr int kVerdictShift = 2, kIxShift = 8;
    void set_verdict(Verdict v) {
      bits_ |= kHasVerdict | (static_cast<uint32_t>(v) << kVerdictShift);
    }
    void set_profile_ix(uint8_t ix) { bits_ |= uint32_t{ix} << kIxShift; }
    uint32_t bits_ = 0;
  };
  // on_sample() with what it did, without the inline window test: a caller that
  // already knows the window may close (keeps_measuring() false) pays for one call.
  // With `div`, the window's rates are computed by it (the same results, cheaper when many
  // windows share a length: a controller's periods); without, by division.
  Outcome feed(const Sample& s, RateDivider* div = nullptr);
  // on_sample(s) in the one state where it only starts a window (after a profile was applied,
  // or on the first sample): returns false, and does nothing, in any other state. A caller that
  // feeds thousands of instances takes this path inline and calls feed() for the rest.
  bool start_window(const Sample& s) {
    if (state_ != MeasureState::kStartMeasure) return false;
    begin(s);
    return true;
  }
  // feed() for a caller that already knows the window is in progress and at least 64 events long
  // (state() kMeasureInProgress, keeps_measuring() false): the decision, out of line, with the
  // sample's fields and the outcome in registers. The same results as feed(s, &div).
  Outcome close_window(int64_t time_ns, uint32_t pkt_ctr, uint32_t byte_ctr, uint16_t event_ctr,
                       RateDivider& div);
  // True when on_sample(s) would do nothing at all: a window in progress, still short of 64
  // events. A caller with bookkeeping around each decision can skip it on this path.
  bool keeps_measuring(const Sample& s) const {
    return state_ == MeasureState::kMeasureInProgress && window_short(s.event_ctr, start_event_);
  }
  // The 64-event rule: a window that started at `start_event_ctr` is still too short to decide
  // at `event_ctr` (u16 wrap, as dim_update_sample() truncates). For a caller that keeps its
  // own copy of window_start().event_ctr.
  static bool window_short(uint16_t event_ctr, uint16_t start_event_ctr) {
    return bit_gap16(event_ctr, start_event_ctr) < kNEvents;
  }
  // The deferred work ran: the next sample starts a new window. No-op when nothing is pending.
  void profile_applied() {
    if (state_ == MeasureState::kApplyNewProfile) state_ = MeasureState::kStartMeasure;
  }
  void restart_window() {
    if (state_ == MeasureState::kMeasureInProgress) state_ = MeasureState::kStartMeasure;
  }
  // The kernel's table for this mode and direction. DIM itself only moves an index: with
  // v6.11+ per-device profiles (ethtool rx-profile / tx-profile) the table belongs to the device,
  // like the kernel's per-device dim_irq_moder, and the caller looks the index up in it
  // (profile(table)). No table pointer is kept here: a controller holding 10k instances pays
  // for every byte of them in cache lines.
  Profile profile() const { return profiles()[tuner_.profile_ix]; }
  Profile profile(const NetProfiles& table) const { return table[tuner_.profile_ix]; }
  const NetProfiles& profiles() const { return net_profiles(mode_, dir_); }
  uint8_t profile_ix() const { return tuner_.profile_ix; }
  CqPeriodMode mode() const { return mode_; }
  Direction direction() const { return dir_; }
  TuneState tune_state() const { return tuner_.tune_state; }
  MeasureState state() const { return state_; }
  uint8_t tired() const { return tuner_.tired; }
  uint8_t steps_right() const { return tuner_.steps_right; }
  uint8_t steps_left() const { return tuner_.steps_left; }
  const Tuner& tuner() const { return tuner_; }
  // The reference the next window is compared with (frozen while parked on top).
  Stats prev_stats() const { return prev_.stats(); }
  // Start of the current window (only time, packets, bytes and events are meaningful).
  Sample window_start() const {
    Sample s;
    s.time_ns = start_time_ns_;
    s.pkt_ctr = start_pkt_;
    s.byte_ctr = start_byte_;
    s.event_ctr = start_event_;
    return s;
  }
  // Verdict of the last evaluated window; nullopt before any, and for a window evaluated while
  // parked tired (the kernel does not compare statistics then).
  std::optional<Verdict> last_verdict() const {
    return last_verdict_ == kNoVerdict
               ? std::nullopt
               : std::optional<Verdict>(static_cast<Verdict>(last_verdict_));
  }
  std::optional<Stats> last_stats() const {
    return windows_evaluated() != 0 ? std::optional<Stats>(last_.stats()) : std::nullopt;
  }
  // Windows evaluated so far (decisions, whether or not the index moved).
  uint64_t windows_evaluated() const { return windows_total_ + windows_; }
  // Evaluated windows compared with verdict `v`, and decisions that moved the index, so far
  // (with those carried over by carry_totals()).
  uint64_t verdicts_total(Verdict v) const {
    const auto i = static_cast<size_t>(v);
    return verdicts_total_[i] + verdicts_[i];
  }
  uint64_t changes_total() const { return changes_total_ + changes_; }
  // Continues the verdict and change totals of `prior`, the instance this one replaces (a
  // controller re-creating DIM for a queue keeps its exported totals monotonic).
  void carry_totals(const NetDim& prior) {
    for (size_t i = 0; i < 3; ++i)
      verdicts_total_[i] += prior.verdicts_total(static_cast<Verdict>(i));
    changes_total_ += prior.changes_total();
  }

 private:
  bool decide(const Stats& curr, Outcome& out);
  // A window of 64 or more events ends at s: evaluated, and the next one started at s unless the
  // profile changed. (A window shorter than 1 us goes on.)
  Outcome close(const Sample& s, RateDivider* div);
  // The sample starts the next window (dim_update_sample(); completions are not kept).
  void begin(const Sample& s) {
    start_time_ns_ = s.time_ns;
    start_pkt_ = s.pkt_ctr;
    start_byte_ = s.byte_ctr;
    start_event_ = s.event_ctr;
    state_ = MeasureState::kMeasureInProgress;
  }
  // The rates net_dim_stats_compare() reads: a window's Stats without the completion rates.
  struct Rates {
    int32_t ppms = 0, bpms = 0, epms = 0;
    Stats stats() const { return {ppms, bpms, epms, 0, 0}; }
    static Rates of(const Stats& s) { return {s.ppms, s.bpms, s.epms}; }
  };
  static constexpr uint8_t kNoVerdict = 0xff;
  // The small counters below are folded into the totals every kFoldAt windows, so none of them
  // (each at most the window count) overflows, and a decision touches no other cache line.
  static constexpr uint8_t kFoldAt = 255;
  void fold_counts();
  void exit_parking();
  enum class StepResult : uint8_t { kStepped, kTooTired, kOnEdge };
  StepResult step();

  // What keeps_measuring() reads comes first, then what a decision reads and writes, all of it in
  // the first 64 bytes (kHotBytes, asserted): a controller keeping 10k instances, each starting
  // on a cache line, touches one line of an instance per decision. The totals the small counters
  // fold into come last.
  int64_t start_time_ns_ = 0;  // the window's start sample (dim_update_sample())
  uint32_t start_pkt_ = 0, start_byte_ = 0;
  uint16_t start_event_ = 0;
  MeasureState state_ = MeasureState::kStartMeasure;
  Tuner tuner_{};
  Rates prev_{};                       // prev_stats
  Rates last_{};                       // valid once a window was evaluated
  uint8_t last_verdict_ = kNoVerdict;  // a Verdict, or none
  uint8_t windows_ = 0, verdicts_[3] = {0, 0, 0}, changes_ = 0;  // since the last fold
  CqPeriodMode mode_ = CqPeriodMode::kEqe;
  Direction dir_ = Direction::kRx;
  uint64_t windows_total_ = 0, verdicts_total_[3] = {0, 0, 0}, changes_total_ = 0;

 public:
  // The bytes a decision touches (keeps_measuring() reads the first 24).
  static constexpr size_t kHotBytes = 64;
};

// net_dim_stats_compare(): throughput first, then packet rate, then (lower is better) event rate.
inline Verdict net_compare(const Stats& curr, const Stats& prev) {
  if (prev.bpms == 0) return curr.bpms != 0 ? Verdict::kBetter : Verdict::kSame;
  if (is_significant(curr.bpms, prev.bpms)) {
    return curr.bpms > prev.bpms ? Verdict::kBetter : Verdict::kWorse;
  }
  if (prev.ppms == 0) return curr.ppms != 0 ? Verdict::kBetter : Verdict::kSame;
  if (is_significant(curr.ppms, prev.ppms)) {
    return curr.ppms > prev.ppms ? Verdict::kBetter : Verdict::kWorse;
  }
  if (prev.epms == 0) return Verdict::kSame;
  if (is_significant(curr.epms, prev.epms)) {
    return curr.epms < prev.epms ? Verdict::kBetter : Verdict::kWorse;
  }
  return Verdict::kSame;
}

// The decision itself is inline: on_sample() and feed() compile it into their callers, and
// close_window() (net_dim.cc) into one flattened function for a controller that calls it for
// every busy queue in every period.
inline NetDim::Outcome NetDim::close(const Sample& s, RateDivider* div) {
  Outcome out;
  Stats curr;
  // Completions are not read (see the contract above): with none on either side the compiler
  // drops the completion rates, which are 0 in every window of a driver's net DIM.
  Sample to = s;
  to.comp_ctr = 0;
  const Sample from = window_start();
  if (!(div != nullptr ? calc_stats(from, to, &curr, *div) : calc_stats(from, to, &curr))) {
    out.set_profile_ix(tuner_.profile_ix);
    return out;
  }
  if (decide(curr, out)) {
    state_ = MeasureState::kApplyNewProfile;
    out.bits_ |= Outcome::kChanged;
  } else {
    begin(s);
    out.bits_ |= Outcome::kNewWindow;
  }
  out.set_profile_ix(tuner_.profile_ix);
  return out;
}

inline NetDim::Outcome NetDim::feed(const Sample& s, RateDivider* div) {
  Outcome out;
  switch (state_) {
    case MeasureState::kMeasureInProgress:
      if (window_short(s.event_ctr, start_event_)) break;
      return close(s, div);
    case MeasureState::kStartMeasure:
      begin(s);
      out.bits_ |= Outcome::kNewWindow;
      break;
    case MeasureState::kApplyNewProfile:
      break;
  }
  out.set_profile_ix(tuner_.profile_ix);
  return out;
}

inline NetDim::StepResult NetDim::step() {
  if (tuner_.tired == kNetTiredLimit) return StepResult::kTooTired;
  switch (tuner_.tune_state) {
    case TuneState::kParkingOnTop:
    case TuneState::kParkingTired:
      break;
    case TuneState::kGoingRight:
      if (tuner_.profile_ix == kNetNumProfiles - 1) return StepResult::kOnEdge;
      ++tuner_.profile_ix;
      ++tuner_.steps_right;
      break;
    case TuneState::kGoingLeft:
      if (tuner_.profile_ix == 0) return StepResult::kOnEdge;
      --tuner_.profile_ix;
      ++tuner_.steps_left;
      break;
  }
  ++tuner_.tired;
  return StepResult::kStepped;
}

inline void NetDim::exit_parking() {
  tuner_.tune_state = tuner_.profile_ix != 0 ? TuneState::kGoingLeft : TuneState::kGoingRight;
  step();
}

inline bool NetDim::decide(const Stats& curr, Outcome& out) {
  const TuneState old_tune = tuner_.tune_state;
  const uint8_t old_ix = tuner_.profile_ix;
  last_ = Rates::of(curr);

  switch (old_tune) {
    case TuneState::kParkingOnTop: {
      const Verdict verdict = net_compare(curr, prev_.stats());
      last_verdict_ = static_cast<uint8_t>(verdict);
      ++verdicts_[static_cast<size_t>(verdict)];
      out.set_verdict(verdict);
      if (verdict != Verdict::kSame) exit_parking();
      break;
    }
    case TuneState::kParkingTired:
      last_verdict_ = kNoVerdict;  // the kernel does not compare while parked tired
      if (--tuner_.tired == 0) exit_parking();
      break;
    case TuneState::kGoingRight:
    case TuneState::kGoingLeft: {
      const Verdict verdict = net_compare(curr, prev_.stats());
      last_verdict_ = static_cast<uint8_t>(verdict);
      ++verdicts_[static_cast<size_t>(verdict)];
      out.set_verdict(verdict);
      if (verdict != Verdict::kBetter) tuner_.turn();
      if (tuner_.on_top()) {
        tuner_.park_on_top();
        break;
      }
      switch (step()) {
        case StepResult::kStepped:
          break;
        case StepResult::kOnEdge:
          tuner_.park_on_top();
          break;
        case StepResult::kTooTired:
          tuner_.park_tired();
          break;
      }
      break;
    }
  }

  // Staying parked on top keeps the reference that put it there, so slow drift cannot
  // creep past the 10 % threshold unnoticed.
  if (old_tune != TuneState::kParkingOnTop || tuner_.tune_state != TuneState::kParkingOnTop) {
    prev_ = Rates::of(curr);
  }
  const bool changed = tuner_.profile_ix != old_ix;
  changes_ = static_cast<uint8_t>(changes_ + (changed ? 1 : 0));
  if (++windows_ == kFoldAt) [[unlikely]]
    fold_counts();
  return changed;
}

}  // namespace dim
