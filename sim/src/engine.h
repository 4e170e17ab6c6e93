// Engine: the discrete-event core behind sim::run(). Internal to the simulator library.
//
// Hot-path layout: one binary heap of small events; requests in a pool addressed by index; one
// completion ring per CQ (queue x stage). A core serves its CQs one poll call at a time; a poll
// call takes what its CQ holds in chunks (one event per chunk, not per completion), so a
// completion costs about two heap operations whatever the batch size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dim/net_dim.h"
#include "dim/profile.h"
#include "dim/rdma_dim.h"
#include "dimctl/common/result.h"
#include "dimctl/sim/metrics.h"
#include "dimctl/sim/policy.h"
#include "dimctl/sim/rng.h"
#include "dimctl/sim/simulator.h"
#include "dimctl/sim/workload.h"
#include "event_queue.h"

namespace dimctl::sim {

class ControllerBridge;
class ArrivalSchedule;

// The (N, T) of profile `ix` of `table`.
Moderation moderation_of(ProfileTable table, uint8_t ix);
int table_size(ProfileTable table);
// The whole run's metrics from its phases.
PhaseMetrics sum_phases(const std::vector<PhaseMetrics>& phases);

class Engine {
 public:
  Engine(const Workload& w, const PolicySpec& p);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Result<RunResult> run(const RunOptions& opt);

  // --- what the controller bridge sees and does ---------------------------------------------
  struct CqCounters {
    uint64_t interrupts = 0;
    uint64_t polls = 0;  // poll calls (NAPI poll / ib_core poll pass)
    uint64_t budget_exhausted = 0;
    uint64_t empty_polls = 0;
    uint64_t completions = 0;
    uint64_t bytes = 0;
  };
  // Per core, what bpf/cpu_time.bpf.c would report of the time the engine charges (the
  // workload's Measurement: sampled, noisy), beside the exact charged totals. The hard IRQ is
  // the handler's share of each interrupt's irq_ns; the softirq is one run per poll call: the
  // rest of irq_ns (or poll_ns), plus completion_ns per completion. Application work is neither,
  // but is not idle either (busy_charged_ns).
  struct CpuTimeCounters {
    uint64_t hardirq_ns = 0, hardirq_count = 0, hardirq_timed = 0;
    uint64_t softirq_ns = 0, softirq_count = 0, softirq_timed = 0;
    uint64_t hardirq_charged_ns = 0, softirq_charged_ns = 0;  // every run, no noise
    // Every ns the core was charged since the start (interrupts, polls, timer arming,
    // application work): what is not idle. Exact, as sched_switch times idle stretches.
    uint64_t busy_charged_ns = 0;
  };
  // Per CQ (its IRQ), the hard-IRQ part of the above.
  struct IrqTimeCounters {
    uint64_t ns = 0, count = 0, timed = 0;
    uint64_t charged_ns = 0;
  };
  // The engine's core (an index into every stage's cores) serving the queue.
  uint32_t core_of(uint32_t stage, uint32_t queue) const { return cqs_[cq_id(stage, queue)].core; }
  const CpuTimeCounters& cpu_times(uint32_t core) const { return cores_[core].times; }
  const IrqTimeCounters& irq_times(uint32_t stage, uint32_t queue) const {
    return cqs_[cq_id(stage, queue)].irq_times;
  }
  int64_t now() const { return now_; }
  // The dimctl-* policies' controller bridge once run() started (null otherwise).
  const ControllerBridge* bridge() const { return bridge_.get(); }
  uint32_t queues() const { return w_.queues; }
  const std::vector<uint32_t>& moderated_stages() const { return moderated_stages_; }
  const CqCounters& counters(uint32_t stage, uint32_t queue) const;
  Moderation moderation(uint32_t stage, uint32_t queue) const;
  // Runs `m` on the CQ after the workload's apply delay (a later request replaces it).
  void request_moderation(uint32_t stage, uint32_t queue, Moderation m);
  // Every moderated CQ to phase `phase`'s profile of a static schedule, at once.
  void apply_phase_static(uint32_t phase);
  // Stage `stage`'s timer semantics from now: a NIC's CQE mode written (idle-gap on, rate-limit
  // off) takes effect at the CQs' next arming.
  void set_timer(uint32_t stage, TimerMode t) { stages_[stage].timer = t; }

 private:
  enum class Ev : uint8_t {
    kArrival,     // open-loop source a, queue b: next request
    kIssue,       // request a enters stage b's device (finite servers: FIFO order)
    kDeviceDone,  // request a finished stage b's device
    kTimer,       // CQ a's moderation timer (b = generation, stale when it differs)
    kCoreDone,    // core a finished a chunk of CQ b
    kApply,       // CQ a: pending moderation takes effect
    kControl,     // the dimctl controller's period
    kToggle,      // on/off source a, queue b: switch
    kPhase,       // phase a starts
    kAppDone,     // core a finished its application job (b = generation)
    kRepoll,      // CQ a's software-moderation timer (b = generation): poll it again
    kArmDone,     // core a finished arming a software-moderation timer
    kLagApply,    // phase a's static profile takes effect (PolicySpec::phase_lag_ns)
  };
  // An event's payload: type in the low 4 bits, b in the next 28 (generations wrap there), a in
  // the high 32.
  struct Event {
    int64_t t;
    uint32_t a;
    uint32_t b;
    Ev type;
  };
  static constexpr uint32_t kBMask = (1u << 28) - 1;
  struct Request {
    int64_t issue_ns;
    uint32_t flow;
    uint32_t source;
    uint32_t queue;
    uint32_t stage;
    uint32_t bytes;
    uint32_t next_free;
  };
  struct Entry {
    int64_t arrival_ns;
    uint32_t req;
  };
  struct Cq {
    std::vector<Entry> ring;  // power-of-two capacity
    size_t head = 0, size = 0;
    Moderation mod;
    std::optional<Moderation> pending_mod;
    int64_t last_irq_ns = INT64_MIN / 4;
    int64_t timer_at = -1;
    uint32_t timer_gen = 0;
    uint32_t stage = 0, queue = 0, core = 0;
    uint32_t budget_left = 0;
    uint32_t done_in_call = 0;
    bool armed = true;
    bool irq_charge = false;  // the next poll call follows an interrupt
    bool in_call = false;     // a poll call is in progress (between chunks)
    bool on_runq = false;
    bool moderated = true;
    // Software moderation (StageSpec::software): napi->defer_hard_irqs_count, and the
    // generation of the pending re-poll timer.
    uint32_t defer_count = 0;
    uint32_t repoll_gen = 0;
    CqCounters c;
    IrqTimeCounters irq_times;
    int64_t call_softirq_ns = 0;  // the poll call's charged softirq time so far
    std::unique_ptr<dim::NetDim> net;
    std::unique_ptr<dim::RdmaDim> rdma;
  };
  struct AppJob {
    uint32_t req;
    int64_t remaining_ns;
  };
  struct Core {
    std::vector<uint32_t> runq;  // FIFO of CQ ids (head index below)
    size_t runq_head = 0;
    bool busy = false;  // an interrupt or poll runs
    uint32_t stage = 0;
    // Application work, run only while no interrupt or poll does.
    std::vector<AppJob> app;
    size_t app_head = 0;
    bool app_running = false;
    int64_t app_started = 0;
    uint32_t app_gen = 0;
    CpuTimeCounters times;
    Rng measure_rng;  // the measurement noise's own stream: no other draw depends on it
  };
  struct SourceState {
    SourceSpec spec;
    Dist::Sampler think;
    uint32_t flow = 0;
    std::vector<Rng> rng;  // per queue: arrivals, think time, service times
    std::vector<uint32_t> outstanding;
    std::vector<uint32_t> target_depth;
    std::vector<uint8_t> on;
    std::vector<int64_t> next_arrival;  // the pending arrival's time, -1 = none
    std::unique_ptr<ArrivalSchedule> trace;
  };
  struct Server {  // a finite-server stage's FIFO, per queue
    std::vector<int64_t> free_at;
  };

  void push(int64_t t, Ev type, uint32_t a, uint32_t b);
  uint32_t new_request(uint32_t source, uint32_t queue);
  void start_service(uint32_t req, uint32_t stage, int64_t at);
  void issue_closed(uint32_t source, uint32_t queue, int64_t at);
  void schedule_arrival(uint32_t source, uint32_t queue, int64_t from);
  double load_at(int64_t t) const;
  void cq_push(uint32_t cq, int64_t t, uint32_t req);
  void evaluate(uint32_t cq);
  void fire(uint32_t cq);
  void core_enqueue(uint32_t core, uint32_t cq);
  void core_next(uint32_t core);
  void serve_chunk(uint32_t core, uint32_t cq, int64_t overhead);
  void on_core_done(uint32_t core, uint32_t cq);
  void finish_call(Cq& q, bool rearm);
  bool napi_defer(uint32_t cq);
  void leave_stage(uint32_t core, uint32_t req, int64_t at);
  void deliver(uint32_t req, int64_t at);
  void app_resume(uint32_t core);
  void app_preempt(uint32_t core);
  void account_cpu(uint32_t core, int64_t at, int64_t busy);
  // One run of `charged` ns as the measurement reports it: adds to *ns and *timed when this run
  // (the `count`-th, before counting it) is timed; returns the time added.
  uint64_t measure(Core& c, uint64_t count, int64_t charged, uint64_t& ns, uint64_t& timed);
  void record_hardirq(uint32_t core, Cq& q, int64_t charged);
  void record_softirq(uint32_t core, Cq& q);
  void apply(uint32_t cq);
  void enter_phase(uint32_t phase);
  size_t phase_of(int64_t t);
  Window& window_of(int64_t t);
  PhaseMetrics& metrics_at(int64_t t);
  uint32_t cq_id(uint32_t stage, uint32_t queue) const { return stage * w_.queues + queue; }
  int profile_ix_of(Moderation m) const;

  const Workload& w_;
  const PolicySpec& p_;
  ProfileTable table_;
  std::vector<StageSpec> stages_;       // with the policy's timer semantics
  std::vector<Dist::Sampler> service_;  // per stage
  std::vector<uint32_t> moderated_stages_;
  EventQueue queue_;
  int64_t now_ = 0;
  int64_t end_ns_ = 0;
  std::vector<Request> reqs_;
  uint32_t free_req_ = UINT32_MAX;
  std::vector<Cq> cqs_;
  std::vector<Core> cores_;
  std::vector<SourceState> sources_;
  std::vector<Server> servers_;  // stage * queues + queue
  std::vector<std::string> flows_;
  std::vector<int64_t> phase_start_;
  // The window of the last completion recorded: completions come nearly in time order.
  size_t win_ix_ = 0;
  int64_t win_lo_ = 0, win_hi_ = 0;
  size_t phase_ = 0;
  size_t metric_phase_ = 0;
  std::unique_ptr<ControllerBridge> bridge_;
  uint32_t first_cq_ = 0;  // queue 0 of the first moderated stage: the timeline's moderation
  std::vector<std::pair<int64_t, Moderation>> mod_log_;
  RunResult result_;
  uint64_t events_ = 0;
};

}  // namespace dimctl::sim
