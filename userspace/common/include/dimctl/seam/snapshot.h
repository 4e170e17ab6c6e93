// Snapshot: what a CounterSource hands the controller each period. Plain values, cumulative
// 64-bit counters with stable identities; no BPF or netlink types leak through.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace dimctl::seam {

// A NAPI instance (in practice one RX/TX queue pair) of a net device.
struct QueueKey {
  uint32_t ifindex = 0;
  uint32_t napi_id = 0;
  auto operator<=>(const QueueKey&) const = default;
};
// The key as one 64-bit value, ordered like the key (ifindex, then napi id): hash-map keys and
// single-compare ordering.
constexpr uint64_t packed(const QueueKey& k) {
  return (uint64_t{k.ifindex} << 32) | k.napi_id;
}

struct QueueCounters {
  QueueKey key;
  int32_t queue = -1;  // RX queue index (netdev netlink queue-get), -1 when unknown
  int32_t irq = -1;    // IRQ of the NAPI (netdev netlink napi-get), -1 when unknown
  // Cumulative since the collector first saw this NAPI. napi_poll calls with budget 0
  // (netpoll) are not counted.
  uint64_t polls = 0;             // napi_poll events
  uint64_t packets = 0;           // sum of `work`
  uint64_t budget_exhausted = 0;  // polls with work >= budget (NAPI stays scheduled)
  uint64_t empty_polls = 0;       // polls with work == 0
  uint64_t bytes = 0;             // valid only when has_bytes
  // The device's ifname at the time of the snapshot: Snapshot::devices[device_ix].
  uint32_t device_ix = 0;
  bool has_bytes = false;
  // The CPU the NAPI's latest poll ran on (its interrupt's and softirq's core), kNoCpu when
  // unknown: NAPIs on one CPU share it (the cost model's shared_load).
  static constexpr uint16_t kNoCpu = 0xffff;
  uint16_t cpu = kNoCpu;
  // DIM "events": polls that completed NAPI and re-armed interrupts (work < budget), the
  // BPF-visible analogue of a driver's interrupt episode (dim-spec 4.6, 8.1).
  uint64_t events() const { return polls - budget_exhausted; }
};
// One cache line: the controller walks 10k of these per period and is memory-bound.
static_assert(sizeof(QueueCounters) == 64);

// Poll context of an ib_core CQ. dimctl's own codes, NOT the kernel's numbering (the kernel's
// enum ib_poll_context is SOFTIRQ=0, WORKQUEUE=1, UNBOUND_WORKQUEUE=2, DIRECT=3; older iproute2
// and dim-spec 8.1 show an older order): the collector maps by meaning, never by number.
enum class PollContext : uint8_t {
  kDirect = 0,
  kSoftirq = 1,
  kWorkqueue = 2,
  kUnboundWorkqueue = 3
};

// An ib_core (kernel ULP) completion queue, keyed by IB device index + restrack id.
struct CqKey {
  uint32_t dev_index = 0;  // ib_device->index
  uint32_t cq_id = 0;      // cq->res.id == `cqn` of `rdma resource show cq`
  auto operator<=>(const CqKey&) const = default;
};
// The key as one 64-bit value, ordered like the key (device index, then CQ id).
constexpr uint64_t packed(const CqKey& k) {
  return (uint64_t{k.dev_index} << 32) | k.cq_id;
}

struct CqCounters {
  CqKey key;
  std::string ibdev;  // IB device name, "" when unknown
  PollContext poll_ctx = PollContext::kDirect;
  uint32_t nr_cqe = 0;
  int32_t comp_vector = -1;
  uint64_t schedules = 0;    // cq_schedule (completion interrupts)
  uint64_t reschedules = 0;  // cq_reschedule
  uint64_t events = 0;       // cq_process: one ib_core poll pass == one rdma_dim() event
  uint64_t polls = 0;        // cq_poll batches
  uint64_t completions = 0;  // sum of cq_poll rc > 0
  uint64_t poll_errors = 0;  // cq_poll rc < 0
  // Poll passes that used their whole budget (counted when the next pass starts): the CQ's
  // poll loop falls behind, as a NAPI's budget_exhausted.
  uint64_t budget_exhausted = 0;
  // Ground truth from the in-kernel RDMA DIM worker (rdma_core:cq_modify).
  uint64_t kernel_modifies = 0;
  uint16_t kernel_comps = 0;  // last cq_modify comps (cq_count)
  uint16_t kernel_usec = 0;   // last cq_modify usec (cq_period)
  // The CPU the CQ's latest poll ran on (QueueCounters::kNoCpu: not polled yet, or unknown):
  // the core its completions cost, for the per-core costs and saturation rule.
  uint16_t cpu = QueueCounters::kNoCpu;
};

// Time one CPU spent in hard interrupt handlers and in the softirqs that poll queues
// (cpu_time.bpf.c), cumulative since the collector attached: what the cost estimator fits
// against the queues' events and completions. Softirq time excludes the hard interrupt handler
// time nested in it, so the two add up. Counts are handler runs and softirq runs, every one;
// the times are sampled: `*_ns` sums the `*_timed` runs only (one in
// CollectorOptions::cpu_times_time_one_in, as a clock read costs more than the rest of a
// program), so a period's time is estimated_ns() of the deltas.
struct CpuTimes {
  uint64_t hardirq_ns = 0;
  uint64_t hardirq_count = 0;
  uint64_t hardirq_timed = 0;
  uint64_t softirq_net_rx_ns = 0;
  uint64_t softirq_net_rx_count = 0;
  uint64_t softirq_net_rx_timed = 0;
  uint64_t softirq_block_ns = 0;
  uint64_t softirq_block_count = 0;
  uint64_t softirq_block_timed = 0;
  uint64_t softirq_irq_poll_ns = 0;
  uint64_t softirq_irq_poll_count = 0;
  uint64_t softirq_irq_poll_timed = 0;
  // Time the CPU's idle task ran (sched_switch), every stretch timed, the running one up to the
  // snapshot; meaningful only with idle_known (a switch was seen on the CPU since attach; a CPU
  // that never switched says nothing). Hard and soft interrupts taken while idle count as idle
  // here: busy time is max(period − idle, hardirq + softirq).
  uint64_t idle_ns = 0;
  bool idle_known = false;
  bool operator==(const CpuTimes&) const = default;
};

// Hard interrupt handler runs of one IRQ number over all CPUs, cumulative (times sampled as in
// CpuTimes).
struct IrqTimes {
  uint32_t irq = 0;
  uint64_t ns = 0;
  uint64_t count = 0;
  uint64_t timed = 0;
  bool operator==(const IrqTimes&) const = default;
};

// The time of `count` runs from the `ns` of the `timed` ones among them (deltas over a period,
// or totals): their mean times count; 0 when none was timed.
constexpr double estimated_ns(uint64_t ns, uint64_t timed, uint64_t count) {
  return timed == 0
             ? 0.0
             : static_cast<double>(ns) / static_cast<double>(timed) * static_cast<double>(count);
}

struct Snapshot {
  int64_t time_ns = 0;  // CLOCK_MONOTONIC when the snapshot was taken
  // Every queue's device_ix < devices.size() (the controller refuses a snapshot that breaks
  // this, as a failed sample). Within one snapshot all queues of an ifindex carry the same
  // device_ix (a rename shows in the next snapshot as a whole); the controller relies on it to
  // look devices up once per run of queues instead of once per queue. A name may appear twice
  // (two ifindexes named alike across a rename) or be referred to by no queue.
  std::vector<QueueCounters> queues;
  std::vector<std::string> devices;  // ifnames, indexed by QueueCounters::device_ix
  std::vector<CqCounters> cqs;
  // Per CPU, indexed by CPU number (every possible CPU), when the source measures CPU time
  // (the collector's enable_cpu_times); empty otherwise.
  std::vector<CpuTimes> cpus;
  // IRQs whose handlers ran at least once, in IRQ order (same condition as cpus).
  std::vector<IrqTimes> irqs;

  // REQUIRES: q.device_ix < devices.size().
  const std::string& device_of(const QueueCounters& q) const { return devices[q.device_ix]; }
};

}  // namespace dimctl::seam
