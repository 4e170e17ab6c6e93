// ShadowReplay: the daemon's controller::Controller fed a recorded trace, frame by frame, in
// shadow mode with the model policy (its defaults: model.costs measured) on every device. It
// writes nothing anywhere: the trace stands in for the BPF collector and the clock, and the
// devices' coalescing reads fail (a trace does not record it). What it gives is what `dimctl
// status` would have shown on the recording host: per CPU the measured interrupt and completion
// costs (dim::CostEstimator), busy share, rates and saturation state (seam::CoreView), which
// need a format 2 trace recorded with CPU times (dimctl record's default).
#pragma once

#include <memory>
#include <string>

#include "dimctl/common/result.h"
#include "dimctl/seam/clock.h"
#include "dimctl/seam/controller_state.h"
#include "dimctl/seam/counter_source.h"
#include "dimctl/seam/net_actuator.h"
#include "dimctl/seam/null_originals_store.h"
#include "dimctl/seam/policy.h"

namespace dimctl::controller {
class Controller;
}

namespace dimctl::trace_costs {

class ShadowReplay final : public seam::CounterSource,
                           public seam::NetActuator,
                           public seam::PolicySource,
                           public seam::Clock {
 public:
  ShadowReplay();
  ~ShadowReplay() override;
  ShadowReplay(const ShadowReplay&) = delete;
  ShadowReplay& operator=(const ShadowReplay&) = delete;

  // One controller period on `frame` (at the frame's time). Fails when the controller refuses
  // the snapshot (a device_ix outside its table), as the daemon counts a failed sample. While it
  // runs, spdlog's level is at least `err` (the controller's per-device warnings are expected
  // for every device of a trace).
  Result<void> feed(const seam::Snapshot& frame);
  // What the controller published after the latest frame.
  std::shared_ptr<const seam::ControllerState> state() const;

  // seam::CounterSource: the frame being fed.
  Result<seam::Snapshot> sample() override;
  Result<void> sample_into(seam::Snapshot& out) override;
  // seam::NetActuator: a trace records no coalescing; nothing is ever written (shadow).
  Result<seam::Coalesce> get(const std::string& dev) override;
  Result<seam::Coalesce> set(const std::string& dev, const seam::Coalesce& req) override;
  bool supports_per_queue(const std::string&) override { return false; }
  Result<seam::Coalesce> get_queue(const std::string& dev, uint32_t queue) override;
  Result<seam::Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                   const seam::Coalesce& req) override;
  std::vector<seam::CoalesceChange> drain_changes() override { return {}; }
  // seam::PolicySource: shadow, the model policy with its defaults, on every device.
  seam::DevicePolicy policy_for(const seam::DeviceInfo& dev) const override;
  // seam::Clock: the time of the frame being fed.
  int64_t now_ns() const override { return frame_ == nullptr ? 0 : frame_->time_ns; }

 private:
  const seam::Snapshot* frame_ = nullptr;
  seam::NullOriginalsStore originals_;  // nothing is changed, so nothing is recorded
  std::unique_ptr<controller::Controller> controller_;
};

}  // namespace dimctl::trace_costs
