#include "controller_bridge.h"

#include "engine.h"

namespace dimctl::sim {

ControllerBridge::ControllerBridge(Engine& engine, const PolicySpec& policy, const Workload& w)
    : engine_(engine),
      policy_(policy),
      stage_specs_(w.stages),
      // RDMA DIM, and the model policy on a storage workload, run on CQs.
      rdma_(policy.algorithm == seam::Algorithm::kRdma ||
            (policy.algorithm == seam::Algorithm::kModel && w.table == ProfileTable::kRdma)),
      stages_(engine.moderated_stages()) {
  // A NIC reports its CQE mode: on for a net-cqe workload, unless the policy runs another timer
  // (PolicySpec::timer: net-eqe's) from the start, as if it had written the mode before the run.
  const auto forced = policy.timer();
  cqe_mode_.assign(w.stages.size(),
                   forced ? *forced == TimerMode::kIdleGap : w.table == ProfileTable::kNetCqe);
  for (uint32_t s : stages_) {
    std::string name = "sim-" + w.stages[s].name;
    stage_by_name_[name] = s;
    names_.push_back(std::move(name));
  }
  controller::ControllerOptions opt;
  opt.publish_interval_ns = 0;  // the RDMA path reads each period's decision from the state
  opt.default_mode = seam::Mode::kEnforce;
  opt.config_path = "(simulator)";
  controller_ = std::make_unique<controller::Controller>(*this, *this, nullptr, originals_, *this,
                                                         *this, std::move(opt));
}

ControllerBridge::~ControllerBridge() = default;

int64_t ControllerBridge::now_ns() const {
  return engine_.now();
}

seam::DevicePolicy ControllerBridge::policy_for(const seam::DeviceInfo& dev) const {
  seam::DevicePolicy p;
  p.mode = seam::Mode::kEnforce;
  p.algorithm = policy_.algorithm;
  p.rule = "simulator";
  p.rate_limit_ns = 0;
  // dimctl-model: DevicePolicy's defaults, the daemon's default config (model.costs: measured,
  // the estimate from the CPU times sample_into() reports once it is confident).
  // dimctl-model*-eff:BUDGET: `model.objective: efficiency` with that `model.latency_budget`.
  p.model.objective = policy_.objective;
  p.model.latency_budget_ns = policy_.latency_budget_ns;
  if (policy_.host_costs && !stages_.empty()) {
    // The model told the host's costs: per completion what the core spends on it inside and
    // outside the poll, per interrupt the handler and its poll call.
    const auto it = stage_by_name_.find(dev.name);
    const StageSpec& st = stage_specs_[it != stage_by_name_.end() ? it->second : stages_[0]];
    p.model.completion_cost_ns = st.cpu.completion_ns + st.cpu.app_ns;
    p.model.interrupt_cost_ns = st.cpu.irq_ns + st.cpu.poll_ns;
    // Written under `model:` they are explicit: the measurement does not replace them.
    p.model.completion_cost_set = true;
    p.model.interrupt_cost_set = true;
    p.model.timer = st.timer;
  }
  return p;
}

Result<seam::Snapshot> ControllerBridge::sample() {
  seam::Snapshot snap;
  auto r = sample_into(snap);
  if (!r) return fail(std::move(r).error());
  return snap;
}

Result<void> ControllerBridge::sample_into(seam::Snapshot& out) {
  out.time_ns = engine_.now();
  out.queues.clear();
  out.cqs.clear();
  out.cpus.clear();
  out.irqs.clear();
  out.devices = names_;
  uint32_t core_base = 0;  // a CPU number per core of the moderated stages, as the engine has them
  for (uint32_t i = 0; i < stages_.size(); ++i) {
    const uint32_t cores = std::max(stage_specs_[stages_[i]].cores, 1u);
    for (uint32_t q = 0; q < engine_.queues(); ++q) {
      const Engine::CqCounters& c = engine_.counters(stages_[i], q);
      if (rdma_) {
        seam::CqCounters cq;
        cq.key = {i, q + 1};
        cq.ibdev = names_[i];
        cq.poll_ctx = seam::PollContext::kSoftirq;
        // One completion vector per core of the stage: the queues a core serves share it.
        cq.comp_vector = static_cast<int32_t>(q % cores);
        cq.schedules = c.interrupts;
        cq.events = c.polls;
        cq.polls = c.polls;
        cq.completions = c.completions;
        cq.budget_exhausted = c.budget_exhausted;               // a poll here is one pass
        cq.cpu = static_cast<uint16_t>(core_base + q % cores);  // the core that polls it
        out.cqs.push_back(std::move(cq));
      } else {
        seam::QueueCounters qc;
        qc.key = {i + 1, q + 1};
        qc.queue = static_cast<int32_t>(q);
        qc.polls = c.polls;
        qc.packets = c.completions;
        qc.budget_exhausted = c.budget_exhausted;
        qc.empty_polls = c.empty_polls;
        qc.bytes = c.bytes;
        qc.has_bytes = true;
        qc.device_ix = i;
        qc.cpu = static_cast<uint16_t>(core_base + q % cores);  // the core that polls it
        qc.irq = static_cast<int32_t>(irq_of(i, q));
        out.queues.push_back(qc);
      }
    }
    add_cpu_times(out, stages_[i], core_base, cores);
    core_base += cores;
  }
  // Per IRQ, in IRQ order (irq_of grows with the stage, then the queue), those that ran.
  for (uint32_t i = 0; i < stages_.size(); ++i) {
    for (uint32_t q = 0; q < engine_.queues(); ++q) {
      const Engine::IrqTimeCounters& t = engine_.irq_times(stages_[i], q);
      if (t.count == 0) continue;
      out.irqs.push_back(seam::IrqTimes{irq_of(i, q), t.ns, t.count, t.timed});
    }
  }
  return ok();
}

uint32_t ControllerBridge::irq_of(uint32_t stage_ix, uint32_t queue) const {
  return kFirstIrq + stage_ix * engine_.queues() + queue;
}

void ControllerBridge::add_cpu_times(seam::Snapshot& out, uint32_t stage, uint32_t first_cpu,
                                     uint32_t cores) const {
  if (out.cpus.size() < first_cpu + cores) out.cpus.resize(first_cpu + cores);
  const uint32_t first_core = engine_.core_of(stage, 0);  // the stage's cores are consecutive
  for (uint32_t k = 0; k < cores && k < engine_.queues(); ++k) {
    const Engine::CpuTimeCounters& t = engine_.cpu_times(first_core + k);
    seam::CpuTimes& c = out.cpus[first_cpu + k];
    c.hardirq_ns = t.hardirq_ns;
    c.hardirq_count = t.hardirq_count;
    c.hardirq_timed = t.hardirq_timed;
    // What sched_switch sees: the core idle when it runs no interrupt, poll or application work.
    // A poll call is charged when it starts, application work when it ends or is preempted, so
    // the figure is off by at most one poll call or one completion's application time (given
    // back next period).
    const int64_t busy = static_cast<int64_t>(t.busy_charged_ns);
    c.idle_ns = static_cast<uint64_t>(std::max<int64_t>(engine_.now() - busy, 0));
    c.idle_known = true;
    // The poll softirq by the stage's kind: NAPI polls in NET_RX, ib_core's softirq CQs in
    // irq_poll.
    if (rdma_) {
      c.softirq_irq_poll_ns = t.softirq_ns;
      c.softirq_irq_poll_count = t.softirq_count;
      c.softirq_irq_poll_timed = t.softirq_timed;
    } else {
      c.softirq_net_rx_ns = t.softirq_ns;
      c.softirq_net_rx_count = t.softirq_count;
      c.softirq_net_rx_timed = t.softirq_timed;
    }
  }
}

std::vector<ModelCore> ControllerBridge::model_cores() const {
  std::vector<ModelCore> out;
  const auto st = controller_->state();
  if (!st) return out;
  for (const seam::CoreView& c : st->cores) {
    out.push_back({c.cpu, static_cast<uint8_t>(c.confidence), c.used_completion_ns,
                   c.used_interrupt_ns, c.estimate.background, c.saturated, c.saturation_profile,
                   c.saturation_episodes, c.descents_kept, c.descents_back, c.rejudged});
  }
  return out;
}

void ControllerBridge::step() {
  (void)controller_->step();  // a failed step is the controller's to count; never here
  if (!rdma_) return;
  // Kernel ULP CQs cannot be moderated from user space; an application that owns its CQs
  // applies what the controller decided (VerbsCqModerator). The simulator plays that part.
  const auto st = controller_->state();
  for (const seam::CqView& v : st->cqs) {
    const uint32_t i = v.counters.key.dev_index;
    if (i >= stages_.size() || v.counters.key.cq_id == 0) continue;
    // No wish (every RDMA profile has a count): the model has not measured the CQ yet, and an
    // application leaves its CQ as it is.
    if (v.wanted_comps == 0) continue;
    const uint32_t q = v.counters.key.cq_id - 1;
    const Moderation want{std::max<uint32_t>(v.wanted_comps, 1), int64_t{v.wanted_usec} * 1000};
    if (!(engine_.moderation(stages_[i], q) == want))
      engine_.request_moderation(stages_[i], q, want);
  }
}

Result<uint32_t> ControllerBridge::stage_of(const std::string& dev) const {
  auto it = stage_by_name_.find(dev);
  if (it == stage_by_name_.end()) return DIMCTL_FAIL(ENODEV, "no simulated device {}", dev);
  return it->second;
}

seam::Coalesce ControllerBridge::coalesce_of(uint32_t stage, uint32_t queue) const {
  const Moderation m = engine_.moderation(stage, queue);
  seam::Coalesce c;
  c.rx_usecs = static_cast<uint32_t>(m.timer_ns / 1000);
  c.rx_max_frames = m.count;
  if (!rdma_) c.use_cqe_mode_rx = cqe_mode_[stage];
  return c;
}

void ControllerBridge::apply(uint32_t stage, uint32_t queue, const seam::Coalesce& req) {
  if (!rdma_ && req.use_cqe_mode_rx && *req.use_cqe_mode_rx != cqe_mode_[stage]) {
    cqe_mode_[stage] = *req.use_cqe_mode_rx;
    engine_.set_timer(stage, cqe_mode_[stage] ? TimerMode::kIdleGap : TimerMode::kRateLimit);
  }
  Moderation m = engine_.moderation(stage, queue);
  if (req.rx_usecs) m.timer_ns = int64_t{*req.rx_usecs} * 1000;
  if (req.rx_max_frames) m.count = std::max<uint32_t>(*req.rx_max_frames, 1);
  engine_.request_moderation(stage, queue, m);
}

Result<seam::Coalesce> ControllerBridge::get(const std::string& dev) {
  auto s = stage_of(dev);
  if (!s) return fail(std::move(s).error());
  return coalesce_of(*s, 0);
}

Result<seam::Coalesce> ControllerBridge::set(const std::string& dev, const seam::Coalesce& req) {
  auto s = stage_of(dev);
  if (!s) return fail(std::move(s).error());
  for (uint32_t q = 0; q < engine_.queues(); ++q) apply(*s, q, req);
  return coalesce_of(*s, 0);
}

bool ControllerBridge::supports_per_queue(const std::string&) {
  return true;
}

Result<seam::Coalesce> ControllerBridge::get_queue(const std::string& dev, uint32_t queue) {
  auto s = stage_of(dev);
  if (!s) return fail(std::move(s).error());
  if (queue >= engine_.queues()) return DIMCTL_FAIL(EINVAL, "{}: no queue {}", dev, queue);
  return coalesce_of(*s, queue);
}

Result<seam::Coalesce> ControllerBridge::set_queue(const std::string& dev, uint32_t queue,
                                                   const seam::Coalesce& req) {
  auto s = stage_of(dev);
  if (!s) return fail(std::move(s).error());
  if (queue >= engine_.queues()) return DIMCTL_FAIL(EINVAL, "{}: no queue {}", dev, queue);
  apply(*s, queue, req);
  return coalesce_of(*s, queue);
}

}  // namespace dimctl::sim
