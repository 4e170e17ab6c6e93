// ShadowReplay: the daemon's controller::Controller fed a recorded trace, frame by frame, in
// shadow mode with the model policy (its defaults: model.costs measured) on every device. It
// writes nothing anywhere: the trace stands in for the BPF collector and the clock, and the
// devices' coalescing reads fail (a trace does not record it). What it gives is what `dimctl
// status` would have shown on the recording host: per CPU the measured interrupt and completion
// costs (dim::CostEstimator), busy share, rates and saturation state (model::CoreView), which
// need a format 2 trace recorded with CPU times (dimctl record's default).
#pragma once

#include <memory>
#include <string>

#include "dimctl/common/result.h"
#include "dimctl/model/clock.h"
#include "dimctl/model/controller_state.h"
#include "dimctl/model/counter_source.h"
#include "dimctl/model/net_actuator.h"
#include "dimctl/model/null_originals_store.h"
#include "dimctl/model/policy.h"

namespace dimctl::controller {
class Controller;
}

namespace dimctl::trace_costs {

class ShadowReplay final : public model::CounterSource,
                           public model::NetActuator,
                           public model::PolicySource,
                           public model::Clock {
 public:
  ShadowReplay();
  ~ShadowReplay() override;
  ShadowReplay(const ShadowReplay&) = delete;
  ShadowReplay& operator=(const ShadowReplay&) = delete;

  // One controller period on `frame` (at the frame's time). Fails when the controller refuses
  // the snapshot (a device_ix outside its table), as the daemon counts a failed sample. While it
  // runs, spdlog's level is at least `err` (the controller's per-device warnings are expected
  // for every device of a trace).
  Result<void> feed(const model::Snapshot& frame);
  // What the controller published after the latest frame.
  std::shared_ptr<const model::ControllerState> state() const;

  // model::CounterSource: the frame being fed.
  Result<model::Snapshot> sample() override;
  Result<void> sample_into(model::Snapshot& out) override;
  // model::NetActuator: a trace records no coalescing; nothing is ever written (shadow).
  Result<model::Coalesce> get(const std::string& dev) override;
  Result<model::Coalesce> set(const std::string& dev, const model::Coalesce& req) override;
  bool supports_per_queue(const std::string&) override { return false; }
  Result<model::Coalesce> get_queue(const std::string& dev, uint32_t queue) override;
  Result<model::Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                    const model::Coalesce& req) override;
  std::vector<model::CoalesceChange> drain_changes() override { return {}; }
  // model::PolicySource: shadow, the model policy with its defaults, on every device.
  model::DevicePolicy policy_for(const model::DeviceInfo& dev) const override;
  // model::Clock: the time of the frame being fed.
  int64_t now_ns() const override { return frame_ == nullptr ? 0 : frame_->time_ns; }

 private:
  const model::Snapshot* frame_ = nullptr;
  model::NullOriginalsStore originals_;  // nothing is changed, so nothing is recorded
  std::unique_ptr<controller::Controller> controller_;
};

}  // namespace dimctl::trace_costs
