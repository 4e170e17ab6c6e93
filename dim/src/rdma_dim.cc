#include "dim/rdma_dim.h"

namespace dim {

Verdict rdma_compare(const Stats& curr, const Stats& prev) {
  if (prev.cpms == 0) return Verdict::kSame;  // "first statistics", also after an idle window
  if (is_significant(curr.cpms, prev.cpms)) {
    return curr.cpms > prev.cpms ? Verdict::kBetter : Verdict::kWorse;
  }
  if (is_significant(curr.cpe_ratio, prev.cpe_ratio)) {
    return curr.cpe_ratio > prev.cpe_ratio ? Verdict::kBetter : Verdict::kWorse;
  }
  return Verdict::kSame;
}

RdmaDim::RdmaDim() {
  tuner_.tune_state = TuneState::kGoingRight;
}

bool RdmaDim::on_event(int64_t time_ns, uint32_t completions) {
  measuring_.event_ctr = static_cast<uint16_t>(measuring_.event_ctr + 1);
  measuring_.comp_ctr += completions;
  measuring_.time_ns = time_ns;

  switch (state_) {
    case MeasureState::kMeasureInProgress: {
      // Not BIT_GAP: see the header (the u16 wrap quirk).
      const auto nevents = static_cast<uint32_t>(static_cast<int>(measuring_.event_ctr) -
                                                 static_cast<int>(start_.event_ctr));
      if (nevents < kNEvents) return false;
      Stats curr;
      if (!calc_stats(start_, measuring_, &curr)) return false;
      if (decide(curr)) {
        state_ = MeasureState::kApplyNewProfile;
        return true;
      }
      [[fallthrough]];
    }
    case MeasureState::kStartMeasure:
      state_ = MeasureState::kMeasureInProgress;
      start_ = measuring_;
      return false;
    case MeasureState::kApplyNewProfile:
      break;
  }
  return false;
}

bool RdmaDim::on_events(int64_t t_begin_ns, int64_t t_end_ns, uint64_t events,
                        uint64_t completions) {
  if (events == 0) return false;
  const uint64_t span = t_end_ns > t_begin_ns ? static_cast<uint64_t>(t_end_ns - t_begin_ns) : 0;
  // Bresenham-style interpolation: exact floor(span * (i + 1) / events) without a 128-bit
  // product.
  const uint64_t t_step = span / events;
  const uint64_t t_rem = span % events;
  uint64_t t_acc = 0;
  uint64_t t_off = 0;
  const uint64_t per_event = completions / events;
  const uint64_t extra = completions % events;

  bool changed = false;
  for (uint64_t i = 0; i < events; ++i) {
    t_off += t_step;
    t_acc += t_rem;
    if (t_acc >= events) {
      t_acc -= events;
      ++t_off;
    }
    if (state_ == MeasureState::kApplyNewProfile) {
      // The kernel only accumulates while a change is pending; do the rest in one go.
      const uint64_t left = events - i;
      const uint64_t left_extra = extra > i ? extra - i : 0;
      measuring_.event_ctr = static_cast<uint16_t>(measuring_.event_ctr + left);
      measuring_.comp_ctr += static_cast<uint32_t>(left * per_event + left_extra);
      measuring_.time_ns = t_begin_ns + static_cast<int64_t>(span);
      break;
    }
    const uint64_t comps = per_event + (i < extra ? 1 : 0);
    changed |= on_event(t_begin_ns + static_cast<int64_t>(t_off), static_cast<uint32_t>(comps));
  }
  return changed;
}

void RdmaDim::profile_applied() {
  if (state_ == MeasureState::kApplyNewProfile) state_ = MeasureState::kStartMeasure;
}

void RdmaDim::restart_window() {
  if (state_ == MeasureState::kMeasureInProgress) state_ = MeasureState::kStartMeasure;
}

bool RdmaDim::decide(const Stats& curr) {
  const uint8_t old_ix = tuner_.profile_ix;
  ++windows_evaluated_;
  last_stats_ = curr;
  // RDMA DIM never parks, but the kernel still guards on it; kept for fidelity.
  if (tuner_.tune_state != TuneState::kParkingOnTop &&
      tuner_.tune_state != TuneState::kParkingTired) {
    const Verdict verdict = rdma_compare(curr, prev_stats_);
    last_verdict_ = verdict;
    switch (verdict) {
      case Verdict::kSame:
        if (curr.cpe_ratio <= 50 * old_ix) tuner_.profile_ix = 0;
        break;
      case Verdict::kWorse:
        tuner_.turn();
        [[fallthrough]];
      case Verdict::kBetter: {
        bool on_edge = false;
        if (tuner_.tune_state == TuneState::kGoingRight) {
          if (tuner_.profile_ix == kRdmaNumProfiles - 1) {
            on_edge = true;
          } else {
            ++tuner_.profile_ix;
            ++tuner_.steps_right;
          }
        } else if (tuner_.tune_state == TuneState::kGoingLeft) {
          if (tuner_.profile_ix == 0) {
            on_edge = true;
          } else {
            --tuner_.profile_ix;
            ++tuner_.steps_left;
          }
        }
        if (on_edge) tuner_.turn();  // bounce: no move this window
        break;
      }
    }
  }
  prev_stats_ = curr;
  return tuner_.profile_ix != old_ix;
}

}  // namespace dim
