// RDMA: per CQ one RdmaDim and/or cost model on the period's deltas (user space cannot moderate
// a CQ, so every pick is applied virtually), and per IB device the kernel's DIM switch, the one
// thing written.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dim/profile.h"
#include "dimctl/controller/coalesce_mapping.h"
#include "dimctl/controller/controller.h"
#include "dimctl/controller/discontinuity.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

void Controller::reconcile_cqs(const seam::Snapshot& snap) {
  const size_t n = snap.cqs.size();
  bool same = steps_.have_prev() && cqs_.slots.size() == n && cqs_.prev.size() == n;
  for (size_t i = 0; same && i < n; ++i) same = cqs_.slots[i].key == snap.cqs[i].key;
  if (same) {
    for (size_t i = 0; i < n; ++i) {
      cqs_.slots[i].have_prev = true;
      cqs_.slots[i].prev_pos = i;
    }
  } else {
    reorder_slots(
        cqs_.slots, cqs_.index, n, [&](size_t i) { return snap.cqs[i].key; },
        [&](CqSlot& slot, size_t old_pos) {
          slot.have_prev = steps_.have_prev();
          slot.prev_pos = old_pos;
        },
        [](CqSlot&, size_t) {});
  }
  for (size_t i = 0; i < n; ++i) {
    CqSlot& slot = cqs_.slots[i];
    const seam::CqCounters& c = snap.cqs[i];
    if (slot.dev == nullptr || slot.dev->name != c.ibdev) {
      slot.dev = &rdma_device_for(c.ibdev);
      slot.generation = 0;
    }
    slot.dev->has_cqs = true;
  }
}

void Controller::ensure_dim(CqSlot& slot, const RdmaDevice& dev) {
  if (slot.generation == dev.generation) return;
  slot.generation = dev.generation;
  slot.dim.reset();
  slot.model.reset();
  if (runs_rdma_dim(dev.policy)) slot.dim.emplace();
  if (runs_rdma_model(dev.policy)) slot.model.emplace(*dev.model_table);
  slot.model_primary = seam::is_model(dev.policy.algorithm);
}

void Controller::measure_cq(CqSlot& slot, const seam::CqCounters& c, double dt_s) {
  const seam::CqCounters* prev = slot.have_prev ? &cqs_.prev[slot.prev_pos] : nullptr;
  slot.reset = dt_s < 0 || (prev != nullptr && is_discontinuity(*prev, c));
  slot.fresh = prev != nullptr && !slot.reset;
  slot.cps = slot.eps = 0;
  slot.d_events = slot.d_comps = slot.d_schedules = slot.d_exhausted = 0;
  if (slot.fresh) {
    slot.d_events = c.events - prev->events;
    slot.d_comps = c.completions - prev->completions;
    slot.d_schedules = c.schedules - prev->schedules;
    slot.d_exhausted = c.budget_exhausted - prev->budget_exhausted;
    slot.eps = per_second(slot.d_events, dt_s);
    slot.cps = per_second(slot.d_comps, dt_s);
  }
}

namespace {

// The CQ's interrupt and polls run on the core its vector's IRQ is bound to: softirq, or the
// per-CPU ib_comp_wq worker (an unbound workqueue runs anywhere, a direct CQ has no interrupt).
bool shares_core(const seam::CqCounters& c) {
  return c.comp_vector >= 0 &&
         (c.poll_ctx == seam::PollContext::kSoftirq || c.poll_ctx == seam::PollContext::kWorkqueue);
}

}  // namespace

CorePick* Controller::cq_core(const seam::CqCounters& c) {
  if (c.cpu >= cores_.picks().size() || !shares_core(c)) return nullptr;
  return &cores_.picks()[c.cpu];
}

void Controller::add_cq_loads(const seam::Snapshot& snap) {
  if (snap.cpus.empty()) return;  // no core is measured
  for (size_t i = 0; i < cqs_.slots.size(); ++i) {
    const CqSlot& slot = cqs_.slots[i];
    const seam::CqCounters& c = snap.cqs[i];
    if (!slot.fresh || c.cpu == seam::QueueCounters::kNoCpu || !shares_core(c)) continue;
    // Wake-ups are the completion interrupts (cq_schedule); polls the poll passes, of which
    // d_exhausted used their whole budget (a NAPI poll's budget_exhausted).
    cores_.add_load(c.cpu, steps_.count(), slot.d_comps, slot.d_schedules, slot.d_events,
                    slot.d_exhausted);
  }
}

// CQs of one device on one completion vector share its interrupt, and the core that interrupt
// is bound to polls them all (softirq, or the per-CPU ib_comp_wq workqueue; an unbound
// workqueue runs anywhere, and a direct CQ has no interrupt). A model CQ's load is then judged
// as the vector's: sharers = the vector's completion rate / the CQ's own, so that k CQs alike
// count k, and a CQ that carries most of its vector's load about 1.
void Controller::share_cq_load(const seam::Snapshot& snap) {
  // A model CQ with completions this period, on a vector its device's rule shares.
  const auto judged_shared = [&](size_t i) {
    const CqSlot& slot = cqs_.slots[i];
    return slot.dev->model_table != nullptr && slot.dev->policy.model.shared_load && slot.fresh &&
           slot.cps > 0 && shares_core(snap.cqs[i]);
  };
  bool any = false;
  for (size_t i = 0; i < cqs_.slots.size(); ++i) {
    cqs_.slots[i].share_level = 0;
    any |= judged_shared(i);
  }
  if (!any) return;
  std::map<std::pair<const RdmaDevice*, int32_t>, double> vector_cps;
  for (size_t i = 0; i < cqs_.slots.size(); ++i) {
    if (cqs_.slots[i].fresh && shares_core(snap.cqs[i])) {
      vector_cps[{cqs_.slots[i].dev, snap.cqs[i].comp_vector}] += cqs_.slots[i].cps;
    }
  }
  for (size_t i = 0; i < cqs_.slots.size(); ++i) {
    if (!judged_shared(i)) continue;
    CqSlot& slot = cqs_.slots[i];
    slot.share_level = share_level(vector_cps[{slot.dev, snap.cqs[i].comp_vector}], slot.cps);
  }
}

void Controller::feed_cq(CqSlot& slot, const seam::CqCounters& c, int64_t prev_time_ns,
                         int64_t now_ns) {
  RdmaDevice& dev = *slot.dev;
  ensure_dim(slot, dev);
  // The kernel never runs DIM on IB_POLL_DIRECT CQs (dim-spec 5.5); neither do we, nor the model
  // (such CQs have no interrupt to moderate).
  if (c.poll_ctx == seam::PollContext::kDirect) {
    slot.dim.reset();
    slot.model.reset();
  }
  const bool reset = slot.reset;
  const uint64_t d_events = slot.d_events, d_comps = slot.d_comps;
  if (slot.dim) {
    if (reset) {
      slot.dim->restart_window();
    } else if (d_events > 0) {
      // Per-period approximation: the period's events spread evenly over (prev, now].
      const uint64_t windows_before = slot.dim->windows_evaluated();
      const bool changed = slot.dim->on_events(prev_time_ns, now_ns, d_events, d_comps);
      const uint64_t windows = slot.dim->windows_evaluated() - windows_before;
      // Only the last window's verdict is visible: the total is exact, the split approximate
      // when several windows close within one period.
      if (windows > 0 && slot.dim->last_verdict()) {
        slot.verdicts[static_cast<size_t>(*slot.dim->last_verdict())] += windows;
      }
      if (changed) ++slot.changes;
    }
    // Kernel ULP CQs cannot be moderated from user space (dim-spec 8.4): every change is a
    // virtual apply, as if ib_cq_rdma_dim_work had run.
    slot.dim->profile_applied();
  }
  // On a measured core: its costs, and its saturation rule's profile while it is saturated.
  CorePick* const core = slot.model ? cq_core(c) : nullptr;
  const dim::ModelTable* table = nullptr;
  if (slot.model) {
    table = core != nullptr ? core_table(dev, slot.share_level, core->bucket).get()
                            : shared_table(dev, slot.share_level).get();
  }
  if (slot.model && slot.fresh) {
    slot.model->update(*table, {now_ns - prev_time_ns, d_events, d_comps});
  }
  if (slot.model && slot.model_primary) {
    // As for net queues: no wish before a period measured traffic on the CQ.
    slot.wanted_ix = slot.model->wish();
    if (core != nullptr && slot.fresh) {
      if (d_comps > 0) {
        core->offer(static_cast<uint32_t>(steps_.count()), d_comps,
                    static_cast<uint32_t>(&slot - cqs_.slots.data()), slot.share_level, true);
      }
      if (core->saturated_wish && slot.model->measured()) [[unlikely]]
        slot.wanted_ix = std::clamp(core->wish, table->min_ix(), table->max_ix());
      if (core->probe && core->probe_cq &&
          core->probe_index == static_cast<uint32_t>(&slot - cqs_.slots.data())) [[unlikely]] {
        slot.wanted_ix = std::clamp(core->probe_wish, table->min_ix(), table->max_ix());
      }
    }
  } else if (slot.dim && !slot.model_primary) {
    slot.wanted_ix = slot.dim->profile_ix();
  } else {
    slot.wanted_ix = static_wish(dev.policy);
  }
  slot.applied_ix =
      slot.wanted_ix ? clamp_profile(*slot.wanted_ix, dev.policy, dim::kRdmaNumProfiles) : 0;
}

bool Controller::may_write(const RdmaDevice& dev) const {
  return !writes_disabled_ && dev.policy.mode == seam::Mode::kEnforce && allowlisted(dev.policy) &&
         dev.policy.conflict.empty() && !dev.drifted && dev.policy.rdma_kernel_dim.has_value();
}

void Controller::update_rdma_devices(int64_t now_ns) {
  if (io_.rdma == nullptr) return;
  auto listed = io_.rdma->list();
  if (!listed) {
    // Keep what we know; a failed dump is not a device disappearing.
    for (auto& [name, dev] : rdma_devices_) {
      dev->listed = dev->dim_enabled.has_value();
      set_error(*dev, fmt::format("listing RDMA devices: {}", listed.error().message()));
    }
    return;
  }
  for (const seam::RdmaDevice& info : *listed) {
    RdmaDevice& dev = rdma_device_for(info.name);
    dev.listed = true;
    if (dev.last_set && info.dim_enabled != *dev.last_set) {
      ++dev.drift_total;
      if (!dev.drifted) {
        dev.drifted = true;
        records_.mark_drifted("rdma:" + dev.name);
        spdlog::warn("{}: RDMA DIM switch changed by someone else; dimctl stops writing it",
                     dev.name);
        set_error(dev, "drift: RDMA DIM switch changed by another writer; writes stopped");
      }
      dev.last_set = info.dim_enabled;
    }
    dev.dim_enabled = info.dim_enabled;

    const auto& want = dev.policy.rdma_kernel_dim;
    if (writes_disabled_ || dev.policy.mode != seam::Mode::kEnforce || !allowlisted(dev.policy) ||
        !dev.policy.conflict.empty() || dev.drifted || !want || *want == info.dim_enabled) {
      continue;
    }
    if (dev.last_attempt_ns && dev.policy.rate_limit_ns > 0 &&
        now_ns - *dev.last_attempt_ns < dev.policy.rate_limit_ns) {
      ++dev.applies_rate_limited;
      continue;
    }
    dev.last_attempt_ns = now_ns;
    if (!records_.rdma(dev.name)) {
      auto recorded = io_.originals.record_rdma_dim(dev.name, info.dim_enabled);
      if (!recorded) {
        ++dev.applies_failed;
        set_error(dev, fmt::format("not writing: recording the original RDMA DIM switch failed: {}",
                                   recorded.error().message()));
        continue;
      }
      records_.add_rdma(dev.name, info.dim_enabled);
    }
    auto readback = io_.rdma->set_dim(dev.name, *want);
    if (!readback) {
      ++dev.applies_failed;
      set_error(dev, fmt::format("setting RDMA DIM {}: {}", *want ? "on" : "off",
                                 readback.error().message()));
      continue;
    }
    ++dev.applies_ok;
    dev.dim_enabled = *readback;
    dev.last_set = *readback;
    set_error(dev, *readback == *want
                       ? ""
                       : fmt::format("device kept RDMA DIM {}", *readback ? "on" : "off"));
  }
}

}  // namespace dimctl::controller
