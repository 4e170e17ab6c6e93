#include "dimctl/collector/cpu_times.h"

#include <atomic>
#include <cstddef>

namespace dimctl::collector {

static_assert(sizeof(dimctl_cpu_slot) == 128 && offsetof(dimctl_cpu_slot, hardirq_count) == 8 &&
              offsetof(dimctl_cpu_slot, softirq_ns) == 16 &&
              offsetof(dimctl_cpu_slot, softirq_count) == 40 &&
              offsetof(dimctl_cpu_slot, hardirq_start) == 64);
static_assert(sizeof(dimctl_irq_slot) == 16 && offsetof(dimctl_irq_slot, count) == 8);
static_assert(DIMCTL_SOFTIRQ_NET_RX == 0 && DIMCTL_SOFTIRQ_BLOCK == 1 &&
              DIMCTL_SOFTIRQ_IRQ_POLL == 2 && DIMCTL_SOFTIRQ_COUNTED == 3);

namespace {

uint64_t load(const uint64_t& w) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w)).load(std::memory_order_relaxed);
}

constexpr size_t word_of(size_t byte_offset) {
  return byte_offset / 8;
}
constexpr size_t kSoftNs = word_of(offsetof(dimctl_cpu_slot, softirq_ns));
constexpr size_t kSoftCount = word_of(offsetof(dimctl_cpu_slot, softirq_count));

}  // namespace

void read_cpu_times(std::span<const uint64_t> words, std::vector<model::CpuTimes>& out) {
  const size_t n = words.size() / kCpuSlotWords;
  out.resize(n);
  for (size_t cpu = 0; cpu < n; ++cpu) {
    const uint64_t* w = &words[cpu * kCpuSlotWords];
    model::CpuTimes& c = out[cpu];
    c.hardirq_ns = load(w[word_of(offsetof(dimctl_cpu_slot, hardirq_ns))]);
    c.hardirq_count = load(w[word_of(offsetof(dimctl_cpu_slot, hardirq_count))]);
    c.softirq_net_rx_ns = load(w[kSoftNs + DIMCTL_SOFTIRQ_NET_RX]);
    c.softirq_net_rx_count = load(w[kSoftCount + DIMCTL_SOFTIRQ_NET_RX]);
    c.softirq_block_ns = load(w[kSoftNs + DIMCTL_SOFTIRQ_BLOCK]);
    c.softirq_block_count = load(w[kSoftCount + DIMCTL_SOFTIRQ_BLOCK]);
    c.softirq_irq_poll_ns = load(w[kSoftNs + DIMCTL_SOFTIRQ_IRQ_POLL]);
    c.softirq_irq_poll_count = load(w[kSoftCount + DIMCTL_SOFTIRQ_IRQ_POLL]);
  }
}

void read_irq_times(std::span<const uint64_t> words, std::vector<model::IrqTimes>& out) {
  out.clear();
  const size_t n = words.size() / kIrqSlotWords;
  for (size_t irq = 0; irq < n; ++irq) {
    const uint64_t* w = &words[irq * kIrqSlotWords];
    const uint64_t count = load(w[word_of(offsetof(dimctl_irq_slot, count))]);
    if (count == 0) continue;
    out.push_back({.irq = static_cast<uint32_t>(irq),
                   .ns = load(w[word_of(offsetof(dimctl_irq_slot, ns))]),
                   .count = count});
  }
}

}  // namespace dimctl::collector
