// NapiNetlink (and the restore of NAPI originals) against the running kernel, on a real veth.
//
// Each test moves the (single-threaded) test process into a fresh network namespace
// (unshare(CLONE_NEWNET)) and makes a veth pair whose receiving end dnapi0 lives there and whose
// sending end dnapi1 lives in a named namespace dnapi-<pid> (deleted in TearDown, which takes
// both ends with it). As kernel-facts.md says: the sender has TSO/GSO off and the receiver GRO
// on, which gives dnapi0 a NAPI; a few UDP datagrams from a socket opened in the peer namespace
// make it poll. Nothing outside the two namespaces (eth0 in particular) is read or written.
// The tests skip, printing why, when not root or when the kernel lacks napi-set (< 6.13).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "dimctl/actuators/ethtool_netlink.h"
#include "dimctl/actuators/napi_netlink.h"
#include "dimctl/common/fd.h"
#include "dimctl/state/json_originals_store.h"

namespace dimctl::actuators {
namespace {

using ::testing::HasSubstr;

constexpr const char* kRx = "dnapi0";
constexpr const char* kTx = "dnapi1";
constexpr const char* kRxAddr = "10.77.23.1";

bool sh(const std::string& cmd) {
  const int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  return rc == 0;
}

class KernelNapi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (unshare CLONE_NEWNET, CAP_NET_ADMIN)";
    if (!sh("command -v ip") || !sh("command -v ethtool")) GTEST_SKIP() << "needs ip and ethtool";
    ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    peer_ = "dnapi-" + std::to_string(getpid());
    (void)sh("ip netns del " + peer_);  // a crashed earlier run with the same pid
    ASSERT_TRUE(sh("ip netns add " + peer_)) << "ip netns add " << peer_;
    made_peer_ = true;
    ASSERT_TRUE(sh(fmt::format("ip link add {} type veth peer name {} netns {}", kRx, kTx, peer_)));
    ASSERT_TRUE(
        sh(fmt::format("ip addr add {}/24 dev {} && ip link set {} up && ethtool -K {} gro on",
                       kRxAddr, kRx, kRx, kRx)));
    ASSERT_TRUE(
        sh(fmt::format("ip netns exec {} sh -c 'ip addr add 10.77.23.2/24 dev {} && ip link "
                       "set {} up && ethtool -K {} tso off gso off'",
                       peer_, kTx, kTx, kTx)));
    ifindex_ = if_nametoindex(kRx);
    ASSERT_NE(ifindex_, 0u);

    auto n = NapiNetlink::open();
    ASSERT_TRUE(n.ok()) << n.error().message();
    napi_ = std::move(*n);
    if (auto a = napi_->available(); !a) GTEST_SKIP() << a.error().message();
    ASSERT_TRUE(send_udp(8)) << "send from " << peer_ << ": " << std::strerror(errno);
    ASSERT_TRUE(wait_napi()) << kRx << " has no NAPI after traffic (GRO on)";
  }

  void TearDown() override {
    if (made_peer_) (void)sh("ip netns del " + peer_);  // deletes dnapi1, and with it dnapi0
  }

  // `count` datagrams to dnapi0 from a socket opened in the peer namespace.
  bool send_udp(int count) {
    Fd self(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
    Fd peer(::open(("/run/netns/" + peer_).c_str(), O_RDONLY | O_CLOEXEC));
    if (!self.valid() || !peer.valid() || setns(peer.get(), CLONE_NEWNET) < 0) return false;
    Fd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (setns(self.get(), CLONE_NEWNET) < 0 || !s.valid()) return false;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    inet_pton(AF_INET, kRxAddr, &to.sin_addr);
    const char payload[64] = {};
    for (int i = 0; i < count; ++i) {
      // The first datagrams may wait for ARP; a refused one is retried, not fatal.
      (void)sendto(s.get(), payload, sizeof payload, 0, reinterpret_cast<sockaddr*>(&to),
                   sizeof to);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  bool wait_napi() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < deadline) {
      auto l = napi_->list(ifindex_);
      if (l && !l->empty()) {
        napi_id_ = l->front().id;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::string peer_;
  bool made_peer_ = false;
  uint32_t ifindex_ = 0;
  uint32_t napi_id_ = 0;
  std::unique_ptr<NapiNetlink> napi_;
};

TEST_F(KernelNapi, ListShowsTheReceiversNapi) {
  auto l = napi_->list(ifindex_);
  ASSERT_TRUE(l.ok()) << l.error().message();
  ASSERT_FALSE(l->empty());
  for (const auto& n : *l) {
    EXPECT_EQ(n.ifindex, ifindex_);
    EXPECT_FALSE(n.irq.has_value()) << "veth has no interrupt of its own";
    EXPECT_TRUE(n.config.defer_hard_irqs.has_value()) << "napi-set kernels report all three";
    EXPECT_TRUE(n.config.gro_flush_timeout_ns.has_value());
    EXPECT_TRUE(n.config.irq_suspend_timeout_ns.has_value());
  }
  auto one = napi_->get(napi_id_);
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_EQ(*one, l->front());
}

TEST_F(KernelNapi, SetReadsBackAndSetsTheOriginalBack) {
  auto orig = napi_->get(napi_id_);
  ASSERT_TRUE(orig.ok()) << orig.error().message();
  seam::NapiConfig req;
  req.defer_hard_irqs = 2;
  req.gro_flush_timeout_ns = 200'000;
  auto r = napi_->set(napi_id_, req);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->config.defer_hard_irqs, 2u);
  EXPECT_EQ(r->config.gro_flush_timeout_ns, 200'000u);
  EXPECT_EQ(r->config.irq_suspend_timeout_ns, orig->config.irq_suspend_timeout_ns)
      << "a field absent from the request is not written";
  EXPECT_EQ(napi_->get(napi_id_)->config, r->config);
  ASSERT_TRUE(send_udp(4));  // the moderated NAPI still delivers

  auto back = napi_->set(napi_id_, orig->config);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->config, orig->config);
}

TEST_F(KernelNapi, UnknownNapiIdIsENOENTNamingIt) {
  constexpr uint32_t kBad = 0x7ffffff0;
  auto g = napi_->get(kBad);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code(), ENOENT);
  EXPECT_THAT(g.error().message(), HasSubstr(std::to_string(kBad)));
  auto s = napi_->set(kBad, seam::NapiConfig{1, std::nullopt, std::nullopt});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ENOENT);
  EXPECT_THAT(s.error().message(), HasSubstr("NAPI_SET napi " + std::to_string(kBad)));
}

TEST_F(KernelNapi, UnknownIfindexIsENODEV) {
  auto l = napi_->list(0x7ffffff0);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().code(), ENODEV) << l.error().message();
}

TEST_F(KernelNapi, OutOfRangeDeferIsRefusedBeforeSending) {
  auto s = napi_->set(napi_id_, seam::NapiConfig{0x80000000U, std::nullopt, std::nullopt});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EINVAL);
  EXPECT_THAT(s.error().message(), HasSubstr("defer-hard-irqs above"));
}

// veth's NAPI lives only while GRO is on: off and on again is a new NAPI, with a new id and the
// device's defaults. What restore relies on when it reports a recorded NAPI as gone.
TEST_F(KernelNapi, GroOffAndOnRecreatesTheNapiWithDefaults) {
  auto orig = napi_->get(napi_id_);
  ASSERT_TRUE(orig.ok()) << orig.error().message();
  ASSERT_TRUE(napi_->set(napi_id_, seam::NapiConfig{2, 200'000, std::nullopt}).ok());
  ASSERT_TRUE(sh(fmt::format("ethtool -K {} gro off && ethtool -K {} gro on", kRx, kRx)));
  auto old = napi_->get(napi_id_);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code(), ENOENT);
  ASSERT_TRUE(send_udp(4));
  const uint32_t before = napi_id_;
  ASSERT_TRUE(wait_napi());
  EXPECT_NE(napi_id_, before);
  EXPECT_EQ(napi_->get(napi_id_)->config, orig->config);
}

// What `dimctl restore` does after a SIGKILL: the original recorded before the first write is
// put back through NapiNetlink, read back, and the state file goes away.
TEST_F(KernelNapi, RestoreThroughTheOriginalsStorePutsTheOriginalBack) {
  auto orig = napi_->get(napi_id_);
  ASSERT_TRUE(orig.ok()) << orig.error().message();
  std::string dir = (std::filesystem::temp_directory_path() / "dnapi-state-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/state.json";
  {
    state::JsonOriginalsStore store(path);
    ASSERT_TRUE(store.record_napi(kRx, napi_id_, orig->config).ok());
    ASSERT_TRUE(napi_->set(napi_id_, seam::NapiConfig{2, 200'000, 0}).ok());
  }  // "killed" here: the NAPI stays moderated, the file keeps the original
  auto eth = EthtoolNetlink::open();
  ASSERT_TRUE(eth.ok()) << eth.error().message();
  state::JsonOriginalsStore restorer(path);
  const state::RestoreReport rep = restorer.restore_all(**eth, nullptr, napi_.get());
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, state::RestoreOutcome::kRestored) << rep.results[0].detail;
  EXPECT_EQ(napi_->get(napi_id_)->config, orig->config);
  EXPECT_TRUE(rep.file_removed);
  std::filesystem::remove_all(dir);
}

// The same after GRO off/on: the recorded NAPI is gone, reported so and dropped, and the new one
// (with the device's defaults) is not written.
TEST_F(KernelNapi, RestoreOfARecreatedNapiReportsItGone) {
  std::string dir = (std::filesystem::temp_directory_path() / "dnapi-state-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/state.json";
  {
    state::JsonOriginalsStore store(path);
    ASSERT_TRUE(store.record_napi(kRx, napi_id_, seam::NapiConfig{5, 1'000, 0}).ok());
  }
  ASSERT_TRUE(sh(fmt::format("ethtool -K {} gro off && ethtool -K {} gro on", kRx, kRx)));
  ASSERT_TRUE(send_udp(2));
  ASSERT_TRUE(wait_napi());
  auto fresh = napi_->get(napi_id_);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message();
  auto eth = EthtoolNetlink::open();
  ASSERT_TRUE(eth.ok()) << eth.error().message();
  state::JsonOriginalsStore restorer(path);
  const state::RestoreReport rep = restorer.restore_all(**eth, nullptr, napi_.get());
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, state::RestoreOutcome::kGone) << rep.results[0].detail;
  EXPECT_EQ(napi_->get(napi_id_)->config, fresh->config);
  EXPECT_TRUE(rep.file_removed);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dimctl::actuators
