// Unit tests of the slot tables (slot_table.h) over plain memory laid out as the BPF programs
// lay out napi_slots and cq_slots, written here as the programs write them: the reader rules,
// the key order and its reuse, retirement and the grace period, the sequence count of CQ slots,
// and the aggregator labelling the table straight from memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <map>
#include <thread>

#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/slot_table.h"
#include "support/count_allocations.h"
#include "unit/collector/fakes.h"

namespace dimctl::collector {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ManualClock final : public seam::Clock {
 public:
  int64_t now = 1'000'000'000;
  int64_t now_ns() const override { return now; }
};

template <typename K>
class RecordingDirectory final : public SlotDirectory<K> {
 public:
  std::vector<K> erased;
  Result<void> erase(const K& key) override {
    erased.push_back(key);
    return ok();
  }
};

class RecordingFreeSlots final : public FreeSlots {
 public:
  std::vector<uint32_t> pushed;
  bool fail = false;
  Result<void> push(uint32_t index) override {
    if (fail) return DIMCTL_FAIL(EPERM, "fake push");
    pushed.push_back(index);
    return ok();
  }
};

// Names only, and says so (knows_napis false), as the netlink directory on kernels before v6.8:
// the aggregator's call-free path. FakeDirectory keeps the default (true): the general path.
class NamesOnlyDirectory final : public NetdevDirectory {
 public:
  std::map<uint32_t, std::string> names;
  Result<void> refresh() override { return ok(); }
  std::optional<std::string> ifname(uint32_t ifindex) const override {
    auto it = names.find(ifindex);
    if (it == names.end()) return std::nullopt;
    return it->second;
  }
  bool lists_napis(uint32_t) const override { return false; }
  std::optional<NapiInfo> napi(uint32_t, uint32_t) const override {
    ADD_FAILURE() << "asked per NAPI although it knows nothing per NAPI";
    return std::nullopt;
  }
  bool knows_napis(uint32_t) const override { return false; }
  Result<std::map<uint32_t, std::string>> devices() override { return names; }
};

std::vector<std::string> fields(const seam::Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& q : s.queues) {
    out.push_back(fmt::format("{}/{} {} #{} q={} irq={} {} {} {} {} bytes={}/{}", q.key.ifindex,
                              q.key.napi_id, s.device_of(q), q.device_ix, q.queue, q.irq, q.polls,
                              q.packets, q.budget_exhausted, q.empty_polls, q.bytes, q.has_bytes));
  }
  return out;
}

dimctl_napi_value napi_v(uint64_t polls, uint64_t packets, uint64_t bytes = 0) {
  dimctl_napi_value v{};
  v.polls = polls;
  v.packets = packets;
  v.budget_exhausted = polls / 4;
  v.empty_polls = polls / 8;
  v.bytes = bytes;
  return v;
}

uint64_t key_word(dimctl_napi_key k) {
  uint64_t w;
  std::memcpy(&w, &k, sizeof(w));
  return w;
}

// napi_slots in memory, written as napi.bpf.c writes it.
struct NapiMemory {
  std::vector<uint64_t> words = std::vector<uint64_t>(DIMCTL_NAPI_SLOT_COUNT * kNapiSlotWords);
  __u64 overflow_next = 0;

  dimctl_napi_slot get(uint32_t index) const {
    dimctl_napi_slot s;
    std::memcpy(&s, &words[index * kNapiSlotWords], sizeof(s));
    return s;
  }
  // cpu: as the programs store it, 1 + the CPU of the latest poll (0: none yet).
  void put(uint32_t index, dimctl_napi_key key, dimctl_napi_value v, uint32_t cpu = 0) {
    const dimctl_napi_slot s{.key = key, .v = v, .cpu = cpu, .pad = 0};
    std::memcpy(&words[index * kNapiSlotWords], &s, sizeof(s));
  }
  // The programs' claim: the home slot when free, else the next overflow slot. Returns it.
  uint32_t claim(dimctl_napi_key key, dimctl_napi_value v) {
    uint32_t ix = key.napi_id & (DIMCTL_NAPI_SLOTS - 1);
    if (words[ix * kNapiSlotWords] != 0)
      ix = DIMCTL_NAPI_SLOTS + static_cast<uint32_t>(overflow_next++);
    put(ix, key, v);
    return ix;
  }
};

struct NapiTableFixture : ::testing::Test {
  NapiMemory mem;
  RecordingDirectory<dimctl_napi_key> directory;
  RecordingFreeSlots free;
  ManualClock clock;
  NapiSlotTable table{mem.words, &mem.overflow_next, directory, free, clock};
  fakes::FakeDirectory dir;
  CounterAggregator agg{dir, false};

  std::vector<std::string> live_keys() {
    std::vector<std::string> out;
    for (const auto& s : table.live()) {
      out.push_back(fmt::format("{}/{}@{}", s.key.ifindex, s.key.napi_id, s.index));
    }
    return out;
  }
};

// The CPU of each NAPI's latest poll reaches its queue (the slot stores 1 + the CPU, 0 before
// any poll); the generic read path, which has no such word, says unknown.
TEST_F(NapiTableFixture, TheLatestPollsCpuReachesTheQueue) {
  mem.put(1, {7, 1}, napi_v(5, 50), 1 + 3);
  mem.put(2, {7, 2}, napi_v(5, 50), 0);
  mem.put(3, {7, 3}, napi_v(5, 50), 1 + 0);
  mem.put(4, {7, 4}, napi_v(5, 50), 0x10000);  // beyond what the snapshot holds: unknown
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.cpu(1), 3);
  EXPECT_EQ(table.cpu(2), seam::QueueCounters::kNoCpu);
  EXPECT_EQ(table.cpu(3), 0);
  EXPECT_EQ(table.cpu(4), seam::QueueCounters::kNoCpu);
  dir.names = {{7, "eth7"}};
  seam::Snapshot snap;
  ASSERT_TRUE(agg.queues(table, snap).ok());
  ASSERT_EQ(snap.queues.size(), 4u);
  EXPECT_EQ(snap.queues[0].cpu, 3);
  EXPECT_EQ(snap.queues[1].cpu, seam::QueueCounters::kNoCpu);
  EXPECT_EQ(snap.queues[2].cpu, 0);
  CounterAggregator generic(dir, false);
  auto g = generic.queues(static_cast<NapiMap&>(table));
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->queues.size(), 4u);
  EXPECT_EQ(g->queues[0].cpu, seam::QueueCounters::kNoCpu);
  // A slot given back is zeroed with its CPU word: the next NAPI to claim it starts unknown.
  ASSERT_TRUE(table.erase({7, 1}).ok());
  clock.now += kSlotGraceNs + 1;
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(mem.get(1).cpu, 0u);
}

TEST_F(NapiTableFixture, LiveSlotsComeInKeyOrderWithTheirCountersFromMemory) {
  // Home slots are indexed by napi id, so slot order is not key order: 513 lands in slot 1
  // before 2 in slot 2, 1024 in slot 0.
  mem.claim({7, 513}, napi_v(5, 50));
  mem.claim({7, 2}, napi_v(2, 20));
  mem.claim({3, 1024}, napi_v(1, 10));
  mem.claim({7, 514}, napi_v(3, 30));  // home slot 2 is taken by napi 2: overflow slot 512
  mem.put(9, {0, DIMCTL_NAPI_ID_RETIRED}, napi_v(99, 99));  // retired: not read
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_THAT(live_keys(), ElementsAre("3/1024@0", "7/2@2", "7/513@1", "7/514@512"));
  EXPECT_EQ(table.scanned(), DIMCTL_NAPI_SLOTS + 1u);
  EXPECT_EQ(table.counters(512).packets, 30u);

  dir.names = {{3, "eth3"}, {7, "eth7"}};
  seam::Snapshot snap;
  ASSERT_TRUE(agg.queues(table, snap).ok());
  ASSERT_EQ(snap.queues.size(), 4u);
  EXPECT_EQ(snap.queues[0].key, (seam::QueueKey{3, 1024}));
  EXPECT_EQ(snap.queues[3].key, (seam::QueueKey{7, 514}));
  EXPECT_EQ(snap.queues[3].polls, 3u);
  EXPECT_EQ(snap.queues[3].packets, 30u);
  EXPECT_EQ(snap.queues[3].budget_exhausted, 0u);
  EXPECT_EQ(snap.devices, (std::vector<std::string>{"eth3", "eth7"}));
  EXPECT_EQ(snap.device_of(snap.queues[1]), "eth7");

  // The generic read path (NapiMap::read, then the aggregator's own ordering) agrees.
  CounterAggregator generic(dir, false);
  auto g = generic.queues(static_cast<NapiMap&>(table));
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->queues.size(), snap.queues.size());
  for (size_t i = 0; i < snap.queues.size(); ++i) {
    EXPECT_EQ(g->queues[i].key, snap.queues[i].key);
    EXPECT_EQ(g->queues[i].packets, snap.queues[i].packets);
  }
}

TEST_F(NapiTableFixture, TheKeyOrderIsReusedUntilASlotChangesKey) {
  mem.claim({7, 513}, napi_v(1, 1));
  mem.claim({7, 2}, napi_v(1, 1));
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.rebuilds(), 1u);
  // Counters move: the same list.
  mem.put(1, {7, 513}, napi_v(2, 2));
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.rebuilds(), 1u);
  EXPECT_EQ(table.counters(table.live()[1].index).polls, 2u);
  // A claim of a home slot and of an overflow slot (the cursor moves): rebuilt.
  mem.claim({7, 3}, napi_v(1, 1));
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.rebuilds(), 2u);
  mem.claim({8, 515}, napi_v(1, 1));
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.rebuilds(), 3u);
  EXPECT_THAT(live_keys(), ElementsAre("7/2@2", "7/3@3", "7/513@1", "8/515@512"));
}

TEST_F(NapiTableFixture, ACursorPastTheEndIsClamped) {
  mem.overflow_next = DIMCTL_NAPI_OVERFLOW + 3;  // claims that raced past the programs' check
  mem.put(DIMCTL_NAPI_SLOT_COUNT - 1, {4, 4}, napi_v(1, 1));
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.scanned(), static_cast<size_t>(DIMCTL_NAPI_SLOT_COUNT));
  EXPECT_THAT(live_keys(), ElementsAre(fmt::format("4/4@{}", DIMCTL_NAPI_SLOT_COUNT - 1)));
}

TEST_F(NapiTableFixture, RetiredSlotsAreZeroedAndGivenBackAfterTheGracePeriod) {
  const uint32_t home = mem.claim({7, 2}, napi_v(4, 40));
  const uint32_t over = mem.claim({7, 514}, napi_v(5, 50));
  mem.claim({8, 3}, napi_v(6, 60));
  ASSERT_EQ(over, DIMCTL_NAPI_SLOTS);
  ASSERT_TRUE(table.refresh().ok());

  ASSERT_TRUE(table.erase({7, 2}).ok());
  ASSERT_TRUE(table.erase({7, 514}).ok());
  ASSERT_TRUE(table.erase({9, 9}).ok());  // holds no slot: not an error
  // Retired at once: the key word no live key matches, counters left as they are. Only the
  // overflow NAPI had a directory entry to remove.
  EXPECT_EQ(mem.get(home).key.ifindex, 0u);
  EXPECT_EQ(mem.get(home).key.napi_id, DIMCTL_NAPI_ID_RETIRED);
  EXPECT_EQ(mem.get(home).v.packets, 40u);
  EXPECT_EQ(mem.get(over).key.napi_id, DIMCTL_NAPI_ID_RETIRED);
  ASSERT_EQ(directory.erased.size(), 1u);
  EXPECT_EQ(directory.erased[0].napi_id, 514u);
  EXPECT_EQ(table.retired(), 2u);

  // A program that found the slot before may still add to it: before the grace period ends
  // nothing is zeroed or given back.
  mem.words[home * kNapiSlotWords + 1] += 1;
  clock.now += kSlotGraceNs - 1;
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_THAT(live_keys(), ElementsAre(fmt::format("8/3@3")));
  EXPECT_EQ(mem.get(home).v.polls, 5u);
  EXPECT_TRUE(free.pushed.empty());

  clock.now += 1;
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_EQ(table.retired(), 0u);
  for (uint32_t ix : {home, over}) {
    const dimctl_napi_slot s = mem.get(ix);
    EXPECT_EQ(key_word(s.key), 0u) << ix;  // free
    EXPECT_EQ(s.v.polls, 0u) << ix;
    EXPECT_EQ(s.v.packets, 0u) << ix;
  }
  // The home slot is free for a claim by its key; the overflow slot goes back to the queue.
  EXPECT_THAT(free.pushed, ElementsAre(over));
  EXPECT_EQ(mem.claim({7, 2}, napi_v(1, 1)), home);
}

TEST_F(NapiTableFixture, AFailedGiveBackFailsTheRefreshAndIsRetried) {
  mem.claim({7, 2}, napi_v(1, 1));
  const uint32_t over = mem.claim({7, 514}, napi_v(1, 1));
  ASSERT_TRUE(table.refresh().ok());
  ASSERT_TRUE(table.erase({7, 514}).ok());
  clock.now += kSlotGraceNs;
  free.fail = true;
  auto r = table.refresh();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr(fmt::format("give back napi slot {}", over)));
  EXPECT_EQ(table.retired(), 1u);
  free.fail = false;
  ASSERT_TRUE(table.refresh().ok());
  EXPECT_THAT(free.pushed, ElementsAre(over));
  EXPECT_EQ(table.retired(), 0u);
}

TEST_F(NapiTableFixture, TheCallFreePathLabelsAsTheGeneralOne) {
  for (uint32_t i = 0; i < 700; ++i) mem.claim({2 + i / 100, 8193 + i}, napi_v(i, 10 * i, i));
  NamesOnlyDirectory names;
  for (uint32_t ifindex = 2; ifindex < 9; ++ifindex) {
    names.names[ifindex] = dir.names[ifindex] = fmt::format("eth{}", ifindex);
  }
  for (bool bytes : {false, true}) {
    CounterAggregator fast(names, bytes), general(dir, bytes);
    seam::Snapshot a, b;
    ASSERT_TRUE(fast.queues(table, a).ok());
    ASSERT_TRUE(general.queues(table, b).ok());
    EXPECT_EQ(a.queues.size(), 700u);
    EXPECT_EQ(fields(a), fields(b));
    EXPECT_EQ(a.devices, b.devices);
  }
}

TEST_F(NapiTableFixture, TwoSlotsOfOneKeyAreOneQueueAndRetireTogether) {
  // A claim race can leave a NAPI with its home slot and an overflow slot (dimctl_bpf.h).
  mem.put(2, {7, 2}, napi_v(3, 30, 300));
  mem.put(DIMCTL_NAPI_SLOTS, {7, 2}, napi_v(4, 40, 400));
  mem.overflow_next = 1;
  mem.claim({7, 3}, napi_v(1, 1));
  dir.names = {{7, "eth7"}};
  NamesOnlyDirectory names;
  names.names = dir.names;
  for (NetdevDirectory* d : std::initializer_list<NetdevDirectory*>{&names, &dir}) {
    CounterAggregator bytes_agg(*d, true);
    seam::Snapshot snap;
    ASSERT_TRUE(bytes_agg.queues(table, snap).ok());
    ASSERT_EQ(snap.queues.size(), 2u);
    EXPECT_EQ(snap.queues[0].key, (seam::QueueKey{7, 2}));
    EXPECT_EQ(snap.queues[0].polls, 7u);
    EXPECT_EQ(snap.queues[0].packets, 70u);
    EXPECT_EQ(snap.queues[0].bytes, 700u);
    EXPECT_EQ(snap.queues[1].key, (seam::QueueKey{7, 3}));
  }
  CounterAggregator bytes_agg(dir, true);
  seam::Snapshot snap;

  // Gone from netlink's list: both slots retired, counted once.
  dir.listed = {7};
  dir.napis[{7, 3}] = NapiInfo{.queue = 0, .irq = 5, .rx_bytes = std::nullopt};
  ASSERT_TRUE(bytes_agg.queues(table, snap).ok());
  ASSERT_EQ(snap.queues.size(), 1u);
  EXPECT_EQ(snap.queues[0].irq, 5);
  EXPECT_EQ(bytes_agg.stats().queues_retired, 1u);
  EXPECT_EQ(table.retired(), 2u);
}

TEST_F(NapiTableFixture, SteadyStateSamplesAllocateNothingAndSeeNewCounters) {
  for (uint32_t i = 0; i < 600; ++i) mem.claim({2 + i / 64, 8193 + i}, napi_v(i, 10 * i));
  for (uint32_t ifindex = 2; ifindex < 12; ++ifindex) {
    dir.names[ifindex] = fmt::format("eth{}", ifindex);
  }
  seam::Snapshot snap;
  ASSERT_TRUE(agg.queues(table, snap).ok());  // sizes everything
  ASSERT_EQ(snap.queues.size(), 600u);
  const uint32_t slot = table.live()[599].index;
  mem.words[slot * kNapiSlotWords + 2] = 12345;  // packets of the last NAPI
  const uint64_t before = dimctl::testing::allocations_so_far();
  ASSERT_TRUE(agg.queues(table, snap).ok());
  EXPECT_EQ(dimctl::testing::allocations_so_far() - before, 0u);
  EXPECT_EQ(snap.queues[599].packets, 12345u);
  EXPECT_EQ(table.rebuilds(), 1u);
  EXPECT_TRUE(std::is_sorted(snap.queues.begin(), snap.queues.end(),
                             [](const auto& a, const auto& b) { return a.key < b.key; }));
}

TEST_F(NapiTableFixture, DeletedDeviceIsRetiredThroughTheTable) {
  mem.claim({7, 2}, napi_v(1, 1));
  mem.claim({8, 3}, napi_v(1, 1));
  dir.names = {{8, "eth8"}};  // ifindex 7 is gone
  seam::Snapshot snap;
  ASSERT_TRUE(agg.queues(table, snap).ok());
  ASSERT_EQ(snap.queues.size(), 1u);
  EXPECT_EQ(snap.queues[0].key.ifindex, 8u);
  EXPECT_EQ(mem.get(2).key.napi_id, DIMCTL_NAPI_ID_RETIRED);
  ASSERT_TRUE(agg.queues(table, snap).ok());
  EXPECT_EQ(snap.queues.size(), 1u);
  EXPECT_EQ(agg.stats().queues_retired, 1u);  // once: the retired slot is not live any more
}

// ---- CQ ------------------------------------------------------------------------------------

struct CqMemory {
  std::vector<uint64_t> words = std::vector<uint64_t>(DIMCTL_CQ_SLOTS * kCqSlotWords);
  __u64 next = 0;

  dimctl_cq_slot get(uint32_t index) const {
    dimctl_cq_slot s;
    std::memcpy(&s, &words[index * kCqSlotWords], sizeof(s));
    return s;
  }
  void put(uint32_t index, const dimctl_cq_slot& s) {
    std::memcpy(&words[index * kCqSlotWords], &s, sizeof(s));
  }
  // A claimed slot, as rdma.bpf.c's init_slot() leaves it.
  uint32_t claim(dimctl_cq_key key, const char* ibdev, uint64_t events) {
    dimctl_cq_slot s{};
    s.state = DIMCTL_SLOT_LIVE;
    s.key = key;
    s.events = events;
    s.polls = events;
    s.completions = 2 * events;
    s.info.dev_index = key.dev_index;
    s.info.cq_id = key.cq_id;
    s.info.nr_cqe = 128;
    s.info.comp_vector = 1;
    s.info.poll_ctx = DIMCTL_POLL_WORKQUEUE;
    std::snprintf(s.info.ibdev, sizeof(s.info.ibdev), "%s", ibdev);
    const auto ix = static_cast<uint32_t>(next++);
    put(ix, s);
    return ix;
  }
};

struct CqTableFixture : ::testing::Test {
  CqMemory mem;
  RecordingDirectory<dimctl_cq_key> directory;
  RecordingFreeSlots free;
  ManualClock clock;
  CqSlotTable table{mem.words, &mem.next, directory, free, clock};
  fakes::FakeDirectory dir;
  CounterAggregator agg{dir, false};
};

TEST_F(CqTableFixture, LiveSlotsAreLabelledFromTheirInfo) {
  mem.claim({1, 9}, "rxe0", 3);
  const uint32_t b = mem.claim({0, 0}, "rxe1", 4);  // 0/0 is a valid key: state says live
  mem.claim({1, 5}, "rxe0", 5);
  dimctl_cq_slot s = mem.get(b);
  s.modifies = 2;
  s.last_modify = 64 | (uint64_t{16} << 32);  // comps 64, usec 16
  s.exhausted = 3;
  s.last_poll_full = 1;  // BPF's own state until the next pass: not a counter
  mem.put(b, s);
  dimctl_cq_slot retired{};
  retired.state = DIMCTL_SLOT_RETIRED;
  retired.key = {1, 6};
  mem.put(static_cast<uint32_t>(mem.next++), retired);

  std::vector<seam::CqCounters> out;
  ASSERT_TRUE(agg.cqs(table.stats(), table.info(), {}, out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, (seam::CqKey{0, 0}));
  EXPECT_EQ(out[0].ibdev, "rxe1");
  EXPECT_EQ(out[0].kernel_modifies, 2u);
  EXPECT_EQ(out[0].kernel_comps, 64u);
  EXPECT_EQ(out[0].kernel_usec, 16u);
  EXPECT_EQ(out[0].budget_exhausted, 3u);
  EXPECT_EQ(out[1].budget_exhausted, 0u);
  EXPECT_EQ(out[1].key, (seam::CqKey{1, 5}));
  EXPECT_EQ(out[1].events, 5u);
  EXPECT_EQ(out[1].completions, 10u);
  EXPECT_EQ(out[1].poll_ctx, seam::PollContext::kWorkqueue);
  EXPECT_EQ(out[1].nr_cqe, 128u);
  EXPECT_EQ(out[2].key, (seam::CqKey{1, 9}));
}

TEST_F(CqTableFixture, FreedCqIsRetiredAndItsSlotGivenBackAfterTheGracePeriod) {
  const uint32_t a = mem.claim({1, 5}, "rxe0", 3);
  mem.claim({1, 6}, "rxe0", 4);
  std::vector<seam::CqCounters> out;
  const dimctl_cq_event freed{
      .type = DIMCTL_CQ_EVENT_FREE, .pad = 0, .time_ns = 0, .info = mem.get(a).info};
  ASSERT_TRUE(agg.cqs(table.stats(), table.info(), std::span(&freed, 1), out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key.cq_id, 6u);
  EXPECT_EQ(mem.get(a).state, static_cast<uint32_t>(DIMCTL_SLOT_RETIRED));
  ASSERT_EQ(directory.erased.size(), 1u);
  EXPECT_EQ(directory.erased[0].cq_id, 5u);
  EXPECT_EQ(agg.stats().cqs_retired, 1u);

  clock.now += kSlotGraceNs;
  ASSERT_TRUE(agg.cqs(table.stats(), table.info(), {}, out).ok());
  EXPECT_EQ(out.size(), 1u);
  const dimctl_cq_slot s = mem.get(a);
  EXPECT_EQ(s.state, static_cast<uint32_t>(DIMCTL_SLOT_FREE));
  EXPECT_EQ(s.events, 0u);
  EXPECT_EQ(s.info.ibdev[0], '\0');
  EXPECT_THAT(free.pushed, ElementsAre(a));
}

TEST_F(CqTableFixture, ASlotLeftMidWriteFailsTheReadAfterBoundedRetries) {
  const uint32_t a = mem.claim({1, 5}, "rxe0", 3);
  mem.words[a * kCqSlotWords] = 7;  // odd: a writer that never finishes (cannot happen in BPF)
  std::vector<CqEntry> out;
  auto r = table.stats().read(out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EAGAIN);
  EXPECT_THAT(r.error().message(), HasSubstr("cq_slots: slot 0 kept changing"));
  mem.words[a * kCqSlotWords] = 8;
  out.clear();
  ASSERT_TRUE(table.stats().read(out).ok());
  EXPECT_EQ(out.size(), 1u);
}

// A writer thread resets one slot in place again and again, as cq_alloc of a reused restrack
// id does, alternating two incarnations whose every counter and name say which one they are.
// A reader following the sequence-count rule never sees a mix of the two.
TEST_F(CqTableFixture, ReadersNeverMixTwoIncarnationsOfASlot) {
  const uint32_t a = mem.claim({1, 5}, "A", 0);
  uint64_t* w = &mem.words[a * kCqSlotWords];
  auto store = [](uint64_t& x, uint64_t v) {
    std::atomic_ref<uint64_t>(x).store(v, std::memory_order_relaxed);
  };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> stable{0};
  // On two different CPUs where there are two, so that the threads really run at once.
  auto pin = [](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  };
  const bool two_cpus = std::thread::hardware_concurrency() >= 2;
  // The two incarnations' words from schedules to the end of info: every counter and the name
  // say which one it is.
  constexpr size_t kFirst = offsetof(dimctl_cq_slot, schedules) / 8;
  constexpr size_t kEnd = (offsetof(dimctl_cq_slot, info) + sizeof(dimctl_cq_info)) / 8;
  auto image = [&](uint64_t v, const char* name) {
    dimctl_cq_slot x = mem.get(a);
    x.schedules = x.reschedules = x.events = x.polls = x.completions = x.poll_errors = x.modifies =
        x.last_modify = x.exhausted = v;
    std::snprintf(x.info.ibdev, sizeof(x.info.ibdev), "%s", name);
    std::vector<uint64_t> words(kCqSlotWords);
    std::memcpy(words.data(), &x, sizeof(x));
    return words;
  };
  const std::vector<uint64_t> images[2] = {image(1000, "even"), image(2000, "odd")};
  std::thread writer([&] {
    if (two_cpus) pin(1);
    uint64_t seq = 0;
    for (uint64_t gen = 1; !stop.load(std::memory_order_relaxed); ++gen) {
      std::atomic_ref<uint64_t>(w[0]).store(++seq, std::memory_order_relaxed);  // odd
      std::atomic_thread_fence(std::memory_order_release);  // the data after it (BPF: lock add)
      for (size_t k = kFirst; k < kEnd; ++k) store(w[k], images[gen % 2][k]);
      std::atomic_ref<uint64_t>(w[0]).store(++seq, std::memory_order_release);  // even
      // Bursts of resets with short stable gaps, in which readers start copies the next reset
      // overlaps (they retry, or give up after their bounded retries, by design); then a long
      // pause in which readers succeed.
      const int spins = gen % 256 == 0 ? 20'000 : 16;
      for (int spin = 0; spin < spins; ++spin) stable.fetch_add(1, std::memory_order_relaxed);
    }
  });
  cpu_set_t saved;
  pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
  if (two_cpus) pin(0);
  std::vector<CqEntry> stats;
  std::vector<CqInfoEntry> infos;
  int reads = 0, mixed = 0;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::steady_clock::now() - start; };
  while (elapsed() < std::chrono::milliseconds(300) ||
         (reads < 1000 && elapsed() < std::chrono::seconds(10))) {
    stats.clear();
    infos.clear();
    if (!table.stats().read(stats).ok() || !table.info().read(infos).ok()) continue;
    ++reads;
    if (stats.size() != 1 || infos.size() != 1) continue;
    const dimctl_cq_value& v = stats[0].value;
    const uint64_t c = v.schedules;
    if (v.reschedules != c || v.events != c || v.polls != c || v.completions != c ||
        v.poll_errors != c || v.modifies != c || v.exhausted != c) {
      ++mixed;
    }
    const std::string name = infos[0].value.ibdev;
    if (name != "A" && name != "even" && name != "odd") ++mixed;
  }
  stop = true;
  writer.join();
  pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
  EXPECT_GE(reads, 1000);
  EXPECT_EQ(mixed, 0) << "of " << reads << " reads";
}

}  // namespace
}  // namespace dimctl::collector
