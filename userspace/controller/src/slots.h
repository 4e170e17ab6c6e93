// Controller's private state, one struct per thing it keeps: a recorded original, a write
// target, a net or RDMA device, a queue's or CQ's slot, the cost-model tables; and the helpers
// every part of the controller computes them with. Private to dimctl::controller (src/, not
// installed): controller.h only declares these structs, so that the daemon's includes do not
// depend on their layout.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dim/cost_estimator.h"
#include "dim/model_policy.h"
#include "dim/net_dim.h"
#include "dim/poll_cost.h"
#include "dim/profile.h"
#include "dim/rdma_dim.h"
#include "dim/saturation.h"
#include "dimctl/controller/combine.h"
#include "dimctl/controller/controller.h"
#include "dimctl/controller/discontinuity.h"
#include "dimctl/controller/wish_budget.h"
#include "policy_predicates.h"

namespace dimctl::controller {

// Write-side state of one coalesce target: a device, or a queue on per-queue devices.
struct Controller::Apply {
  std::optional<seam::Coalesce> current;  // what the device holds (GET, SET read-back, NTF)
  std::optional<seam::Coalesce> wanted;   // what DIM wants now (exported as `requested`)
  std::optional<seam::Coalesce> target;   // what we last wrote successfully
};

// Fields a device is assumed to report before its first GET succeeded (export only).
inline seam::Coalesce assumed_reported() {
  seam::Coalesce c;
  c.rx_usecs = 0;
  c.rx_max_frames = 0;
  return c;
}

inline double per_second(uint64_t delta, double dt_s) {
  return dt_s > 0 ? static_cast<double>(delta) / dt_s : 0.0;
}

// The sharers a queue's or CQ's load is judged with, rounded to the nearest of these (by ratio: the
// boundary between two levels is their geometric mean), so that the noise of k CQs alike
// (k ± 10 %) stays on level k. One table per level and device (about 0.2 ms to build each), so
// levels are few.
inline constexpr std::array<double, 8> kShareLevels = {1, 2, 3, 4, 6, 8, 12, 16};

// The level of sharers = total / own, without a division (the model's queues take this once per
// period each): total² >= L_i·L_(i+1)·own².
inline uint8_t share_level(double total, double own) {
  if (!(total > own)) return 0;  // alone (or nothing measured)
  const double t2 = total * total, o2 = own * own;
  size_t level = 0;
  while (level + 1 < kShareLevels.size() &&
         t2 >= kShareLevels[level] * kShareLevels[level + 1] * o2) {
    ++level;
  }
  return static_cast<uint8_t>(level);
}

struct Controller::NetDevice {
  std::string name;
  std::string driver;
  seam::DevicePolicy policy;
  // Unique among all devices and their policies: a new value whenever the DIM instances must be
  // re-created (first policy, a changed mode, algorithm or profile table). A queue bound to this
  // device under its current policy holds the same value (QueueSlot::binding).
  uint32_t binding = 0;
  dim::NetProfiles profiles{};
  std::shared_ptr<const dim::ModelTable> model_table;  // when the cost model runs
  // By share level (kShareLevels), built when a queue first needs one; [0] is model_table.
  std::array<std::shared_ptr<const dim::ModelTable>, kShareLevels.size()> shared_tables;
  // With measured costs: by cost bucket (CoreCosts::bucket_costs()) and share level, built when
  // a queue first needs one, for the model_table they were built beside (`cost_base`: a refreshed
  // policy has another, and the tables are dropped).
  std::shared_ptr<const dim::ModelTable> cost_base;
  std::vector<std::array<std::shared_ptr<const dim::ModelTable>, kShareLevels.size()>> cost_tables;
  bool per_queue = false;  // per-queue write path: ethtool_per_queue or method napi
  bool ethtool_per_queue = false;
  // The driver implements rx coalescing (its COALESCE_GET answered with rx-usecs or rx-frames):
  // method auto picks ethtool. False for veth, ifb, bridges, tunnels: nothing to write with
  // ethtool, which is no error unless the device is to be written (`no_coalescing` says why).
  bool ethtool_coalescing = true;
  std::string no_coalescing;
  // Its first COALESCE_GET reported use_cqe_mode_rx on: the mode the model keeps.
  bool found_cqe_mode = false;
  bool napi = false;  // written with method napi: each NAPI its own target (napi_write.cc)
  // Net DIM runs on a queue of this device that reports no bytes: logged once (bind()).
  bool warned_no_bytes = false;
  // The cost probe of a software-moderated device under the efficiency objective
  // (Controller::cost_probe()): one queue moves to `ix` until `until_ns`, at most kMaxCostProbes
  // times, and the host's busy time per packet in those periods against the periods at the
  // latency profile measures what a poll costs.
  struct CostProbe {
    dim::PollCostProbe costs;
    int64_t until_ns = 0, next_ns = 0;
    uint32_t queue = UINT32_MAX;  // the slot probed and measured
    uint8_t ix = 0;               // the profile it takes
    uint8_t last_ix = 0xff;       // the profile in force the period before (transitions skipped)
    uint8_t probes = 0;
    bool active = false;
  };
  std::unique_ptr<CostProbe> probe;  // made on first use
  bool seen = false;                 // has a queue in this snapshot
  bool listed = false;  // in the device inventory (ControllerOptions::list_net_devices)

  Apply apply;                                       // device-wide path
  std::map<uint32_t, seam::Coalesce> queue_applied;  // per-queue path: read-back per queue
  std::vector<seam::Coalesce> recent;                // read-backs since the last drain
  seam::Coalesce touched;                            // fields we ever sent (drift compare)
  std::optional<int64_t> last_attempt_ns;
  bool attempted_this_step = false;

  // Per step.
  ProfileCombiner combiner;
  std::optional<seam::QueueKey> busiest;
  std::optional<uint8_t> combined_ix;
  // Pending DIM instances get profile_applied() this step (decide_device: not when the write was
  // rate-limited). Carried out lazily (QueueSlot::kReleasePending): at the next view or the next
  // feed of the queue, whichever comes first; the feed reads the value of the step before it from
  // `released`.
  bool release = true;
  bool released = true;
  int32_t rep_queue = -1;  // per-queue path: lowest queue index, represents the device
  std::optional<seam::Coalesce> rep_wanted, rep_current;

  uint64_t applies_ok = 0, applies_failed = 0, applies_rate_limited = 0, drift_total = 0;
  bool drifted = false;
  std::string last_error;
};

struct Controller::RdmaDevice {
  std::string name;
  seam::DevicePolicy policy;
  std::shared_ptr<const dim::ModelTable> model_table;  // when the cost model runs
  // By share level (kShareLevels), built when a CQ first needs one; [0] is model_table.
  std::array<std::shared_ptr<const dim::ModelTable>, kShareLevels.size()> shared_tables;
  // With measured costs, as NetDevice's.
  std::shared_ptr<const dim::ModelTable> cost_base;
  std::vector<std::array<std::shared_ptr<const dim::ModelTable>, kShareLevels.size()>> cost_tables;
  uint32_t generation = 1;
  bool listed = false;  // reported by RdmaDimSwitch::list() this step
  bool has_cqs = false;
  std::optional<bool> dim_enabled;  // kernel switch as last read
  std::optional<bool> last_set;     // what we set (read back)
  std::optional<int64_t> last_attempt_ns;
  uint64_t applies_ok = 0, applies_failed = 0, applies_rate_limited = 0, drift_total = 0;
  bool drifted = false;
  std::string last_error;
};

// Per-queue state, four cache lines, aligned to a line: at 10k queues the step is bound by the
// lines it pulls in, so the layout matters more than the arithmetic.
//  - Line 0: everything a period reads and writes for a queue whose DIM window stays open (most
//    queues in most periods).
//  - Line 1: what a DIM decision reads and writes (the instance's first 64 bytes: its window,
//    tuning state, rates and small counters). Line 2: the rest of the instance (the totals its
//    counters fold into every 255 windows) and the device.
//  - Line 3: publish-time and per-queue-write state, and the cost model's state: a queue running
//    the model touches lines 0 and 3 every period (lines 1-2 too when DIM is compared).
struct alignas(64) Controller::QueueSlot {
  static constexpr uint8_t kHasBytes = 1;  // the queue has a byte counter (continuity)
  static constexpr uint8_t kDimOn = 2;     // `dim` runs
  // dim's window is open and starts at window_start; never set while the model runs, so such
  // queues leave the per-queue fast path every period.
  static constexpr uint8_t kWindowOpen = 4;
  static constexpr uint8_t kModelOn = 8;        // `model` runs
  static constexpr uint8_t kModelPrimary = 16;  // the model is the algorithm (DIM: comparison)
  // dim's window is open and starts at window_start, whether or not the model runs: what the
  // model's path tests instead of kWindowOpen, without touching dim's cache lines.
  static constexpr uint8_t kDimWindow = 32;
  // dim waits for profile_applied() since the last step that fed it, and that step's device
  // decision (NetDevice::release) says whether it gets it. Carried out at the queue's next view
  // (same step) or next feed (NetDevice::released), where the slot's lines are loaded anyway,
  // rather than in a pass of its own after the decisions, by when they have left the cache.
  static constexpr uint8_t kReleasePending = 64;
  static constexpr uint8_t kNoWish = 0xff;

  // Line 0.
  seam::QueueKey key;
  QueueCounts prev;          // counters of the previous snapshot (a new queue: the current ones)
  uint32_t binding = 0;      // == dev->binding while bound to that device under its current policy
  uint8_t flags = 0;         // kHasBytes | kDimOn | kWindowOpen
  uint8_t wanted = kNoWish;  // the profile index this queue asks for, or kNoWish
  // A copy of dim.window_start().event_ctr while kWindowOpen: with it the window test
  // (NetDim::keeps_measuring) needs nothing from the DIM instance.
  uint16_t window_start = 0;

  // Lines 1-2. The instance's verdict and change totals carry over when it is re-created.
  dim::NetDim dim;
  NetDevice* dev = nullptr;

  // Line 3.
  uint8_t applied_ix = 0;   // per-queue devices; device-wide ones use the device's combined_ix
  uint8_t share_level = 0;  // kShareLevels index the model judged this period's load with
  // The view's rates are averages since the last publish (no per-period delta is stored): the
  // counters at the last view (Controller::queues_.view_time_ns), and whether they are one series
  // with the current ones.
  bool rate_base_valid = false;
  uint64_t rate_base_events = 0, rate_base_packets = 0, rate_base_polls = 0;
  std::unique_ptr<Apply> apply;  // per-queue path only
  dim::ModelPolicy model;        // while kModelOn

  bool dim_on() const { return (flags & kDimOn) != 0; }
  bool model_on() const { return (flags & kModelOn) != 0; }
  bool model_primary() const { return (flags & kModelPrimary) != 0; }
  bool release_pending() const { return (flags & kReleasePending) != 0; }
  std::optional<uint8_t> wanted_ix() const {
    return wanted == kNoWish ? std::nullopt : std::optional<uint8_t>(wanted);
  }
  void set_wanted(std::optional<uint8_t> ix) { wanted = ix.value_or(kNoWish); }
  // The pending release (kReleasePending), granted or not by the device's decision.
  void settle_release(bool granted) {
    flags &= static_cast<uint8_t>(~kReleasePending);
    if (granted) dim.profile_applied();
  }
  // After any call into `dim`: keep the copy of its window start. kWithModel: the model runs
  // too, so the window is marked for its path (kDimWindow), not for the fast path.
  template <bool kWithModel>
  void sync_window() {
    if (dim.state() == dim::MeasureState::kMeasureInProgress) {
      flags |= kWithModel ? kDimWindow : kWindowOpen;
      window_start = dim.window_start().event_ctr;
    } else {
      flags &= static_cast<uint8_t>(~(kWindowOpen | kDimWindow));
    }
  }
};

struct Controller::CqSlot {
  seam::CqKey key;
  RdmaDevice* dev = nullptr;
  uint32_t generation = 0;
  std::optional<dim::RdmaDim> dim;
  std::optional<dim::ModelPolicy> model;
  bool model_primary = false;  // the model is the algorithm (dim, if any, is the comparison)
  bool have_prev = false;
  size_t prev_pos = 0;
  double cps = 0, eps = 0;
  // This period (measure_cq()): the deltas, and whether they are usable (a previous snapshot
  // and no discontinuity); `reset` is a discontinuity or time going backwards.
  uint64_t d_events = 0, d_comps = 0, d_schedules = 0, d_exhausted = 0;
  bool fresh = false, reset = false;
  uint8_t share_level = 0;  // kShareLevels index the model judged this period's load with
  std::optional<uint8_t> wanted_ix;
  uint8_t applied_ix = 0;
  uint64_t verdicts[3] = {0, 0, 0};
  uint64_t changes = 0;
};

// Inline: a model queue or CQ asks for its table every period (net_queues.cc, rdma_cqs.cc),
// and a device's policy refresh for level 0 (devices.cc).
inline std::shared_ptr<const dim::ModelTable> Controller::device_table(
    const NetDevice& dev, const seam::DevicePolicy& policy, double sharers) {
  // Written per NAPI in software: the model weighs what is written (software_table()).
  if (dev.napi) {
    const dim::NetProfiles table = software_table(policy);
    return model_tables_.get(table, dim::ProfileCount::kPackets, dim::TimerMode::kDeferral, policy,
                             sharers);
  }
  return model_tables_.get(dev.profiles, dim::ProfileCount::kPackets,
                           cqe_table(dev.policy, dev.found_cqe_mode) ? dim::TimerMode::kIdleGap
                                                                     : dim::TimerMode::kRateLimit,
                           policy, sharers);
}

inline std::shared_ptr<const dim::ModelTable> Controller::device_table(
    const RdmaDevice&, const seam::DevicePolicy& policy, double sharers) {
  return model_tables_.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                           dim::TimerMode::kRateLimit, policy, sharers);
}

inline const std::shared_ptr<const dim::ModelTable>& Controller::shared_table(NetDevice& dev,
                                                                              uint8_t level) {
  std::shared_ptr<const dim::ModelTable>& t = dev.shared_tables[level];
  if (t == nullptr) t = device_table(dev, dev.policy, kShareLevels[level]);
  return t;
}

inline const std::shared_ptr<const dim::ModelTable>& Controller::shared_table(RdmaDevice& dev,
                                                                              uint8_t level) {
  std::shared_ptr<const dim::ModelTable>& t = dev.shared_tables[level];
  if (t == nullptr) t = device_table(dev, dev.policy, kShareLevels[level]);
  return t;
}

// Reorders `slots` to follow the snapshot (key_at(i) for i < n): a slot whose key is still there
// moves to its new position (kept(slot, old position)), a new key gets a fresh slot
// (fresh(slot, new position)), a key absent from the snapshot loses its slot. `index` (packed key
// -> position) is rebuilt. The same queue or CQ twice in one snapshot gets one slot with state and
// one fresh one.
template <typename Slot, typename KeyAt, typename Kept, typename Fresh>
void reorder_slots(std::vector<Slot>& slots, std::unordered_map<uint64_t, size_t>& index, size_t n,
                   KeyAt key_at, Kept kept, Fresh fresh) {
  std::vector<Slot> next;
  next.reserve(n);
  std::vector<bool> taken(slots.size(), false);
  for (size_t i = 0; i < n; ++i) {
    auto it = index.find(seam::packed(key_at(i)));
    if (it != index.end() && !taken[it->second]) {
      taken[it->second] = true;
      next.push_back(std::move(slots[it->second]));
      kept(next.back(), it->second);
    } else {
      next.emplace_back();
      next.back().key = key_at(i);
      fresh(next.back(), i);
    }
  }
  slots = std::move(next);
  index.clear();
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) index.emplace(seam::packed(slots[i].key), i);
}

}  // namespace dimctl::controller
