// Kernel tests of the BPF collector (label kernel, root): real programs on the running kernel,
// real veth traffic in private network namespaces (never eth0).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>
#include <thread>

#include "dimctl/collector/bpf_collector.h"
#include "dimctl/collector/feature_probe.h"
#include "dimctl/common/netlink_requests.h"
#include "kernel/collector/prog_maps.h"
#include "kernel/collector/veth_lab.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kPackets = 1000;

class CollectorKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (CAP_BPF, CAP_NET_ADMIN)";
    auto probe = make_kernel_feature_probe();
    if (!probe->vmlinux_btf()) GTEST_SKIP() << "kernel has no BTF (/sys/kernel/btf/vmlinux)";
    ASSERT_TRUE(testing::enter_private_netns().ok());
  }

  static std::unique_ptr<BpfCollector> open(CollectorOptions o = {}) {
    auto c = BpfCollector::open(o);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().detailed());
    return c.ok() ? std::move(*c) : nullptr;
  }

  static void open_with_byte_filter(std::vector<std::string> globs,
                                    std::unique_ptr<BpfCollector>& c,
                                    std::optional<ProgramStatus>& prog);

  // A copy: program_status() returns a temporary, a pointer into it would dangle.
  static std::optional<ProgramStatus> find(const std::vector<ProgramStatus>& ps,
                                           const std::string& name) {
    for (const auto& p : ps) {
      if (p.view.name == name) return p;
    }
    return std::nullopt;
  }

  struct Totals {
    uint64_t polls = 0, packets = 0;
    std::map<uint32_t, uint64_t> packets_by_napi;
  };

  static Totals totals(const seam::Snapshot& s, uint32_t ifindex) {
    Totals t;
    for (const auto& q : s.queues) {
      if (q.key.ifindex != ifindex) continue;
      EXPECT_EQ(s.device_of(q), "va");
      t.polls += q.polls;
      t.packets += q.packets;
      t.packets_by_napi[q.key.napi_id] += q.packets;
    }
    return t;
  }

  // Samples until va has seen `want` packets (or 5 s), then once more after a quiet period so
  // an over-count would show.
  static seam::Snapshot settle(BpfCollector& c, uint32_t ifindex, uint64_t want) {
    seam::Snapshot s;
    for (int i = 0; i < 100; ++i) {
      auto r = c.sample();
      EXPECT_TRUE(r.ok());
      if (!r.ok()) return s;
      s = std::move(*r);
      if (totals(s, ifindex).packets >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto r = c.sample();
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::move(*r) : s;
  }

  // settle() through sample_into(): `s` is the one snapshot the caller keeps across samples, as
  // the controller keeps it.
  static void settle_into(BpfCollector& c, seam::Snapshot& s, uint32_t ifindex, uint64_t want) {
    for (int i = 0; i < 100; ++i) {
      auto r = c.sample_into(s);
      ASSERT_TRUE(r.ok()) << r.error().detailed();
      if (totals(s, ifindex).packets >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto r = c.sample_into(s);
    ASSERT_TRUE(r.ok()) << r.error().detailed();
  }

  void exact_count(CollectorOptions o, const std::string& want_type) {
    testing::VethLab lab;
    auto made = lab.create(1);
    ASSERT_TRUE(made.ok()) << made.error().message();
    auto c = open(o);
    ASSERT_NE(c, nullptr);
    const auto prog = find(c->program_status(), "napi:napi_poll");
    ASSERT_TRUE(prog.has_value());
    ASSERT_TRUE(prog->view.attached) << prog->view.reason;
    EXPECT_EQ(prog->attach_type, want_type);

    auto before = c->sample();
    ASSERT_TRUE(before.ok());
    const uint32_t ifindex = lab.rx_ifindex();
    const Totals t0 = totals(*before, ifindex);
    ASSERT_TRUE(lab.send_udp(kPackets, 1).ok());
    const seam::Snapshot after = settle(*c, ifindex, t0.packets + kPackets);
    const Totals t1 = totals(after, ifindex);
    EXPECT_EQ(t1.packets - t0.packets, static_cast<uint64_t>(kPackets));
    EXPECT_GE(t1.polls - t0.polls, 1u);
    EXPECT_EQ(c->drops(), 0u);
    // Every polled NAPI of va says which CPU its latest poll ran on, one of this host's.
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    int polled = 0;
    for (const auto& q : after.queues) {
      if (q.key.ifindex != ifindex || q.polls == 0) continue;
      ++polled;
      EXPECT_NE(q.cpu, seam::QueueCounters::kNoCpu) << "napi " << q.key.napi_id;
      EXPECT_LT(q.cpu, cpus) << "napi " << q.key.napi_id;
    }
    EXPECT_GE(polled, 1);
  }
};

TEST_F(CollectorKernelTest, CountsExactlyTheUdpPacketsOnTheReceiverVethNapiTpBtf) {
  exact_count({}, "tp_btf");
}

TEST_F(CollectorKernelTest, CountsExactlyWithTheRawTpTwin) {
  CollectorOptions o;
  o.force_raw_tp = true;
  exact_count(o, "raw_tp");
}

TEST_F(CollectorKernelTest, FourQueueVethSpreadsFlowsAndPerQueueWorkSumsToN) {
  testing::VethLab lab;
  auto made = lab.create(4);
  ASSERT_TRUE(made.ok()) << made.error().message();
  auto c = open();
  ASSERT_NE(c, nullptr);
  auto before = c->sample();
  ASSERT_TRUE(before.ok());
  const uint32_t ifindex = lab.rx_ifindex();
  const Totals t0 = totals(*before, ifindex);
  ASSERT_TRUE(lab.send_udp(kPackets, 16).ok());
  const seam::Snapshot after = settle(*c, ifindex, t0.packets + kPackets);
  const Totals t1 = totals(after, ifindex);
  uint64_t sum = 0;
  int busy = 0;
  for (const auto& [napi, packets] : t1.packets_by_napi) {
    const uint64_t base = t0.packets_by_napi.count(napi) ? t0.packets_by_napi.at(napi) : 0;
    sum += packets - base;
    if (packets > base) ++busy;
  }
  EXPECT_EQ(sum, static_cast<uint64_t>(kPackets));
  EXPECT_GT(busy, 1) << "all flows landed on one RX queue";
  EXPECT_GE(t1.packets_by_napi.size(), 2u);
}

// Two collectors count the same traffic: one sampled in place into one snapshot kept across
// periods (sample_into, as the controller does), the other through sample(). Both see exactly
// the packets sent, NAPI by NAPI, and label the queues alike.
TEST_F(CollectorKernelTest, SampleIntoCountsExactlyAsSampleDoes) {
  testing::VethLab lab;
  auto made = lab.create(4);
  ASSERT_TRUE(made.ok()) << made.error().message();
  auto in_place = open();
  auto fresh = open();
  ASSERT_NE(in_place, nullptr);
  ASSERT_NE(fresh, nullptr);
  const uint32_t ifindex = lab.rx_ifindex();
  seam::Snapshot kept;
  ASSERT_TRUE(in_place->sample_into(kept).ok());
  auto before = fresh->sample();
  ASSERT_TRUE(before.ok());
  const Totals a0 = totals(kept, ifindex), b0 = totals(*before, ifindex);

  ASSERT_TRUE(lab.send_udp(kPackets, 16).ok());
  ASSERT_NO_FATAL_FAILURE(settle_into(*in_place, kept, ifindex, a0.packets + kPackets));
  const seam::Snapshot after = settle(*fresh, ifindex, b0.packets + kPackets);
  const Totals a1 = totals(kept, ifindex), b1 = totals(after, ifindex);
  EXPECT_EQ(a1.packets - a0.packets, static_cast<uint64_t>(kPackets));
  EXPECT_EQ(b1.packets - b0.packets, static_cast<uint64_t>(kPackets));
  EXPECT_GE(a1.polls - a0.polls, 1u);
  // NAPI by NAPI: the same packets since the baseline (both collectors run the same programs).
  auto delta = [](const Totals& t1, const Totals& t0) {
    std::map<uint32_t, uint64_t> d;
    for (const auto& [napi, packets] : t1.packets_by_napi) {
      const uint64_t base = t0.packets_by_napi.count(napi) ? t0.packets_by_napi.at(napi) : 0;
      if (packets > base) d[napi] = packets - base;
    }
    return d;
  };
  EXPECT_EQ(delta(a1, a0), delta(b1, b0));
  // The same queues in the same order with the same labels.
  auto labels = [&](const seam::Snapshot& s) {
    std::vector<std::string> out;
    for (const auto& q : s.queues) {
      if (q.key.ifindex == ifindex)
        out.push_back(fmt::format("{} {} {} {}", q.key.napi_id, s.device_of(q), q.queue, q.irq));
    }
    return out;
  };
  EXPECT_EQ(labels(kept), labels(after));
  EXPECT_TRUE(std::is_sorted(kept.queues.begin(), kept.queues.end(),
                             [](const auto& x, const auto& y) { return x.key < y.key; }));

  // Quiet periods with the same NAPIs: written in place, same storage, same counts.
  const auto* data = kept.queues.data();
  const int64_t t = kept.time_ns;
  ASSERT_TRUE(in_place->sample_into(kept).ok());
  ASSERT_TRUE(in_place->sample_into(kept).ok());
  EXPECT_EQ(kept.queues.data(), data);
  EXPECT_GT(kept.time_ns, t);
  EXPECT_EQ(totals(kept, ifindex).packets, a1.packets);
  EXPECT_EQ(in_place->drops(), 0u);
  EXPECT_EQ(fresh->drops(), 0u);
}

TEST_F(CollectorKernelTest, NoPerPacketProgramInTheDefaultConfig) {
  auto c = open();
  ASSERT_NE(c, nullptr);
  const auto status = c->program_status();
  const auto bytes = find(status, "net:netif_receive_skb");
  ASSERT_TRUE(bytes.has_value());
  EXPECT_FALSE(bytes->view.attached);
  EXPECT_THAT(bytes->view.reason, HasSubstr("disabled"));
}

TEST_F(CollectorKernelTest, OptionalByteCounterCountsBytesPerNapi) {
  testing::VethLab lab;
  ASSERT_TRUE(lab.create(1).ok());
  CollectorOptions o;
  o.count_bytes = true;
  auto c = open(o);
  ASSERT_NE(c, nullptr);
  const auto bytes = find(c->program_status(), "net:netif_receive_skb");
  ASSERT_TRUE(bytes.has_value());
  ASSERT_TRUE(bytes->view.attached) << bytes->view.reason;
  const uint32_t ifindex = lab.rx_ifindex();
  // First packets create the NAPI entry (bytes are only added to NAPIs already polled).
  ASSERT_TRUE(lab.send_udp(10, 1).ok());
  settle(*c, ifindex, 10);
  auto before = c->sample();
  ASSERT_TRUE(before.ok());
  uint64_t b0 = 0;
  for (const auto& q : before->queues) {
    if (q.key.ifindex == ifindex) b0 += q.bytes;
  }
  ASSERT_TRUE(lab.send_udp(kPackets, 1).ok());
  const seam::Snapshot after = settle(*c, ifindex, totals(*before, ifindex).packets + kPackets);
  uint64_t b1 = 0;
  for (const auto& q : after.queues) {
    if (q.key.ifindex != ifindex) continue;
    EXPECT_TRUE(q.has_bytes);
    b1 += q.bytes;
  }
  // skb->len at netif_receive_skb = IP header (20) + UDP header (8) + 32 payload bytes.
  EXPECT_EQ(b1 - b0, static_cast<uint64_t>(kPackets) * (20 + 8 + 32));
}

// ---- byte counter device filter (collectors.skb_bytes) --------------------------------------

using testing::map_of_prog;

std::set<uint32_t> filter_map_keys(int fd) {
  std::set<uint32_t> keys;
  uint32_t key = 0, next = 0;
  for (const uint32_t* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
    keys.insert(next);
    key = next;
  }
  return keys;
}

// Sum over every CPU of what the skb program recorded for `ifindex`, from napi_slots and
// napi_stats: skbs counts its runs that reached an entry, entries = keys holding its ifindex.
struct SkbRecord {
  uint64_t skbs = 0, bytes = 0, polls = 0;
  int entries = 0;
};

SkbRecord skb_record(int slots_fd, int hash_fd, uint32_t ifindex) {
  SkbRecord r;
  const int ncpus = libbpf_num_possible_cpus();
  std::vector<dimctl_napi_slot> slots(static_cast<size_t>(ncpus));
  for (uint32_t i = 0; i < DIMCTL_NAPI_SLOTS; ++i) {
    if (bpf_map_lookup_elem(slots_fd, &i, slots.data()) != 0) continue;
    for (const auto& s : slots) {
      if (s.key.ifindex != ifindex) continue;
      ++r.entries;
      r.skbs += s.v.skbs;
      r.bytes += s.v.bytes;
      r.polls += s.v.polls;
    }
  }
  std::vector<dimctl_napi_value> vals(static_cast<size_t>(ncpus));
  dimctl_napi_key key{}, next{};
  for (const dimctl_napi_key* prev = nullptr; bpf_map_get_next_key(hash_fd, prev, &next) == 0;
       prev = &key) {
    key = next;
    if (next.ifindex != ifindex || bpf_map_lookup_elem(hash_fd, &next, vals.data()) != 0) continue;
    ++r.entries;
    for (const auto& v : vals) {
      r.skbs += v.skbs;
      r.bytes += v.bytes;
      r.polls += v.polls;
    }
  }
  return r;
}

struct DeviceBytes {
  uint64_t packets = 0, bytes = 0;
  int queues = 0, with_bytes = 0;
};

DeviceBytes device_bytes(const seam::Snapshot& s, uint32_t ifindex) {
  DeviceBytes d;
  for (const auto& q : s.queues) {
    if (q.key.ifindex != ifindex) continue;
    ++d.queues;
    d.packets += q.packets;
    d.bytes += q.bytes;
    if (q.has_bytes) ++d.with_bytes;
  }
  return d;
}

// Samples until every (ifindex, packets) target is reached (or 5 s), then once more after a
// quiet period so an over-count would show.
seam::Snapshot settle_all(BpfCollector& c, const std::map<uint32_t, uint64_t>& want) {
  seam::Snapshot s;
  for (int i = 0; i < 100; ++i) {
    auto r = c.sample();
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().detailed());
    if (!r.ok()) return s;
    s = std::move(*r);
    bool done = true;
    for (const auto& [ifindex, packets] : want)
      done = done && device_bytes(s, ifindex).packets >= packets;
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto r = c.sample();
  EXPECT_TRUE(r.ok());
  return r.ok() ? std::move(*r) : s;
}

// skb->len at netif_receive_skb = IP header (20) + UDP header (8) + 32 payload bytes.
constexpr uint64_t kSkbLen = 20 + 8 + 32;

// More NAPIs than the maps hold: every slot of the per-CPU array and all 4,096 overflow hash
// entries are taken by other (fake) NAPIs, written from here before the receiver's first poll.
// Its polls then find no room: counted as napi_map_full, per reason, for the daemon's metric.
TEST_F(CollectorKernelTest, FullNapiMapsCountDropsByReason) {
  testing::VethLab lab;
  auto made = lab.create(1);
  ASSERT_TRUE(made.ok()) << made.error().message();
  auto c = open();
  ASSERT_NE(c, nullptr);
  const auto poll = find(c->program_status(), "napi:napi_poll");
  ASSERT_TRUE(poll.has_value());
  ASSERT_TRUE(poll->view.attached) << poll->view.reason;
  Fd slots = map_of_prog(poll->prog_fd, "napi_slots");
  Fd hash = map_of_prog(poll->prog_fd, "napi_stats");
  ASSERT_TRUE(slots.valid() && hash.valid());
  const auto ncpus = static_cast<size_t>(libbpf_num_possible_cpus());
  // Fake NAPIs on an ifindex no device has (the collector would retire them at its next
  // sample, so no sample() is taken before the traffic).
  constexpr uint32_t kFakeIfindex = 0x7ffffff0;
  std::vector<dimctl_napi_slot> slot_vals(ncpus);
  for (uint32_t i = 0; i < DIMCTL_NAPI_SLOTS; ++i) {
    for (auto& v : slot_vals)
      v = dimctl_napi_slot{.key = {kFakeIfindex, i}, .v = {}, .cpu = 0, .pad = 0};
    ASSERT_EQ(bpf_map_update_elem(slots.get(), &i, slot_vals.data(), BPF_ANY), 0) << errno;
  }
  std::vector<dimctl_napi_value> zero(ncpus);
  uint32_t filled = 0;
  for (uint32_t i = 0; i < 1'000'000; ++i) {
    const dimctl_napi_key k{kFakeIfindex, DIMCTL_NAPI_SLOTS + i};
    if (bpf_map_update_elem(hash.get(), &k, zero.data(), BPF_NOEXIST) != 0) {
      ASSERT_EQ(errno, E2BIG) << "the hash refuses more entries only when full";
      break;
    }
    ++filled;
  }
  EXPECT_EQ(filled, 4096u);
  auto by_reason = [&](const std::string& r) {
    for (const auto& d : c->drops_by_reason()) {
      if (d.reason == r) return d.total;
    }
    ADD_FAILURE() << "no drop reason " << r;
    return uint64_t{0};
  };
  ASSERT_EQ(by_reason("napi_map_full"), 0u);
  ASSERT_TRUE(lab.send_udp(200, 1).ok());
  uint64_t drops = 0;
  for (int i = 0; i < 50 && drops == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drops = by_reason("napi_map_full");
  }
  EXPECT_GE(drops, 1u) << "the receiver's polls had nowhere to be counted";
  EXPECT_EQ(by_reason("cq_map_full"), 0u);
  EXPECT_EQ(by_reason("ringbuf_full"), 0u);
  EXPECT_EQ(c->drops(), drops);
}

// A collector with the per-skb byte counter limited to `globs`, its skb program attached.
void CollectorKernelTest::open_with_byte_filter(std::vector<std::string> globs,
                                                std::unique_ptr<BpfCollector>& c,
                                                std::optional<ProgramStatus>& prog) {
  CollectorOptions o;
  o.count_bytes = true;
  o.count_bytes_devices = std::move(globs);
  c = open(o);
  ASSERT_NE(c, nullptr);
  prog = find(c->program_status(), "net:netif_receive_skb");
  ASSERT_TRUE(prog.has_value());
  ASSERT_TRUE(prog->view.attached) << prog->view.reason;
  ASSERT_TRUE(c->byte_counter_devices().has_value());
}

TEST_F(CollectorKernelTest, ByteCounterDeviceGlobsCountOnlyTheNamedDevice) {
  testing::VethLab sel(1), other(2);  // receivers va1 (named by the globs) and va2 (not)
  ASSERT_TRUE(sel.create(1).ok());
  ASSERT_TRUE(other.create(1).ok());
  const uint32_t sel_if = sel.rx_ifindex(), other_if = other.rx_ifindex();
  ASSERT_NE(sel_if, 0u);
  ASSERT_NE(other_if, 0u);
  std::unique_ptr<BpfCollector> c;
  std::optional<ProgramStatus> prog;
  ASSERT_NO_FATAL_FAILURE(open_with_byte_filter({"nomatch*", "va[1]"}, c, prog));
  EXPECT_THAT(*c->byte_counter_devices(), ::testing::ElementsAre("va1"));
  // The counters through napi_poll (always attached), the filter through the skb program.
  const auto poll = find(c->program_status(), "napi:napi_poll");
  ASSERT_TRUE(poll.has_value());
  Fd slots = map_of_prog(poll->prog_fd, "napi_slots");
  Fd hash = map_of_prog(poll->prog_fd, "napi_stats");
  ASSERT_TRUE(slots.valid());
  ASSERT_TRUE(hash.valid());
  Fd filter = map_of_prog(prog->prog_fd, "skb_bytes_ifidx");
  EXPECT_TRUE(filter.valid()) << "the skb program does not use the filter map";
  if (filter.valid()) {
    EXPECT_EQ(filter_map_keys(filter.get()), (std::set<uint32_t>{sel_if}));
  }

  // Warm-up (first polls create the NAPI entries), then the counted burst on both devices.
  ASSERT_TRUE(sel.send_udp(10, 1).ok());
  ASSERT_TRUE(other.send_udp(10, 1).ok());
  const seam::Snapshot before = settle_all(*c, {{sel_if, 10}, {other_if, 10}});
  const DeviceBytes s0 = device_bytes(before, sel_if), o0 = device_bytes(before, other_if);
  ASSERT_TRUE(sel.send_udp(kPackets, 1).ok());
  ASSERT_TRUE(other.send_udp(kPackets, 1).ok());
  const seam::Snapshot after =
      settle_all(*c, {{sel_if, s0.packets + kPackets}, {other_if, o0.packets + kPackets}});
  const DeviceBytes s1 = device_bytes(after, sel_if), o1 = device_bytes(after, other_if);

  // Selected: exact bytes. Unselected: still counted by napi_poll, but no bytes (veth has no
  // qstats).
  EXPECT_EQ(s1.packets - s0.packets, static_cast<uint64_t>(kPackets));
  EXPECT_EQ(s1.with_bytes, s1.queues);
  EXPECT_EQ(s1.bytes - s0.bytes, static_cast<uint64_t>(kPackets) * kSkbLen);
  EXPECT_EQ(o1.packets - o0.packets, static_cast<uint64_t>(kPackets));
  EXPECT_GE(o1.queues, 1);
  EXPECT_EQ(o1.with_bytes, 0);
  EXPECT_EQ(o1.bytes, 0u);

  // What BPF recorded: the skb program ran for every packet of va1, never for va2 (no skb,
  // no byte, so no entry it created: va2's entries are napi_poll's).
  const SkbRecord rs = skb_record(slots.get(), hash.get(), sel_if);
  const SkbRecord ro = skb_record(slots.get(), hash.get(), other_if);
  EXPECT_EQ(rs.skbs, static_cast<uint64_t>(kPackets) + 10);
  EXPECT_EQ(rs.bytes, (static_cast<uint64_t>(kPackets) + 10) * kSkbLen);
  EXPECT_GE(ro.entries, 1);
  EXPECT_EQ(ro.skbs, 0u);
  EXPECT_EQ(ro.bytes, 0u);
  EXPECT_GE(ro.polls, 1u);
  EXPECT_EQ(c->drops(), 0u);
}

TEST_F(CollectorKernelTest, ByteCounterFilterFollowsDevicesThatComeAndGo) {
  std::unique_ptr<BpfCollector> c;
  std::optional<ProgramStatus> prog;
  ASSERT_NO_FATAL_FAILURE(open_with_byte_filter({"va3"}, c, prog));
  EXPECT_TRUE(c->byte_counter_devices()->empty());  // no va3 yet
  Fd filter = map_of_prog(prog->prog_fd, "skb_bytes_ifidx");
  ASSERT_TRUE(filter.valid());
  EXPECT_TRUE(filter_map_keys(filter.get()).empty());
  {
    testing::VethLab lab(3);
    ASSERT_TRUE(lab.create(1).ok());
    const uint32_t ifindex = lab.rx_ifindex();
    ASSERT_TRUE(c->sample().ok());  // the sample after the device appeared selects it
    EXPECT_THAT(*c->byte_counter_devices(), ::testing::ElementsAre("va3"));
    EXPECT_EQ(filter_map_keys(filter.get()), (std::set<uint32_t>{ifindex}));
    ASSERT_TRUE(lab.send_udp(kPackets, 1).ok());
    const seam::Snapshot s = settle_all(*c, {{ifindex, kPackets}});
    const DeviceBytes d = device_bytes(s, ifindex);
    EXPECT_EQ(d.packets, static_cast<uint64_t>(kPackets));
    EXPECT_EQ(d.with_bytes, d.queues);
    EXPECT_EQ(d.bytes, static_cast<uint64_t>(kPackets) * kSkbLen);
  }  // va3 deleted
  ASSERT_TRUE(c->sample().ok());
  EXPECT_TRUE(c->byte_counter_devices()->empty());
  EXPECT_TRUE(filter_map_keys(filter.get()).empty());
}

TEST_F(CollectorKernelTest, DeletedDeviceIsRetiredFromSnapshotAndMap) {
  auto c = open();
  ASSERT_NE(c, nullptr);
  uint32_t ifindex = 0;
  {
    testing::VethLab lab;
    ASSERT_TRUE(lab.create(1).ok());
    ifindex = lab.rx_ifindex();
    ASSERT_TRUE(lab.send_udp(50, 1).ok());
    auto s = settle(*c, ifindex, 50);
    ASSERT_EQ(totals(s, ifindex).packets, 50u);
  }  // lab destroyed: va deleted
  auto s = c->sample();
  ASSERT_TRUE(s.ok());
  for (const auto& q : s->queues) EXPECT_NE(q.key.ifindex, ifindex);
}

TEST_F(CollectorKernelTest, ANapiCreatedAfterStartIsCountedExactly) {
  // The directory read the (empty) namespace at the first sample and re-reads it only on change:
  // a device and NAPI that appear later must be labelled and kept, not retired as unknown.
  auto c = open();
  ASSERT_NE(c, nullptr);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c->sample().ok());
  testing::VethLab lab;
  ASSERT_TRUE(lab.create(1).ok());
  const uint32_t ifindex = lab.rx_ifindex();
  ASSERT_TRUE(lab.send_udp(kPackets, 1).ok());
  const seam::Snapshot s = settle(*c, ifindex, kPackets);
  EXPECT_EQ(totals(s, ifindex).packets, static_cast<uint64_t>(kPackets));
}

TEST_F(CollectorKernelTest, SteadySamplesReadNoNapiTopology) {
  // With nothing changing, a sample sends at most the qstats dump (not the queue and NAPI
  // dumps), and none where no device reports qstats.
  testing::VethLab lab;
  ASSERT_TRUE(lab.create(1).ok());
  auto c = open();
  ASSERT_NE(c, nullptr);
  const uint32_t ifindex = lab.rx_ifindex();
  ASSERT_TRUE(lab.send_udp(100, 1).ok());
  const seam::Snapshot s = settle(*c, ifindex, 100);
  ASSERT_EQ(totals(s, ifindex).packets, 100u);
  const uint64_t before = netlink_requests()[static_cast<size_t>(NetlinkFamily::kNetdev)];
  constexpr int kSamples = 20;
  for (int i = 0; i < kSamples; ++i) {
    ASSERT_TRUE(lab.send_udp(5, 1).ok());
    ASSERT_TRUE(c->sample().ok());
  }
  const uint64_t sent = netlink_requests()[static_cast<size_t>(NetlinkFamily::kNetdev)] - before;
  EXPECT_LE(sent, static_cast<uint64_t>(kSamples))
      << "netdev requests in " << kSamples << " samples";
  std::printf("netdev requests over %d steady samples: %llu\n", kSamples,
              static_cast<unsigned long long>(sent));
}

TEST_F(CollectorKernelTest, WithoutIbCoreTheRdmaProgramsAreReportedUnattached) {
  auto probe = make_kernel_feature_probe();
  if (probe->module_loaded("ib_core") || probe->btf_tracepoint("", "cq_poll")) {
    GTEST_SKIP() << "ib_core is present on this kernel; covered by the qemu lab";
  }
  auto c = open();
  ASSERT_NE(c, nullptr);  // loading without ib_core succeeds
  const auto status = c->program_status();
  int rdma = 0;
  for (const auto& p : status) {
    if (p.view.name.rfind("rdma_core:", 0) != 0) continue;
    ++rdma;
    EXPECT_FALSE(p.view.attached) << p.view.name;
    EXPECT_THAT(p.view.reason, HasSubstr("module ib_core not loaded")) << p.view.name;
    EXPECT_THAT(p.view.reason, HasSubstr(p.view.name)) << p.view.name;
  }
  EXPECT_EQ(rdma, 7);
  const auto napi = find(status, "napi:napi_poll");
  ASSERT_TRUE(napi.has_value());
  EXPECT_TRUE(napi->view.attached);
  auto s = c->sample();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->cqs.empty());
}

// Claims ib_core is there with BTF but without btf_trace_* types, which makes the collector
// load the raw_tp twins of rdma.bpf.c for real: the verifier must accept them on this kernel
// (the ib_cq CO-RE reads are guarded), and only the attach fails for want of the tracepoints.
class IbCoreClaimingProbe final : public FeatureProbe {
 public:
  bool vmlinux_btf() const override { return real_->vmlinux_btf(); }
  bool module_loaded(std::string_view m) const override {
    return m == "ib_core" || real_->module_loaded(m);
  }
  bool module_btf(std::string_view m) const override {
    return m == "ib_core" || real_->module_btf(m);
  }
  bool btf_tracepoint(std::string_view m, std::string_view tp) const override {
    return m == "ib_core" ? false : real_->btf_tracepoint(m, tp);
  }
  bool tracepoint_exists(std::string_view, std::string_view) const override { return true; }
  bool bpf_stats_enabled() const override { return false; }

 private:
  std::unique_ptr<FeatureProbe> real_ = make_kernel_feature_probe();
};

TEST_F(CollectorKernelTest, RdmaRawTpObjectPassesTheVerifierWithoutIbCore) {
  auto probe = make_kernel_feature_probe();
  if (probe->module_loaded("ib_core")) GTEST_SKIP() << "ib_core loaded: attach would succeed";
  CollectorOptions o;
  o.enable_napi = false;
  o.probe = std::make_shared<IbCoreClaimingProbe>();
  auto c = open(o);
  ASSERT_NE(c, nullptr);
  int rdma = 0;
  for (const auto& p : c->program_status()) {
    if (p.view.name.rfind("rdma_core:", 0) != 0) continue;
    ++rdma;
    EXPECT_FALSE(p.view.attached);
    // Not "load BPF object ...": the object loaded; the raw tracepoint is missing.
    EXPECT_THAT(p.view.reason, StartsWith("raw_tp attach failed")) << p.view.name;
  }
  EXPECT_EQ(rdma, 7);
}

}  // namespace
}  // namespace dimctl::collector
