// Controller: dimctl's control loop, one period per step():
//
//   sample → per RX queue one NetDim, per CQ one RdmaDim (kernel-exact, dim/), or per queue / CQ
//   one ModelPolicy (algorithm model; both when the rule compares them) → per device
//   combine (or per queue where the driver has per-queue coalescing) → policy bounds → mode
//   gate (observe / shadow / enforce + allowlist + conflicts) → drift check → rate limit →
//   record original → write → read back → publish an immutable ControllerState.
//
// Safety contract (docs/CONTROLLER.md):
//  - Only enforce-mode devices named by a config rule (allowlisted) and without a rule conflict
//    are ever written; everything else behaves like shadow mode.
//  - Before the first write to a device (or queue) its current settings are read and recorded
//    in the OriginalsStore; when recording fails nothing is written.
//  - Only fields the device reported are sent; mode fields only when they change.
//  - A device whose driver runs adaptive-rx is taken over (adaptive-rx off in the same write,
//    recorded and restored) only when the policy says take_over_adaptive, else left alone.
//  - Writes happen only when the wanted values change, at most once per rate_limit_ns.
//  - A coalesce change by someone else (ETHTOOL_MSG_COALESCE_NTF that does not match what we
//    applied) stops writes to that device for the life of the process (drift); DIM keeps running.
//  - restore() puts back every original this controller recorded.
//
// Shadow "virtual apply": where nothing is written (shadow, observe-capped devices, a refused or
// failed write) a DIM instance that asked for a new profile gets profile_applied() at once, as
// if the kernel's work had run. DIM therefore evolves exactly as it would on the device and
// shadow exports what enforce would do. A rate-limited write keeps the instance pending (its
// samples are ignored, like the kernel's while the work is queued) until the write happens.
// A DIM instance that is only compared (a rule's compare, beside algorithm model) is always
// applied at once; only the algorithm's picks are ever written.
//
// Thread-safety: step(), restore() and reload_policies() must be called from
// one thread (the control loop). state() may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dim/model_policy.h"
#include "dim/net_dim.h"
#include "dim/rdma_dim.h"
#include "dimctl/common/result.h"
#include "dimctl/controller/core_costs.h"
#include "dimctl/controller/device_inventory.h"
#include "dimctl/controller/model_table_cache.h"
#include "dimctl/controller/napi_writes.h"
#include "dimctl/controller/original_records.h"
#include "dimctl/controller/state_publisher.h"
#include "dimctl/controller/step_clock.h"
#include "dimctl/seam/clock.h"
#include "dimctl/seam/controller_state.h"
#include "dimctl/seam/counter_source.h"
#include "dimctl/seam/napi_actuator.h"
#include "dimctl/seam/net_actuator.h"
#include "dimctl/seam/originals_store.h"
#include "dimctl/seam/policy.h"
#include "dimctl/seam/rdma_actuator.h"

namespace dim {
struct SaturationInput;
}  // namespace dim

namespace dimctl::controller {

// No loop period among them: step() takes its rates from the snapshots' time deltas, and the
// caller decides when to call it.
struct ControllerOptions {
  // Minimum time between two published states (0 = every step). Building the view of 10k
  // queues is most of a step's cost, and a scrape every few seconds does not need 20 Hz: the
  // daemon can decide at 20 Hz and publish at, say, 4 Hz. Failed samples always publish.
  int64_t publish_interval_ns = 0;
  // Exported as-is in ControllerState (the config layer owns their meaning).
  seam::Mode default_mode = seam::Mode::kShadow;
  std::string config_path;
  // Kernel driver of a net device, for DeviceInfo.driver (policy selectors). The daemon reads
  // /sys/class/net/<dev>/device/driver; empty function = unknown ("").
  std::function<std::string(const std::string& ifname)> net_driver;
  // Kernel driver of an IB device (match.driver for RDMA rules); empty function = unknown.
  std::function<std::string(const std::string& ibdev)> rdma_driver;
  // The net devices of the controller's network namespace, with or without NAPI traffic. A
  // device without traffic has no queue in the snapshot, yet its policy still matters: a
  // static profile is applied to it and observe/shadow export its settings. Refreshed every
  // inventory_interval_ns (a netlink dump is too costly for every period). Empty function =
  // devices are known only through their queues.
  std::function<std::vector<std::string>()> list_net_devices;
  int64_t inventory_interval_ns = 1'000'000'000;
  // A net device's identity across renames: the ifindex a name has now, the name an ifindex has
  // now (0 / "" when gone or unknown). With both, what dimctl recorded and changed follows a
  // renamed device (docs/CONTROLLER.md, "Renames"): its originals move to the new name, drift
  // stays with it, and one renamed to a name dimctl may not write is handed back at once.
  // Checked before a name's first write, at every inventory refresh and before restore().
  // Empty functions = a rename looks like one device going and another coming.
  std::function<uint32_t(const std::string& ifname)> net_ifindex;
  std::function<std::string(uint32_t ifindex)> net_name;
  // With them, the records of a device that no longer exists are forgotten (here and in the
  // OriginalsStore) once it has been gone this long, or at once when another device has taken
  // its name: a re-created device is a new one, with its own original. The grace covers a device
  // that comes back with its ifindex (moved to another network namespace and back).
  int64_t forget_gone_ns = 60'000'000'000;
};

class Controller {
 public:
  // `rdma` may be null (no RDMA netlink). Every reference must outlive the controller.
  Controller(seam::CounterSource& source, seam::NetActuator& net, seam::RdmaDimSwitch* rdma,
             seam::OriginalsStore& originals, const seam::PolicySource& policy,
             const seam::Clock& clock, ControllerOptions options = {});
  // With per-NAPI software moderation (method napi / auto); `napi` may be null (no netdev
  // netlink, or a kernel without napi-set): rules asking for napi then write nothing.
  Controller(seam::CounterSource& source, seam::NetActuator& net, seam::RdmaDimSwitch* rdma,
             seam::NapiActuator* napi, seam::OriginalsStore& originals,
             const seam::PolicySource& policy, const seam::Clock& clock,
             ControllerOptions options = {});
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // One period. Fails only when no snapshot could be taken, or the source's snapshot is unusable
  // (a queue's device_ix outside its name table); both are counted in sample_errors_total.
  // Per-device problems are reported in DeviceView.last_error and never fail the step.
  // The state is published in every case.
  Result<void> step();

  // Puts back every original recorded by this controller (devices, queues, RDMA DIM switch),
  // under the name each device has now (net_ifindex/net_name), except on drifted devices:
  // someone else owns them now, and their net records are forgotten in the OriginalsStore so
  // that no later pass puts our original over their value (a drifted RDMA switch's record is
  // left to the caller; the daemon forgets it at exit). What was put back is forgotten in the
  // OriginalsStore, so a following OriginalsStore restore pass (the daemon's exit) only sees
  // what is left: devices that vanished, failed writes. A device that no longer exists
  // (ENODEV/ENXIO) is not a failure: nothing is left to put back, and its records stay for that
  // pass to drop. Afterwards no further writes happen. Attempts all, returns the first error with
  // the number of failures.
  Result<void> restore();

  // Re-reads every known device's policy (config reload). DIM instances are re-created for
  // devices whose mode, algorithm or profiles changed; drift stays. A device with recorded
  // originals that the new policy no longer lets us write (not enforce, no rule, conflict,
  // algorithm off; RDMA: no kernel_dim wish) is handed back at once: originals written back and
  // forgotten. A failure leaves the records for exit / `dimctl restore` and is reported in
  // last_error.
  void reload_policies();

  // The last published state; never null.
  std::shared_ptr<const seam::ControllerState> state() const;

  const ControllerOptions& options() const { return options_; }
  // Config reload: publish_interval_ns and default_mode, from the next step() on.
  void set_reloadable_options(int64_t publish_interval_ns, seam::Mode default_mode);

 private:
  struct Apply;
  struct NetDevice;
  struct RdmaDevice;
  struct QueueSlot;
  struct CqSlot;

  void drain_changes();
  NetDevice& net_device_named(const std::string& name);
  void apply_inventory(int64_t now_ns);
  RdmaDevice& rdma_device_for(const std::string& name);
  void reconcile_queues(const seam::Snapshot& snap);
  void reconcile_cqs(const seam::Snapshot& snap);
  // The snapshot's name table, and the device of the last run of queues fed (queues of one
  // device come in runs with one device_ix).
  struct FeedCursor {
    const std::string* names = nullptr;
    size_t n_names = 0;
    uint32_t device_ix = 0;
    NetDevice* dev = nullptr;
  };
  template <bool kModel>
  size_t feed_queues(const seam::Snapshot& snap, FeedCursor& cursor, bool time_backwards);
  // False, with nothing fed, when the queue's device_ix is outside the name table.
  template <bool kModel>
  [[nodiscard]] bool feed_queue(QueueSlot& slot, uint32_t index, const seam::QueueCounters& q,
                                FeedCursor& cursor, int64_t now_ns, bool time_backwards);
  Result<void> reject_sample(Error e, int64_t loop_start_ns);
  template <bool kWithModel>
  bool feed_dim(QueueSlot& slot, const seam::QueueCounters& q, int64_t now_ns, bool reset);
  // `table`: the one the model judges this period with (null: the device's for the share level).
  bool feed_model(QueueSlot& slot, NetDevice& dev, const seam::QueueCounters& q, uint64_t d_events,
                  uint64_t d_packets, bool have_packets, int64_t now_ns, bool reset,
                  const dim::ModelTable* table = nullptr);
  void bind(QueueSlot& slot, NetDevice& dev);
  void decide_device(NetDevice& dev, int64_t now_ns);
  void apply_queue(QueueSlot& slot, NetDevice& dev, const seam::QueueCounters& q, int64_t now_ns);
  // A CQ's deltas this period (before any CQ is fed: share_cq_load() needs all of them).
  void measure_cq(CqSlot& slot, const seam::CqCounters& c, double dt_s);
  // The sharers each model CQ's load is judged with (CqSlot::share_level).
  void share_cq_load(const seam::Snapshot& snap);
  // The device's table (its profiles, count and timer) for `policy` and `sharers`: what every
  // table of the device is built with, whatever policy values it is given.
  std::shared_ptr<const dim::ModelTable> device_table(const NetDevice& dev,
                                                      const seam::DevicePolicy& policy,
                                                      double sharers);
  std::shared_ptr<const dim::ModelTable> device_table(const RdmaDevice& dev,
                                                      const seam::DevicePolicy& policy,
                                                      double sharers);
  // The device's model table for share level `level` (kShareLevels), built on first use; level 0
  // is the device's model_table (refresh_policy()).
  const std::shared_ptr<const dim::ModelTable>& shared_table(RdmaDevice& dev, uint8_t level);
  const std::shared_ptr<const dim::ModelTable>& shared_table(NetDevice& dev, uint8_t level);
  // A model queue's period, decided after the per-queue pass (model_pass()).
  struct ModelWork {
    uint32_t index;
    uint16_t cpu;  // seam::QueueCounters::cpu
    bool reset;
    NetDevice* dev;
    uint64_t d_events, d_packets;
  };
  // The net queues in the order of the last snapshot, so a stable snapshot costs no lookups, and
  // this step's work lists.
  struct NetQueues {
    std::vector<QueueSlot> slots;
    std::unordered_map<uint64_t, size_t> index;  // seam::packed(key) -> slot
    std::vector<uint32_t> per_queue;             // this step: slots of per-queue devices
    std::vector<ModelWork> model_work;           // this step's model queues
    int64_t view_time_ns = 0;  // snapshot time of the last published view: the rates' base
    // The DIM windows' rate divisions: most windows of a step are one period long. On a cache
    // line of its own: every closing window reads and may write it, and where it falls should not
    // depend on the members declared before it.
    alignas(64) dim::RateDivider rate_div;
  };
  // The CQs in the order of the last snapshot, and their counters in it.
  struct Cqs {
    std::vector<CqSlot> slots;
    std::unordered_map<uint64_t, size_t> index;  // seam::packed(key) -> slot
    std::vector<seam::CqCounters> prev;
  };
  void model_pass(const seam::Snapshot& snap, int64_t now_ns);
  // A software-moderated queue under the efficiency objective whose device has not measured what
  // a poll costs: a bounded probe of a moderated profile (net_queues.cc).
  void cost_probe(QueueSlot& slot, NetDevice& dev, uint32_t index, uint16_t cpu, uint64_t d_polls,
                  uint64_t d_packets, int64_t now_ns);
  // The saturation rule's QD~1 probe queue's counts this period (CoreCosts::measure()).
  void probe_counts(const CorePick& pick, dim::SaturationInput& in) const;
  // The table a model queue on `core` is judged with: the device's for its share level, with the
  // core's measured costs where the policy takes them (model.costs: measured).
  const std::shared_ptr<const dim::ModelTable>& core_table(NetDevice& dev, uint8_t level,
                                                           uint16_t bucket);
  const std::shared_ptr<const dim::ModelTable>& core_table(RdmaDevice& dev, uint8_t level,
                                                           uint16_t bucket);
  template <typename Device>
  const std::shared_ptr<const dim::ModelTable>& cost_table(Device& dev, uint8_t level,
                                                           uint16_t bucket);
  // The CQs' completions and wake-ups on the cores that poll them (CqCounters::cpu), beside the
  // net queues' (CoreCosts::add_load()), before the cores are measured.
  void add_cq_loads(const seam::Snapshot& snap);
  // The core a CQ's interrupt and polls land on, while cores are measured (null otherwise).
  CorePick* cq_core(const seam::CqCounters& c);
  // After the model pass and the CQs: what each core's saturation rule reads next period.
  void finish_cores();
  void feed_cq(CqSlot& slot, const seam::CqCounters& c, int64_t prev_time_ns, int64_t now_ns);
  void update_rdma_devices(int64_t now_ns);
  void retire_devices();
  // view_dt_s: time since the last view (its rates' span), 0 when none.
  void fill_queue_view(seam::QueueView& v, QueueSlot& slot, const seam::QueueCounters& counters,
                       const std::string& device, double view_dt_s);
  // Method napi: the queue's software profile (wanted) and the NAPI's settings (napi_write.cc).
  void fill_napi_view(seam::QueueView& v, const QueueSlot& slot) const;
  // Appends the comparison of queue `index` (both policies run) to `comparisons`.
  void add_comparison(std::vector<seam::Comparison>& comparisons, uint32_t index,
                      const QueueSlot& slot);
  void fill_cq_and_device_views(seam::ControllerState& st, const seam::Snapshot& snap);
  void finish_publish(std::shared_ptr<seam::ControllerState> st, int64_t loop_start_ns);
  void set_error(NetDevice& dev, std::string msg);
  void set_error(RdmaDevice& dev, std::string msg);
  bool may_write(const NetDevice& dev) const;
  // Why a device without coalescing and without method napi is not written (resolve_method).
  std::string no_coalescing_error(const NetDevice& dev) const;
  bool may_write(const RdmaDevice& dev) const;
  std::vector<std::string> net_names_with_originals() const;
  uint32_t recorded_ifindex(const std::string& name) const;
  Result<void> move_records(const std::vector<std::pair<std::string, std::string>>& renames);
  void follow_devices(int64_t now_ns);
  void drop_records(const std::string& name);
  // Whether dev (named so now, with this ifindex) is a device we recorded under another name.
  Result<bool> adopt_renamed(NetDevice& dev, uint32_t ifindex);
  std::vector<std::string> rdma_names_with_originals() const;
  Result<void> release_net(const std::string& name);
  Result<void> release_rdma(const std::string& name);
  void refresh_policy(NetDevice& dev);
  void refresh_policy(RdmaDevice& dev);
  void ensure_dim(QueueSlot& slot, const NetDevice& dev);
  void ensure_dim(CqSlot& slot, const RdmaDevice& dev);
  enum class WriteResult : uint8_t { kUnchanged, kWritten, kFailed, kRateLimited, kRefused };
  WriteResult write_net(NetDevice& dev, Apply& apply, std::optional<uint32_t> queue,
                        const dim::Profile& profile, int64_t now_ns);
  // Method napi (napi_write.cc): which method the device's policy resolves to; one NAPI's write
  // path (the device's side: gate, rate limit, counters; napis_ the NAPI's); drift found on a
  // NAPI of the device.
  void resolve_method(NetDevice& dev);
  WriteResult write_napi(const seam::QueueKey& key, NetDevice& dev, uint8_t ix, int64_t now_ns);
  void napi_drift(NetDevice& dev, uint32_t id);

  // What the controller reads, writes and asks, all outside it.
  struct Seams {
    seam::CounterSource& source;
    seam::NetActuator& net;
    seam::RdmaDimSwitch* rdma;  // null: no RDMA netlink
    seam::OriginalsStore& originals;
    const seam::PolicySource& policy;
    const seam::Clock& clock;
  };
  Seams io_;
  ControllerOptions options_;

  // Net devices by ifname (std::map: stable addresses for QueueSlot::dev, sorted export).
  std::map<std::string, std::unique_ptr<NetDevice>> net_devices_;
  std::map<std::string, std::unique_ptr<RdmaDevice>> rdma_devices_;
  // The counter snapshot, filled by the source every period (sample_into) and otherwise left
  // alone, so a source can update it in place.
  seam::Snapshot snap_;
  // The net queues of the last snapshot and this step's work lists.
  NetQueues queues_;
  // This step's loads per CPU, and per CPU while the snapshot carries CPU times: the measured
  // costs and the saturation rule.
  CoreCosts cores_;
  Cqs cqs_;                       // the CQs of the last snapshot
  ModelTableCache model_tables_;  // shared by every device's tables
  DeviceInventory inventory_;     // options_.list_net_devices, every inventory_interval_ns

  // Originals recorded by this controller, kept across device disappearance so a device that
  // comes back is never re-recorded with our own values, and restore() finds them; drift (never
  // written again by this process) and gone devices (follow_devices()).
  OriginalRecords records_;
  // NAPIs of devices written with method napi: their originals (recorded before the first
  // write), what we wrote and what they hold.
  NapiWrites napis_;
  bool writes_disabled_ = false;  // after restore()
  uint32_t next_binding_ = 0;     // NetDevice::binding

  // Steps, failed samples, the snapshots' periods, the last publish.
  StepClock steps_;
  StatePublisher publisher_;
};

}  // namespace dimctl::controller
