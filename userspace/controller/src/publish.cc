// Publishing: the immutable ControllerState readers get from state(), built from the slots and
// devices after a period's decisions, into a reused buffer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dim/profile.h"
#include "dimctl/controller/coalesce_mapping.h"
#include "dimctl/controller/controller.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

namespace {

template <typename Dim>
void fill_dim_view(seam::DimView& v, const Dim* dim, uint8_t applied_ix,
                   const uint64_t (&verdicts)[3], uint64_t changes) {
  v.active = dim != nullptr;
  v.model = false;
  v.applied_ix = applied_ix;
  v.verdicts_total[0] = verdicts[0];
  v.verdicts_total[1] = verdicts[1];
  v.verdicts_total[2] = verdicts[2];
  v.profile_changes_total = changes;
  if (dim == nullptr) {
    v.profile_ix = applied_ix;
    v.tune_state = v.measure_state = v.tired = 0;
    v.ppms = v.bpms = v.epms = v.cpms = v.cpe_ratio = 0;
    return;
  }
  v.profile_ix = dim->profile_ix();
  v.tune_state = static_cast<uint8_t>(dim->tune_state());
  v.measure_state = static_cast<uint8_t>(dim->state());
  v.tired = dim->tired();
  const auto& s = dim->last_stats();
  v.ppms = s ? s->ppms : 0;
  v.bpms = s ? s->bpms : 0;
  v.epms = s ? s->epms : 0;
  v.cpms = s ? s->cpms : 0;
  v.cpe_ratio = s ? s->cpe_ratio : 0;
}

// The cost model as the queue's or CQ's policy: no DIM tune state, windows or verdicts. Active
// from the first period that measured traffic: before it the model has decided nothing and
// nothing is written for the queue.
void fill_model_view(seam::DimView& v, const dim::ModelPolicy& m, uint8_t applied_ix) {
  v.active = m.measured();
  v.model = true;
  v.profile_ix = m.profile_ix();
  v.applied_ix = applied_ix;
  v.tune_state = v.measure_state = v.tired = 0;
  v.verdicts_total[0] = v.verdicts_total[1] = v.verdicts_total[2] = 0;
  v.profile_changes_total = m.changes();
  v.ppms = v.bpms = v.epms = v.cpms = v.cpe_ratio = 0;
}

// The model's trade-off at `rate_per_s` on `table`, the one its update judged this period with.
void fill_model_trade(seam::ModelTrade& v, const dim::ModelTable& table, uint8_t chosen_ix,
                      double rate_per_s) {
  const dim::ModelParams& p = table.params();
  v.objective = p.objective;
  v.latency_budget_ns =
      p.objective == dim::Objective::kEfficiency ? std::llround(p.latency_budget_ns) : 0;
  v.chosen_ix = chosen_ix;
  v.none_ix = table.latency_ix();
  const dim::Prediction chosen = table.prediction(chosen_ix, rate_per_s);
  const dim::Prediction none = table.prediction(v.none_ix, rate_per_s);
  v.chosen_added_delay_ns = chosen.added_delay_ns;
  v.chosen_cpu_per_completion_ns = chosen.cpu_per_completion_ns;
  v.none_added_delay_ns = none.added_delay_ns;
  v.none_cpu_per_completion_ns = none.cpu_per_completion_ns;
}

// What a net and an RDMA device export alike: identity, policy, write counters, error state.
template <typename Device>
void fill_device_view(seam::DeviceView& v, seam::DeviceKind kind, const Device& dev) {
  v.kind = kind;
  v.name = dev.name;
  v.mode = dev.policy.mode;
  v.algorithm = dev.policy.algorithm;
  v.compare = dev.policy.compare;
  v.rule = dev.policy.rule;
  v.allowlisted = allowlisted(dev.policy);
  v.applies_ok_total = dev.applies_ok;
  v.applies_failed_total = dev.applies_failed;
  v.applies_rate_limited_total = dev.applies_rate_limited;
  v.drift_total = dev.drift_total;
  v.drifted = dev.drifted;
  v.last_error = dev.last_error;
}

}  // namespace

std::shared_ptr<const seam::ControllerState> Controller::state() const {
  return publisher_.state();
}

void Controller::add_comparison(std::vector<seam::Comparison>& comparisons, uint32_t index,
                                const QueueSlot& slot) {
  seam::Comparison& c = comparisons.emplace_back();
  c.index = index;
  c.picks.dim_ix = clamp_profile(slot.dim.profile_ix(), slot.dev->policy, dim::kNetNumProfiles);
  c.picks.model_ix = slot.model.profile_ix();
  c.picks.dim_changes_total = slot.dim.changes_total();
  c.picks.model_changes_total = slot.model.changes();
}

void Controller::fill_queue_view(seam::QueueView& v, QueueSlot& slot,
                                 const seam::QueueCounters& counters, const std::string& device,
                                 double view_dt_s) {
  // Into the reused view, whose entry usually already names the same device. Field by field:
  // a field added to QueueCounters must be added here (the assertion is the reminder).
  // device_ix is left out: it indexes the snapshot's name table, and the view has the name.
  static_assert(sizeof(seam::QueueCounters) == 64);
  // This step's release, before the DIM state is shown (the view comes after the decisions).
  if (slot.release_pending()) slot.settle_release(slot.dev->release);
  // Usually the same name: compared inline (through memcmp, a call per queue and view).
  if (v.device.size() != device.size() ||
      !std::equal(device.begin(), device.end(), v.device.begin(),
                  [](char a, char b) { return a == b; })) {
    v.device = device;
  }
  v.counters.key = counters.key;
  v.counters.queue = counters.queue;
  v.counters.irq = counters.irq;
  v.counters.polls = counters.polls;
  v.counters.packets = counters.packets;
  v.counters.budget_exhausted = counters.budget_exhausted;
  v.counters.empty_polls = counters.empty_polls;
  v.counters.bytes = counters.bytes;
  v.counters.has_bytes = counters.has_bytes;
  v.counters.cpu = counters.cpu;
  v.model_sharers = slot.model_on() ? kShareLevels[slot.share_level] : 0;
  if (v.direction.size() != 2) v.direction = "rx";
  // None for a queue that is new or had a discontinuity since the last view.
  const double dt_s = slot.rate_base_valid ? view_dt_s : 0;
  v.packets_per_second = per_second(counters.packets - slot.rate_base_packets, dt_s);
  v.events_per_second = per_second(counters.events() - slot.rate_base_events, dt_s);
  v.polls_per_second = per_second(counters.polls - slot.rate_base_polls, dt_s);
  slot.rate_base_valid = true;
  slot.rate_base_packets = counters.packets;
  slot.rate_base_events = counters.events();
  slot.rate_base_polls = counters.polls;
  const uint8_t applied_ix = slot.dev->per_queue
                                 ? slot.applied_ix
                                 : slot.dev->combined_ix.value_or(slot.wanted_ix().value_or(0));
  if (slot.model_primary()) {
    fill_model_view(v.dim, slot.model, applied_ix);
  } else {
    // The totals of every instance the queue had, also while DIM is off.
    const uint64_t verdicts[3] = {slot.dim.verdicts_total(dim::Verdict::kWorse),
                                  slot.dim.verdicts_total(dim::Verdict::kSame),
                                  slot.dim.verdicts_total(dim::Verdict::kBetter)};
    fill_dim_view(v.dim, slot.dim_on() ? &slot.dim : nullptr, applied_ix, verdicts,
                  slot.dim.changes_total());
  }
  if (const auto wanted = slot.wanted_ix()) {
    const dim::Profile& p =
        slot.dev
            ->profiles[std::min<uint8_t>(*wanted, static_cast<uint8_t>(dim::kNetNumProfiles - 1))];
    v.wanted_usecs = p.usec;
    v.wanted_frames = p.pkts;
  } else {
    v.wanted_usecs = v.wanted_frames = 0;
  }
  if (slot.model_on() && slot.model.measured()) [[unlikely]] {
    // The table model_pass() judged the queue with: its core's measured costs where the core
    // has a cost bucket (core_table() falls back to shared_table() without one), at the share
    // level of this period.
    const std::vector<CorePick>& picks = cores_.picks();
    const dim::ModelTable& table =
        counters.cpu < picks.size()
            ? *core_table(*slot.dev, slot.share_level, picks[counters.cpu].bucket)
            : *shared_table(*slot.dev, slot.share_level);
    fill_model_trade(v.model_trade.emplace(), table, slot.model.profile_ix(), v.packets_per_second);
  } else if (v.model_trade) [[unlikely]] {
    v.model_trade.reset();
  }
  if (slot.dev->napi) [[unlikely]] {
    fill_napi_view(v, slot);
  } else if (v.wanted_software || v.napi_config) [[unlikely]] {
    v.wanted_software.reset();
    v.napi_config.reset();
  }
}

void Controller::fill_cq_and_device_views(seam::ControllerState& st, const seam::Snapshot& snap) {
  cores_.fill_views(st);
  st.cqs.resize(cqs_.slots.size());
  st.cq_comparisons.clear();
  for (size_t i = 0; i < cqs_.slots.size(); ++i) {
    const CqSlot& slot = cqs_.slots[i];
    seam::CqView& v = st.cqs[i];
    v.counters = snap.cqs[i];
    v.completions_per_second = slot.cps;
    v.events_per_second = slot.eps;
    v.model_sharers = slot.model ? kShareLevels[slot.share_level] : 0;
    if (slot.model && slot.model_primary) {
      fill_model_view(v.dim, *slot.model, slot.applied_ix);
    } else {
      fill_dim_view(v.dim, slot.dim ? &*slot.dim : nullptr, slot.applied_ix, slot.verdicts,
                    slot.changes);
    }
    if (slot.model && slot.model->measured()) {
      // The table feed_cq() judged the CQ with (its core's costs, the share level).
      const CorePick* core = cq_core(v.counters);
      const dim::ModelTable& table = core != nullptr
                                         ? *core_table(*slot.dev, slot.share_level, core->bucket)
                                         : *shared_table(*slot.dev, slot.share_level);
      fill_model_trade(v.model_trade.emplace(), table, slot.model->profile_ix(),
                       v.completions_per_second);
    } else {
      v.model_trade.reset();
    }
    if (slot.model && slot.dim) {
      seam::Comparison& cmp = st.cq_comparisons.emplace_back();
      cmp.index = static_cast<uint32_t>(i);
      cmp.picks.dim_ix =
          clamp_profile(slot.dim->profile_ix(), slot.dev->policy, dim::kRdmaNumProfiles);
      cmp.picks.model_ix = slot.model->profile_ix();
      cmp.picks.dim_changes_total = slot.changes;
      cmp.picks.model_changes_total = slot.model->changes();
    }
    if (slot.wanted_ix) {
      const dim::Profile& p = dim::rdma_profiles()[std::min<uint8_t>(
          *slot.wanted_ix, static_cast<uint8_t>(dim::kRdmaNumProfiles - 1))];
      v.wanted_usec = p.usec;
      v.wanted_comps = p.comps;
    } else {
      v.wanted_usec = v.wanted_comps = 0;
    }
  }
  // CQs whose IB device the collector could not name share an unnamed entry: it carries their
  // policy but is no device anyone can select or write, so it is not exported.
  const size_t unnamed_rdma = rdma_devices_.count("");
  st.devices.resize(net_devices_.size() + rdma_devices_.size() - unnamed_rdma);
  size_t d = 0;
  for (const auto& [name, dev] : net_devices_) {
    seam::DeviceView& v = st.devices[d++];
    fill_device_view(v, seam::DeviceKind::kNet, *dev);
    v.driver = dev->driver;
    v.method = dev->napi ? seam::Method::kNapi : seam::Method::kEthtool;
    v.coalescing = dev->ethtool_coalescing;
    if (dev->per_queue) {
      v.requested = dev->rep_wanted;
      v.applied = dev->rep_current;
    } else {
      v.requested = dev->apply.wanted;
      v.applied = dev->apply.current;
    }
    v.rdma_dim_enabled.reset();
  }
  for (const auto& [name, dev] : rdma_devices_) {
    if (name.empty()) continue;
    seam::DeviceView& v = st.devices[d++];
    fill_device_view(v, seam::DeviceKind::kRdma, *dev);
    v.driver.clear();
    v.requested.reset();
    v.applied.reset();
    v.rdma_dim_enabled = dev->dim_enabled;
  }
}

void Controller::finish_publish(std::shared_ptr<seam::ControllerState> st, int64_t loop_start_ns) {
  st->loops_total = steps_.count();
  st->sample_errors_total = steps_.sample_errors();
  st->default_mode = options_.default_mode;
  st->config_path = options_.config_path;
  st->ready = steps_.ready();
  st->programs = io_.source.programs();
  st->bpf_drops = io_.source.drops_by_reason();
  st->last_loop_seconds = static_cast<double>(io_.clock.now_ns() - loop_start_ns) / 1e9;
  publisher_.publish(std::move(st));
}

}  // namespace dimctl::controller
