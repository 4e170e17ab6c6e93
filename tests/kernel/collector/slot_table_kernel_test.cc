// Kernel tests of the slot protocol (bpf/include/shared/dimctl_bpf.h) with the real programs,
// maps and veth traffic in private network namespaces (never eth0): a NAPI whose home slot is
// held counts exactly in an overflow slot; a retired NAPI's slot is tombstoned at once, and
// zeroed and given back (to napi_free for an overflow slot) only after the grace period.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "dimctl/collector/bpf_collector.h"
#include "dimctl/collector/feature_probe.h"
#include "dimctl/collector/slot_table.h"
#include "kernel/collector/prog_maps.h"
#include "kernel/collector/veth_lab.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {
namespace {

constexpr int kPackets = 500;
// Fake NAPIs on an ifindex no device has: the collector retires them at its first sample.
constexpr uint32_t kFakeIfindex = 0x7ffffff0;

using testing::map_of_prog;

class SlotTableKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (CAP_BPF, CAP_NET_ADMIN)";
    if (!make_kernel_feature_probe()->vmlinux_btf()) GTEST_SKIP() << "kernel has no BTF";
    ASSERT_TRUE(testing::enter_private_netns().ok());
  }

  // Opens a collector and finds its napi maps.
  void open() {
    CollectorOptions o;
    o.enable_rdma = false;
    auto c = BpfCollector::open(o);
    ASSERT_TRUE(c.ok()) << c.error().detailed();
    collector = std::move(*c);
    int prog = -1;
    for (const auto& p : collector->program_status()) {
      if (p.view.name == "napi:napi_poll") prog = p.prog_fd;
    }
    ASSERT_GE(prog, 0) << "napi:napi_poll not attached";
    slots = map_of_prog(prog, "napi_slots");
    index = map_of_prog(prog, "napi_stats");
    free = map_of_prog(prog, "napi_free");
    ASSERT_TRUE(slots.valid() && index.valid() && free.valid());
  }

  dimctl_napi_slot slot(uint32_t i) const {
    dimctl_napi_slot s{};
    EXPECT_EQ(bpf_map_lookup_elem(slots.get(), &i, &s), 0) << errno;
    return s;
  }

  // The slots holding ifindex's NAPIs, by a syscall lookup of every slot (not the collector's
  // mapping).
  std::vector<uint32_t> slots_of(uint32_t ifindex) const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < DIMCTL_NAPI_SLOT_COUNT; ++i) {
      if (slot(i).key.ifindex == ifindex) out.push_back(i);
    }
    return out;
  }

  uint64_t packets(const seam::Snapshot& s, uint32_t ifindex) const {
    uint64_t n = 0;
    for (const auto& q : s.queues) {
      if (q.key.ifindex == ifindex) n += q.packets;
    }
    return n;
  }

  // Samples until ifindex has `want` packets (or 5 s), then once more after a quiet period.
  seam::Snapshot settle(uint32_t ifindex, uint64_t want) {
    seam::Snapshot s;
    for (int i = 0; i < 100; ++i) {
      EXPECT_TRUE(collector->sample_into(s).ok());
      if (packets(s, ifindex) >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(collector->sample_into(s).ok());
    return s;
  }

  std::unique_ptr<BpfCollector> collector;
  Fd slots, index, free;
};

TEST_F(SlotTableKernelTest, ANapiWhoseHomeSlotIsHeldCountsExactlyInAnOverflowSlot) {
  ASSERT_NO_FATAL_FAILURE(open());
  // Every home slot held by a fake NAPI: the receiver's NAPI must take an overflow slot.
  for (uint32_t i = 0; i < DIMCTL_NAPI_SLOTS; ++i) {
    const dimctl_napi_slot s{.key = {kFakeIfindex, i}, .v = {}, .cpu = 0, .pad = 0};
    ASSERT_EQ(bpf_map_update_elem(slots.get(), &i, &s, BPF_ANY), 0) << errno;
  }
  uint32_t ifindex = 0;
  uint32_t over = 0;
  {
    testing::VethLab lab;
    ASSERT_TRUE(lab.create(1).ok());
    ifindex = lab.rx_ifindex();
    seam::Snapshot before;
    ASSERT_TRUE(collector->sample_into(before).ok());  // retires the fakes (no such device)
    EXPECT_EQ(packets(before, ifindex), 0u);
    EXPECT_EQ(slot(0).key.napi_id, DIMCTL_NAPI_ID_RETIRED);
    ASSERT_TRUE(lab.send_udp(kPackets, 1).ok());
    const seam::Snapshot after = settle(ifindex, kPackets);
    EXPECT_EQ(packets(after, ifindex), static_cast<uint64_t>(kPackets));
    EXPECT_EQ(collector->drops(), 0u);

    const std::vector<uint32_t> held = slots_of(ifindex);
    ASSERT_EQ(held.size(), 1u) << "one veth NAPI, one slot";
    over = held[0];
    EXPECT_GE(over, static_cast<uint32_t>(DIMCTL_NAPI_SLOTS));
    const dimctl_napi_key key = slot(over).key;
    uint32_t ix = 0;
    ASSERT_EQ(bpf_map_lookup_elem(index.get(), &key, &ix), 0) << "napi_stats has no entry";
    EXPECT_EQ(ix, over);
    EXPECT_EQ(slot(over).v.packets, static_cast<uint64_t>(kPackets));
  }  // va deleted

  // Retired at the next sample: tombstoned, its directory entry removed, counters left until
  // the grace period is over.
  seam::Snapshot s;
  ASSERT_TRUE(collector->sample_into(s).ok());
  EXPECT_EQ(packets(s, ifindex), 0u);
  const dimctl_napi_slot retired = slot(over);
  EXPECT_EQ(retired.key.ifindex, 0u);
  EXPECT_EQ(retired.key.napi_id, DIMCTL_NAPI_ID_RETIRED);
  EXPECT_EQ(retired.v.packets, static_cast<uint64_t>(kPackets));
  uint32_t queued = 0;
  EXPECT_NE(bpf_map_lookup_elem(free.get(), nullptr, &queued), 0) << "napi_free not empty yet";

  std::this_thread::sleep_for(std::chrono::nanoseconds(kSlotGraceNs) +
                              std::chrono::milliseconds(100));
  ASSERT_TRUE(collector->sample_into(s).ok());
  const dimctl_napi_slot freed = slot(over);
  EXPECT_EQ(freed.key.ifindex, 0u);
  EXPECT_EQ(freed.key.napi_id, 0u);
  EXPECT_EQ(freed.v.packets, 0u);
  EXPECT_EQ(freed.v.polls, 0u);
  ASSERT_EQ(bpf_map_lookup_elem(free.get(), nullptr, &queued), 0) << "napi_free is empty";
  EXPECT_EQ(queued, over);  // peek: the slot the next overflow claim gets
}

TEST_F(SlotTableKernelTest, ARetiredHomeSlotIsZeroedAndFreedAfterTheGracePeriod) {
  ASSERT_NO_FATAL_FAILURE(open());
  uint32_t ifindex = 0;
  uint32_t home = 0;
  {
    testing::VethLab lab;
    ASSERT_TRUE(lab.create(1).ok());
    ifindex = lab.rx_ifindex();
    ASSERT_TRUE(lab.send_udp(kPackets, 1).ok());
    const seam::Snapshot s = settle(ifindex, kPackets);
    EXPECT_EQ(packets(s, ifindex), static_cast<uint64_t>(kPackets));
    const std::vector<uint32_t> held = slots_of(ifindex);
    ASSERT_EQ(held.size(), 1u);
    home = held[0];
    EXPECT_LT(home, static_cast<uint32_t>(DIMCTL_NAPI_SLOTS));
    EXPECT_EQ(home, slot(home).key.napi_id & (DIMCTL_NAPI_SLOTS - 1));
  }
  seam::Snapshot s;
  ASSERT_TRUE(collector->sample_into(s).ok());
  EXPECT_EQ(slot(home).key.napi_id, DIMCTL_NAPI_ID_RETIRED);
  EXPECT_EQ(slot(home).v.packets, static_cast<uint64_t>(kPackets));
  std::this_thread::sleep_for(std::chrono::nanoseconds(kSlotGraceNs) +
                              std::chrono::milliseconds(100));
  ASSERT_TRUE(collector->sample_into(s).ok());
  const dimctl_napi_slot freed = slot(home);
  EXPECT_EQ(freed.key.ifindex, 0u);
  EXPECT_EQ(freed.key.napi_id, 0u);
  EXPECT_EQ(freed.v.packets, 0u);
  uint32_t queued = 0;
  EXPECT_NE(bpf_map_lookup_elem(free.get(), nullptr, &queued), 0) << "home slots are not queued";
}

}  // namespace
}  // namespace dimctl::collector
