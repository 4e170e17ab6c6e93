// A hand-built ControllerState that exercises every metric family the exporter can emit: the
// exporter, HTTP, CLI and dashboard tests and the e2e demo server all render this one.
#pragma once

#include <memory>

#include "dimctl/seam/controller_state.h"

namespace dimctl::testing {

inline seam::QueueView fake_queue(std::string device, int32_t queue, uint32_t napi_id,
                                  std::string direction = "rx") {
  seam::QueueView q;
  q.counters.key = {.ifindex = 2, .napi_id = napi_id};
  q.device = std::move(device);
  q.counters.queue = queue;
  q.direction = std::move(direction);
  return q;
}

inline seam::ControllerState full_fake_state() {
  seam::ControllerState s;
  s.time_ns = 5'000'000'000;
  s.loops_total = 1234;
  s.last_loop_seconds = 0.00025;
  s.sample_errors_total = 2;
  s.default_mode = seam::Mode::kShadow;
  s.config_path = "/etc/dimctl/dimctl.yaml";
  s.ready = true;

  // eth0 queue 0: bytes reported, DIM active.
  auto q0 = fake_queue("eth0", 0, 8193);
  q0.counters.irq = 45;
  q0.counters.polls = 1000;
  q0.counters.budget_exhausted = 100;
  q0.counters.packets = 50000;
  q0.counters.empty_polls = 10;
  q0.counters.bytes = 7'000'000;
  q0.counters.has_bytes = true;
  q0.packets_per_second = 250000;
  q0.events_per_second = 5000;
  q0.polls_per_second = 5500;
  q0.counters.cpu = 6;   // polled on CPU 6
  q0.model_sharers = 2;  // the compared cost model judged it with its CPU's load
  q0.dim.active = true;
  q0.dim.profile_ix = 3;
  q0.dim.applied_ix = 2;
  q0.dim.tune_state = 2;  // going_right
  q0.dim.tired = 4;
  q0.dim.verdicts_total[0] = 5;
  q0.dim.verdicts_total[1] = 6;
  q0.dim.verdicts_total[2] = 7;
  q0.dim.profile_changes_total = 8;
  q0.wanted_usecs = 64;
  q0.wanted_frames = 128;
  // Written with method napi: its software profile, and what the NAPI holds.
  q0.wanted_software = seam::SoftwareProfile{.defer_hard_irqs = 1, .gro_flush_timeout_ns = 64000};
  q0.napi_config = seam::NapiConfig{
      .defer_hard_irqs = 1, .gro_flush_timeout_ns = 64000, .irq_suspend_timeout_ns = 0};
  // The compared model's trade under the latency objective (no budget).
  q0.model_trade = seam::ModelTrade{.objective = dim::Objective::kLatency,
                                    .chosen_ix = 1,
                                    .none_ix = 0,
                                    .chosen_added_delay_ns = 3000,
                                    .chosen_cpu_per_completion_ns = 1400,
                                    .none_added_delay_ns = 250,
                                    .none_cpu_per_completion_ns = 1900};
  s.queues.push_back(q0);
  // Its rule compares DIM with the cost model.
  s.queue_comparisons.push_back(
      {0, {.dim_ix = 2, .model_ix = 1, .dim_changes_total = 8, .model_changes_total = 3}});

  // eth0 queue 1: no bytes, DIM inactive (observe): no DIM series but dim_active 0.
  auto q1 = fake_queue("eth0", 1, 8194);
  q1.counters.polls = 20;
  q1.counters.packets = 30;
  s.queues.push_back(q1);

  // eth0 tx NAPI without a queue index: queue label "napi9001".
  // Its policy is the cost model (algorithm model): no DIM tune state or verdicts.
  auto q2 = fake_queue("eth0", -1, 9001, "tx");
  q2.counters.polls = 7;
  q2.dim.active = true;
  q2.dim.model = true;
  q2.dim.profile_ix = 1;
  q2.dim.applied_ix = 1;
  q2.dim.profile_changes_total = 11;
  q2.wanted_usecs = 16;
  q2.wanted_frames = 32;
  // Objective efficiency with a 50 us budget: profile 1 adds 12 us for 1.2 us less CPU.
  q2.model_trade = seam::ModelTrade{.objective = dim::Objective::kEfficiency,
                                    .latency_budget_ns = 50'000,
                                    .chosen_ix = 1,
                                    .none_ix = 0,
                                    .chosen_added_delay_ns = 12'000,
                                    .chosen_cpu_per_completion_ns = 1800,
                                    .none_added_delay_ns = 500,
                                    .none_cpu_per_completion_ns = 3000};
  s.queues.push_back(q2);

  seam::CqView cq;
  cq.counters.key = {.dev_index = 1, .cq_id = 7};
  cq.counters.ibdev = "mlx5_0";
  cq.counters.poll_ctx = seam::PollContext::kSoftirq;
  cq.counters.nr_cqe = 256;
  cq.counters.comp_vector = 3;
  cq.counters.schedules = 400;
  cq.counters.reschedules = 4;
  cq.counters.events = 404;
  cq.counters.polls = 800;
  cq.counters.completions = 6400;
  cq.counters.poll_errors = 1;
  cq.counters.budget_exhausted = 2;
  cq.counters.kernel_modifies = 3;
  cq.counters.kernel_comps = 32;
  cq.counters.kernel_usec = 8;
  cq.completions_per_second = 12800;
  cq.events_per_second = 800;
  cq.model_sharers = 4;  // the compared cost model judged it with its vector's load
  cq.dim.active = true;
  cq.dim.profile_ix = 4;
  cq.dim.applied_ix = 4;
  cq.dim.tune_state = 3;  // going_left
  cq.dim.verdicts_total[2] = 9;
  cq.dim.profile_changes_total = 2;
  cq.wanted_usec = 8;
  cq.wanted_comps = 64;
  // The compared model (its pick 6) with objective efficiency and a 100 us budget.
  cq.model_trade = seam::ModelTrade{.objective = dim::Objective::kEfficiency,
                                    .latency_budget_ns = 100'000,
                                    .chosen_ix = 6,
                                    .none_ix = 0,
                                    .chosen_added_delay_ns = 40'000,
                                    .chosen_cpu_per_completion_ns = 1250,
                                    .none_added_delay_ns = 500,
                                    .none_cpu_per_completion_ns = 2600};
  s.cqs.push_back(cq);
  s.cq_comparisons.push_back(
      {0, {.dim_ix = 4, .model_ix = 6, .dim_changes_total = 2, .model_changes_total = 5}});

  seam::DeviceView eth0;
  eth0.kind = seam::DeviceKind::kNet;
  eth0.name = "eth0";
  eth0.driver = "mlx5_core";
  eth0.mode = seam::Mode::kEnforce;
  eth0.algorithm = seam::Algorithm::kNetEqe;
  eth0.rule = "fast-nics";
  eth0.allowlisted = true;
  seam::Coalesce req;
  req.rx_usecs = 64;
  req.rx_max_frames = 128;
  req.tx_usecs = 16;
  req.tx_max_frames = 32;
  req.use_adaptive_rx = false;
  eth0.requested = req;
  // The driver quantised rx-usecs (requested 64, applied 62) and reports adaptive-tx.
  seam::Coalesce app = req;
  app.rx_usecs = 62;
  app.use_adaptive_tx = true;
  eth0.applied = app;
  eth0.applies_ok_total = 10;
  eth0.applies_failed_total = 1;
  eth0.applies_rate_limited_total = 3;
  eth0.drift_total = 1;
  eth0.drifted = false;
  eth0.last_error = "set coalesce: Operation not supported";
  eth0.coalescing = true;
  s.devices.push_back(eth0);

  seam::DeviceView ib;
  ib.kind = seam::DeviceKind::kRdma;
  ib.name = "mlx5_0";
  ib.driver = "mlx5_ib";
  ib.mode = seam::Mode::kShadow;
  ib.algorithm = seam::Algorithm::kRdma;
  ib.compare = true;
  ib.rdma_dim_enabled = true;
  s.devices.push_back(ib);

  s.programs.push_back({.name = "napi_poll",
                        .attached = true,
                        .reason = "",
                        .run_time_ns = 2'500'000'000,
                        .run_count = 1'000'000});
  s.programs.push_back({.name = "cq_poll",
                        .attached = false,
                        .reason = "ib_core not loaded",
                        .run_time_ns = 0,
                        .run_count = 0});
  s.bpf_drops = {{"napi_map_full", 17}, {"cq_map_full", 0}, {"ringbuf_full", 3}};
  seam::CoreView core;
  core.cpu = 3;
  core.confidence = dim::CostConfidence::kMeasured;
  core.estimate.confidence = dim::CostConfidence::kMeasured;
  core.estimate.interrupt_ns = 2500;
  core.estimate.completion_ns = 400;
  core.used_interrupt_ns = 2508;
  core.used_completion_ns = 401;
  core.busy = 0.93;
  core.saturated = true;
  core.saturation_profile = 3;
  core.saturation_episodes = 2;
  core.qd1_probes_qd1 = 3;
  core.qd1_probes_batching = 1;
  core.descents_kept = 2;
  core.descents_back = 1;
  core.rejudged = 3;
  core.model_queues = 4;
  s.cores = {core};
  s.model_cost_tables_built_total = 5;
  return s;
}

}  // namespace dimctl::testing
