#include "dimctl/controller/state_publisher.h"

#include <utility>

namespace dimctl::controller {

StatePublisher::StatePublisher(seam::ControllerState initial)
    : published_(std::make_shared<seam::ControllerState>(std::move(initial))) {}

std::shared_ptr<const seam::ControllerState> StatePublisher::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return published_;
}

std::shared_ptr<seam::ControllerState> StatePublisher::acquire() {
  if (spare_ && spare_.use_count() == 1) return std::move(spare_);
  spare_.reset();
  return std::make_shared<seam::ControllerState>();
}

std::shared_ptr<seam::ControllerState> StatePublisher::acquire_copy() {
  auto st = acquire();
  std::lock_guard<std::mutex> lock(mu_);
  *st = *published_;
  return st;
}

void StatePublisher::publish(std::shared_ptr<seam::ControllerState> st) {
  std::shared_ptr<seam::ControllerState> prev;
  {
    std::lock_guard<std::mutex> lock(mu_);
    prev = std::exchange(published_, std::move(st));
  }
  spare_ = std::move(prev);
}

}  // namespace dimctl::controller
