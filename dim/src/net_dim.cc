#include "dim/net_dim.h"

#include <algorithm>

namespace dim {

Verdict net_compare(const Stats& curr, const Stats& prev) {
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

NetDim::NetDim(CqPeriodMode mode, Direction dir, uint8_t start_ix) : mode_(mode), dir_(dir) {
  tuner_.profile_ix = std::min<uint8_t>(start_ix, kNetNumProfiles - 1);
}

bool NetDim::on_sample_slow(const Sample& s) {
  switch (state_) {
    case MeasureState::kMeasureInProgress: {
      if (window_short(s.event_ctr, start_.event_ctr)) return false;
      Stats curr;
      if (!calc_stats(start_, s, &curr)) return false;
      if (decide(curr)) {
        state_ = MeasureState::kApplyNewProfile;
        return true;
      }
      [[fallthrough]];
    }
    case MeasureState::kStartMeasure:
      // dim_update_sample() leaves comp_ctr alone: net windows never reset it.
      start_.time_ns = s.time_ns;
      start_.pkt_ctr = s.pkt_ctr;
      start_.byte_ctr = s.byte_ctr;
      start_.event_ctr = s.event_ctr;
      state_ = MeasureState::kMeasureInProgress;
      return false;
    case MeasureState::kApplyNewProfile:
      break;
  }
  return false;
}

void NetDim::profile_applied() {
  if (state_ == MeasureState::kApplyNewProfile) state_ = MeasureState::kStartMeasure;
}

void NetDim::restart_window() {
  if (state_ == MeasureState::kMeasureInProgress) state_ = MeasureState::kStartMeasure;
}

NetDim::StepResult NetDim::step() {
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

void NetDim::exit_parking() {
  tuner_.tune_state = tuner_.profile_ix != 0 ? TuneState::kGoingLeft : TuneState::kGoingRight;
  step();
}

bool NetDim::decide(const Stats& curr) {
  const TuneState old_tune = tuner_.tune_state;
  const uint8_t old_ix = tuner_.profile_ix;
  ++windows_evaluated_;
  last_stats_ = curr;

  switch (old_tune) {
    case TuneState::kParkingOnTop: {
      const Verdict verdict = net_compare(curr, prev_stats_);
      last_verdict_ = verdict;
      if (verdict != Verdict::kSame) exit_parking();
      break;
    }
    case TuneState::kParkingTired:
      last_verdict_.reset();  // the kernel does not compare while parked tired
      if (--tuner_.tired == 0) exit_parking();
      break;
    case TuneState::kGoingRight:
    case TuneState::kGoingLeft: {
      const Verdict verdict = net_compare(curr, prev_stats_);
      last_verdict_ = verdict;
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
    prev_stats_ = curr;
  }
  return tuner_.profile_ix != old_ix;
}

}  // namespace dim
