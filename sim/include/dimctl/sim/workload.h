// Workload: everything a simulation run is made of except the policy. Plain values: the YAML
// loader (workload_yaml.h) fills them, tests build them in code. Times are nanoseconds.
//
// The model (docs/SIMULATOR.md): per queue, requests from one or more sources pass through one
// or more stages. A stage is a device (service time, optionally a finite number of servers)
// whose completions land in that queue's completion queue (CQ); the CQ raises an interrupt
// under its moderation (count N, timer T, timer semantics) when armed; the interrupt queues the
// CQ on its core, which polls it (per-interrupt cost, per-completion cost, a poll budget) and
// re-arms it when a poll finds it empty. A completion processed by the last stage is delivered:
// its latency is delivery time minus issue time. A closed-loop source issues its next request
// when one of its requests is delivered (plus think time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dim/cost_model.h"
#include "dimctl/sim/rng.h"

namespace dimctl::sim {

// When a moderated CQ interrupts: dim::TimerMode, the semantics the cost model predicts
// (dim/cost_model.h), simulated here (research 5.1):
//  kRateLimit ("EQE"): at least T between interrupts; the timer restarts at each interrupt.
//  kIdleGap ("CQE"): after an idle gap of T since the last completion (timer restarts per CQE).
//  kAbsolute: at most T after the first pending completion (NVMe-style aggregation time).
// In every mode the interrupt fires at once when N completions are pending.
using dim::TimerMode;

// The moderation a CQ runs with: N = count threshold (>= 1), T = timer.
struct Moderation {
  uint32_t count = 1;
  int64_t timer_ns = 0;
  bool operator==(const Moderation&) const = default;
};

// Host CPU costs, per core (one core serves one or more queues).
struct CostModel {
  std::string name = "free";  // named in every report
  int64_t irq_ns = 0;         // per interrupt: handler + indirect (cache) cost
  int64_t completion_ns = 0;  // per completion processed
  int64_t poll_ns = 0;        // per poll call (a re-poll after budget exhaustion, an empty poll)
  // Per completion, work outside the poll at lower priority than interrupts and polls (the
  // application taking the completion and submitting its next I/O; on a target, handling the
  // request): preempted by them, and the completion moves on only when it is done. This is what
  // keeps interrupts coming at saturation: polls stay short, the CQ empties and re-arms.
  int64_t app_ns = 0;
};

// Netdev software moderation of a NAPI (Linux >= 6.13, `napi-set`; net/core/dev.c
// napi_complete_done): the device interrupts at once whenever armed, and the moderation is in
// whether a poll re-arms it. The CQ's Moderation timer T is the NAPI's gro-flush-timeout (its
// count N is ignored: NAPI has no count threshold). A poll that found work reloads a counter
// from `defer_hard_irqs`; every completed poll (budget not used up) with the counter positive
// decrements it and, when T > 0, leaves the interrupt masked and polls again T later from a
// timer. So after the last poll with work, `defer_hard_irqs` empty timer polls come before the
// interrupt is re-armed, and a poll with work starts the count again. 0 = plain NAPI.
struct SoftwareModeration {
  uint32_t defer_hard_irqs = 0;
  // The host's side of the timer, both 0 on an ideal machine: how much later than T the re-poll
  // runs (timer expiry and softirq latency; ~28 us on the reference VM, bench/host), and the CPU
  // that arming the timer and taking its interrupt cost, charged when the poll that arms it ends
  // (after its completions are handed on, as hrtimer_start() in napi_complete_done()).
  int64_t timer_latency_ns = 0;
  int64_t timer_cost_ns = 0;
  bool operator==(const SoftwareModeration&) const = default;
};

// Which DIM profile table the policies index: static indices, the oracle's candidates, the
// kernel and dimctl DIM policies.
enum class ProfileTable : uint8_t { kNetEqe, kNetCqe, kRdma };

struct StageSpec {
  std::string name = "host";
  Dist service = Dist::constant(0);  // device (or fabric + device) time per request
  uint32_t servers = 0;              // 0 = unlimited (a pure delay); else a FIFO with k servers
  bool shared_servers = false;       // the k servers serve every queue (a link), not each queue
  TimerMode timer = TimerMode::kRateLimit;
  uint32_t poll_budget = 64;  // NAPI 64; ib_core irq_poll 256
  CostModel cpu;
  uint32_t cores = 1;  // queue q is served by core q % cores of this stage
  // false: this stage's CQs keep `fixed` whatever the policy (host-only / target-only runs).
  bool moderated = true;
  Moderation fixed;
  // Set: the stage is a NAPI under software moderation (see SoftwareModeration), not hardware
  // coalescing; the policy's profile timer (or `fixed.timer`) becomes its gro-flush-timeout.
  std::optional<SoftwareModeration> software;
};

struct SourceSpec {
  enum class Kind : uint8_t { kClosed, kPoisson, kOnOff, kTrace };
  Kind kind = Kind::kClosed;
  std::string flow = "main";  // latency is reported per flow
  // kClosed: `depth` requests outstanding; the next is issued `think` after a delivery.
  uint32_t depth = 1;
  Dist think = Dist::constant(0);
  // kPoisson: `rate` requests/s (per queue), scaled by the phase's load; with `periodic`
  // exactly 1/rate apart instead (a paced sender, e.g. sockperf under-load).
  // kOnOff (MMPP): `rate` while on, 0 while off; on and off periods exponential with means
  // on_ns / off_ns, or exactly those lengths when `periodic` (adversarial periodic load).
  double rate = 0;
  int64_t on_ns = 0;
  int64_t off_ns = 0;
  bool periodic = false;
  // kTrace: arrivals replayed from a `dimctl record` trace: per recorded interval, the
  // interval's packets (or CQ completions) spread uniformly at random over it; trace queue i
  // drives simulated queue i (queues beyond the trace's get none). `trace_device` keeps only
  // that net device's queues ("" = all).
  std::string trace_path;
  std::string trace_device;
  uint32_t bytes = 4096;  // request size, the byte counter net DIM compares first
};

// A stretch of the run with its own load, reported separately. Open-loop rates are multiplied
// by `load` (ramped linearly from the previous phase's load when `ramp`); closed-loop sources
// use `depth` when set.
struct Phase {
  std::string name = "run";
  int64_t duration_ns = 1'000'000'000;
  double load = 1.0;
  bool ramp = false;
  std::optional<uint32_t> depth;
};

// How the simulated host's CPU-time measurement (bpf/cpu_time.bpf.c, Snapshot::cpus and ::irqs)
// reports the time the engine charges, so the daemon's cost estimator sees what it would on a
// real host. The engine's own clock and costs are exact; only the reported times carry noise.
struct Measurement {
  // Every run is counted; one in `time_one_in` (per core and kind: hard IRQ, softirq) is timed,
  // the collector's default (cpu_times_time_one_in = 8). 1 times every run.
  uint32_t time_one_in = 8;
  // Each timed run reports its charged time times (1 + jitter * z), z a standard normal clipped
  // to +-3 (clock-read and cache noise: a few %), and with probability `outlier_share` that
  // time times `outlier_scale` (a run that an SMI, a preemption or a cold cache stretched).
  double jitter = 0.03;
  double outlier_share = 0.001;
  double outlier_scale = 10;
  // The share of a CostModel's irq_ns spent in the hard-IRQ handler; the rest is the wake-up of
  // the poll softirq it schedules (entry, re-arm, cold-start misses).
  double hardirq_share = 0.4;
  bool noisy() const { return jitter > 0 || outlier_share > 0; }
};

struct Workload {
  std::string name = "workload";
  std::string description;
  uint64_t seed = 1;
  uint32_t queues = 1;
  std::vector<StageSpec> stages{StageSpec{}};
  std::vector<SourceSpec> sources{SourceSpec{}};
  std::vector<Phase> phases{Phase{}};
  ProfileTable table = ProfileTable::kRdma;
  // Delay between a policy's decision and the device running the new moderation (kernel
  // work item + device command).
  int64_t apply_delay_ns = 50'000;
  // Excluded from every metric (the start of the first phase).
  int64_t warmup_ns = 0;
  // Width of the timeline windows (profile and latency over time, convergence).
  int64_t window_ns = 1'000'000;
  Measurement measurement;

  int64_t duration_ns() const {
    int64_t d = 0;
    for (const Phase& p : phases) d += p.duration_ns;
    return d;
  }
};

}  // namespace dimctl::sim
