// The DIM state enums (kernel numeric values, dim-spec section 1; exported as numbers, so they
// must not be renumbered) and their kernel names.
#pragma once

#include <cstdint>
#include <string_view>

namespace dim {

// dim_state: the measurement state machine.
enum class MeasureState : uint8_t {
  kStartMeasure = 0,
  kMeasureInProgress = 1,
  kApplyNewProfile = 2
};
// dim_tune_state.
enum class TuneState : uint8_t {
  kParkingOnTop = 0,
  kParkingTired = 1,
  kGoingRight = 2,
  kGoingLeft = 3
};
// dim_stats_state: the compare verdict of a window against the reference window.
enum class Verdict : uint8_t { kWorse = 0, kSame = 1, kBetter = 2 };

constexpr std::string_view to_string(MeasureState s) {
  switch (s) {
    case MeasureState::kStartMeasure:
      return "START_MEASURE";
    case MeasureState::kMeasureInProgress:
      return "MEASURE_IN_PROGRESS";
    case MeasureState::kApplyNewProfile:
      return "APPLY_NEW_PROFILE";
  }
  return "UNKNOWN";
}

constexpr std::string_view to_string(TuneState s) {
  switch (s) {
    case TuneState::kParkingOnTop:
      return "PARKING_ON_TOP";
    case TuneState::kParkingTired:
      return "PARKING_TIRED";
    case TuneState::kGoingRight:
      return "GOING_RIGHT";
    case TuneState::kGoingLeft:
      return "GOING_LEFT";
  }
  return "UNKNOWN";
}

constexpr std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kWorse:
      return "WORSE";
    case Verdict::kSame:
      return "SAME";
    case Verdict::kBetter:
      return "BETTER";
  }
  return "UNKNOWN";
}

}  // namespace dim
