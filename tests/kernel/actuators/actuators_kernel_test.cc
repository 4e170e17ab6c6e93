// EthtoolNetlink, JsonOriginalsStore::restore_all and RdmaNetlink against the running kernel.
//
// Every test first moves the (single-threaded) test process into a fresh network namespace
// (unshare(CLONE_NEWNET)) and creates two persistent tap devices there, so nothing outside the
// namespace (eth0 in particular) is ever read or written. tun/tap implements ethtool coalesce
// with rx-frames only (supported_coalesce_params = ETHTOOL_COALESCE_RX_MAX_FRAMES, clamped to
// NAPI_POLL_WEIGHT = 64): rx-usecs is unsupported, which exercises the refusal path.
// dimt1 is never written and must keep its settings.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/ethtool_netlink.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "dimctl/actuators/ethtool_netlink.h"
#include "dimctl/actuators/nl_codec.h"
#include "dimctl/actuators/rdma_netlink.h"
#include "dimctl/common/fd.h"
#include "dimctl/state/json_originals_store.h"

namespace dimctl::actuators {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kDev = "dimt0";
constexpr const char* kUntouched = "dimt1";

bool tun_persist(const char* name, bool persist) {
  Fd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return false;
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  if (ioctl(fd.get(), TUNSETIFF, &ifr) < 0) return false;
  return ioctl(fd.get(), TUNSETPERSIST, persist ? 1 : 0) == 0;
}

seam::Coalesce frames(uint32_t n) {
  seam::Coalesce c;
  c.rx_max_frames = n;
  return c;
}

class KernelActuators : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (unshare CLONE_NEWNET, CAP_NET_ADMIN)";
    if (access("/dev/net/tun", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/net/tun";
    ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    ASSERT_TRUE(tun_persist(kDev, true)) << "create tap " << kDev << ": " << std::strerror(errno);
    ASSERT_TRUE(tun_persist(kUntouched, true)) << "create tap " << kUntouched;
    auto e = EthtoolNetlink::open();
    ASSERT_TRUE(e.ok()) << e.error().message();
    eth_ = std::move(*e);
    auto u = eth_->get(kUntouched);
    ASSERT_TRUE(u.ok()) << u.error().message();
    untouched_ = *u;
    (void)eth_->drain_changes();
  }

  void TearDown() override {
    if (eth_) {
      auto u = eth_->get(kUntouched);
      ASSERT_TRUE(u.ok()) << u.error().message();
      EXPECT_EQ(*u, untouched_) << kUntouched << " was never written and must keep its settings";
    }
    tun_persist(kDev, false);
    tun_persist(kUntouched, false);
  }

  // Waits up to 2 s for a notification for `dev` with rx_max_frames == n.
  bool wait_change(const std::string& dev, uint32_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& c : eth_->drain_changes()) {
        if (c.device == dev && c.values.rx_max_frames == n) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::unique_ptr<EthtoolNetlink> eth_;
  seam::Coalesce untouched_;
};

TEST_F(KernelActuators, GetReportsOnlySupportedFields) {
  auto c = eth_->get(kDev);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_TRUE(c->rx_max_frames.has_value());
  EXPECT_EQ(*c->rx_max_frames, 0u);  // tun default: no batching
  EXPECT_FALSE(c->rx_usecs.has_value());
  EXPECT_FALSE(c->tx_usecs.has_value());
  EXPECT_FALSE(c->use_adaptive_rx.has_value());
}

TEST_F(KernelActuators, SetReadsBackAndClamps) {
  auto r = eth_->set(kDev, frames(16));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->rx_max_frames, 16u);
  EXPECT_EQ(eth_->get(kDev)->rx_max_frames, 16u);
  auto clamped = eth_->set(kDev, frames(100));
  ASSERT_TRUE(clamped.ok()) << clamped.error().message();
  EXPECT_EQ(clamped->rx_max_frames, 64u) << "tun clamps to NAPI_POLL_WEIGHT; read-back shows it";
}

TEST_F(KernelActuators, UnsupportedFieldIsRefusedBeforeSending) {
  ASSERT_TRUE(eth_->set(kDev, frames(8)).ok());
  (void)eth_->drain_changes();
  seam::Coalesce req = frames(20);
  req.rx_usecs = 5;
  auto r = eth_->set(kDev, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EOPNOTSUPP);
  EXPECT_THAT(r.error().message(), HasSubstr(kDev));
  EXPECT_THAT(r.error().message(), HasSubstr("rx_usecs"));
  EXPECT_THAT(r.error().message(), HasSubstr("nothing was sent"));
  EXPECT_EQ(eth_->get(kDev)->rx_max_frames, 8u) << "nothing changed, not even rx_max_frames";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(eth_->drain_changes().empty()) << "no COALESCE_NTF: nothing was sent";
}

// The same request sent raw: the kernel's refusal and its extack message reach the Error.
TEST_F(KernelActuators, KernelExtackMessageIsPassedThrough) {
  auto sock = NetlinkSocket::open(NETLINK_GENERIC, "test", NetlinkFamily::kNetdev);
  ASSERT_TRUE(sock.ok()) << sock.error().message();
  seam::Coalesce req;
  req.rx_usecs = 5;
  const uint32_t seq = sock->next_seq();
  const nlmsghdr* msg =
      nl::build_coalesce_set(sock->request_buffer().data(), eth_->family_id(), seq, kDev, req);
  auto r = sock->transact(msg, "raw COALESCE_SET dimt0",
                          [](const nlmsghdr*) -> Result<void> { return ok(); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_THAT(r.error().context(), HasSubstr("raw COALESCE_SET dimt0: "));
  EXPECT_THAT(r.error().context(), HasSubstr("unsupported parameter"));
}

TEST_F(KernelActuators, UnknownDeviceIsENODEV) {
  auto r = eth_->get("nope0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENODEV);
  EXPECT_THAT(r.error().message(), HasSubstr("nope0"));
}

TEST_F(KernelActuators, ChangesByOthersAndOursAreNotified) {
  // Ours.
  ASSERT_TRUE(eth_->set(kDev, frames(5)).ok());
  EXPECT_TRUE(wait_change(kDev, 5));
  // Someone else's, through another netlink socket (another process would look the same).
  auto other = EthtoolNetlink::open();
  ASSERT_TRUE(other.ok()) << other.error().message();
  ASSERT_TRUE((*other)->set(kDev, frames(6)).ok());
  EXPECT_TRUE(wait_change(kDev, 6));
  // `ethtool -C` run inside this namespace (the child inherits it).
  if (std::system("command -v ethtool >/dev/null 2>&1") == 0) {
    ASSERT_EQ(std::system("ethtool -C dimt0 rx-frames 9 >/dev/null 2>&1"), 0);
    EXPECT_TRUE(wait_change(kDev, 9));
    EXPECT_EQ(eth_->get(kDev)->rx_max_frames, 9u);
  }
}

TEST_F(KernelActuators, NoPerQueueCoalescingOnTun) {
  EXPECT_FALSE(eth_->supports_per_queue(kDev));
  auto q = eth_->get_queue(kDev, 0);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code(), EOPNOTSUPP);
  EXPECT_THAT(q.error().message(), HasSubstr("ETHTOOL_PERQUEUE"));
}

TEST_F(KernelActuators, StateStoreRestoresTheOriginal) {
  std::string tmpl = (fs::temp_directory_path() / "dimctl-kstate-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::string path = tmpl + "/state.json";
  ASSERT_TRUE(eth_->set(kDev, frames(3)).ok());  // the "original" an operator had configured
  {
    state::JsonOriginalsStore store(path);
    auto orig = eth_->get(kDev);
    ASSERT_TRUE(orig.ok());
    ASSERT_TRUE(store.record_net(kDev, *orig).ok());
    ASSERT_TRUE(eth_->set(kDev, frames(32)).ok());               // the controller's write
    ASSERT_TRUE(store.record_net(kDev, *eth_->get(kDev)).ok());  // idempotent: keeps 3
  }  // the daemon "crashes" here: nothing restored yet
  EXPECT_EQ(eth_->get(kDev)->rx_max_frames, 32u);

  state::JsonOriginalsStore restorer(path);
  RdmaNetlink rdma;
  const state::RestoreReport rep = restorer.restore_all(*eth_, &rdma);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, state::RestoreOutcome::kRestored) << rep.results[0].detail;
  EXPECT_TRUE(rep.all_restored());
  EXPECT_TRUE(rep.file_removed);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(eth_->get(kDev)->rx_max_frames, 3u);
  fs::remove_all(tmpl);
}

TEST_F(KernelActuators, RestoreDropsDevicesThatVanished) {
  std::string tmpl = (fs::temp_directory_path() / "dimctl-kstate-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::string path = tmpl + "/state.json";
  ASSERT_TRUE(tun_persist("dimt2", true));
  state::JsonOriginalsStore store(path);
  ASSERT_TRUE(store.record_net("dimt2", *eth_->get("dimt2")).ok());
  ASSERT_TRUE(tun_persist("dimt2", false));  // deleted
  const state::RestoreReport rep = store.restore_all(*eth_, nullptr);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, state::RestoreOutcome::kGone) << rep.results[0].detail;
  EXPECT_TRUE(rep.file_removed);
  fs::remove_all(tmpl);
}

TEST_F(KernelActuators, RdmaListDoesNotCrashWithoutRdma) {
  size_t sys_devices = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/infiniband", ec)) {
    (void)e;
    ++sys_devices;
  }
  RdmaNetlink rdma;
  auto list = rdma.list();
  ASSERT_TRUE(list.ok()) << list.error().message();
  if (sys_devices == 0) {
    EXPECT_TRUE(list->empty()) << "no /sys/class/infiniband devices on this host";
    auto d = rdma.get_dim("rxe0");
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code(), ENODEV);
    EXPECT_THAT(d.error().message(), HasSubstr("rxe0"));
  } else {
    for (const auto& dev : *list) EXPECT_FALSE(dev.name.empty());
  }
  if (!rdma.available()) {
    EXPECT_THAT(rdma.unavailable_reason(), HasSubstr("NETLINK_RDMA"));
  }
}

}  // namespace
}  // namespace dimctl::actuators
