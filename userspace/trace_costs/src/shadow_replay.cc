#include "dimctl/trace_costs/shadow_replay.h"

#include <spdlog/spdlog.h>

#include <cerrno>

#include "dimctl/controller/controller.h"

namespace dimctl::trace_costs {

ShadowReplay::ShadowReplay()
    : controller_(std::make_unique<controller::Controller>(*this, *this, nullptr, originals_, *this,
                                                           *this)) {}

ShadowReplay::~ShadowReplay() = default;

Result<void> ShadowReplay::feed(const seam::Snapshot& frame) {
  // The controller logs what a daemon's operator needs to know (a device's coalescing unreadable,
  // a new device); over a trace those are expected for every device, so only errors get through
  // while it runs on a frame.
  const auto level = spdlog::get_level();
  if (level < spdlog::level::err) spdlog::set_level(spdlog::level::err);
  frame_ = &frame;
  auto r = controller_->step();
  frame_ = nullptr;
  spdlog::set_level(level);
  return r;
}

std::shared_ptr<const seam::ControllerState> ShadowReplay::state() const {
  return controller_->state();
}

Result<seam::Snapshot> ShadowReplay::sample() {
  if (frame_ == nullptr) return DIMCTL_FAIL(ENODATA, "no trace frame to replay");
  return *frame_;
}

Result<void> ShadowReplay::sample_into(seam::Snapshot& out) {
  if (frame_ == nullptr) return DIMCTL_FAIL(ENODATA, "no trace frame to replay");
  out = *frame_;
  return ok();
}

Result<seam::Coalesce> ShadowReplay::get(const std::string& dev) {
  return DIMCTL_FAIL(ENODATA, "{}: a trace does not record coalescing settings", dev);
}

Result<seam::Coalesce> ShadowReplay::set(const std::string& dev, const seam::Coalesce&) {
  return DIMCTL_FAIL(EPERM, "{}: a trace replay writes nothing", dev);
}

Result<seam::Coalesce> ShadowReplay::get_queue(const std::string& dev, uint32_t queue) {
  return DIMCTL_FAIL(ENODATA, "{} queue {}: a trace does not record coalescing settings", dev,
                     queue);
}

Result<seam::Coalesce> ShadowReplay::set_queue(const std::string& dev, uint32_t queue,
                                               const seam::Coalesce&) {
  return DIMCTL_FAIL(EPERM, "{} queue {}: a trace replay writes nothing", dev, queue);
}

seam::DevicePolicy ShadowReplay::policy_for(const seam::DeviceInfo&) const {
  seam::DevicePolicy p;
  p.mode = seam::Mode::kShadow;
  p.algorithm = seam::Algorithm::kModel;
  p.rule = "trace costs";
  return p;
}

}  // namespace dimctl::trace_costs
