// The cost model behind ModelPolicy (model_policy.h): what one moderation profile costs and
// saves at a given completion rate. Pure arithmetic, no state.
//
// A profile is a timer T (usec) and a count threshold N (packets in net tables, completions in
// RDMA tables): the device interrupts once N completions are pending or when the timer says so.
// The timer means one of three things, and they behave very differently at low load
// (performance-research 5.1):
//   rate-limit ("EQE", mlx5 EQE mode, net DIM's EQE tables): T is the least time between two
//     interrupts; a completion arriving later than T after the last interrupt fires at once.
//   idle-gap ("CQE", mlx5 CQE mode, net DIM's CQE tables): the timer restarts at every
//     completion; the interrupt fires after an idle gap of T.
//   absolute (NVMe aggregation time): fires at most T after the first pending completion.
// N = 1 or T = 0 means no moderation (an interrupt per completion). N = 0 means "no count
// threshold"; the model caps N at kMaxModelCount (4096) either way, which only matters for
// profiles no latency-first policy would pick (batches of thousands).
//
// For completions arriving as a Poisson stream of rate λ, predict() gives, exactly for each
// semantics with the count cap (derivations in cost_model.cc; without the cap they reduce to the
// closed forms of research 5.2, which the unit tests check):
//   B  completions per interrupt (batch); interrupts per second = λ / B
//   D  mean added delay per completion: from its arrival to the interrupt that reports it
// and, for a host that spends C_c of CPU per completion and C_irq per interrupt:
//   S = C_c + C_irq / B        CPU per completion
//   ρ = k · λ · S              utilisation of the core that handles the queue, shared by k
//                              queues with this one's load and profile (k = sharers, 1 alone)
//   L = D + S / (1 − ρ)        predicted latency: moderation delay plus the M/M/1 sojourn of
//                              the completion on that core; a profile with ρ ≥ max_utilisation is
//                              infeasible (L = +inf).
// L is what ModelPolicy minimises. At low load every profile's ρ is small, so the least-delay
// profile wins; as λ grows the interrupt cost drives ρ (and the queueing term) up and a profile
// that batches more becomes the better one, which is exactly the trade-off moderation exists for.
// With k > 1 the core serves k queues' completions (k λ in all) and each completion's sojourn is
// S / (1 − ρ) with the shared ρ: batching pays at the core's load, not one queue's. The caller
// estimates k from the queues that share the core (the controller: net queues polled on one
// CPU, CQs on one completion vector; docs/controller/model.md "Shared cores").
// Software moderation (kDeferral; napi_complete_done() and napi_watchdog() in net/core/dev.c).
// No moderation (T = 0 or d = 0): every completion wakes the NAPI (the device's interrupt or, on
// veth, the sender's napi_schedule): one wake-up poll each. With T, d > 0 a poll that found work
// keeps the interrupt masked and arms a timer of T; the timer's poll runs W = T + timer_latency
// later. A timer poll with work re-arms (the count is reset to d), an empty one takes one from
// the count and re-arms while it is above 0; at 0 the interrupt is re-enabled. An episode is
// therefore one wake-up poll with its completion, then timer polls until d empty ones in a row.
// For Poisson arrivals each timer poll is empty with probability p = e^{-λW}, independently, so
//   P  = E[timer polls per episode] = (1 − p^d) / ((1 − p)·p^d) = expm1(d·λW) / (−expm1(−λW))
//        (the mean wait for d failures in a row; d = 1: e^{λW}); P·p of them are empty;
//   Q  = 1 + P·λW completions per episode (Wald: each timer poll takes a window's arrivals);
//   D  = P·λW·(W/2) / Q: the completions a timer poll takes waited on average half its window,
//        the wake-up's completion not at all;
//   S  = C_c + (C_irq + P·C_poll) / Q, C_poll the CPU of one timer poll besides its completions
//        (arming the timer, its interrupt, the poll's entry: what an empty poll costs);
//   batch = Q / (1 + P): completions per poll, what the collector's events (polls that did not
//        exhaust their budget) give per event, so QD~1 evidence compares like with like.
// At low rates each completion pays an empty timer poll besides its wake-up: software
// moderation costs CPU until the windows fill (λW of about 1 and above). A closed loop with one
// completion outstanding is not Poisson: its next request comes back inside the window, so it
// waits for the timer at every round trip; ModelPolicy's QD~1 rule handles it.
// Limits (docs/controller/model.md, docs/controller/costs.md): arrivals are assumed Poisson
// (bursts and closed loops are left to ModelPolicy's rules), the sharers of a core are taken as
// alike, and C_c / C_irq are parameters (CostEstimator, cost_estimator.h, measures them per core
// for the caller to pass).
#pragma once

#include <cstdint>

namespace dim {

// kDeferral: software moderation of a NAPI (netdev napi-set `gro-flush-timeout` T and
// `defer-hard-irqs` d; below). Its profiles' count field is d, not a completion threshold.
enum class TimerMode : uint8_t { kRateLimit = 0, kIdleGap = 1, kAbsolute = 2, kDeferral = 3 };

inline constexpr uint32_t kMaxModelCount = 4096;

struct CostParams {
  double completion_cost_ns = 1000;  // C_c: host CPU per completion (packet / CQE)
  double interrupt_cost_ns = 2000;   // C_irq: host CPU per interrupt, direct and indirect
  double max_utilisation = 0.95;     // profiles predicted above this are infeasible
  double sharers = 1;                // k: queues of this load sharing the core (< 1 counts as 1)
  // kDeferral only:
  double poll_cost_ns = 0;      // C_poll: host CPU of one timer poll besides its completions
  double timer_latency_ns = 0;  // how late a timer poll runs after T (W = T + this)
};

struct Prediction {
  double batch = 1;                       // B (kDeferral: completions per poll)
  double added_delay_ns = 0;              // D
  double cpu_per_completion_ns = 0;       // S
  double utilisation = 0;                 // ρ, of the core (all its sharers)
  bool feasible = true;                   // ρ < max_utilisation
  double latency_ns = 0;                  // L; +inf when not feasible
  double polls_per_completion = 1;        // kDeferral: wake-up and timer polls; others 1 / B
  double empty_polls_per_completion = 0;  // kDeferral: timer polls that found nothing
};

// The prediction for one profile (usec, count) at `rate_per_s` completions per second (>= 0).
Prediction predict(TimerMode mode, uint32_t usec, uint32_t count, double rate_per_s,
                   const CostParams& cost);

}  // namespace dim
