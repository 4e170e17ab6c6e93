// A ControllerState in which every field the state JSON carries has a value of its own, none the
// default, and each optional value both present (the first entries) and absent (the last): the
// state JSON tests write it, read it back and mutate it key by key. Enum values are spelled
// without separators, so the test does not depend on how a value is spelt.
#pragma once

#include "dimctl/seam/controller_state.h"

namespace dimctl::testing {

inline seam::DimView every_field_dim(uint8_t base) {
  seam::DimView d;
  d.active = true;
  d.model = true;
  d.profile_ix = base;
  d.applied_ix = static_cast<uint8_t>(base + 1);
  d.tune_state = 2;
  d.measure_state = 1;
  d.tired = static_cast<uint8_t>(base + 2);
  d.verdicts_total[0] = 11;
  d.verdicts_total[1] = 12;
  d.verdicts_total[2] = 13;
  d.profile_changes_total = 14;
  d.ppms = -15;
  d.bpms = 16;
  d.epms = 17;
  d.cpms = 18;
  d.cpe_ratio = 19;
  return d;
}

inline seam::Coalesce every_field_coalesce(uint32_t base) {
  seam::Coalesce c;
  c.rx_usecs = base;
  c.rx_max_frames = base + 1;
  c.tx_usecs = base + 2;
  c.tx_max_frames = base + 3;
  c.use_adaptive_rx = true;
  c.use_adaptive_tx = false;
  c.use_cqe_mode_rx = true;
  c.use_cqe_mode_tx = false;
  return c;
}

inline seam::ControllerState every_field_state() {
  seam::ControllerState s;
  s.time_ns = 7'000'000'001;
  s.loops_total = 21;
  s.last_loop_seconds = 0.375;
  s.sample_errors_total = 22;
  s.default_mode = seam::Mode::kEnforce;
  s.config_path = "/etc/dimctl/every.yaml";
  s.ready = true;

  seam::QueueView q;
  q.counters.key = {.ifindex = 31, .napi_id = 32};
  q.counters.queue = 33;
  q.counters.irq = 34;
  q.counters.polls = 350;
  q.counters.packets = 36;
  q.counters.budget_exhausted = 37;
  q.counters.empty_polls = 38;
  q.counters.bytes = 39;
  q.counters.has_bytes = true;
  q.counters.cpu = 40;
  q.device = "ens1f0";
  q.direction = "tx";
  q.packets_per_second = 41.5;
  q.events_per_second = 42.25;
  q.polls_per_second = 43.125;
  q.model_sharers = 2.5;
  q.dim = every_field_dim(3);
  q.wanted_usecs = 44;
  q.wanted_frames = 45;
  q.wanted_software = seam::SoftwareProfile{.defer_hard_irqs = 98, .gro_flush_timeout_ns = 99};
  q.napi_config = seam::NapiConfig{
      .defer_hard_irqs = 100, .gro_flush_timeout_ns = 101, .irq_suspend_timeout_ns = 102};
  q.model_trade = seam::ModelTrade{.objective = dim::Objective::kEfficiency,
                                   .latency_budget_ns = 122,
                                   .chosen_ix = 123,
                                   .none_ix = 124,
                                   .chosen_added_delay_ns = 125.5,
                                   .chosen_cpu_per_completion_ns = 126.5,
                                   .none_added_delay_ns = 127.5,
                                   .none_cpu_per_completion_ns = 128.5};
  s.queues.push_back(q);
  s.queue_comparisons.push_back(
      {0, {.dim_ix = 4, .model_ix = 5, .dim_changes_total = 46, .model_changes_total = 47}});
  // No CPU, no bytes, no comparison: null.
  seam::QueueView bare;
  bare.device = "ens1f0";
  s.queues.push_back(bare);

  seam::CqView cq;
  cq.counters.key = {.dev_index = 51, .cq_id = 52};
  cq.counters.ibdev = "mlx5_3";
  cq.counters.poll_ctx = seam::PollContext::kWorkqueue;
  cq.counters.nr_cqe = 53;
  cq.counters.comp_vector = 54;
  cq.counters.schedules = 55;
  cq.counters.reschedules = 56;
  cq.counters.events = 57;
  cq.counters.polls = 58;
  cq.counters.completions = 59;
  cq.counters.poll_errors = 60;
  cq.counters.budget_exhausted = 119;
  cq.counters.kernel_modifies = 61;
  cq.counters.kernel_comps = 62;
  cq.counters.kernel_usec = 63;
  cq.counters.cpu = 166;
  cq.completions_per_second = 64.5;
  cq.events_per_second = 65.75;
  cq.model_sharers = 3.5;
  cq.dim = every_field_dim(5);
  cq.wanted_usec = 66;
  cq.wanted_comps = 67;
  cq.model_trade = seam::ModelTrade{.objective = dim::Objective::kEfficiency,
                                    .latency_budget_ns = 129,
                                    .chosen_ix = 130,
                                    .none_ix = 131,
                                    .chosen_added_delay_ns = 132.5,
                                    .chosen_cpu_per_completion_ns = 133.5,
                                    .none_added_delay_ns = 134.5,
                                    .none_cpu_per_completion_ns = 135.5};
  s.cqs.push_back(cq);
  s.cq_comparisons.push_back(
      {0, {.dim_ix = 6, .model_ix = 7, .dim_changes_total = 68, .model_changes_total = 69}});
  s.cqs.push_back(seam::CqView{});

  seam::DeviceView d;
  d.kind = seam::DeviceKind::kRdma;
  d.name = "mlx5_3";
  d.driver = "mlx5_ib";
  d.mode = seam::Mode::kObserve;
  d.algorithm = seam::Algorithm::kModel;
  d.compare = true;
  d.rule = "every";
  d.allowlisted = true;
  d.requested = every_field_coalesce(70);
  d.applied = every_field_coalesce(80);
  d.rdma_dim_enabled = false;
  d.coalescing = false;
  d.applies_ok_total = 90;
  d.applies_failed_total = 91;
  d.applies_rate_limited_total = 92;
  d.drift_total = 93;
  d.drifted = true;
  d.last_error = "set coalesce: Device or resource busy";
  s.devices.push_back(d);
  // Unknown requested/applied/rdma_dim_enabled: null; a coalesce with one parameter: the others
  // left out.
  seam::DeviceView partial;
  partial.name = "ens1f0";
  partial.algorithm = seam::Algorithm::kStatic;
  partial.method = seam::Method::kNapi;
  partial.applied = seam::Coalesce{};
  partial.applied->rx_usecs = 8;
  s.devices.push_back(partial);

  s.programs.push_back({.name = "napi_poll",
                        .attached = true,
                        .reason = "because",
                        .run_time_ns = 94,
                        .run_count = 95,
                        .recursion_misses = 96});
  s.bpf_drops = {{"ringbuf_full", 97}};
  seam::CoreView c;
  c.cpu = 98;
  c.confidence = dim::CostConfidence::kCombined;
  c.used_interrupt_ns = 99.5;
  c.used_completion_ns = 100.5;
  c.estimate.interrupt_ns = 101.5;
  c.estimate.completion_ns = 102.5;
  c.estimate.handler_ns = 103.5;
  c.estimate.wakeup_ns = 104.5;
  c.estimate.fit_completion_ns = 105.5;
  c.estimate.combined_ns = 106.5;
  c.estimate.batch = 107.5;
  c.estimate.spread = 0.125;
  c.estimate.relative_error = 0.25;
  c.estimate.residual_rms = 0.375;
  c.estimate.periods = 108;
  c.estimate.kept = 109;
  c.estimate.background = 0.4375;
  c.busy = 0.625;
  c.interrupts_per_s = 110.5;
  c.completions_per_s = 111.5;
  c.exhausted_share = 0.75;
  c.saturated = true;
  c.saturation_profile = 112;
  c.saturation_episodes = 113;
  c.saturation_budget_waits = 114;
  c.model_queues = 115;
  c.qd1_probes_qd1 = 117;
  c.qd1_probes_batching = 118;
  c.descents_kept = 119;
  c.descents_back = 120;
  c.rejudged = 121;
  s.cores = {c};
  s.model_cost_tables_built_total = 116;
  return s;
}

}  // namespace dimctl::testing
