// The net queues' path, every period: each queue fed to its NetDim and/or cost model and to its
// device's combiner, and the per-queue writes. One translation unit on purpose: this is the
// step's hot path, and without LTO only what is defined here can be inlined into it
// (docs/CONTROLLER.md, "Code layout").
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dim/model_policy.h"
#include "dim/net_dim.h"
#include "dim/sample.h"
#include "dimctl/controller/coalesce_mapping.h"
#include "dimctl/controller/controller.h"
#include "dimctl/controller/discontinuity.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

namespace {

// How many queues ahead the per-queue loop asks for its cache lines: the loop is bound by
// memory (a slot's first line, its next two when a DIM window may close, and the queue's line of
// snapshot; 3.2 MB at 10k queues).
constexpr size_t kPrefetchAhead = 8;

// One 8-byte compare (the per-queue loop asks it for every queue).
bool same_key(const seam::QueueKey& a, const seam::QueueKey& b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

}  // namespace

// Called when the snapshot's queues differ from the slots (count or order): slots are moved by
// key, new queues get fresh slots and queues absent from the snapshot are dropped.
void Controller::reconcile_queues(const seam::Snapshot& snap) {
  reorder_slots(
      queues_.slots, queues_.index, snap.queues.size(),
      [&](size_t i) { return snap.queues[i].key; }, [](QueueSlot&, size_t) {},
      // A new queue starts from its current counters: its first period has no deltas and no
      // discontinuity, without a "first sample" test in the per-queue loop.
      [&](QueueSlot& slot, size_t i) {
        slot.prev = QueueCounts::of(snap.queues[i]);
        slot.flags = snap.queues[i].has_bytes ? QueueSlot::kHasBytes : 0;
      });
}

// A fresh DIM instance for the device's current policy, or none.
void Controller::ensure_dim(QueueSlot& slot, const NetDevice& dev) {
  static_assert(offsetof(QueueSlot, window_start) + sizeof(uint16_t) <= 64,
                "what a period touches for an open window belongs in the slot's first line");
  static_assert(offsetof(QueueSlot, dim) == 64 && dim::NetDim::kHotBytes == 64 &&
                    offsetof(QueueSlot, dev) + sizeof(NetDevice*) <= 192,
                "what a decision touches belongs in the slot's line 1, the instance's rest in 2");
  static_assert(sizeof(QueueSlot) == 256);
  static_assert(offsetof(QueueSlot, model) >= 192, "the model's state belongs in line 3");
  slot.flags &= static_cast<uint8_t>(~(QueueSlot::kDimOn | QueueSlot::kWindowOpen |
                                       QueueSlot::kDimWindow | QueueSlot::kModelOn |
                                       QueueSlot::kModelPrimary | QueueSlot::kReleasePending));
  if (runs_net_model(dev.policy)) {
    slot.model = dim::ModelPolicy(*dev.model_table);
    slot.flags |= QueueSlot::kModelOn;
    if (seam::is_model(dev.policy.algorithm)) slot.flags |= QueueSlot::kModelPrimary;
  }
  if (!runs_net_dim(dev.policy)) return;
  const auto mode =
      cqe_table(dev.policy, dev.found_cqe_mode) ? dim::CqPeriodMode::kCqe : dim::CqPeriodMode::kEqe;
  // Index 0 like the drivers (dim-spec 2: zeroed struct dim).
  // The device's table (dev.profiles) maps indexes to values; DIM itself only moves indexes.
  dim::NetDim fresh(mode, dim::Direction::kRx, 0);
  fresh.carry_totals(slot.dim);
  slot.dim = fresh;
  slot.flags |= QueueSlot::kDimOn;
}

// Inlined into step()'s loop: it runs once per queue and period. The common path (a window
// still short of 64 events, the same device) is a continuity check, the event delta, the DIM
// window test and the combiner; everything else is out of line, so the loop keeps its values in
// registers.
// One pass over the snapshot's queues; returns how many were fed (fewer than all on a broken
// source). kModel: some device runs the cost model, so its queues' previous packet counts are
// kept for it. Without, the loop is exactly what it is without the model; a model queue it still
// meets (a device created in this very pass) skips the model for this period.
// Aligned: where the loop falls in the text moved the busy step by 5 % on this machine when
// unrelated functions before it changed (docs/benchmarks/controller.md, "Shared cores").
template <bool kModel>
[[gnu::aligned(64)]] size_t Controller::feed_queues(const seam::Snapshot& snap, FeedCursor& cursor,
                                                    bool time_backwards) {
  QueueSlot* slots = queues_.slots.data();
  const seam::QueueCounters* const counters = snap.queues.data();
  const size_t n_queues = snap.queues.size();
  // The cursor in locals: the loop's out-of-line calls would otherwise make the compiler reload
  // it from the caller's frame for every queue.
  FeedCursor cur = cursor;
  for (size_t i = 0; i < n_queues; ++i) {
    // The slot's first line and the one after it (where a decision starts), the snapshot, a few
    // queues ahead. Past the end too: a prefetch never faults, and the addresses are computed as
    // integers, so no pointer leaves its array.
    const uintptr_t ahead_slot =
        reinterpret_cast<uintptr_t>(slots) + (i + kPrefetchAhead) * sizeof(QueueSlot);
    __builtin_prefetch(reinterpret_cast<const void*>(ahead_slot), 1);
    __builtin_prefetch(reinterpret_cast<const void*>(ahead_slot + 64), 1);
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(counters) +
                                                     (i + kPrefetchAhead) * sizeof(*counters)));
    if (!same_key(slots[i].key, counters[i].key)) [[unlikely]] {
      reconcile_queues(snap);
      slots = queues_.slots.data();
    }
    if (!feed_queue<kModel>(slots[i], static_cast<uint32_t>(i), counters[i], cur, snap.time_ns,
                            time_backwards)) [[unlikely]] {
      cursor = cur;
      return i;
    }
  }
  cursor = cur;
  return n_queues;
}

template <bool kModel>
[[gnu::always_inline]] inline bool Controller::feed_queue(QueueSlot& slot, uint32_t index,
                                                          const seam::QueueCounters& q,
                                                          FeedCursor& cursor, int64_t now_ns,
                                                          bool time_backwards) {
  // Within one snapshot the queues of an ifindex share one device_ix (seam::Snapshot): the
  // device is looked up where the index changes from the previous queue, not once per queue.
  // Keyed on the index rather than the ifindex, the same compare also covers every queue's
  // index, so one outside the name table is caught before anything reads the table with it.
  if (q.device_ix != cursor.device_ix || cursor.dev == nullptr) [[unlikely]] {
    if (q.device_ix >= cursor.n_names) [[unlikely]]
      return false;
    const std::string& name = cursor.names[q.device_ix];
    // Usually the device this queue had last period (a slot's device outlives it: devices are
    // retired only when no queue of theirs is left).
    cursor.dev = slot.dev != nullptr && slot.dev->name == name ? slot.dev : &net_device_named(name);
    cursor.device_ix = q.device_ix;
    cursor.dev->seen = true;
  }
  NetDevice& dev = *cursor.dev;
  if (slot.binding != dev.binding) [[unlikely]]
    bind(slot, dev);
  // The cost model also needs the period's packets, of its queues and of every queue on a CPU
  // one of its queues is on; advance() overwrites the previous count, so it is kept first.
  uint64_t prev_packets = 0, prev_polls = 0, prev_exhausted = 0;
  if constexpr (kModel) {
    prev_packets = slot.prev.packets;
    prev_polls = slot.prev.polls;
    prev_exhausted = slot.prev.budget_exhausted;
  }
  const QueueDelta d = advance(slot.prev, (slot.flags & QueueSlot::kHasBytes) != 0, q);
  // A discontinuity or time going backwards restarts the DIM window and the view's rate.
  const bool reset = time_backwards | d.discontinuity;
  if (reset) [[unlikely]] {
    slot.flags = static_cast<uint8_t>((slot.flags & ~QueueSlot::kHasBytes) |
                                      (q.has_bytes ? QueueSlot::kHasBytes : 0));
    slot.rate_base_valid = false;
  }
  const uint64_t d_events = time_backwards ? 0 : d.events;
  if constexpr (kModel) {
    if (!reset && q.cpu != seam::QueueCounters::kNoCpu) {
      cores_.add_load(q.cpu, steps_.count(), q.packets - prev_packets, d_events,
                      q.polls - prev_polls, q.budget_exhausted - prev_exhausted);
    }
  }
  bool pending = false;
  // NetDim::keeps_measuring() on the slot's copy of the window start: a window still short of
  // 64 events leaves DIM untouched.
  const bool window_stays_open =
      (slot.flags & QueueSlot::kWindowOpen) != 0 && !reset &&
      dim::NetDim::window_short(static_cast<uint16_t>(q.events()), slot.window_start);
  // The sample's u16 event and u32 byte counters, as DIM takes them (not read on the model's path).
  const auto events = [&q] { return static_cast<uint16_t>(q.events()); };
  const auto bytes = [&q] { return static_cast<uint32_t>(q.has_bytes ? q.bytes : 0); };
  if (!window_stays_open) [[unlikely]] {
    if ((slot.flags & QueueSlot::kWindowOpen) != 0 && !reset) {
      // The common case, tested first: an open window of 64 or more events closes (one
      // out-of-line call, the outcome in a register). kWindowOpen is only set where DIM runs
      // without the model, and never on an instance waiting for its profile.
      const dim::NetDim::Outcome o = slot.dim.close_window(now_ns, static_cast<uint32_t>(q.packets),
                                                           bytes(), events(), queues_.rate_div);
      slot.wanted = o.profile_ix();
      if (o.changed()) {
        slot.flags &= static_cast<uint8_t>(~QueueSlot::kWindowOpen);
        pending = true;
      } else if (o.new_window()) {
        slot.window_start = events();
      }
    } else if (slot.model_on()) [[unlikely]] {
      if constexpr (kModel) {
        // Decided in model_pass(), once every queue's packets on its CPU are known; combined
        // and listed there too.
        queues_.model_work.push_back(
            {index, q.cpu, reset, &dev, d_events, q.packets - prev_packets});
        return true;
      }
      pending = feed_model(slot, dev, q, d_events, q.packets - prev_packets, kModel, now_ns, reset);
    } else if (slot.dim_on()) {
      // A pending instance never has its window open: last step's release comes first, as if
      // it had been carried out at the end of that step (feed_model() does the same).
      if (slot.release_pending()) [[unlikely]]
        slot.settle_release(dev.released);
      // A window starts (the profile of last period's change was applied: a few stores). A
      // discontinuity, or an instance waiting for its profile, goes through feed_dim().
      if (reset) [[unlikely]] {
        pending = feed_dim<false>(slot, q, now_ns, reset);
      } else if (slot.dim.start_window(
                     dim::Sample::from_counters(now_ns, events(), q.packets, bytes()))) {
        slot.wanted = slot.dim.profile_ix();
        slot.flags |= QueueSlot::kWindowOpen;
        slot.window_start = events();
      } else {
        pending = feed_dim<false>(slot, q, now_ns, reset);
      }
    } else {
      slot.set_wanted(static_wish(dev.policy));
    }
  }
  if (dev.per_queue) [[unlikely]] {
    queues_.per_queue.push_back(index);
  } else {
    if (slot.wanted != QueueSlot::kNoWish) dev.combiner.add(q.key, slot.wanted, d_events);
    if (pending) [[unlikely]]
      slot.flags |= QueueSlot::kReleasePending;
  }
  return true;
}

// A queue seen on another device than last period (new, or renamed: another policy, a fresh
// DIM), or whose device's policy changed (a fresh DIM too).
[[gnu::noinline]] void Controller::bind(QueueSlot& slot, NetDevice& dev) {
  if (slot.dev != &dev) {
    slot.dev = &dev;
    slot.apply.reset();
  }
  ensure_dim(slot, dev);
  slot.binding = dev.binding;
  // The kernel's compare reads bytes first and, with none on either side, answers SAME before it
  // looks at packets or events: DIM turns at index 0 and parks there for good (dim/SPEC.md 5).
  if (slot.dim_on() && (slot.flags & QueueSlot::kHasBytes) == 0 && !dev.warned_no_bytes &&
      may_write(dev)) [[unlikely]] {
    dev.warned_no_bytes = true;
    spdlog::warn(
        "{}: net DIM compares byte rates first and this device reports no bytes (no netdev "
        "qstats from driver '{}'): DIM will stay at profile 0; name it in collectors.skb_bytes "
        "for the per-packet byte counter",
        dev.name, dev.driver);
  }
}

// A sample that may close the DIM window (or follows a discontinuity): one net_dim() call and
// its bookkeeping. Out of line, so the per-queue loop stays small. Returns whether the instance
// now waits for profile_applied(). kWithModel: the queue runs the cost model too (compare).
// Flattened: the kernel-exact decision (NetDim::feed, inline) is compiled into this one call.
template <bool kWithModel>
[[gnu::noinline, gnu::flatten]] bool Controller::feed_dim(QueueSlot& slot,
                                                          const seam::QueueCounters& q,
                                                          int64_t now_ns, bool reset) {
  dim::NetDim& dim = slot.dim;
  // A discontinuity restarts the window at this sample (dim-spec N12); tuning state stays.
  if (reset) dim.restart_window();
  // Without a byte counter bytes stay 0: bpms is 0 on both sides, compare falls to ppms.
  // feed() is on_sample() without its window test (the caller's copy of the window start
  // already said the window may close); the instance counts its verdicts and changes.
  dim.feed(dim::Sample::from_counters(now_ns, q.events(), q.packets, q.has_bytes ? q.bytes : 0),
           &queues_.rate_div);
  if (kWithModel && slot.model_primary()) {
    // DIM only compared: nothing is written for it, so its profile is applied at once (the
    // virtual apply of shadow mode) and the queue's wish stays the model's.
    dim.profile_applied();
    slot.sync_window<kWithModel>();
    return false;
  }
  slot.wanted = dim.profile_ix();
  slot.sync_window<kWithModel>();
  return dim.state() == dim::MeasureState::kApplyNewProfile;
}

// A queue running the cost model (every period: the model decides per period, not per window),
// and the compared DIM when its window may close. Out of line, like feed_dim(). Returns whether
// DIM, as the algorithm, now waits for profile_applied().
[[gnu::noinline]] bool Controller::feed_model(QueueSlot& slot, NetDevice& dev,
                                              const seam::QueueCounters& q, uint64_t d_events,
                                              uint64_t d_packets, bool have_packets, int64_t now_ns,
                                              bool reset, const dim::ModelTable* table) {
  // Only a compared DIM that is the algorithm can be pending (see feed_queue()).
  if (slot.release_pending()) [[unlikely]]
    slot.settle_release(dev.released);
  bool pending = false;
  const bool window_stays_open =
      (slot.flags & QueueSlot::kDimWindow) != 0 && !reset &&
      dim::NetDim::window_short(static_cast<uint16_t>(q.events()), slot.window_start);
  if (slot.dim_on() && !window_stays_open) pending = feed_dim<true>(slot, q, now_ns, reset);
  // A discontinuity or time going backwards leaves no usable delta: the model skips the period.
  if (!reset && have_packets) {
    slot.model.update(table != nullptr ? *table : *shared_table(dev, slot.share_level),
                      {steps_.step_dt_ns(), d_events, d_packets});
  }
  // Nothing is written for a queue before it has carried traffic: the first step after a start
  // (or a new queue) has no deltas, and the latency profile written blind would take a busy
  // queue's moderation away for the periods the model needs to measure it.
  if (slot.model_primary()) slot.set_wanted(slot.model.wish());
  return pending;
}

// The model queues of this step (feed_queue() left them here): each judged with the queues that
// share its CPU, the core its NAPI polls on (QueueCounters::cpu), as CQs are with their
// completion vector: sharers = the CPU's packets this period / the queue's own.
void Controller::model_pass(const seam::Snapshot& snap, int64_t now_ns) {
  // The cores first: their costs and saturation state are what this period's picks use.
  cores_.measure(
      snap, steps_.step_dt_ns(), steps_.count(),
      [this](const CorePick& pick, dim::SaturationInput& in) { probe_counts(pick, in); });
  bool per_queue = false;
  const size_t n = queues_.model_work.size();
  CorePick* const picks = cores_.picks().data();
  const size_t n_cores = cores_.picks().size();
  for (size_t k = 0; k < n; ++k) {
    // The slots left the cache since the per-queue pass: their first line and the model's (the
    // fourth), a few queues ahead. The snapshot entry is read only where DIM is compared.
    if (k + kPrefetchAhead < n) {
      const auto* line = reinterpret_cast<const char*>(
          &queues_.slots[queues_.model_work[k + kPrefetchAhead].index]);
      __builtin_prefetch(line, 1);
      __builtin_prefetch(line + 192, 1);
    }
    const ModelWork& w = queues_.model_work[k];
    QueueSlot& slot = queues_.slots[w.index];
    const seam::QueueCounters& q = snap.queues[w.index];
    NetDevice& dev = *w.dev;
    slot.share_level = 0;
    // A queue with packets this step stamped its CPU's sum (CoreCosts::add_load()).
    if (!w.reset && dev.policy.model.shared_load && w.cpu != seam::QueueCounters::kNoCpu &&
        w.d_packets > 0) {
      slot.share_level = share_level(static_cast<double>(cores_.load(w.cpu).packets),
                                     static_cast<double>(w.d_packets));
    }
    // Without CPU times (no cores) the path is the one before per-core costs, bit for bit.
    CorePick* const core = w.cpu < n_cores ? &picks[w.cpu] : nullptr;
    const bool pending = feed_model(slot, dev, q, w.d_events, w.d_packets, true, now_ns, w.reset,
                                    core != nullptr && core->bucket != CorePick::kNoBucket
                                        ? core_table(dev, slot.share_level, core->bucket).get()
                                        : nullptr);
    if (core != nullptr && !w.reset && slot.model_primary()) {
      // The busiest model queue speaks for the core's latency objective next period.
      if (w.d_packets > 0) {
        core->offer(static_cast<uint32_t>(steps_.count()), w.d_packets, w.index, slot.share_level,
                    false);
      }
      // A saturated core: its queues follow the throughput objective (SaturationPolicy), within
      // their table's bounds.
      if (core->saturated_wish && slot.model.measured()) [[unlikely]] {
        const dim::ModelTable& t = *core_table(dev, slot.share_level, core->bucket);
        slot.wanted = std::clamp(core->wish, t.min_ix(), t.max_ix());
      }
      if (dev.napi && !core->saturated_wish) [[unlikely]]
        cost_probe(slot, dev, w.index, w.cpu, w.d_events, w.d_packets, now_ns);
      if (core->probe && !core->probe_cq && core->probe_index == w.index) [[unlikely]] {
        const dim::ModelTable& t = *core_table(dev, slot.share_level, core->bucket);
        slot.wanted = std::clamp(core->probe_wish, t.min_ix(), t.max_ix());
      }
    }
    if (dev.per_queue) {
      queues_.per_queue.push_back(w.index);
      per_queue = true;
      continue;
    }
    if (slot.wanted != QueueSlot::kNoWish) dev.combiner.add(slot.key, slot.wanted, w.d_events);
    if (pending) slot.flags |= QueueSlot::kReleasePending;
  }
  // Per-queue writes go in queue order, as without the model.
  if (per_queue) std::sort(queues_.per_queue.begin(), queues_.per_queue.end());
  queues_.model_work.clear();
}

// The cost probe. Unmoderated, a veth NAPI polls once per packet (the sender wakes it for every
// packet), so no period shows what a poll costs apart from a packet, and the core's estimator
// folds both into the packet (CostEstimator: no spread). Most of a software-moderated poll's cost
// is not even on that core's IRQ and softirq time (dim/poll_cost.h). So one queue of the device
// is moved, now and then, to the profile that batches most within the budget, and the host's
// busy time per packet there is compared with the periods at the latency profile
// (dim::PollCostProbe). Bounded: only under the efficiency objective with measured costs (none
// given in the config), only from the latency profile, only to a profile whose added delay is
// predicted within the budget at this rate (the delay does not depend on the costs being
// learned), for kCostProbeNs (long enough to outweigh the periods a write takes to show),
// kCostProbeEveryNs apart, at most kMaxCostProbes times, each taking two changes (up and back)
// from the queue's change budget. Once PollCostProbe has its pairs, the device's model is built
// with those costs (as if given in the config, until a reload) and the probes end.
namespace {
constexpr int64_t kCostProbeNs = 1'500'000'000;
constexpr int64_t kCostProbeEveryNs = 3'000'000'000;
constexpr uint8_t kMaxCostProbes = 8;
}  // namespace

void Controller::cost_probe(QueueSlot& slot, NetDevice& dev, uint32_t index, uint16_t cpu,
                            uint64_t d_polls, uint64_t d_packets, int64_t now_ns) {
  seam::ModelSettings& ms = dev.policy.model;
  if (ms.objective != dim::Objective::kEfficiency || !ms.measured_costs || ms.completion_cost_set ||
      ms.interrupt_cost_set || !slot.model.measured() || steps_.step_dt_ns() <= 0) {
    return;
  }
  if (!dev.probe) dev.probe = std::make_unique<NetDevice::CostProbe>();
  NetDevice::CostProbe& pr = *dev.probe;
  if (pr.queue == UINT32_MAX) pr.queue = index;
  if (pr.queue != index) return;
  const dim::ModelTable& t = *shared_table(dev, slot.share_level);
  const uint8_t from = t.latency_ix();
  // The period just measured ran at the profile written last (applied_ix); one right after a
  // change mixes two settings and is left out.
  if (slot.applied_ix == pr.last_ix && d_packets > 0 && !cores_.empty()) {
    double busy = 0;
    for (size_t c = 0; c < cores_.size(); ++c) busy += cores_.state(c).busy;
    const dim::PollCostPeriod period{busy * static_cast<double>(steps_.step_dt_ns()), d_polls,
                                     d_packets};
    if (slot.applied_ix == from && !pr.active) pr.costs.base(period);
    if (pr.active && slot.applied_ix == pr.ix) pr.costs.probe(period);
  }
  pr.last_ix = slot.applied_ix;
  if (pr.active && now_ns < pr.until_ns) {
    slot.wanted = pr.ix;  // held through periods without packets too
    return;
  }
  if (pr.active) {
    pr.active = false;
    pr.costs.close_pair();
    if (const auto costs = pr.costs.costs()) {
      // The poll's cost is the host's; a packet's is the polling core's (the estimator's), as
      // the model's utilisation is that core's: the host's busy time per packet holds every
      // core's other work too (a spinning sender's, for one).
      const double per_packet = cpu < cores_.size() ? cores_.state(cpu).est.estimate().completion_ns
                                                    : static_cast<double>(ms.completion_cost_ns);
      ms.completion_cost_ns = std::llround(per_packet);
      ms.interrupt_cost_ns = std::llround(costs->poll_ns);
      ms.completion_cost_set = ms.interrupt_cost_set = true;
      dev.shared_tables = {};
      dev.model_table = shared_table(dev, 0);
      spdlog::info(
          "{}: measured by probing: a poll costs {:.1f} us of host CPU (a packet {:.1f} us of the "
          "host, {:.1f} us of its core): the model's costs until a reload",
          dev.name, costs->poll_ns / 1000, costs->completion_ns / 1000, per_packet / 1000);
      return;
    }
  }
  if (d_packets == 0 || pr.probes >= kMaxCostProbes || now_ns < pr.next_ns ||
      slot.model.profile_ix() != from || from >= t.max_ix()) {
    return;
  }
  const double rate =
      static_cast<double>(d_packets) * 1e9 / static_cast<double>(steps_.step_dt_ns());
  uint8_t to = from;
  for (auto ix = static_cast<uint8_t>(from + 1); ix <= t.max_ix(); ++ix) {
    if (t.prediction(ix, rate).added_delay_ns <= static_cast<double>(ms.latency_budget_ns)) to = ix;
  }
  if (to == from || !slot.model.take_changes(2)) return;
  pr.active = true;
  pr.until_ns = now_ns + kCostProbeNs;
  pr.next_ns = pr.until_ns + kCostProbeEveryNs;
  pr.ix = to;
  ++pr.probes;
  slot.wanted = to;
}

// The write path of a queue on a device with per-queue coalescing (device-wide devices are
// written once, in decide_device()).
void Controller::apply_queue(QueueSlot& slot, NetDevice& dev, const seam::QueueCounters& q,
                             int64_t now_ns) {
  if (!slot.apply) slot.apply = std::make_unique<Apply>();
  Apply& apply = *slot.apply;
  bool release = true;
  if (dev.napi) [[unlikely]] {
    // Method napi: every NAPI is a write target of its own, no queue index needed.
    bool napi_release = true;
    if (const auto wanted = slot.wanted_ix()) {
      const uint8_t ix = clamp_profile(*wanted, dev.policy, dim::kNetNumProfiles);
      slot.applied_ix = ix;
      napi_release = write_napi(q.key, dev, ix, now_ns) != WriteResult::kRateLimited;
    } else {
      slot.applied_ix = 0;
    }
    if (slot.dim_on() && napi_release && slot.dim.state() == dim::MeasureState::kApplyNewProfile) {
      slot.dim.profile_applied();
    }
    return;
  }
  if (const auto wanted = slot.wanted_ix()) {
    const uint8_t ix = clamp_profile(*wanted, dev.policy, dim::kNetNumProfiles);
    slot.applied_ix = ix;
    if (q.queue < 0) {
      const seam::Coalesce& reported =
          apply.current ? *apply.current
                        : (dev.apply.current ? *dev.apply.current : assumed_reported());
      apply.wanted = net_target(dev.profiles[ix], cqe_table(dev.policy, dev.found_cqe_mode),
                                reported, dev.driver);
      if (may_write(dev)) {
        set_error(dev, fmt::format("napi {} has no queue index: not written", q.key.napi_id));
      }
    } else {
      const WriteResult r =
          write_net(dev, apply, static_cast<uint32_t>(q.queue), dev.profiles[ix], now_ns);
      release = r != WriteResult::kRateLimited;
    }
  } else {
    slot.applied_ix = 0;
    apply.wanted.reset();
  }
  if (q.queue >= 0 && (dev.rep_queue < 0 || q.queue < dev.rep_queue)) {
    dev.rep_queue = q.queue;
    dev.rep_wanted = apply.wanted;
    dev.rep_current = apply.current ? apply.current : dev.apply.current;
  }
  if (slot.dim_on() && release && slot.dim.state() == dim::MeasureState::kApplyNewProfile) {
    slot.dim.profile_applied();
  }
}

// step() (controller.cc) runs the loop with and without the model's bookkeeping.
template size_t Controller::feed_queues<false>(const seam::Snapshot& snap, FeedCursor& cursor,
                                               bool time_backwards);
template size_t Controller::feed_queues<true>(const seam::Snapshot& snap, FeedCursor& cursor,
                                              bool time_backwards);

}  // namespace dimctl::controller
