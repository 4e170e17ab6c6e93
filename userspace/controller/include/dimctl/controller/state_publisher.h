// StatePublisher: the ControllerState readers see, swapped in whole by the control thread, and
// the buffer the next one is built in.
//
// Thread-safety: state() may be called from any thread at any time; everything else from the
// control thread only.
#pragma once

#include <memory>
#include <mutex>

#include "dimctl/seam/controller_state.h"

namespace dimctl::controller {

class StatePublisher {
 public:
  // Publishes `initial` until the first publish().
  explicit StatePublisher(seam::ControllerState initial = {});

  // The last published state; never null.
  std::shared_ptr<const seam::ControllerState> state() const;

  // A buffer for the next state: the one published two periods ago when no reader holds it any
  // more (a 10k-queue state is a few MB, and assigning into its strings and vectors avoids
  // reallocating them), else a new one.
  std::shared_ptr<seam::ControllerState> acquire();
  // acquire(), holding a copy of the last published state.
  std::shared_ptr<seam::ControllerState> acquire_copy();

  // `st` becomes the published state; the one it replaces is the next spare buffer.
  void publish(std::shared_ptr<seam::ControllerState> st);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<seam::ControllerState> published_;  // guarded by mu_
  std::shared_ptr<seam::ControllerState> spare_;      // control thread only
};

}  // namespace dimctl::controller
