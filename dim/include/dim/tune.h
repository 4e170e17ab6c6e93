// Tuner: the tuning state shared by net DIM and RDMA DIM and the kernel's generic helpers
// from lib/dim/dim.c (dim_turn, dim_on_top, dim_park_on_top, dim_park_tired; dim-spec 4.3).
// Both flavours step the index themselves; these helpers only change direction and parking.
// Fields are u8 like the kernel's, so step counters wrap at 256 as they do there.
#pragma once

#include <cstdint>

#include "dim/state.h"

namespace dim {

struct Tuner {
  uint8_t profile_ix = 0;
  TuneState tune_state = TuneState::kParkingOnTop;
  uint8_t steps_right = 0;  // steps right since the last turn to the right
  uint8_t steps_left = 0;   // steps left since the last turn to the left
  uint8_t tired = 0;        // net only: steps since the last park-on-top / tired countdown

  // Reverse direction; the counter of the new direction restarts, the old one is kept
  // because on_top() needs it. Parking states are left alone.
  void turn() {
    switch (tune_state) {
      case TuneState::kParkingOnTop:
      case TuneState::kParkingTired:
        break;
      case TuneState::kGoingRight:
        tune_state = TuneState::kGoingLeft;
        steps_left = 0;
        break;
      case TuneState::kGoingLeft:
        tune_state = TuneState::kGoingRight;
        steps_right = 0;
        break;
    }
  }

  // "Walked at least two steps one way, turned, and the single step back was confirmed."
  bool on_top() const {
    switch (tune_state) {
      case TuneState::kParkingOnTop:
      case TuneState::kParkingTired:
        return true;
      case TuneState::kGoingRight:
        return steps_left > 1 && steps_right == 1;
      case TuneState::kGoingLeft:
        break;
    }
    return steps_right > 1 && steps_left == 1;
  }

  void park_on_top() {
    steps_right = 0;
    steps_left = 0;
    tired = 0;
    tune_state = TuneState::kParkingOnTop;
  }

  // tired is kept: it is the countdown of the tired parking.
  void park_tired() {
    steps_right = 0;
    steps_left = 0;
    tune_state = TuneState::kParkingTired;
  }

  bool operator==(const Tuner&) const = default;
};

}  // namespace dim
