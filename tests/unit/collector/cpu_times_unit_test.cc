// Decoding of cpu_time.bpf.c's arrays (dimctl_bpf.h: cpu_times, irq_times) into the snapshot,
// on plain memory laid out as the kernel lays out the mapped arrays.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "dimctl/collector/cpu_times.h"
#include "shared/dimctl_bpf.h"
#include "support/count_allocations.h"

namespace dimctl::collector {
namespace {

// The mapped array's words, slot after slot.
template <typename Slot>
std::vector<uint64_t> words_of(const std::vector<Slot>& slots) {
  std::vector<uint64_t> w(slots.size() * sizeof(Slot) / 8);
  std::memcpy(w.data(), slots.data(), slots.size() * sizeof(Slot));
  return w;
}

// Every counter distinct, and the BPF state words set: a field read from the wrong word shows.
dimctl_cpu_slot slot_for(uint64_t base) {
  dimctl_cpu_slot s{};
  s.hardirq = {.ns = base + 1, .count = base + 2, .timed = base + 3};
  s.softirq[DIMCTL_SOFTIRQ_NET_RX] = {.ns = base + 4, .count = base + 5, .timed = base + 6};
  s.softirq[DIMCTL_SOFTIRQ_BLOCK] = {.ns = base + 7, .count = base + 8, .timed = base + 9};
  s.softirq[DIMCTL_SOFTIRQ_IRQ_POLL] = {.ns = base + 10, .count = base + 11, .timed = base + 12};
  s.hardirq_start = 0xdead0001;
  s.softirq_start = 0xdead0002;
  s.softirq_hard_ns = 0xdead0003;
  s.pad[0] = 0xdead0004;
  s.idle_entries = 0xdead0005;
  s.idle_ns = base + 13;
  s.seen = base + 14;
  return s;
}

TEST(CpuTimesDecode, EveryCounterOfEveryCpuFromItsOwnWord) {
  const auto words = words_of(std::vector{slot_for(100), slot_for(200), slot_for(300)});
  std::vector<seam::CpuTimes> out;
  read_cpu_times(words, 0, out);
  ASSERT_EQ(out.size(), 3u);
  for (size_t cpu = 0; cpu < 3; ++cpu) {
    const uint64_t b = 100 * (cpu + 1);
    const seam::CpuTimes want{.hardirq_ns = b + 1,
                              .hardirq_count = b + 2,
                              .hardirq_timed = b + 3,
                              .softirq_net_rx_ns = b + 4,
                              .softirq_net_rx_count = b + 5,
                              .softirq_net_rx_timed = b + 6,
                              .softirq_block_ns = b + 7,
                              .softirq_block_count = b + 8,
                              .softirq_block_timed = b + 9,
                              .softirq_irq_poll_ns = b + 10,
                              .softirq_irq_poll_count = b + 11,
                              .softirq_irq_poll_timed = b + 12,
                              .idle_ns = b + 13,
                              .idle_known = true};
    EXPECT_EQ(out[cpu], want) << "cpu " << cpu;
  }
}

TEST(CpuTimesDecode, SizeFollowsTheArrayAndAPartialSlotIsIgnored) {
  auto words = words_of(std::vector{slot_for(0), slot_for(10)});
  std::vector<seam::CpuTimes> out(5);
  read_cpu_times(std::span<const uint64_t>(words).first(kCpuSlotWords * 2 - 1), 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].hardirq_ns, 1u);
  EXPECT_EQ(out[0].softirq_irq_poll_timed, 12u);
  read_cpu_times({}, 0, out);
  EXPECT_TRUE(out.empty());
}

TEST(CpuTimesDecode, ReadsInPlaceWithoutAllocatingWhileTheCpuCountStays) {
  auto words = words_of(std::vector{slot_for(0), slot_for(10)});
  std::vector<seam::CpuTimes> out;
  read_cpu_times(words, 0, out);
  words[offsetof(dimctl_cpu_slot, hardirq) / 8] = 777;  // cpu 0's hardirq ns advanced
  const uint64_t before = testing::allocations_so_far();
  read_cpu_times(words, 0, out);
  EXPECT_EQ(testing::allocations_so_far(), before);
  EXPECT_EQ(out[0].hardirq_ns, 777u);
  EXPECT_EQ(out[1].hardirq_ns, 11u);
}

// A CPU idle now has its running stretch in idle_start only, an rq clock stamp: the reader
// maps it to the monotonic clock with the CPU's calibration pair and ends it at now_ns. A CPU
// whose switches the programs never saw says nothing about idle.
TEST(CpuTimesDecode, IdleAddsTheRunningStretchAndNeedsASwitch) {
  constexpr uint64_t kBehind = 3'000'000'000;  // the stamps run 3 s behind CLOCK_MONOTONIC
  std::vector<dimctl_cpu_slot> slots{slot_for(0), slot_for(0), slot_for(0), slot_for(0)};
  slots[0].idle_ns = 5'000;
  slots[0].idle_start = 1'000'000;  // idle since stamp 1 ms, calibrated at an earlier entry
  slots[0].idle_cal_stamp = 900'000;
  slots[0].idle_cal_mono = 900'000 + kBehind;
  slots[1].idle_ns = 7'000;  // busy now
  slots[1].idle_cal_stamp = 200;
  slots[1].idle_cal_mono = 200 + kBehind;
  slots[2].seen = 0;  // not seen switching
  slots[2].idle_ns = 0;
  slots[3].idle_ns = 9'000;
  slots[3].idle_start = 1'000'000;  // idle, but no calibration yet: the stretch waits its end
  std::vector<seam::CpuTimes> out;
  read_cpu_times(words_of(slots), 1'250'000 + kBehind, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].idle_ns, 5'000u + 250'000u);
  EXPECT_TRUE(out[0].idle_known);
  EXPECT_EQ(out[1].idle_ns, 7'000u);
  EXPECT_FALSE(out[2].idle_known);
  EXPECT_EQ(out[3].idle_ns, 9'000u);
  // A calibration newer than the stretch's start (taken at a later entry) maps it as well.
  slots[0].idle_cal_stamp = 1'200'000;
  slots[0].idle_cal_mono = 1'200'000 + kBehind;
  read_cpu_times(words_of(slots), 1'250'000 + kBehind, out);
  EXPECT_EQ(out[0].idle_ns, 5'000u + 250'000u);
  // Read against the stamps' own clock, the stretch would be 3 s long: the mapping is what
  // keeps it at 250 us. A stretch that started after the reader's clock (loads out of order):
  // nothing added.
  read_cpu_times(words_of(slots), 900'000 + kBehind, out);
  EXPECT_EQ(out[0].idle_ns, 5'000u);
}

TEST(IrqTimesDecode, OnlyIrqsThatRanInIrqOrder) {
  std::vector<dimctl_irq_slot> slots(DIMCTL_IRQ_SLOTS);
  slots[0].t = {.ns = 5, .count = 1, .timed = 1};
  slots[17].t = {.ns = 1700, .count = 3, .timed = 2};
  slots[18].t = {.ns = 99, .count = 0, .timed = 0};  // never completed a run: not one that ran
  slots[DIMCTL_IRQ_SLOTS - 1].t = {.ns = 40950, .count = 7, .timed = 1};
  slots[DIMCTL_IRQ_SLOTS - 1].pad = 0xdead;
  std::vector<seam::IrqTimes> out;
  read_irq_times(words_of(slots), out);
  const std::vector<seam::IrqTimes> want = {
      {.irq = 0, .ns = 5, .count = 1, .timed = 1},
      {.irq = 17, .ns = 1700, .count = 3, .timed = 2},
      {.irq = DIMCTL_IRQ_SLOTS - 1, .ns = 40950, .count = 7, .timed = 1}};
  EXPECT_EQ(out, want);
}

TEST(IrqTimesDecode, ReusesItsStorageAndDropsNothingStale) {
  std::vector<dimctl_irq_slot> slots(8);
  slots[2].t = {.ns = 20, .count = 2, .timed = 2};
  slots[5].t = {.ns = 50, .count = 5, .timed = 5};
  auto words = words_of(slots);
  std::vector<seam::IrqTimes> out;
  read_irq_times(words, out);
  ASSERT_EQ(out.size(), 2u);
  const uint64_t before = testing::allocations_so_far();
  // Counters only grow in practice; a count of 0 must still drop the entry of the last read.
  words[5 * kIrqSlotWords + offsetof(dimctl_run_times, count) / 8] = 0;
  read_irq_times(words, out);
  EXPECT_EQ(testing::allocations_so_far(), before);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].irq, 2u);
}

TEST(EstimatedNs, ScalesTheTimedMeanToEveryRunAndNeverDividesByZero) {
  EXPECT_DOUBLE_EQ(seam::estimated_ns(1000, 4, 32), 8000.0);   // 250 ns each, 32 runs
  EXPECT_DOUBLE_EQ(seam::estimated_ns(1000, 10, 10), 1000.0);  // every run timed
  EXPECT_DOUBLE_EQ(seam::estimated_ns(0, 0, 7), 0.0);          // none timed yet
  EXPECT_DOUBLE_EQ(seam::estimated_ns(0, 0, 0), 0.0);
}

}  // namespace
}  // namespace dimctl::collector
