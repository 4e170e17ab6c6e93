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
    return on_sample_slow(s);
  }
  // True when on_sample(s) would do nothing at all: a window in progress, still short of 64
  // events. A caller with bookkeeping around each decision can skip it on this path.
  bool keeps_measuring(const Sample& s) const {
    return state_ == MeasureState::kMeasureInProgress &&
           window_short(s.event_ctr, start_.event_ctr);
  }
  // The 64-event rule: a window that started at `start_event_ctr` is still too short to decide
  // at `event_ctr` (u16 wrap, as dim_update_sample() truncates). For a caller that keeps its
  // own copy of window_start().event_ctr.
  static bool window_short(uint16_t event_ctr, uint16_t start_event_ctr) {
    return bit_gap16(event_ctr, start_event_ctr) < kNEvents;
  }
  // The deferred work ran: the next sample starts a new window. No-op when nothing is pending.
  void profile_applied();
  void restart_window();
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
  const Stats& prev_stats() const { return prev_stats_; }
  // Start of the current window (only time, packets, bytes and events are meaningful).
  const Sample& window_start() const { return start_; }
  // Verdict of the last evaluated window; nullopt before any, and for a window evaluated while
  // parked tired (the kernel does not compare statistics then).
  std::optional<Verdict> last_verdict() const { return last_verdict_; }
  std::optional<Stats> last_stats() const {
    return windows_evaluated_ != 0 ? std::optional<Stats>(last_stats_) : std::nullopt;
  }
  // Windows evaluated so far (decisions, whether or not the index moved).
  uint64_t windows_evaluated() const { return windows_evaluated_; }

 private:
  bool on_sample_slow(const Sample& s);
  bool decide(const Stats& curr);
  void exit_parking();
  enum class StepResult : uint8_t { kStepped, kTooTired, kOnEdge };
  StepResult step();

  // What keeps_measuring() reads comes first, what a decision reads and writes next, the
  // bookkeeping for callers last: a controller keeping 10k instances touches only the first bytes
  // of each on the common path and two cache lines on a decision (see the controller's slot).
  Sample start_{};
  MeasureState state_ = MeasureState::kStartMeasure;
  CqPeriodMode mode_ = CqPeriodMode::kEqe;
  Direction dir_ = Direction::kRx;
  Tuner tuner_{};
  Stats prev_stats_{};
  std::optional<Verdict> last_verdict_;
  Stats last_stats_{};  // valid once a window was evaluated (windows_evaluated_ != 0)
  uint64_t windows_evaluated_ = 0;
};

// net_dim_stats_compare(): throughput first, then packet rate, then (lower is better) event rate.
Verdict net_compare(const Stats& curr, const Stats& prev);

}  // namespace dim
