// Unit tests of the collector's kernel-independent logic: per-CPU summation, labelling,
// retirement and attach policy (`dimctl list`'s report is tested in tests/unit/cli).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/byte_filter.h"
#include "dimctl/collector/feature_probe.h"
#include "support/count_allocations.h"
#include "unit/collector/fakes.h"

namespace dimctl::collector {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// operator new calls since construction.
class AllocationCount {
 public:
  uint64_t operator()() const { return dimctl::testing::allocations_so_far() - start_; }

 private:
  uint64_t start_ = dimctl::testing::allocations_so_far();
};

dimctl_napi_value napi_v(uint64_t polls, uint64_t packets, uint64_t exhausted = 0,
                         uint64_t empty = 0, uint64_t bytes = 0) {
  dimctl_napi_value v{};
  v.polls = polls;
  v.packets = packets;
  v.budget_exhausted = exhausted;
  v.empty_polls = empty;
  v.bytes = bytes;
  return v;
}

dimctl_cq_info cq_info(uint32_t dev, uint32_t id, const char* name, uint32_t ctx) {
  dimctl_cq_info i{};
  i.dev_index = dev;
  i.cq_id = id;
  i.nr_cqe = 256;
  i.comp_vector = 3;
  i.poll_ctx = ctx;
  std::snprintf(i.ibdev, sizeof(i.ibdev), "%s", name);
  return i;
}

dimctl_cq_event cq_event(uint32_t type, uint32_t dev, uint32_t id) {
  dimctl_cq_event e{};
  e.type = type;
  e.info.dev_index = dev;
  e.info.cq_id = id;
  return e;
}

struct NapiFixture : ::testing::Test {
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> map;
  fakes::FakeDirectory dir;
};

// What the fold does per key: every CPU's value added into a zeroed sum with add_cpu().
template <typename V>
V sum_per_cpu(const std::vector<V>& per_cpu) {
  V s{};
  for (const auto& v : per_cpu) add_cpu(s, v);
  return s;
}

TEST(SumPerCpu, AddsEveryCounterOfEveryCpu) {
  const std::vector<dimctl_napi_value> v{napi_v(3, 100, 1, 0, 7), napi_v(5, 20, 0, 2, 1),
                                         napi_v(0, 0)};
  const auto s = sum_per_cpu(v);
  EXPECT_EQ(s.polls, 8u);
  EXPECT_EQ(s.packets, 120u);
  EXPECT_EQ(s.budget_exhausted, 1u);
  EXPECT_EQ(s.empty_polls, 2u);
  EXPECT_EQ(s.bytes, 8u);
}

TEST(SumPerCpu, SumsNear64BitLimitWithoutTruncation) {
  const std::vector<dimctl_napi_value> v{napi_v(1ull << 62, 1ull << 62), napi_v(1ull << 62, 5)};
  EXPECT_EQ(sum_per_cpu(v).polls, 1ull << 63);
  EXPECT_EQ(sum_per_cpu(v).packets, (1ull << 62) + 5);
}

TEST(SumPerCpu, CqLastModifyComesFromTheMostRecentCpu) {
  dimctl_cq_value a{}, b{};
  a.modifies = 2;
  a.last_modify_ns = 500;
  a.last_comps = 32;
  a.last_usec = 8;
  b.modifies = 1;
  b.last_modify_ns = 900;
  b.last_comps = 64;
  b.last_usec = 16;
  b.completions = 10;
  a.completions = 5;
  a.exhausted = 2;
  b.exhausted = 1;
  const std::vector<dimctl_cq_value> v{a, b, dimctl_cq_value{}};
  const auto s = sum_per_cpu(v);
  EXPECT_EQ(s.modifies, 3u);
  EXPECT_EQ(s.completions, 15u);
  EXPECT_EQ(s.exhausted, 3u);
  EXPECT_EQ(s.last_comps, 64u);
  EXPECT_EQ(s.last_usec, 16u);
}

TEST_F(NapiFixture, LabelsAndSumsEachNapi) {
  map.entries[{7, 300}] = {napi_v(10, 640, 2, 1), napi_v(5, 10, 0, 0)};
  map.entries[{7, 301}] = {napi_v(1, 1), napi_v(0, 0)};
  dir.names[7] = "eth9";
  dir.listed.insert(7);
  dir.napis[{7, 300}] = NapiInfo{.queue = 0, .irq = 42, .rx_bytes = std::nullopt};
  dir.napis[{7, 301}] = NapiInfo{.queue = 1, .irq = 43, .rx_bytes = std::nullopt};
  CounterAggregator agg(dir, false);
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->queues.size(), 2u);
  const auto& a = q->queues[0];
  EXPECT_EQ(q->device_of(a), "eth9");
  EXPECT_EQ(a.key.napi_id, 300u);
  EXPECT_EQ(a.queue, 0);
  EXPECT_EQ(a.irq, 42);
  EXPECT_EQ(a.polls, 15u);
  EXPECT_EQ(a.packets, 650u);
  EXPECT_EQ(a.budget_exhausted, 2u);
  EXPECT_EQ(a.events(), 13u);
  EXPECT_FALSE(a.has_bytes);
  EXPECT_EQ(q->queues[1].irq, 43);
  EXPECT_TRUE(map.erased.empty());
}

TEST_F(NapiFixture, RetiresNapisOfDeletedDevicesAndErasesThem) {
  map.entries[{7, 300}] = {napi_v(1, 1)};
  map.entries[{8, 400}] = {napi_v(2, 2)};
  dir.names[8] = "eth8";  // ifindex 7 is gone
  CounterAggregator agg(dir, false);
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->queues.size(), 1u);
  EXPECT_EQ(q->queues[0].key.ifindex, 8u);
  EXPECT_EQ(q->devices, (std::vector<std::string>{"eth8"}));  // no name without a queue
  ASSERT_EQ(map.erased.size(), 1u);
  EXPECT_EQ(map.erased[0].ifindex, 7u);
  EXPECT_EQ(agg.stats().queues_retired, 1u);
  EXPECT_EQ(map.entries.size(), 1u);
}

TEST_F(NapiFixture, RetiresANapiNetlinkNoLongerListsButKeepsUnlistedDevices) {
  map.entries[{7, 300}] = {napi_v(1, 1)};
  map.entries[{7, 301}] = {napi_v(1, 1)};
  map.entries[{9, 500}] = {napi_v(1, 1)};
  dir.names = {{7, "eth7"}, {9, "old0"}};
  dir.listed = {7};  // netlink lists eth7's NAPIs; old0's driver/kernel lists none
  dir.napis[{7, 300}] = NapiInfo{};
  CounterAggregator agg(dir, false);
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->queues.size(), 2u);
  EXPECT_EQ(q->queues[0].key.napi_id, 300u);
  EXPECT_EQ(q->queues[1].key.napi_id, 500u);
  EXPECT_EQ(q->queues[1].queue, -1);
  ASSERT_EQ(map.erased.size(), 1u);
  EXPECT_EQ(map.erased[0].napi_id, 301u);
}

TEST_F(NapiFixture, ANapiOrDeviceTheStaleViewLacksIsKeptWhenAReReadFindsIt) {
  // The directory reads the kernel only on change: a NAPI that appeared since (eth7's 301) and
  // a device created since (ifindex 9) are missing from its view, not gone.
  map.entries[{7, 300}] = {napi_v(1, 1)};
  map.entries[{7, 301}] = {napi_v(2, 2)};
  map.entries[{9, 500}] = {napi_v(3, 3)};
  dir.names = {{7, "eth7"}};
  dir.listed = {7};
  dir.napis[{7, 300}] = NapiInfo{.queue = 0, .irq = 40, .rx_bytes = std::nullopt};
  fakes::FakeDirectory::View now;
  now.names = {{7, "eth7"}, {9, "new0"}};
  now.listed = {7, 9};
  now.napis[{7, 300}] = NapiInfo{.queue = 0, .irq = 40, .rx_bytes = std::nullopt};
  now.napis[{7, 301}] = NapiInfo{.queue = 1, .irq = 41, .rx_bytes = std::nullopt};
  now.napis[{9, 500}] = NapiInfo{.queue = 0, .irq = 50, .rx_bytes = std::nullopt};
  dir.kernel = now;
  CounterAggregator agg(dir, false);
  ASSERT_TRUE(dir.refresh().ok());
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(dir.rereads, 1);  // one re-read served both
  ASSERT_EQ(q->queues.size(), 3u);
  EXPECT_EQ(q->queues[1].key.napi_id, 301u);
  EXPECT_EQ(q->queues[1].irq, 41);
  EXPECT_EQ(q->device_of(q->queues[2]), "new0");
  EXPECT_EQ(q->queues[2].irq, 50);
  EXPECT_EQ(q->devices, (std::vector<std::string>{"eth7", "new0"}));  // each once
  EXPECT_TRUE(map.erased.empty());
  EXPECT_EQ(agg.stats().queues_retired, 0u);
}

TEST_F(NapiFixture, WhatAReReadConfirmsGoneIsRetiredAndOneReReadServesASample) {
  map.entries[{7, 300}] = {napi_v(1, 1)};
  map.entries[{7, 301}] = {napi_v(1, 1)};
  map.entries[{8, 400}] = {napi_v(1, 1)};
  dir.names = {{7, "eth7"}};  // ifindex 8 is gone, and eth7's 301
  dir.listed = {7};
  dir.napis[{7, 300}] = NapiInfo{};
  dir.kernel = fakes::FakeDirectory::View{dir.names, dir.listed, dir.napis};  // the kernel agrees
  CounterAggregator agg(dir, false);
  ASSERT_TRUE(dir.refresh().ok());
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(dir.rereads, 1);  // not one per miss
  ASSERT_EQ(q->queues.size(), 1u);
  EXPECT_EQ(q->queues[0].key.napi_id, 300u);
  ASSERT_EQ(map.erased.size(), 2u);
  EXPECT_EQ(agg.stats().queues_retired, 2u);
  // The next sample with nothing missing asks for no re-read.
  ASSERT_TRUE(dir.refresh().ok());
  ASSERT_TRUE(agg.queues(map).ok());
  EXPECT_EQ(dir.rereads, 1);
}

TEST_F(NapiFixture, QstatsBytesAreCumulativeSinceFirstSight) {
  map.entries[{7, 300}] = {napi_v(1, 1)};
  dir.names[7] = "eth7";
  dir.napis[{7, 300}] = NapiInfo{.queue = 0, .irq = -1, .rx_bytes = 1'000'000};
  CounterAggregator agg(dir, false);
  auto q1 = agg.queues(map);
  ASSERT_TRUE(q1.ok());
  EXPECT_TRUE(q1->queues[0].has_bytes);
  EXPECT_EQ(q1->queues[0].bytes, 0u);
  dir.napis[{7, 300}].rx_bytes = 1'001'500;
  auto q2 = agg.queues(map);
  ASSERT_TRUE(q2.ok());
  EXPECT_EQ(q2->queues[0].bytes, 1500u);
}

TEST_F(NapiFixture, ByteProgramBytesWinOverQstats) {
  map.entries[{7, 300}] = {napi_v(1, 1, 0, 0, 60), napi_v(1, 1, 0, 0, 40)};
  dir.names[7] = "eth7";
  CounterAggregator agg(dir, true);
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->queues[0].has_bytes);
  EXPECT_EQ(q->queues[0].bytes, 100u);
}

TEST_F(NapiFixture, ByteDeviceFilterLimitsMapBytesToTheSelectedDevices) {
  // 7 selected; 8 unselected with qstats; 9 unselected without qstats but with map bytes left
  // from an earlier selection (the BPF program stopped adding to it).
  map.entries[{7, 300}] = {napi_v(1, 1, 0, 0, 60), napi_v(1, 1, 0, 0, 40)};
  map.entries[{8, 400}] = {napi_v(1, 1, 0, 0, 0)};
  map.entries[{9, 500}] = {napi_v(1, 1, 0, 0, 999)};
  dir.names = {{7, "eth7"}, {8, "eth8"}, {9, "eth9"}};
  dir.napis[{8, 400}] = NapiInfo{.queue = 0, .irq = -1, .rx_bytes = 5000};
  CounterAggregator agg(dir, true);
  agg.set_byte_devices(std::set<uint32_t>{7});
  auto q1 = agg.queues(map);
  ASSERT_TRUE(q1.ok());
  ASSERT_EQ(q1->queues.size(), 3u);
  EXPECT_TRUE(q1->queues[0].has_bytes);
  EXPECT_EQ(q1->queues[0].bytes, 100u);
  EXPECT_TRUE(q1->queues[1].has_bytes);  // qstats, cumulative since first sight
  EXPECT_EQ(q1->queues[1].bytes, 0u);
  EXPECT_FALSE(q1->queues[2].has_bytes);
  EXPECT_EQ(q1->queues[2].bytes, 0u);
  dir.napis[{8, 400}].rx_bytes = 5600;
  auto q2 = agg.queues(map);
  ASSERT_TRUE(q2.ok());
  EXPECT_EQ(q2->queues[1].bytes, 600u);

  // No device selected (globs match nothing yet): no map bytes anywhere.
  agg.set_byte_devices(std::set<uint32_t>{});
  auto q3 = agg.queues(map);
  ASSERT_TRUE(q3.ok());
  EXPECT_FALSE(q3->queues[0].has_bytes);
  EXPECT_FALSE(q3->queues[2].has_bytes);
  // Back to every device.
  agg.set_byte_devices(std::nullopt);
  auto q4 = agg.queues(map);
  ASSERT_TRUE(q4.ok());
  EXPECT_TRUE(q4->queues[2].has_bytes);
  EXPECT_EQ(q4->queues[2].bytes, 999u);
}

TEST_F(NapiFixture, MapErrorsNameTheMap) {
  map.fail = true;
  CounterAggregator agg(dir, false);
  auto q = agg.queues(map);
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.error().message(), HasSubstr("napi_stats"));
  EXPECT_EQ(q.error().code(), EPERM);
}

TEST_F(NapiFixture, SnapshotIsInKeyOrderAndNamesAreLookedUpOncePerDevice) {
  // The fake hands keys in byte order (ifindex 256 before 7 on little-endian): not key order.
  map.entries[{256, 2}] = {napi_v(1, 1)};
  map.entries[{7, 301}] = {napi_v(1, 1)};
  map.entries[{7, 300}] = {napi_v(1, 1)};
  map.entries[{256, 1}] = {napi_v(1, 1)};
  map.entries[{7, 299}] = {napi_v(1, 1)};
  dir.names = {{7, "eth7"}, {256, "eth256"}};
  CounterAggregator agg(dir, false);
  auto q = agg.queues(map);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->queues.size(), 5u);
  EXPECT_TRUE(std::is_sorted(q->queues.begin(), q->queues.end(),
                             [](const auto& a, const auto& b) { return a.key < b.key; }));
  EXPECT_EQ(q->queues[0].key.napi_id, 299u);
  EXPECT_EQ(q->device_of(q->queues[4]), "eth256");
  EXPECT_EQ(q->devices, (std::vector<std::string>{"eth7", "eth256"}));
  EXPECT_EQ(dir.ifname_calls[7], 1);
  EXPECT_EQ(dir.ifname_calls[256], 1);
}

struct CqFixture : ::testing::Test {
  fakes::FakePerCpuMap<dimctl_cq_key, dimctl_cq_value> stats;
  fakes::FakeMap<dimctl_cq_key, dimctl_cq_info> info;
  fakes::FakeDirectory dir;
  CounterAggregator agg{dir, false};

  static dimctl_cq_value v(uint64_t events, uint64_t completions) {
    dimctl_cq_value x{};
    x.events = events;
    x.completions = completions;
    x.polls = events;
    return x;
  }
};

TEST_F(CqFixture, LabelsFromCqInfoAndSums) {
  stats.entries[{1, 5}] = {v(3, 30), v(1, 2)};
  info.entries[{1, 5}] = cq_info(1, 5, "mlx5_0", DIMCTL_POLL_SOFTIRQ);
  auto c = agg.cqs(stats, info, {});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].ibdev, "mlx5_0");
  EXPECT_EQ((*c)[0].poll_ctx, seam::PollContext::kSoftirq);
  EXPECT_EQ((*c)[0].nr_cqe, 256u);
  EXPECT_EQ((*c)[0].comp_vector, 3);
  EXPECT_EQ((*c)[0].events, 4u);
  EXPECT_EQ((*c)[0].completions, 32u);
}

TEST_F(CqFixture, SameRestrackIdOnTwoDevicesAreTwoCqs) {
  stats.entries[{1, 5}] = {v(1, 1)};
  stats.entries[{2, 5}] = {v(2, 2)};
  auto c = agg.cqs(stats, info, {});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[1].events, 2u);
}

TEST_F(CqFixture, InfoIsJoinedByKeyAndTheSnapshotIsInKeyOrder) {
  stats.entries[{256, 1}] = {v(1, 1)};
  stats.entries[{1, 9}] = {v(2, 2)};
  stats.entries[{1, 5}] = {v(3, 3)};
  stats.entries[{1, 7}] = {v(4, 4)};  // no info (yet)
  info.entries[{1, 5}] = cq_info(1, 5, "mlx5_1", DIMCTL_POLL_SOFTIRQ);
  info.entries[{1, 6}] = cq_info(1, 6, "mlx5_1", DIMCTL_POLL_DIRECT);  // never polled
  info.entries[{1, 9}] = cq_info(1, 9, "mlx5_1", DIMCTL_POLL_WORKQUEUE);
  info.entries[{256, 1}] = cq_info(256, 1, "rxe0", DIMCTL_POLL_UNBOUND_WORKQUEUE);
  auto c = agg.cqs(stats, info, {});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 4u);
  EXPECT_EQ((*c)[0].key, (seam::CqKey{1, 5}));
  EXPECT_EQ((*c)[0].poll_ctx, seam::PollContext::kSoftirq);
  EXPECT_EQ((*c)[0].events, 3u);
  EXPECT_EQ((*c)[1].key, (seam::CqKey{1, 7}));
  EXPECT_EQ((*c)[1].ibdev, "");
  EXPECT_EQ((*c)[1].comp_vector, -1);
  EXPECT_EQ((*c)[2].key, (seam::CqKey{1, 9}));
  EXPECT_EQ((*c)[2].poll_ctx, seam::PollContext::kWorkqueue);
  EXPECT_EQ((*c)[3].key, (seam::CqKey{256, 1}));
  EXPECT_EQ((*c)[3].ibdev, "rxe0");
  EXPECT_EQ((*c)[3].poll_ctx, seam::PollContext::kUnboundWorkqueue);
}

TEST_F(CqFixture, MapErrorsNameTheMap) {
  stats.fail = true;
  auto c = agg.cqs(stats, info, {});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message(), HasSubstr("cq_stats"));
}

TEST_F(CqFixture, FreedCqIsLeftOutAndErasedFromBothMaps) {
  stats.entries[{1, 5}] = {v(1, 1)};
  stats.entries[{1, 6}] = {v(1, 1)};
  info.entries[{1, 5}] = cq_info(1, 5, "rxe0", DIMCTL_POLL_WORKQUEUE);
  const std::vector<dimctl_cq_event> ev{cq_event(DIMCTL_CQ_EVENT_FREE, 1, 5)};
  auto c = agg.cqs(stats, info, ev);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].key.cq_id, 6u);
  EXPECT_EQ(stats.entries.count({1, 5}), 0u);
  EXPECT_EQ(info.entries.count({1, 5}), 0u);
  EXPECT_EQ(agg.stats().cqs_retired, 1u);
}

TEST_F(CqFixture, FreedThenReallocatedIdIsSkippedOnceButKept) {
  stats.entries[{1, 5}] = {v(1, 1)};
  info.entries[{1, 5}] = cq_info(1, 5, "rxe0", DIMCTL_POLL_DIRECT);
  const std::vector<dimctl_cq_event> ev{cq_event(DIMCTL_CQ_EVENT_FREE, 1, 5),
                                        cq_event(DIMCTL_CQ_EVENT_ALLOC, 1, 5)};
  auto c = agg.cqs(stats, info, ev);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->empty());
  EXPECT_EQ(stats.entries.count({1, 5}), 1u);
  EXPECT_EQ(info.entries.count({1, 5}), 1u);
  auto again = agg.cqs(stats, info, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 1u);
}

TEST_F(CqFixture, FreeOfACqNeverPolledIsNotAnError) {
  const std::vector<dimctl_cq_event> ev{cq_event(DIMCTL_CQ_EVENT_FREE, 1, 9)};
  auto c = agg.cqs(stats, info, ev);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->empty());
}

// ---- in place (BpfCollector::sample_into) ---------------------------------------------------

// Every field and the name table, so that snapshots compare whole (and a difference reads as
// one line).
std::vector<std::string> fields(const seam::Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& q : s.queues) {
    out.push_back(
        fmt::format("{}/{} {} (#{}) queue={} irq={} polls={} packets={} exhausted={} empty={} "
                    "bytes={} has_bytes={}",
                    q.key.ifindex, q.key.napi_id, s.device_of(q), q.device_ix, q.queue, q.irq,
                    q.polls, q.packets, q.budget_exhausted, q.empty_polls, q.bytes, q.has_bytes));
  }
  out.push_back(fmt::format("devices: {}", fmt::join(s.devices, " ")));
  return out;
}

std::vector<std::string> fields(const std::vector<seam::CqCounters>& v) {
  std::vector<std::string> out;
  for (const auto& c : v) {
    out.push_back(
        fmt::format("{}/{} {} ctx={} nr_cqe={} vector={} {} {} {} {} {} {} kernel={} {} {}",
                    c.key.dev_index, c.key.cq_id, c.ibdev, static_cast<int>(c.poll_ctx), c.nr_cqe,
                    c.comp_vector, c.schedules, c.reschedules, c.events, c.polls, c.completions,
                    c.poll_errors, c.kernel_modifies, c.kernel_comps, c.kernel_usec));
  }
  return out;
}

template <typename K>
std::vector<uint64_t> packed_keys(const std::vector<K>& keys) {
  std::vector<uint64_t> out;
  for (const auto& k : keys) {
    uint64_t p;
    static_assert(sizeof(K) == sizeof(p));
    std::memcpy(&p, &k, sizeof(p));
    out.push_back(p);
  }
  return out;
}

// Two aggregators over two identically driven maps: `in_place` writes each period into the
// snapshot it wrote the period before (BpfCollector::sample_into with the controller's one
// Snapshot), `fresh` returns a new one (BpfCollector::sample()). Same directory, so the same
// names.
struct InPlaceNapiFixture : ::testing::Test {
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> map_a, map_b;
  fakes::FakeDirectory dir;
  CounterAggregator in_place{dir, true}, fresh{dir, true};
  seam::Snapshot kept;

  void set(dimctl_napi_key k, std::vector<dimctl_napi_value> v) {
    map_a.entries[k] = v;
    map_b.entries[k] = std::move(v);
  }
  // One period; the allocations of the in-place call.
  uint64_t period() {
    AllocationCount allocs;
    auto a = in_place.queues(map_a, kept);
    const uint64_t n = allocs();
    EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message());
    auto b = fresh.queues(map_b);
    EXPECT_TRUE(b.ok());
    if (b.ok()) {
      EXPECT_EQ(fields(kept), fields(*b));
    }
    EXPECT_EQ(packed_keys(map_a.erased), packed_keys(map_b.erased));  // the same retirements
    EXPECT_EQ(in_place.stats().queues_retired, fresh.stats().queues_retired);
    return n;
  }
};

TEST_F(InPlaceNapiFixture, EqualsANewSnapshotEveryPeriodAndAllocatesNothingInSteadyState) {
  // eth7: netlink lists its NAPIs (queue, IRQ, qstats bytes). wan0: lists none, and the byte
  // program counts it (map bytes).
  dir.names = {{7, "eth7"}, {9, "wan0"}};
  dir.listed = {7};
  dir.napis[{7, 300}] = NapiInfo{.queue = 0, .irq = 42, .rx_bytes = 1000};
  dir.napis[{7, 301}] = NapiInfo{.queue = 1, .irq = 43, .rx_bytes = 2000};
  in_place.set_byte_devices(std::set<uint32_t>{9});
  fresh.set_byte_devices(std::set<uint32_t>{9});
  set({7, 300}, {napi_v(10, 100, 1, 2), napi_v(1, 1)});
  set({7, 301}, {napi_v(20, 200)});
  set({9, 500}, {napi_v(30, 300, 0, 0, 3000), napi_v(0, 0, 0, 0, 5)});
  set({9, 501}, {napi_v(40, 400, 0, 0, 4000)});
  // Whatever `out` holds is overwritten (the contract only promises the last period's, or none).
  kept.queues.resize(7);
  kept.devices = {"a name longer than the small-string buffer", "x", "y"};
  kept.queues[5].has_bytes = true;
  kept.queues[5].irq = 99;
  kept.queues[5].device_ix = 2;

  period();  // 1
  ASSERT_EQ(kept.queues.size(), 4u);
  ASSERT_EQ(kept.devices.size(), 2u);
  EXPECT_EQ(kept.queues[0].irq, 42);
  EXPECT_TRUE(kept.queues[0].has_bytes);  // qstats
  EXPECT_EQ(kept.device_of(kept.queues[2]), "wan0");
  EXPECT_EQ(kept.queues[2].bytes, 3005u);  // map bytes

  // 2: the same NAPIs, new counters: nothing allocated, the same storage.
  const auto* data = kept.queues.data();
  const size_t capacity = kept.queues.capacity();
  const auto* names = kept.devices.data();
  set({7, 300}, {napi_v(15, 150, 1, 3), napi_v(1, 1)});
  set({9, 501}, {napi_v(41, 410, 0, 0, 4100)});
  dir.napis[{7, 300}].rx_bytes = 1600;
  EXPECT_EQ(period(), 0u);
  EXPECT_EQ(kept.queues.data(), data);
  EXPECT_EQ(kept.queues.capacity(), capacity);
  EXPECT_EQ(kept.devices.data(), names);
  EXPECT_EQ(kept.queues[0].bytes, 600u);

  // 3: napi 299 appears on eth7 ahead of the others (every entry moves one down), 301 vanishes
  // from netlink (retired), wan0 is renamed and gains napi 502. Entry 0 was 300 (IRQ 42, qstats
  // bytes): 299 has neither.
  dir.napis[{7, 299}] = NapiInfo{.queue = 2, .irq = -1, .rx_bytes = std::nullopt};
  set({7, 299}, {napi_v(1, 1)});
  dir.napis.erase({7, 301});
  dir.names[9] = "uplink0";
  set({9, 502}, {napi_v(2, 2, 0, 0, 64)});
  period();
  ASSERT_EQ(kept.queues.size(), 5u);
  EXPECT_EQ(kept.queues[0].key.napi_id, 299u);
  EXPECT_EQ(kept.queues[0].irq, -1);
  EXPECT_FALSE(kept.queues[0].has_bytes);
  EXPECT_EQ(kept.queues[1].key.napi_id, 300u);
  for (size_t i = 2; i < kept.queues.size(); ++i) {
    EXPECT_EQ(kept.device_of(kept.queues[i]), "uplink0");
  }
  EXPECT_EQ(map_a.erased.size(), 1u);

  // 4: eth7 is deleted: both its NAPIs retired, the snapshot shrinks to wan0's (entry 0 was
  // eth7's napi 299 with a queue index: now wan0's 500 without).
  dir.names.erase(7);
  period();
  ASSERT_EQ(kept.queues.size(), 3u);
  EXPECT_EQ(kept.queues[0].key, (seam::QueueKey{9, 500}));
  EXPECT_EQ(kept.queues[0].queue, -1);
  EXPECT_EQ(kept.devices, (std::vector<std::string>{"uplink0"}));
  EXPECT_EQ(map_a.erased.size(), 3u);

  // 5, 6: steady again.
  data = kept.queues.data();
  set({9, 500}, {napi_v(31, 310, 0, 0, 3100)});
  EXPECT_EQ(period(), 0u);
  EXPECT_EQ(period(), 0u);
  EXPECT_EQ(kept.queues.data(), data);
}

TEST_F(InPlaceNapiFixture, AFailedReadNamesTheMapAndTheNextPeriodRewritesTheSnapshot) {
  dir.names = {{7, "eth7"}};
  set({7, 300}, {napi_v(1, 1)});
  period();
  map_a.fail = true;
  auto r = in_place.queues(map_a, kept);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr("napi_stats"));
  map_a.fail = false;
  set({7, 301}, {napi_v(2, 2)});
  period();
  EXPECT_EQ(kept.queues.size(), 2u);
}

struct InPlaceCqFixture : ::testing::Test {
  fakes::FakePerCpuMap<dimctl_cq_key, dimctl_cq_value> stats_a, stats_b;
  fakes::FakeMap<dimctl_cq_key, dimctl_cq_info> info_a, info_b;
  fakes::FakeDirectory dir;
  CounterAggregator in_place{dir, false}, fresh{dir, false};
  std::vector<seam::CqCounters> kept;

  static dimctl_cq_value v(uint64_t events, uint64_t completions, uint32_t comps = 0) {
    dimctl_cq_value x{};
    x.schedules = events + 1;
    x.events = events;
    x.completions = completions;
    x.polls = events;
    x.modifies = comps != 0 ? 1 : 0;
    x.last_comps = comps;
    x.last_usec = comps / 2;
    return x;
  }
  void set(dimctl_cq_key k, dimctl_cq_value x) {
    stats_a.entries[k] = {x};
    stats_b.entries[k] = {x};
  }
  void set_info(dimctl_cq_info i) {
    info_a.entries[{i.dev_index, i.cq_id}] = i;
    info_b.entries[{i.dev_index, i.cq_id}] = i;
  }
  uint64_t period(const std::vector<dimctl_cq_event>& events = {}) {
    AllocationCount allocs;
    auto a = in_place.cqs(stats_a, info_a, events, kept);
    const uint64_t n = allocs();
    EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message());
    auto b = fresh.cqs(stats_b, info_b, events);
    EXPECT_TRUE(b.ok());
    if (b.ok()) {
      EXPECT_EQ(fields(kept), fields(*b));
    }
    EXPECT_EQ(stats_a.entries.size(), stats_b.entries.size());
    EXPECT_EQ(info_a.entries.size(), info_b.entries.size());
    return n;
  }
};

TEST_F(InPlaceCqFixture, EqualsANewSnapshotEveryPeriodAndAllocatesNothingInSteadyState) {
  // An IB device name longer than the small-string buffer: its string keeps its heap storage.
  const char* long_name = "rocep1s0f0-with-a-long-name";
  set({1, 5}, v(3, 30, 64));
  set_info(cq_info(1, 5, "mlx5_0", DIMCTL_POLL_SOFTIRQ));
  set({1, 7}, v(4, 40));  // no info (yet)
  set({2, 1}, v(5, 50));
  set_info(cq_info(2, 1, long_name, DIMCTL_POLL_WORKQUEUE));
  period();  // 1
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[2].ibdev, long_name);

  // 2: steady.
  const auto* data = kept.data();
  const char* name_data = kept[2].ibdev.data();
  set({1, 5}, v(6, 60, 32));
  set({2, 1}, v(7, 70));
  EXPECT_EQ(period(), 0u);
  EXPECT_EQ(kept.data(), data);
  EXPECT_EQ(kept[2].ibdev.data(), name_data);

  // 3: CQ 1/5 (entry 0, labelled) is freed; 1/2 (no info) and 1/3 (info) appear ahead of it,
  // and 1/7 gets its info. Entry 0 is now 1/2: no name, no poll context, no comp vector.
  set({1, 2}, v(1, 1));
  set({1, 3}, v(2, 2));
  set_info(cq_info(1, 3, "mlx5_0", DIMCTL_POLL_UNBOUND_WORKQUEUE));
  set_info(cq_info(1, 7, "mlx5_0", DIMCTL_POLL_DIRECT));
  period({cq_event(DIMCTL_CQ_EVENT_FREE, 1, 5)});
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].key, (seam::CqKey{1, 2}));
  EXPECT_EQ(kept[0].ibdev, "");
  EXPECT_EQ(kept[0].comp_vector, -1);
  EXPECT_EQ(kept[0].kernel_comps, 0u);
  EXPECT_EQ(kept[2].ibdev, "mlx5_0");
  EXPECT_EQ(stats_a.entries.count({1, 5}), 0u);

  // 4: steady again.
  data = kept.data();
  set({1, 2}, v(9, 9));
  EXPECT_EQ(period(), 0u);
  EXPECT_EQ(kept.data(), data);
}

TEST(PollContext, DimctlCodesMapToTheModel) {
  EXPECT_EQ(poll_context_from_code(DIMCTL_POLL_DIRECT), seam::PollContext::kDirect);
  EXPECT_EQ(poll_context_from_code(DIMCTL_POLL_SOFTIRQ), seam::PollContext::kSoftirq);
  EXPECT_EQ(poll_context_from_code(DIMCTL_POLL_WORKQUEUE), seam::PollContext::kWorkqueue);
  EXPECT_EQ(poll_context_from_code(DIMCTL_POLL_UNBOUND_WORKQUEUE),
            seam::PollContext::kUnboundWorkqueue);
}

// The napi_slots array: per slot index, one dimctl_napi_slot per CPU. read() lays the slots out
// as the kernel's batch does and folds them with the collector's own fold_napi_slots(), as
// BpfNapiSlotArray does.
struct SlotRow {
  uint32_t index = 0;
  std::vector<dimctl_napi_slot> per_cpu;
};

class FakeSlots final : public NapiSlotArray {
 public:
  std::vector<SlotRow> slots;
  Result<void> read(std::vector<NapiEntry>& out) override {
    size_t ncpus = 1;
    for (const auto& row : slots) ncpus = std::max(ncpus, row.per_cpu.size());
    std::vector<uint8_t> values;
    for (const auto& row : slots) fakes::append_per_cpu_row(values, row.per_cpu, ncpus);
    fold_napi_slots(values.data(), slots.size(), ncpus, out);
    return ok();
  }
  Result<void> clear(uint32_t index, const dimctl_napi_key& key) override {
    for (auto& e : slots) {
      if (e.index != index) continue;
      for (auto& s : e.per_cpu) {
        if (s.key.ifindex == key.ifindex && s.key.napi_id == key.napi_id) s = dimctl_napi_slot{};
      }
    }
    return ok();
  }
};

dimctl_napi_slot slot(uint32_t ifindex, uint32_t napi, uint64_t polls, uint64_t packets) {
  dimctl_napi_slot s{};
  s.key = {ifindex, napi};
  s.v = napi_v(polls, packets);
  return s;
}

const NapiEntry* find(const std::vector<NapiEntry>& entries, uint32_t ifindex, uint32_t napi) {
  for (const auto& e : entries) {
    if (e.key.ifindex == ifindex && e.key.napi_id == napi) return &e;
  }
  return nullptr;
}

// A value whose size is not a multiple of 8: the kernel pads each CPU's copy to 8 bytes.
struct Odd {
  uint32_t a, b, c;
};
void add_cpu(Odd& to, const Odd& v) {
  to.a += v.a;
  to.b += v.b;
  to.c += v.c;
}

TEST(FoldPerCpu, SumsEachKeysCpusAcrossThePaddedStride) {
  static_assert(per_cpu_stride(sizeof(Odd)) == 16);
  fakes::FakePerCpuMap<uint32_t, Odd> map;
  map.batch = 1;  // one fold call per key, like a batch of one
  map.entries[4] = {Odd{1, 2, 3}, Odd{10, 20, 30}, Odd{100, 200, 300}};
  map.entries[9] = {Odd{0, 0, 1}, Odd{0, 0, 0}, Odd{5, 0, 0}};
  std::vector<KeyValue<uint32_t, Odd>> out;
  ASSERT_TRUE(map.read(out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, 4u);
  EXPECT_EQ(out[0].value.a, 111u);
  EXPECT_EQ(out[0].value.b, 222u);
  EXPECT_EQ(out[0].value.c, 333u);
  EXPECT_EQ(out[1].key, 9u);
  EXPECT_EQ(out[1].value.a, 5u);
  EXPECT_EQ(out[1].value.c, 1u);
}

TEST(FoldPerCpu, AppendsAndReusesTheCallersVector) {
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> map;
  map.entries[{7, 1}] = {napi_v(1, 10), napi_v(2, 20)};
  map.entries[{7, 2}] = {napi_v(3, 30), napi_v(4, 40)};
  map.entries[{7, 3}] = {napi_v(5, 50), napi_v(6, 60)};
  std::vector<NapiEntry> out;
  ASSERT_TRUE(map.read(out).ok());  // two batches (2 + 1 keys)
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(find(out, 7, 3)->value.packets, 110u);
  const auto* data = out.data();
  out.clear();
  ASSERT_TRUE(map.read(out).ok());
  EXPECT_EQ(out.data(), data);  // the same storage: no allocation
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(find(out, 7, 1)->value.polls, 3u);  // summed anew, nothing carried over
}

TEST(FoldNapiSlots, OneEntryPerNapiHoldingTheSlotSummedOverItsCpus) {
  FakeSlots slots;
  // Slot 300: CPUs 0 and 3 hold napi 300, CPU 2 holds napi 812 (same slot), CPU 1 is free.
  slots.slots.push_back(
      {300, {slot(7, 300, 1, 10), dimctl_napi_slot{}, slot(7, 812, 4, 40), slot(7, 300, 2, 20)}});
  slots.slots.push_back({301, std::vector<dimctl_napi_slot>(4)});  // free everywhere
  slots.slots.push_back({302, {slot(8, 302, 1, 1), slot(8, 302, 1, 1), slot(8, 302, 1, 1)}});
  std::vector<NapiEntry> out;
  ASSERT_TRUE(slots.read(out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(find(out, 7, 300)->value.polls, 3u);
  EXPECT_EQ(find(out, 7, 300)->value.packets, 30u);
  EXPECT_EQ(find(out, 7, 812)->value.packets, 40u);
  EXPECT_EQ(find(out, 8, 302)->value.polls, 3u);
}

TEST(NapiSources, MergesSlotsOfEveryCpuWithTheOverflowHash) {
  FakeSlots slots;
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> hash;
  // Slot 300 % 512: CPU0 holds napi 300, CPU1 holds napi 812 (same slot, other NAPI).
  slots.slots.push_back({300, {slot(7, 300, 2, 20), slot(7, 812, 1, 1)}});
  slots.slots.push_back({301, {dimctl_napi_slot{}, dimctl_napi_slot{}}});  // free
  // napi 300 overflowed to the hash on CPU1 (its slot there is taken by 812).
  hash.entries[{7, 300}] = {napi_v(0, 0), napi_v(3, 30)};
  NapiSources src(slots, hash);
  std::vector<NapiEntry> all;
  ASSERT_TRUE(src.read(all).ok());
  ASSERT_EQ(all.size(), 2u);
  const NapiEntry* a = find(all, 7, 300);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->value.packets, 50u);
  EXPECT_EQ(a->value.polls, 5u);
  ASSERT_NE(find(all, 7, 812), nullptr);
  EXPECT_EQ(find(all, 7, 812)->value.packets, 1u);

  // Retiring napi 300 clears its slot copy and its hash entry, not napi 812.
  ASSERT_TRUE(src.erase({7, 300}).ok());
  EXPECT_TRUE(hash.entries.empty());
  std::vector<NapiEntry> after;
  ASSERT_TRUE(src.read(after).ok());
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].key.napi_id, 812u);
}

TEST(NapiSources, HashKeysMeetOnlyTheSlotEntryOfTheirOwnKey) {
  FakeSlots slots;
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> hash;
  // Slot 5 is held by napi 5 of ifindex 2 on both CPUs; the hash holds napi 517 (slot 5, lost
  // the race), napi 5 of another device (slot 5 too), and napi 6 of ifindex 2 (slot 6, free).
  slots.slots.push_back({5, {slot(2, 5, 1, 100), slot(2, 5, 1, 100)}});
  hash.entries[{2, 517}] = {napi_v(1, 7), napi_v(0, 0)};
  hash.entries[{3, 5}] = {napi_v(0, 0), napi_v(1, 9)};
  hash.entries[{2, 6}] = {napi_v(1, 1), napi_v(1, 1)};
  hash.entries[{2, 5}] = {napi_v(1, 1000), napi_v(0, 0)};
  hash.batch = 3;
  NapiSources src(slots, hash);
  std::vector<NapiEntry> out;
  for (int round = 0; round < 2; ++round) {  // a second read into the same storage: same result
    out.clear();
    ASSERT_TRUE(src.read(out).ok());
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(find(out, 2, 5)->value.packets, 1200u);
    EXPECT_EQ(find(out, 2, 5)->value.polls, 3u);
    EXPECT_EQ(find(out, 2, 517)->value.packets, 7u);
    EXPECT_EQ(find(out, 3, 5)->value.packets, 9u);
    EXPECT_EQ(find(out, 2, 6)->value.packets, 2u);
  }
}

TEST(NapiSources, RetiringASlotOnlyKeyIsNotAnError) {
  FakeSlots slots;
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> hash;
  slots.slots.push_back({5, {slot(2, 5, 1, 1)}});
  NapiSources src(slots, hash);
  EXPECT_TRUE(src.erase({2, 5}).ok());
  std::vector<NapiEntry> all;
  ASSERT_TRUE(src.read(all).ok());
  EXPECT_TRUE(all.empty());
}

TEST(NapiSources, AFailingSlotArrayIsNamed) {
  class Failing final : public NapiSlotArray {
   public:
    Result<void> read(std::vector<NapiEntry>&) override {
      return DIMCTL_FAIL(EPERM, "map napi_slots: lookup_batch");
    }
    Result<void> clear(uint32_t, const dimctl_napi_key&) override { return ok(); }
  } slots;
  fakes::FakePerCpuMap<dimctl_napi_key, dimctl_napi_value> hash;
  NapiSources src(slots, hash);
  fakes::FakeDirectory dir;
  CounterAggregator agg(dir, false);
  auto q = agg.queues(src);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code(), EPERM);
  EXPECT_THAT(q.error().message(), HasSubstr("napi_slots"));
  EXPECT_THAT(q.error().message(), HasSubstr("napi_stats"));
}

// ---- skb byte counter device filter ---------------------------------------------------------

TEST(MatchDevices, GlobsAreAnchoredFnmatchPatternsAndAnyGlobSelects) {
  const std::map<uint32_t, std::string> devs{{1, "lo"},    {2, "eth0"},    {3, "eth1"},
                                             {4, "veth0"}, {5, "dimtap0"}, {6, "dimtap12"}};
  EXPECT_EQ(match_devices(devs, {"eth*"}), (std::set<uint32_t>{2, 3}));  // not veth0
  EXPECT_EQ(match_devices(devs, {"eth[!0]"}), (std::set<uint32_t>{3}));
  EXPECT_EQ(match_devices(devs, {"dimtap?", "lo"}), (std::set<uint32_t>{1, 5}));
  EXPECT_EQ(match_devices(devs, {"eth0", "eth*"}), (std::set<uint32_t>{2, 3}));
  EXPECT_EQ(match_devices(devs, {"eth"}), (std::set<uint32_t>{}));  // anchored at the end
  EXPECT_EQ(match_devices(devs, {"*"}).size(), devs.size());
  EXPECT_TRUE(match_devices(devs, {}).empty());
  EXPECT_TRUE(match_devices({}, {"*"}).empty());
}

TEST(SkbBytesFilter, WritesTheMapOnlyWhenTheSetChanges) {
  fakes::FakeIfindexSet set;
  SkbBytesFilter f({"eth*", "dimtap0"}, set, DIMCTL_SKB_BYTES_MAX_DEVICES);
  std::map<uint32_t, std::string> devs{{1, "lo"}, {2, "eth0"}, {4, "veth0"}};

  auto c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(c->added, ::testing::ElementsAre("eth0 (ifindex 2)"));
  EXPECT_EQ(set.held, (std::set<uint32_t>{2}));
  EXPECT_EQ(f.selection(), (std::set<uint32_t>{2}));
  EXPECT_TRUE(f.selected(2));
  EXPECT_FALSE(f.selected(4));

  // Same devices: nothing written.
  set.writes.clear();
  c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->changed());
  EXPECT_TRUE(set.writes.empty());

  // A matching device appears, a non-matching one too: one add.
  devs[9] = "dimtap0";
  devs[10] = "wlan0";
  c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(set.writes, ::testing::ElementsAre("+9"));
  EXPECT_THAT(f.names(), ::testing::ElementsAre("eth0", "dimtap0"));

  // eth0 disappears: one remove.
  set.writes.clear();
  devs.erase(2);
  c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(set.writes, ::testing::ElementsAre("-2"));
  EXPECT_THAT(c->removed, ::testing::ElementsAre("eth0 (ifindex 2)"));
  EXPECT_EQ(set.held, (std::set<uint32_t>{9}));
}

TEST(SkbBytesFilter, FollowsRenames) {
  fakes::FakeIfindexSet set;
  SkbBytesFilter f({"eth*"}, set, DIMCTL_SKB_BYTES_MAX_DEVICES);
  std::map<uint32_t, std::string> devs{{2, "eth0"}, {3, "tmp3"}};
  ASSERT_TRUE(f.sync(devs).ok());
  set.writes.clear();
  // Renamed to another matching name: same ifindex, same entry, only the label changes.
  devs[2] = "eth5";
  ASSERT_TRUE(f.sync(devs).ok());
  EXPECT_TRUE(set.writes.empty());
  EXPECT_THAT(f.names(), ::testing::ElementsAre("eth5"));
  // Renamed away (udev: tmp name -> final name and the reverse).
  devs[2] = "lan0";
  devs[3] = "eth1";
  ASSERT_TRUE(f.sync(devs).ok());
  EXPECT_THAT(set.writes, ::testing::ElementsAre("-2", "+3"));
  EXPECT_EQ(set.held, (std::set<uint32_t>{3}));
}

TEST(SkbBytesFilter, NothingMatchingYetMeansAnEmptySelection) {
  fakes::FakeIfindexSet set;
  SkbBytesFilter f({"dimtap*"}, set, DIMCTL_SKB_BYTES_MAX_DEVICES);
  auto c = f.sync({{1, "lo"}, {2, "eth0"}});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->changed());
  EXPECT_TRUE(f.selection().empty());
  EXPECT_TRUE(set.writes.empty());
}

TEST(SkbBytesFilter, CapacityKeepsTheLowestIfindexesAndSaysHowManyAreLeftOut) {
  fakes::FakeIfindexSet set;
  SkbBytesFilter f({"eth*"}, set, 2);
  std::map<uint32_t, std::string> devs{{5, "eth5"}, {3, "eth3"}, {9, "eth9"}, {4, "eth4"}};
  auto c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->over_capacity, 2u);
  EXPECT_EQ(set.held, (std::set<uint32_t>{3, 4}));
  // One selected device goes: the next one takes its place (removal before addition).
  set.writes.clear();
  devs.erase(3);
  c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->over_capacity, 1u);
  EXPECT_THAT(set.writes, ::testing::ElementsAre("-3", "+5"));
  EXPECT_EQ(set.held, (std::set<uint32_t>{4, 5}));
}

TEST(SkbBytesFilter, AFailedAddIsReportedAndRetriedOnTheNextSync) {
  fakes::FakeIfindexSet set;
  set.fail_add = 3;
  SkbBytesFilter f({"eth*"}, set, DIMCTL_SKB_BYTES_MAX_DEVICES);
  const std::map<uint32_t, std::string> devs{{2, "eth0"}, {3, "eth1"}};
  auto c = f.sync(devs);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), ENOMEM);
  EXPECT_THAT(c.error().message(), HasSubstr("skb_bytes_ifidx"));
  EXPECT_EQ(f.selection(), (std::set<uint32_t>{2}));  // what the map really holds
  set.fail_add = 0;
  c = f.sync(devs);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(c->added, ::testing::ElementsAre("eth1 (ifindex 3)"));
  EXPECT_EQ(f.selection(), set.held);
}

// ---- attach policy --------------------------------------------------------------------------

TEST(ChooseAttach, PrefersTpBtfForCoreTracepoints) {
  fakes::FakeProbe p;
  p.btf_tps = {"/napi_poll"};
  p.tracepoints = {"napi:napi_poll"};
  EXPECT_EQ(choose_attach(p, "", "napi", "napi_poll", false).kind, AttachKind::kTpBtf);
  EXPECT_EQ(choose_attach(p, "", "napi", "napi_poll", true).kind, AttachKind::kRawTp);
}

TEST(ChooseAttach, FallsBackToRawTpWithoutBtfTraceType) {
  fakes::FakeProbe p;
  p.tracepoints = {"napi:napi_poll"};
  auto c = choose_attach(p, "", "napi", "napi_poll", false);
  EXPECT_EQ(c.kind, AttachKind::kRawTp);
  EXPECT_THAT(c.reason, HasSubstr("btf_trace_napi_poll"));
}

TEST(ChooseAttach, NoVmlinuxBtfMeansNothing) {
  fakes::FakeProbe p;
  p.vmlinux = false;
  p.tracepoints = {"napi:napi_poll"};
  auto c = choose_attach(p, "", "napi", "napi_poll", false);
  EXPECT_EQ(c.kind, AttachKind::kNone);
  EXPECT_THAT(c.reason, HasSubstr("BTF"));
}

TEST(ChooseAttach, MissingModuleIsReported) {
  fakes::FakeProbe p;
  auto c = choose_attach(p, "ib_core", "rdma_core", "cq_poll", false);
  EXPECT_EQ(c.kind, AttachKind::kNone);
  EXPECT_EQ(c.reason, "module ib_core not loaded: no rdma_core:cq_poll tracepoint");
  EXPECT_EQ(c.missing_module, "ib_core");
  // Any other reason names no module.
  p.vmlinux = false;
  EXPECT_EQ(choose_attach(p, "", "napi", "napi_poll", false).missing_module, "");
}

// A host without ib_core leaves every rdma_core program idle for one cause: one line says so,
// naming them; other failures keep a line each; attached programs are not reported.
TEST(UnattachedReport, OneLinePerMissingModuleThenOnePerOtherFailure) {
  const std::vector<AttachOutcome> outcomes = {
      {"napi:napi_poll", true, "", ""},
      {"net:netif_receive_skb", false, "", "disabled by config"},
      {"rdma_core:cq_alloc", false, "ib_core", "module ib_core not loaded: no ..."},
      {"rdma_core:cq_poll", false, "ib_core", "module ib_core not loaded: no ..."},
      {"mlx:tp", false, "mlx5_ib", "module mlx5_ib not loaded: no ..."},
      {"rdma_core:cq_free", false, "ib_core", "module ib_core not loaded: no ..."},
  };
  EXPECT_THAT(unattached_report(outcomes),
              ElementsAre("module ib_core not loaded: 3 tracepoint program(s) idle "
                          "(rdma_core:cq_alloc, rdma_core:cq_poll, rdma_core:cq_free)",
                          "module mlx5_ib not loaded: 1 tracepoint program(s) idle (mlx:tp)",
                          "net:netif_receive_skb not attached: disabled by config"));
  EXPECT_THAT(unattached_report(std::span(outcomes).first(1)), IsEmpty());
}

TEST(ChooseAttach, ModuleWithoutBtfIsReported) {
  fakes::FakeProbe p;
  p.modules = {"ib_core"};
  p.tracepoints = {"rdma_core:cq_poll"};
  auto c = choose_attach(p, "ib_core", "rdma_core", "cq_poll", false);
  EXPECT_EQ(c.kind, AttachKind::kNone);
  EXPECT_THAT(c.reason, HasSubstr("CONFIG_DEBUG_INFO_BTF_MODULES"));
}

TEST(ChooseAttach, ModuleTracepointUsesModuleBtf) {
  fakes::FakeProbe p;
  p.modules = {"ib_core"};
  p.modules_btf = {"ib_core"};
  p.btf_tps = {"ib_core/cq_poll"};
  p.tracepoints = {"rdma_core:cq_poll", "rdma_core:cq_modify"};
  EXPECT_EQ(choose_attach(p, "ib_core", "rdma_core", "cq_poll", false).kind, AttachKind::kTpBtf);
  // A tracepoint the module's BTF lacks but the kernel has: raw_tp.
  EXPECT_EQ(choose_attach(p, "ib_core", "rdma_core", "cq_modify", false).kind, AttachKind::kRawTp);
  // A tracepoint this kernel does not have at all.
  auto none = choose_attach(p, "ib_core", "rdma_core", "cq_drain", false);
  EXPECT_EQ(none.kind, AttachKind::kNone);
  EXPECT_THAT(none.reason, HasSubstr("not present"));
}

TEST(ChooseAttach, BuiltInIbCoreUsesVmlinuxBtf) {
  fakes::FakeProbe p;  // CONFIG_INFINIBAND=y: no module, types in vmlinux
  p.btf_tps = {"/cq_poll"};
  EXPECT_EQ(choose_attach(p, "ib_core", "rdma_core", "cq_poll", false).kind, AttachKind::kTpBtf);
}

}  // namespace
}  // namespace dimctl::collector
