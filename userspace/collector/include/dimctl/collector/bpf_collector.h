// BpfCollector: the kernel-facing CounterSource. Loads napi.bpf.c / rdma.bpf.c and, when asked,
// cpu_time.bpf.c (CO-RE),
// attaches what the running kernel has, and samples the slot tables it maps from the programs'
// counter arrays (slot_table.h) into seam::Snapshot.
// A missing tracepoint/module never fails open(): that program is reported unattached with the
// reason (programs()), logged once, and everything else runs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dimctl/collector/feature_probe.h"
#include "dimctl/collector/netdev_directory.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/controller_state.h"
#include "dimctl/seam/counter_source.h"

namespace dimctl::collector {

struct CollectorOptions {
  bool enable_napi = true;
  bool enable_rdma = true;
  // Time per CPU in hard interrupt handlers and in the NET_RX/BLOCK/IRQ_POLL softirqs
  // (cpu_time.bpf.c: four programs on the irq tracepoints, which fire on every interrupt and
  // softirq), read into Snapshot::cpus and Snapshot::irqs. Off by default: only the cost
  // estimator needs it, when a device runs the model policy. Off = not loaded, not listed in
  // programs().
  bool enable_cpu_times = false;
  // With enable_cpu_times: every run is counted, one in this many is timed (a power of two;
  // 1 = every run). A clock read costs more than the rest of a program (docs/benchmarks/bpf.md);
  // the estimator needs the mean time per run, which a sample gives (seam::estimated_ns()).
  uint32_t cpu_times_time_one_in = 8;
  // Optional per-skb byte counter (tp_btf/netif_receive_skb). Off: zero per-packet programs.
  bool count_bytes = false;
  // With count_bytes: fnmatch(3) globs naming the devices to count (collectors.skb_bytes).
  // Resolved to ifindexes of the collector's namespace at open and on every sample (devices
  // come, go, get renamed); the BPF program returns early for the others (one hash lookup per
  // packet), which keep has_bytes = false unless the device has netdev qstats. Empty = every
  // device (dimctl list --count-bytes). Ignored without count_bytes.
  std::vector<std::string> count_bytes_devices;
  // Use raw_tp twins even where tp_btf would work (tests, or kernels with broken tp_btf).
  bool force_raw_tp = false;
  // Count only NAPIs of devices in the collector's network namespace (ifindex is per netns).
  bool own_netns_only = true;
  // Injected for tests; nullptr = the real kernel (make_kernel_feature_probe()).
  std::shared_ptr<const FeatureProbe> probe;
  // nullptr = NetlinkNetdevDirectory.
  std::shared_ptr<NetdevDirectory> directory;
};

// Attach status of one tracepoint program, richer than seam::ProgramView.
struct ProgramStatus {
  seam::ProgramView view;   // name = "<system>:<tracepoint>", reason when not attached
  std::string attach_type;  // "tp_btf", "raw_tp" or "" when not attached
  std::string bpf_name;     // BPF program name (bpftool prog show)
  int prog_fd = -1;
};

class BpfCollector final : public seam::CounterSource {
 public:
  static Result<std::unique_ptr<BpfCollector>> open(const CollectorOptions& options);
  ~BpfCollector() override;
  BpfCollector(const BpfCollector&) = delete;
  BpfCollector& operator=(const BpfCollector&) = delete;

  // A new snapshot: sample_into() on an empty one.
  Result<seam::Snapshot> sample() override;
  // The snapshot written into `out` in place (seam::CounterSource::sample_into): queues and
  // CQs in key order, each entry's fields and name overwritten in the storage of the entry at
  // that position last time (a queue's device name in the snapshot's name table, one per
  // device), the vectors resized only when the number of queues, devices or CQs changed.
  // A period with the same NAPIs and CQs as the last therefore allocates nothing in reading,
  // folding and labelling (the netdev directory's netlink refresh aside). On failure `out`
  // may be left half-written (some queues of this period, some of the last, or queues of this
  // period and CQs of the last); the caller must not use it, and the next call rewrites it
  // whole.
  Result<void> sample_into(seam::Snapshot& out) override;

  // Every program dimctl knows, attached or not (run_time_ns/run_count refreshed on each call
  // when kernel.bpf_stats_enabled=1).
  std::vector<seam::ProgramView> programs() const override;
  std::vector<ProgramStatus> program_status() const;
  // Events the BPF side could not record (map full, ring buffer full), summed over CPUs.
  uint64_t drops() const;
  // The same by reason (every reason listed, 0 included; seam::BpfDropView::reason names).
  std::vector<seam::BpfDropView> drops_by_reason() const override;
  // Names of the devices the byte counter counts now, when it is attached with device globs
  // (ifindex order; empty when no device matches yet). nullopt: no device filter (counter not
  // attached, or attached for every device).
  std::optional<std::vector<std::string>> byte_counter_devices() const;
  // Config reload: the byte counter's device globs (collectors.skb_bytes) become `globs`,
  // resolved against the devices of the last sample; a device named before and after is counted
  // throughout. Fails with nothing changed when the counter is not attached with a device
  // filter, or for empty `globs`: attaching, detaching or filtering it takes a new load (a
  // restart). A map write error is returned after the rest was done (samples retry the adds).
  Result<void> set_byte_counter_devices(std::vector<std::string> globs);

 private:
  struct Impl;
  explicit BpfCollector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dimctl::collector
