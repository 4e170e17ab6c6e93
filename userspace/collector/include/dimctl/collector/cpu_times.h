// Reading cpu_time.bpf.c's arrays (cpu_times, irq_times: dimctl_bpf.h) into the snapshot. Pure
// decoding of the mapped words, so unit tests hand it plain memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dimctl/seam/snapshot.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {

inline constexpr size_t kCpuSlotWords = sizeof(dimctl_cpu_slot) / 8;
inline constexpr size_t kIrqSlotWords = sizeof(dimctl_irq_slot) / 8;

// words: the cpu_times array, one slot per possible CPU (a partial trailing slot is ignored).
// `out` becomes one entry per slot, CPU order, written in place (no allocation while the CPU
// count stays). Each counter is one relaxed 8-byte load: the programs keep adding meanwhile.
// now_ns (CLOCK_MONOTONIC, bpf_ktime_get_ns's clock) ends an idle stretch still running.
void read_cpu_times(std::span<const uint64_t> words, int64_t now_ns,
                    std::vector<seam::CpuTimes>& out);

// words: the irq_times array. `out` becomes the IRQs with a non-zero count, IRQ order, in the
// storage of the last call.
void read_irq_times(std::span<const uint64_t> words, std::vector<seam::IrqTimes>& out);

}  // namespace dimctl::collector
