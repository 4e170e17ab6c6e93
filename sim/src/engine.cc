#include "engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "arrival_schedule.h"
#include "controller_bridge.h"

namespace dimctl::sim {

const Engine::CqCounters& Engine::counters(uint32_t stage, uint32_t queue) const {
  return cqs_[cq_id(stage, queue)].c;
}

Moderation Engine::moderation(uint32_t stage, uint32_t queue) const {
  const Cq& q = cqs_[cq_id(stage, queue)];
  return q.pending_mod.value_or(q.mod);
}

void Engine::request_moderation(uint32_t stage, uint32_t queue, Moderation m) {
  const uint32_t id = cq_id(stage, queue);
  cqs_[id].pending_mod = m;
  push(now_ + w_.apply_delay_ns, Ev::kApply, id, 0);
}

void Engine::push(int64_t t, Ev type, uint32_t a, uint32_t b) {
  queue_.push(t, (uint64_t{a} << 32) | (uint64_t{b & kBMask} << 4) | static_cast<uint64_t>(type));
}

uint32_t Engine::new_request(uint32_t source, uint32_t queue) {
  uint32_t id;
  if (free_req_ != UINT32_MAX) {
    id = free_req_;
    free_req_ = reqs_[id].next_free;
  } else {
    id = static_cast<uint32_t>(reqs_.size());
    reqs_.emplace_back();
  }
  Request& r = reqs_[id];
  r.flow = sources_[source].flow;
  r.source = source;
  r.queue = queue;
  r.stage = 0;
  r.bytes = sources_[source].spec.bytes;
  return id;
}

void Engine::start_service(uint32_t req, uint32_t stage, int64_t at) {
  Request& r = reqs_[req];
  r.stage = stage;
  const StageSpec& s = stages_[stage];
  Rng& rng = sources_[r.source].rng[r.queue];
  if (s.servers == 0) {
    const auto service = static_cast<int64_t>(service_[stage].draw(rng));
    push(at + service, Ev::kDeviceDone, req, stage);
    return;
  }
  if (at > now_) {
    // A finite-server FIFO serves in arrival order: enter it when the clock gets there.
    push(at, Ev::kIssue, req, stage);
    return;
  }
  auto& free_at = servers_[cq_id(stage, s.shared_servers ? 0 : r.queue)].free_at;
  auto it = std::min_element(free_at.begin(), free_at.end());
  const int64_t start = std::max(at, *it);
  *it = start + static_cast<int64_t>(service_[stage].draw(rng));
  push(*it, Ev::kDeviceDone, req, stage);
}

void Engine::issue_closed(uint32_t source, uint32_t queue, int64_t at) {
  const uint32_t req = new_request(source, queue);
  reqs_[req].issue_ns = at;
  ++sources_[source].outstanding[queue];
  start_service(req, 0, at);
}

double Engine::load_at(int64_t t) const {
  size_t i = 0;
  while (i + 1 < phase_start_.size() && t >= phase_start_[i + 1]) ++i;
  const Phase& ph = w_.phases[i];
  if (!ph.ramp) return ph.load;
  const double prev = i > 0 ? w_.phases[i - 1].load : 0.0;
  const double f = static_cast<double>(t - phase_start_[i]) / static_cast<double>(ph.duration_ns);
  return prev + (ph.load - prev) * std::clamp(f, 0.0, 1.0);
}

void Engine::schedule_arrival(uint32_t source, uint32_t queue, int64_t from) {
  SourceState& st = sources_[source];
  int64_t at = -1;
  if (st.trace) {
    at = st.trace->next(queue, from);
  } else {
    const double rate = st.spec.rate * load_at(from);
    if (rate > 0) {
      const bool paced = st.spec.periodic && st.spec.kind == SourceSpec::Kind::kPoisson;
      const double gap = paced ? 1e9 / rate : st.rng[queue].exponential(1e9 / rate);
      at = from + std::max<int64_t>(1, static_cast<int64_t>(std::llround(gap)));
    }
  }
  st.next_arrival[queue] = at;
  if (at >= 0 && at < end_ns_) push(at, Ev::kArrival, source, queue);
}

void Engine::cq_push(uint32_t id, int64_t t, uint32_t req) {
  Cq& q = cqs_[id];
  if (q.size == q.ring.size()) {
    std::vector<Entry> bigger(q.ring.size() * 2);
    for (size_t i = 0; i < q.size; ++i) bigger[i] = q.ring[(q.head + i) & (q.ring.size() - 1)];
    q.ring = std::move(bigger);
    q.head = 0;
  }
  q.ring[(q.head + q.size) & (q.ring.size() - 1)] = Entry{t, req};
  ++q.size;
  if (q.armed) evaluate(id);
}

void Engine::evaluate(uint32_t id) {
  Cq& q = cqs_[id];
  if (q.size == 0) return;
  // A NAPI under software moderation has no coalescing in the device: armed, it interrupts.
  const Moderation m = stages_[q.stage].software ? Moderation{} : q.mod;
  if (q.size >= m.count || m.timer_ns <= 0) {
    fire(id);
    return;
  }
  const size_t mask = q.ring.size() - 1;
  const int64_t first = q.ring[q.head].arrival_ns;
  const int64_t last = q.ring[(q.head + q.size - 1) & mask].arrival_ns;
  int64_t at = 0;
  switch (stages_[q.stage].timer) {
    case TimerMode::kRateLimit:
    case TimerMode::kDeferral:  // a device timer is never one (software stages return above)
      at = std::max(first, q.last_irq_ns + m.timer_ns);
      break;
    case TimerMode::kIdleGap:
      at = last + m.timer_ns;
      break;
    case TimerMode::kAbsolute:
      at = first + m.timer_ns;
      break;
  }
  if (at <= now_) {
    fire(id);
    return;
  }
  // One timer event at a time; a later deadline (idle gap) is found when the earlier fires.
  if (q.timer_at < 0 || at < q.timer_at) {
    q.timer_at = at;
    push(at, Ev::kTimer, id, ++q.timer_gen);
  }
}

void Engine::fire(uint32_t id) {
  Cq& q = cqs_[id];
  q.armed = false;
  q.timer_at = -1;
  ++q.timer_gen;
  q.last_irq_ns = now_;
  ++q.c.interrupts;
  if (now_ >= w_.warmup_ns) ++metrics_at(now_).interrupts;
  q.irq_charge = true;
  core_enqueue(q.core, id);
}

void Engine::core_enqueue(uint32_t core, uint32_t id) {
  Cq& q = cqs_[id];
  if (q.on_runq || q.in_call) return;
  Core& c = cores_[core];
  c.runq.push_back(id);
  q.on_runq = true;
  if (!c.busy) core_next(core);
}

void Engine::core_next(uint32_t core) {
  Core& c = cores_[core];
  if (c.runq_head == c.runq.size()) {
    c.runq.clear();
    c.runq_head = 0;
    c.busy = false;
    app_resume(core);
    return;
  }
  app_preempt(core);
  const uint32_t id = c.runq[c.runq_head++];
  Cq& q = cqs_[id];
  q.on_runq = false;
  q.in_call = true;
  q.budget_left = stages_[q.stage].poll_budget;
  q.done_in_call = 0;
  const CostModel& cost = stages_[q.stage].cpu;
  const int64_t overhead = q.irq_charge ? cost.irq_ns : cost.poll_ns;
  int64_t softirq = overhead;
  if (q.irq_charge) {
    const auto hard = static_cast<int64_t>(
        std::llround(static_cast<double>(cost.irq_ns) * w_.measurement.hardirq_share));
    record_hardirq(core, q, hard);
    softirq -= hard;
  }
  q.call_softirq_ns = softirq;
  q.irq_charge = false;
  ++q.c.polls;
  if (now_ >= w_.warmup_ns) ++metrics_at(now_).polls;
  c.busy = true;
  serve_chunk(core, id, overhead);
}

void Engine::serve_chunk(uint32_t core, uint32_t id, int64_t overhead) {
  Cq& q = cqs_[id];
  const StageSpec& stage = stages_[q.stage];
  const auto n = static_cast<uint32_t>(std::min<size_t>(q.size, q.budget_left));
  const int64_t per = stage.cpu.completion_ns;
  int64_t t = now_ + overhead;
  const size_t mask = q.ring.size() - 1;
  for (uint32_t i = 0; i < n; ++i) {
    const Entry e = q.ring[q.head];
    q.head = (q.head + 1) & mask;
    --q.size;
    t += per;
    q.c.bytes += reqs_[e.req].bytes;
    leave_stage(core, e.req, t);
  }
  q.c.completions += n;
  q.call_softirq_ns += int64_t{n} * per;
  q.budget_left -= n;
  q.done_in_call += n;
  account_cpu(core, now_, t - now_);
  push(t, Ev::kCoreDone, core, id);
}

void Engine::on_core_done(uint32_t core, uint32_t id) {
  Cq& q = cqs_[id];
  if (q.size > 0 && q.budget_left > 0) {
    serve_chunk(core, id, 0);  // the same poll call reads what arrived meanwhile
    return;
  }
  record_softirq(core, q);
  if (q.budget_left == 0) {
    // Budget used up: NAPI stays scheduled, polled again after the others, no re-arm.
    ++q.c.budget_exhausted;
    finish_call(q, false);
    cores_[core].runq.push_back(id);
    q.on_runq = true;
  } else {
    if (q.done_in_call == 0) ++q.c.empty_polls;
    if (napi_defer(id)) {
      finish_call(q, false);
      const int64_t arm = stages_[q.stage].software->timer_cost_ns;
      if (arm > 0) {
        // The core stays busy arming the timer (and, in effect, taking its interrupt).
        account_cpu(core, now_, arm);
        push(now_ + arm, Ev::kArmDone, core, 0);
        return;
      }
    } else {
      finish_call(q, true);
      evaluate(id);
    }
  }
  core_next(core);
}

// napi_complete_done() (net/core/dev.c, Linux >= 6.13) on a stage under software moderation:
// true when the interrupt stays masked and a timer polls again after gro-flush-timeout.
//   if (work_done) count = defer-hard-irqs;
//   if (count > 0) { count--; if (gro-flush-timeout) { keep masked; arm the timer } }
// The count drops even with no timeout. What a poll with GRO holding packets adds (a flush
// timer that re-polls with the interrupt armed) is not modelled: UDP traffic holds none.
bool Engine::napi_defer(uint32_t id) {
  Cq& q = cqs_[id];
  const auto& sw = stages_[q.stage].software;
  if (!sw) return false;
  if (q.done_in_call > 0) q.defer_count = sw->defer_hard_irqs;
  if (q.defer_count == 0) return false;
  --q.defer_count;
  if (q.mod.timer_ns <= 0) return false;
  push(now_ + q.mod.timer_ns + sw->timer_latency_ns, Ev::kRepoll, id, ++q.repoll_gen);
  return true;
}

void Engine::finish_call(Cq& q, bool rearm) {
  q.in_call = false;
  if (rearm) q.armed = true;
  if (q.net && rearm) {
    // mlx5e_napi_poll: net_dim() after napi_complete_done(), events = interrupts.
    const auto s = dim::Sample::from_counters(now_, q.c.interrupts, q.c.completions, q.c.bytes);
    if (q.net->on_sample(s))
      request_moderation(q.stage, q.queue, moderation_of(table_, q.net->profile_ix()));
  } else if (q.rdma) {
    // ib_poll_handler / ib_cq_poll_work: rdma_dim() after every poll pass.
    if (q.rdma->on_event(now_, q.done_in_call)) {
      request_moderation(q.stage, q.queue, moderation_of(table_, q.rdma->profile_ix()));
    }
  }
}

uint64_t Engine::measure(Core& c, uint64_t count, int64_t charged, uint64_t& ns, uint64_t& timed) {
  const Measurement& m = w_.measurement;
  if (m.time_one_in > 1 && count % m.time_one_in != 0) return 0;
  ++timed;
  double t = static_cast<double>(std::max<int64_t>(charged, 0));
  if (m.noisy()) {
    if (m.jitter > 0)
      t *= std::max(0.0, 1.0 + m.jitter * std::clamp(c.measure_rng.normal(), -3.0, 3.0));
    if (m.outlier_share > 0 && c.measure_rng.uniform() < m.outlier_share) t *= m.outlier_scale;
  }
  const auto add = static_cast<uint64_t>(std::llround(t));
  ns += add;
  return add;
}

void Engine::record_hardirq(uint32_t core, Cq& q, int64_t charged) {
  CpuTimeCounters& t = cores_[core].times;
  const uint64_t timed_before = t.hardirq_timed;
  const uint64_t add =
      measure(cores_[core], t.hardirq_count, charged, t.hardirq_ns, t.hardirq_timed);
  ++t.hardirq_count;
  t.hardirq_charged_ns += static_cast<uint64_t>(std::max<int64_t>(charged, 0));
  // The per-IRQ slot times the same runs as the core's (cpu_time.bpf.c times both at once).
  IrqTimeCounters& i = q.irq_times;
  ++i.count;
  i.charged_ns += static_cast<uint64_t>(std::max<int64_t>(charged, 0));
  if (t.hardirq_timed != timed_before) {
    ++i.timed;
    i.ns += add;
  }
}

void Engine::record_softirq(uint32_t core, Cq& q) {
  CpuTimeCounters& t = cores_[core].times;
  measure(cores_[core], t.softirq_count, q.call_softirq_ns, t.softirq_ns, t.softirq_timed);
  ++t.softirq_count;
  t.softirq_charged_ns += static_cast<uint64_t>(std::max<int64_t>(q.call_softirq_ns, 0));
  q.call_softirq_ns = 0;
}

void Engine::account_cpu(uint32_t core, int64_t at, int64_t busy) {
  if (busy <= 0) return;
  cores_[core].times.busy_charged_ns += static_cast<uint64_t>(busy);
  if (at < w_.warmup_ns) return;
  metrics_at(at).cpu_busy_ns += busy;
  window_of(at).cpu_busy_ns += busy;
}

void Engine::leave_stage(uint32_t core, uint32_t req, int64_t at) {
  const int64_t app = stages_[reqs_[req].stage].cpu.app_ns;
  if (app <= 0) {
    deliver(req, at);
    return;
  }
  // Runs after the poll that took it (polls outrank application work), so `at` has passed by
  // the time it starts.
  cores_[core].app.push_back(AppJob{req, app});
}

void Engine::app_resume(uint32_t core) {
  Core& c = cores_[core];
  if (c.busy || c.app_running || c.app_head == c.app.size()) return;
  c.app_running = true;
  c.app_started = now_;
  push(now_ + c.app[c.app_head].remaining_ns, Ev::kAppDone, core, ++c.app_gen);
}

void Engine::app_preempt(uint32_t core) {
  Core& c = cores_[core];
  if (!c.app_running) return;
  const int64_t ran = now_ - c.app_started;
  c.app[c.app_head].remaining_ns -= ran;
  account_cpu(core, c.app_started, ran);
  c.app_running = false;
  ++c.app_gen;
}

void Engine::deliver(uint32_t req, int64_t at) {
  Request& r = reqs_[req];
  if (r.stage + 1 < stages_.size()) {
    start_service(req, r.stage + 1, at);
    return;
  }
  if (at >= w_.warmup_ns && at < end_ns_) {
    const int64_t lat = at - r.issue_ns;
    PhaseMetrics& m = metrics_at(at);
    m.latency.record(lat);
    m.flows[r.flow].latency.record(lat);
    ++m.completions;
    Window& win = window_of(at);
    ++win.completions;
    win.latency_sum_ns += static_cast<double>(lat);
    win.latency_max_ns = std::max(win.latency_max_ns, lat);
  }
  ++result_.simulated_completions;
  SourceState& st = sources_[r.source];
  const uint32_t source = r.source, queue = r.queue;
  r.next_free = free_req_;
  free_req_ = req;
  if (st.spec.kind == SourceSpec::Kind::kClosed) {
    --st.outstanding[queue];
    if (st.outstanding[queue] < st.target_depth[queue]) {
      issue_closed(source, queue, at + static_cast<int64_t>(st.think.draw(st.rng[queue])));
    }
  }
}

void Engine::apply(uint32_t id) {
  Cq& q = cqs_[id];
  if (!q.pending_mod) return;
  const Moderation m = *q.pending_mod;
  q.pending_mod.reset();
  if (!(m == q.mod)) {
    q.mod = m;
    if (now_ >= w_.warmup_ns) ++metrics_at(now_).moderation_changes;
    if (id == first_cq_) mod_log_.emplace_back(now_, m);
  }
  if (q.net) q.net->profile_applied();
  if (q.rdma) q.rdma->profile_applied();
  if (q.armed) evaluate(id);
}

PhaseMetrics& Engine::metrics_at(int64_t t) {
  const size_t n = phase_start_.size();
  while (metric_phase_ + 1 < n && t >= phase_start_[metric_phase_ + 1]) ++metric_phase_;
  while (metric_phase_ > 0 && t < phase_start_[metric_phase_]) --metric_phase_;
  return result_.phases[metric_phase_];
}

Window& Engine::window_of(int64_t t) {
  if (t < win_lo_ || t >= win_hi_) {
    win_ix_ = std::min(static_cast<size_t>(t / w_.window_ns), result_.windows.size() - 1);
    win_lo_ = static_cast<int64_t>(win_ix_) * w_.window_ns;
    win_hi_ = win_lo_ + w_.window_ns;
  }
  return result_.windows[win_ix_];
}

int Engine::profile_ix_of(Moderation m) const {
  for (int i = 0; i < table_size(table_); ++i) {
    if (moderation_of(table_, static_cast<uint8_t>(i)) == m) return i;
  }
  return -1;
}

Result<RunResult> Engine::run(const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  for (uint32_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].spec.kind != SourceSpec::Kind::kTrace) continue;
    auto sched = ArrivalSchedule::open(sources_[s].spec, w_.queues, w_.seed + s);
    if (!sched) return fail(std::move(sched).error());
    sources_[s].trace = std::move(*sched);
  }
  first_cq_ = moderated_stages_.empty() ? 0 : cq_id(moderated_stages_.front(), 0);
  mod_log_.emplace_back(0, cqs_[first_cq_].mod);
  if (p_.kind == PolicySpec::Kind::kController) {
    bridge_ = std::make_unique<ControllerBridge>(*this, p_, w_);
    // The first step at the start, as the daemon's loop (cmd_run.cc) steps once when it starts:
    // a daemon already running when the load arrives holds its queues' counters from before
    // it, so the load's first period is already a delta. Stepping first at one period (as
    // before 2026-12-04) simulated a daemon that started one period after the load.
    push(0, Ev::kControl, 0, 0);
  }
  for (uint32_t i = 0; i < phase_start_.size(); ++i) push(phase_start_[i], Ev::kPhase, i, 0);

  uint64_t next_progress = 1 << 16;
  while (!queue_.empty()) {
    const EventQueue::Node n = queue_.pop();
    const Event e{n.t, static_cast<uint32_t>(n.payload >> 32),
                  static_cast<uint32_t>((n.payload >> 4) & kBMask),
                  static_cast<Ev>(n.payload & 15)};
    if (e.t >= end_ns_ || (opt.stop_ns > 0 && e.t >= opt.stop_ns)) break;
    now_ = e.t;
    ++events_;
    switch (e.type) {
      case Ev::kArrival: {
        SourceState& st = sources_[e.a];
        if (st.next_arrival[e.b] != e.t) break;  // superseded (source switched off)
        if (st.spec.kind == SourceSpec::Kind::kOnOff && !st.on[e.b]) break;
        const uint32_t req = new_request(e.a, e.b);
        reqs_[req].issue_ns = now_;
        start_service(req, 0, now_);
        schedule_arrival(e.a, e.b, now_);
        break;
      }
      case Ev::kIssue:
        start_service(e.a, e.b, now_);
        break;
      case Ev::kDeviceDone:
        cq_push(cq_id(e.b, reqs_[e.a].queue), now_, e.a);
        break;
      case Ev::kTimer: {
        Cq& q = cqs_[e.a];
        if (e.b != (q.timer_gen & kBMask)) break;
        q.timer_at = -1;
        if (q.armed) evaluate(e.a);
        break;
      }
      case Ev::kCoreDone:
        on_core_done(e.a, e.b);
        break;
      case Ev::kRepoll: {
        // napi_watchdog(): the NAPI is scheduled without an interrupt (a poll_ns re-poll).
        Cq& q = cqs_[e.a];
        if (e.b != (q.repoll_gen & kBMask)) break;
        core_enqueue(q.core, e.a);
        break;
      }
      case Ev::kArmDone:
        core_next(e.a);
        break;
      case Ev::kApply:
        apply(e.a);
        break;
      case Ev::kLagApply:
        // A phase shorter than the lag never gets its profile.
        if (e.a == phase_) apply_phase_static(e.a);
        break;
      case Ev::kControl:
        bridge_->step();
        push(now_ + p_.period_ns, Ev::kControl, 0, 0);
        break;
      case Ev::kToggle: {
        SourceState& st = sources_[e.a];
        st.on[e.b] ^= 1;
        const bool on = st.on[e.b];
        if (on) {
          schedule_arrival(e.a, e.b, now_);
        } else {
          st.next_arrival[e.b] = -1;
        }
        const auto mean = static_cast<double>(on ? st.spec.on_ns : st.spec.off_ns);
        const double d = st.spec.periodic ? mean : st.rng[e.b].exponential(mean);
        push(now_ + std::max<int64_t>(1, static_cast<int64_t>(d)), Ev::kToggle, e.a, e.b);
        break;
      }
      case Ev::kPhase:
        enter_phase(e.a);
        break;
      case Ev::kAppDone: {
        Core& c = cores_[e.a];
        if (e.b != (c.app_gen & kBMask) || !c.app_running) break;
        const AppJob job = c.app[c.app_head++];
        if (c.app_head == c.app.size()) {
          c.app.clear();
          c.app_head = 0;
        }
        c.app_running = false;
        account_cpu(e.a, c.app_started, now_ - c.app_started);
        deliver(job.req, now_);
        app_resume(e.a);
        break;
      }
    }
    if (opt.progress && events_ >= next_progress) {
      next_progress += 1 << 16;
      opt.progress(static_cast<double>(now_) / static_cast<double>(end_ns_));
    }
  }

  // Queue 0's moderation at the end of each window.
  size_t li = 0;
  for (Window& win : result_.windows) {
    const int64_t end = win.t_ns + w_.window_ns;
    while (li + 1 < mod_log_.size() && mod_log_[li + 1].first < end) ++li;
    win.count = mod_log_[li].second.count;
    win.timer_ns = mod_log_[li].second.timer_ns;
    win.profile_ix = profile_ix_of(mod_log_[li].second);
  }
  result_.workload = w_.name;
  result_.policy = p_.name;
  result_.seed = w_.seed;
  for (const StageSpec& s : stages_) {
    if (!result_.cost_model.empty()) result_.cost_model += "+";
    result_.cost_model += s.cpu.name;
  }
  result_.total = sum_phases(result_.phases);
  if (bridge_) result_.model_cores = bridge_->model_cores();
  result_.simulated_events = events_;
  result_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (opt.progress) opt.progress(1.0);
  return std::move(result_);
}

}  // namespace dimctl::sim
