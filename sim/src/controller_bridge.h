// ControllerBridge: runs the daemon's controller::Controller inside the simulator. The engine's
// CQs appear to it as what the BPF collector would report (a net device per moderated stage,
// "sim-<stage>", one NAPI per queue, per-queue coalescing; or, for algorithm rdma, one CQ per
// queue on IB device "sim-<stage>"), the clock is simulated time, and its writes become
// moderation changes after the workload's apply delay. Like the collector with
// enable_cpu_times, each snapshot carries per CPU (one per core of the moderated stages, numbered
// as QueueCounters::cpu) the hard-IRQ and poll-softirq time the engine charged, and per IRQ (one
// per CQ) the handler time, sampled and noisy as the workload's Measurement says. Nothing here
// decides anything: the decisions are the Controller's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dimctl/controller/controller.h"
#include "dimctl/seam/clock.h"
#include "dimctl/seam/counter_source.h"
#include "dimctl/seam/net_actuator.h"
#include "dimctl/seam/null_originals_store.h"
#include "dimctl/seam/policy.h"
#include "dimctl/sim/metrics.h"
#include "dimctl/sim/policy.h"
#include "dimctl/sim/workload.h"

namespace dimctl::sim {

class Engine;

class ControllerBridge final : public seam::CounterSource,
                               public seam::NetActuator,
                               public seam::PolicySource,
                               public seam::Clock {
 public:
  ControllerBridge(Engine& engine, const PolicySpec& policy, const Workload& w);
  ~ControllerBridge() override;

  // One controller period at the engine's current time.
  void step();
  // What the controller published after its latest period (tests: the per-core costs).
  std::shared_ptr<const seam::ControllerState> state() const { return controller_->state(); }
  // The per-core costs and saturation state of the latest period, for the run's result.
  std::vector<ModelCore> model_cores() const;

  // seam::CounterSource
  Result<seam::Snapshot> sample() override;
  Result<void> sample_into(seam::Snapshot& out) override;
  // seam::NetActuator
  Result<seam::Coalesce> get(const std::string& dev) override;
  Result<seam::Coalesce> set(const std::string& dev, const seam::Coalesce& req) override;
  bool supports_per_queue(const std::string& dev) override;
  Result<seam::Coalesce> get_queue(const std::string& dev, uint32_t queue) override;
  Result<seam::Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                   const seam::Coalesce& req) override;
  std::vector<seam::CoalesceChange> drain_changes() override { return {}; }
  // seam::PolicySource: every simulated device enforced with the policy's algorithm, no rate
  // limit beyond the controller period.
  seam::DevicePolicy policy_for(const seam::DeviceInfo& dev) const override;
  // seam::Clock
  int64_t now_ns() const override;

 private:
  // The simulated IRQ of moderated stage `stage_ix`'s queue (QueueCounters::irq, IrqTimes::irq).
  static constexpr uint32_t kFirstIrq = 128;
  uint32_t irq_of(uint32_t stage_ix, uint32_t queue) const;
  // Snapshot::cpus[first_cpu, first_cpu + cores) from the engine's cores of `stage`.
  void add_cpu_times(seam::Snapshot& out, uint32_t stage, uint32_t first_cpu, uint32_t cores) const;
  Result<uint32_t> stage_of(const std::string& dev) const;
  seam::Coalesce coalesce_of(uint32_t stage, uint32_t queue) const;
  void apply(uint32_t stage, uint32_t queue, const seam::Coalesce& req);

  Engine& engine_;
  const PolicySpec& policy_;
  std::vector<StageSpec> stage_specs_;  // the workload's (dimctl-model-host reads their costs)
  std::vector<bool> cqe_mode_;          // per stage: the NIC's use_cqe_mode_rx (net workloads)
  bool rdma_;
  std::vector<std::string> names_;  // per moderated stage
  std::map<std::string, uint32_t> stage_by_name_;
  std::vector<uint32_t> stages_;
  seam::NullOriginalsStore originals_;  // the simulated devices need no restore
  std::unique_ptr<controller::Controller> controller_;
};

}  // namespace dimctl::sim
