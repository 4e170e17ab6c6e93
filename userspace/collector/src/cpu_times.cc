#include "dimctl/collector/cpu_times.h"

#include <atomic>
#include <cstddef>

namespace dimctl::collector {

static_assert(sizeof(dimctl_run_times) == 24 && offsetof(dimctl_run_times, count) == 8 &&
              offsetof(dimctl_run_times, timed) == 16);
static_assert(sizeof(dimctl_cpu_slot) == 192 && offsetof(dimctl_cpu_slot, softirq_hard_ns) == 16 &&
              offsetof(dimctl_cpu_slot, hardirq) == 24 &&
              offsetof(dimctl_cpu_slot, softirq) == 48 &&
              offsetof(dimctl_cpu_slot, idle_start) == 128 &&
              offsetof(dimctl_cpu_slot, idle_ns) == 136 && offsetof(dimctl_cpu_slot, seen) == 144 &&
              offsetof(dimctl_cpu_slot, idle_cal_mono) == 160 &&
              offsetof(dimctl_cpu_slot, idle_cal_stamp) == 168);
static_assert(sizeof(dimctl_irq_slot) == 32 && offsetof(dimctl_irq_slot, t) == 0);
static_assert(DIMCTL_SOFTIRQ_NET_RX == 0 && DIMCTL_SOFTIRQ_BLOCK == 1 &&
              DIMCTL_SOFTIRQ_IRQ_POLL == 2 && DIMCTL_SOFTIRQ_COUNTED == 3);

namespace {

uint64_t load(const uint64_t& w) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w)).load(std::memory_order_relaxed);
}

constexpr size_t word_of(size_t byte_offset) {
  return byte_offset / 8;
}
struct Words {
  const uint64_t* w;
  uint64_t at(size_t byte_offset) const { return load(w[word_of(byte_offset)]); }
  // The run_times at `byte_offset`.
  void runs(size_t byte_offset, uint64_t& ns, uint64_t& count, uint64_t& timed) const {
    ns = at(byte_offset + offsetof(dimctl_run_times, ns));
    count = at(byte_offset + offsetof(dimctl_run_times, count));
    timed = at(byte_offset + offsetof(dimctl_run_times, timed));
  }
};

constexpr size_t softirq_at(size_t v) {
  return offsetof(dimctl_cpu_slot, softirq) + v * sizeof(dimctl_run_times);
}

}  // namespace

void read_cpu_times(std::span<const uint64_t> words, int64_t now_ns,
                    std::vector<seam::CpuTimes>& out) {
  const size_t n = words.size() / kCpuSlotWords;
  out.resize(n);
  for (size_t cpu = 0; cpu < n; ++cpu) {
    const Words w{&words[cpu * kCpuSlotWords]};
    seam::CpuTimes& c = out[cpu];
    w.runs(offsetof(dimctl_cpu_slot, hardirq), c.hardirq_ns, c.hardirq_count, c.hardirq_timed);
    w.runs(softirq_at(DIMCTL_SOFTIRQ_NET_RX), c.softirq_net_rx_ns, c.softirq_net_rx_count,
           c.softirq_net_rx_timed);
    w.runs(softirq_at(DIMCTL_SOFTIRQ_BLOCK), c.softirq_block_ns, c.softirq_block_count,
           c.softirq_block_timed);
    w.runs(softirq_at(DIMCTL_SOFTIRQ_IRQ_POLL), c.softirq_irq_poll_ns, c.softirq_irq_poll_count,
           c.softirq_irq_poll_timed);
    // The running stretch first: if it ends between the two loads, its time is counted in both
    // (ahead, given back next period) rather than in neither. Its start is a stamp of the rq
    // clock; the calibration pair maps it to CLOCK_MONOTONIC (dimctl_bpf.h). Any pair of this
    // CPU will do, an older or a newer one than the stretch's own: the two clocks' offset
    // hardly moves in between.
    const uint64_t start = w.at(offsetof(dimctl_cpu_slot, idle_start));
    c.idle_ns = w.at(offsetof(dimctl_cpu_slot, idle_ns));
    const uint64_t cal_mono = w.at(offsetof(dimctl_cpu_slot, idle_cal_mono));
    const uint64_t cal_stamp = w.at(offsetof(dimctl_cpu_slot, idle_cal_stamp));
    if (start != 0 && cal_mono != 0 && now_ns > 0) {
      const int64_t began = static_cast<int64_t>(cal_mono) +
                            (static_cast<int64_t>(start) - static_cast<int64_t>(cal_stamp));
      if (now_ns > began) c.idle_ns += static_cast<uint64_t>(now_ns - began);
    }
    c.idle_known = w.at(offsetof(dimctl_cpu_slot, seen)) != 0;
  }
}

void read_irq_times(std::span<const uint64_t> words, std::vector<seam::IrqTimes>& out) {
  out.clear();
  const size_t n = words.size() / kIrqSlotWords;
  for (size_t irq = 0; irq < n; ++irq) {
    const Words w{&words[irq * kIrqSlotWords]};
    seam::IrqTimes t{.irq = static_cast<uint32_t>(irq)};
    w.runs(offsetof(dimctl_irq_slot, t), t.ns, t.count, t.timed);
    if (t.count != 0) out.push_back(t);
  }
}

}  // namespace dimctl::collector
