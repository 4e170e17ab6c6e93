// The control loop: construction, and step(), one period through the controller's parts in
// their order (net_queues.cc, devices.cc, net_write.cc, rdma_cqs.cc, publish.cc), with the
// device-wide decision it makes per net device.
#include "dimctl/controller/controller.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "dimctl/controller/coalesce_mapping.h"
#include "slots.h"

namespace dimctl::controller {

namespace {

// What state() gives before the first step: no view, the options' mode and config.
seam::ControllerState initial_state(const ControllerOptions& options) {
  seam::ControllerState st;
  st.default_mode = options.default_mode;
  st.config_path = options.config_path;
  return st;
}

}  // namespace

Controller::Controller(seam::CounterSource& source, seam::NetActuator& net,
                       seam::RdmaDimSwitch* rdma, seam::OriginalsStore& originals,
                       const seam::PolicySource& policy, const seam::Clock& clock,
                       ControllerOptions options)
    : Controller(source, net, rdma, nullptr, originals, policy, clock, std::move(options)) {}

Controller::Controller(seam::CounterSource& source, seam::NetActuator& net,
                       seam::RdmaDimSwitch* rdma, seam::NapiActuator* napi,
                       seam::OriginalsStore& originals, const seam::PolicySource& policy,
                       const seam::Clock& clock, ControllerOptions options)
    : io_{source, net, rdma, originals, policy, clock},
      options_(std::move(options)),
      inventory_(options_.list_net_devices, options_.inventory_interval_ns),
      napis_(napi, originals, options_.forget_gone_ns, options_.inventory_interval_ns,
             [this](const std::string& device, uint32_t id) {
               if (auto it = net_devices_.find(device); it != net_devices_.end()) {
                 napi_drift(*it->second, id);
               }
             }),
      publisher_(initial_state(options_)) {}

Controller::~Controller() = default;

Result<void> Controller::step() {
  const int64_t loop_start = io_.clock.now_ns();
  steps_.start();
  // The snapshot is a member: the source may update it in place (CounterSource::sample_into).
  auto sampled = io_.source.sample_into(snap_);
  if (!sampled) return reject_sample(std::move(sampled).error(), loop_start);
  const seam::Snapshot& snap = snap_;
  const int64_t now = io_.clock.now_ns();  // rate limits are on the controller's clock

  drain_changes();

  // Whether any device runs the cost model: only then does the per-queue loop keep what the
  // model needs (see feed_queues()).
  bool any_model = false;
  for (auto& [name, dev] : net_devices_) {
    any_model |= dev->model_table != nullptr;
    dev->seen = false;
    dev->listed = false;
    dev->attempted_this_step = false;
    dev->combiner = ProfileCombiner(dev->policy.combine, dev->busiest);
    dev->combined_ix.reset();
    dev->released = dev->release;
    dev->release = true;
    dev->rep_queue = -1;
    dev->rep_wanted.reset();
    dev->rep_current.reset();
  }
  for (auto& [name, dev] : rdma_devices_) {
    dev->has_cqs = false;
    dev->listed = false;
  }

  const StepClock::Period period = steps_.measure(snap.time_ns);
  const bool time_backwards = period.time_backwards;
  const double dt_s = period.dt_s;
  const int64_t prev_time = period.prev_time_ns;

  // RDMA counters first: the cores are measured in the model pass with the CQs' loads.
  reconcile_cqs(snap);
  for (size_t i = 0; i < cqs_.slots.size(); ++i) {
    measure_cq(cqs_.slots[i], snap.cqs[i], time_backwards ? -1.0 : dt_s);
  }
  add_cq_loads(snap);

  // Net: feed every queue (and the per-device combiners), decide per device, then write per
  // queue where the device has per-queue coalescing. The feed is the only pass over all queues
  // in a step that does not publish; the later passes visit just the queues that need them
  // (queues_.per_queue). Pending DIM instances are released where their slots are next loaded
  // (QueueSlot::kReleasePending).
  // Slots follow the snapshot's order. The common case (same queues, same order) is checked
  // while feeding, where the slot is loaded anyway; at the first difference the slots are
  // reordered by key (the ones fed so far keep their positions) and feeding goes on.
  // The loop works on local pointers: stores into the slots through byte-sized fields may alias
  // anything, and would otherwise make the compiler reload every member on every queue.
  queues_.per_queue.clear();
  if (queues_.slots.size() != snap.queues.size()) reconcile_queues(snap);
  FeedCursor cursor{.names = snap.devices.data(), .n_names = snap.devices.size()};
  const size_t fed = any_model ? feed_queues<true>(snap, cursor, time_backwards)
                               : feed_queues<false>(snap, cursor, time_backwards);
  model_pass(snap, snap.time_ns);
  if (fed != snap.queues.size()) [[unlikely]] {
    // A broken source. The queues fed so far keep their new counters and DIM state, which
    // the next snapshot continues from; nothing was decided or written yet, so an instance
    // that decided waits for its profile to be applied, as under a rate limit. The queues not
    // fed settle last step's releases now, since the next step reads this one's (none).
    for (size_t i = fed; i < queues_.slots.size(); ++i) {
      QueueSlot& slot = queues_.slots[i];
      if (slot.release_pending()) slot.settle_release(slot.dev->released);
    }
    for (auto& [name, dev] : net_devices_) dev->release = false;
    // The CQ slots follow this snapshot's order already (reconciled above): so do their
    // previous counters.
    cqs_.prev = snap.cqs;
    const seam::QueueCounters& q = snap.queues[fed];
    return reject_sample(DIMCTL_ERR(EINVAL,
                                    "napi {} of ifindex {}: device index {} outside the "
                                    "snapshot's {} device name(s)",
                                    q.key.napi_id, q.key.ifindex, q.device_ix, cursor.n_names),
                         loop_start);
  }
  steps_.set_ready();
  apply_inventory(loop_start);
  bool any_compare = false;
  for (auto& [name, dev] : net_devices_) {
    any_compare |= dev->model_table != nullptr && dev->policy.compare;
    if ((dev->seen || dev->listed) && !dev->per_queue) decide_device(*dev, now);
  }
  // Building the view is most of a period's cost at 10k queues; the daemon may publish less
  // often than it decides (publish_interval_ns).
  const bool publish_now = steps_.publish_due(loop_start, options_.publish_interval_ns);
  for (const uint32_t i : queues_.per_queue) {
    apply_queue(queues_.slots[i], *queues_.slots[i].dev, snap.queues[i], now);
  }
  // Method napi: no notifications exist, so what we wrote is read back now and then.
  if (napis_.check_due(now)) napis_.check_all(now);
  std::shared_ptr<seam::ControllerState> st;
  if (publish_now) {
    st = publisher_.acquire();
    st->queues.resize(queues_.slots.size());
    st->queue_comparisons.clear();
    // Rates since the last view (the last period when publishing every period).
    const double view_dt_s = snap.time_ns > queues_.view_time_ns
                                 ? static_cast<double>(snap.time_ns - queues_.view_time_ns) / 1e9
                                 : 0;
    for (size_t i = 0; i < queues_.slots.size(); ++i) {
      fill_queue_view(st->queues[i], queues_.slots[i], snap.queues[i],
                      snap.device_of(snap.queues[i]), view_dt_s);
    }
    // Only where some rule compares: a second pass over just those queues.
    if (any_compare) [[unlikely]] {
      for (size_t i = 0; i < queues_.slots.size(); ++i) {
        if (queues_.slots[i].model_on() && queues_.slots[i].dim_on()) {
          add_comparison(st->queue_comparisons, static_cast<uint32_t>(i), queues_.slots[i]);
        }
      }
    }
    queues_.view_time_ns = snap.time_ns;
  }
  for (auto& [name, dev] : net_devices_) {
    if (dev->attempted_this_step) dev->last_attempt_ns = now;
  }

  // RDMA (measured before the net queues: their cores' loads include the CQs').
  share_cq_load(snap);
  for (size_t i = 0; i < cqs_.slots.size(); ++i)
    feed_cq(cqs_.slots[i], snap.cqs[i], prev_time, snap.time_ns);
  if (!cores_.empty()) finish_cores();
  update_rdma_devices(now);
  retire_devices();

  if (publish_now) {
    st->time_ns = snap.time_ns;
    fill_cq_and_device_views(*st, snap);
    finish_publish(std::move(st), loop_start);
    steps_.published(loop_start);
  }
  steps_.accept(snap.time_ns);
  cqs_.prev = snap.cqs;
  return ok();
}

// A failed or unusable sample: the same view, updated loop counters.
Result<void> Controller::reject_sample(Error e, int64_t loop_start_ns) {
  steps_.sample_failed();
  auto st = publisher_.acquire_copy();
  finish_publish(std::move(st), loop_start_ns);
  return fail(std::move(e).wrap("taking a counter snapshot"));
}

// A device-wide device's decision, per period. Beside step(), which inlines it: a call per
// device and period otherwise (no LTO across the controller's files).
void Controller::decide_device(NetDevice& dev, int64_t now_ns) {
  const auto combined = dev.combiner.result();
  dev.busiest = dev.combiner.busiest();
  if (!combined) {
    dev.apply.wanted.reset();
    return;
  }
  const uint8_t ix = clamp_profile(*combined, dev.policy, dim::kNetNumProfiles);
  dev.combined_ix = ix;
  const WriteResult r = write_net(dev, dev.apply, std::nullopt, dev.profiles[ix], now_ns);
  // A rate-limited change keeps the instances pending (their samples are ignored, like the
  // kernel's while its work is queued) until it is written.
  dev.release = r != WriteResult::kRateLimited;
}

void Controller::set_reloadable_options(int64_t publish_interval_ns, seam::Mode default_mode) {
  options_.publish_interval_ns = publish_interval_ns;
  options_.default_mode = default_mode;
}

}  // namespace dimctl::controller
