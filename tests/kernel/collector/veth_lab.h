// VethLab: a veth pair across two network namespaces for kernel tests, never touching eth0.
// The test process moves itself into a fresh netns ("A", unshare(CLONE_NEWNET), once per
// process), where the receiver `va` lives and the collector runs; the sender `vb` lives in a
// named netns B (`ip netns add`), used by a sender thread through setns(). Several labs can
// coexist: lab `id` N > 0 uses `vaN`/`vbN`, 10.77.N.0/24 and its own netns B. TSO is off on the
// sender and GRO on on the receiver: only then does veth poll its own NAPI (otherwise the
// traffic lands in the per-CPU backlog NAPI). IPv6 is disabled and neighbours are static so
// that exactly the packets a test sends cross the link.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "dimctl/common/fd.h"
#include "dimctl/common/result.h"

namespace dimctl::testing {

inline Result<void> sh(const std::string& cmd) {
  const std::string full = cmd + " >/tmp/dimctl-kt-sh.log 2>&1";
  int rc = std::system(full.c_str());
  if (rc != 0) {
    std::ifstream f("/tmp/dimctl-kt-sh.log");
    std::string out((std::istreambuf_iterator<char>(f)), {});
    return DIMCTL_FAIL(0, "`{}` failed ({}): {}", cmd, rc, out);
  }
  return ok();
}

inline Result<std::string> sh_out(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return DIMCTL_FAIL(errno, "popen {}", cmd);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Enter a private network namespace once per process.
inline Result<void> enter_private_netns() {
  static bool done = false;
  if (done) return ok();
  if (::unshare(CLONE_NEWNET) != 0) return DIMCTL_FAIL(errno, "unshare(CLONE_NEWNET)");
  done = true;
  return sh("ip link set lo up");
}

class VethLab {
 public:
  // ns_prefix: the name of netns B before "-<pid>" (a test binary that may run beside others
  // picks its own).
  explicit VethLab(int id = 0, std::string ns_prefix = "dimctl-kt")
      : id_(id),
        ns_prefix_(std::move(ns_prefix)),
        rx_(id == 0 ? "va" : fmt::format("va{}", id)),
        tx_(id == 0 ? "vb" : fmt::format("vb{}", id)),
        rx_addr_(fmt::format("10.77.{}.1", id)),
        tx_addr_(fmt::format("10.77.{}.2", id)) {}

  ~VethLab() {
    if (!ns_.empty()) {
      (void)sh(fmt::format("ip link del {}", rx_));
      (void)sh(fmt::format("ip netns del {}", ns_));
    }
  }

  // queues: RX/TX queue count of both ends (veth channels).
  Result<void> create(int queues) {
    if (auto r = enter_private_netns(); !r) return r;
    ns_ = id_ == 0 ? fmt::format("{}-{}", ns_prefix_, ::getpid())
                   : fmt::format("{}-{}-{}", ns_prefix_, ::getpid(), id_);
    (void)sh(fmt::format("ip netns del {}", ns_));
    std::ofstream("/proc/sys/net/ipv6/conf/default/disable_ipv6") << "1";
    std::ofstream("/proc/sys/net/ipv6/conf/all/disable_ipv6") << "1";
    const std::string in_b = fmt::format("ip netns exec {} ", ns_);
    const char* steps[] = {
        "ip netns add {ns}",
        "{b}sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1",
        // One command split over two lines; the parentheses tell clang the concatenation is meant.
        ("ip link add {va} numrxqueues {q} numtxqueues {q} type veth peer name {vb} "
         "numrxqueues {q} numtxqueues {q} netns {ns}"),
        "ip addr add {rx}/24 dev {va}",
        "{b}ip addr add {tx}/24 dev {vb}",
        "ethtool -K {va} gro on",
        "{b}ethtool -K {vb} tso off gso off",
        "ip link set {va} up",
        "{b}ip link set {vb} up",
        "{b}ip link set lo up",
    };
    for (const char* step : steps) {
      if (auto r = sh(fmt::format(fmt::runtime(step), fmt::arg("ns", ns_), fmt::arg("b", in_b),
                                  fmt::arg("q", queues), fmt::arg("va", rx_), fmt::arg("vb", tx_),
                                  fmt::arg("rx", rx_addr_), fmt::arg("tx", tx_addr_)));
          !r) {
        return r;
      }
    }
    if (queues > 1) {
      if (auto r = sh(fmt::format("ethtool -L {} rx {} tx {}", rx_, queues, queues)); !r) return r;
      if (auto r = sh(fmt::format("{}ethtool -L {} rx {} tx {}", in_b, tx_, queues, queues)); !r) {
        return r;
      }
    }
    // Not /sys/class/net: sysfs shows the netns of whoever mounted it, not ours.
    auto va_mac =
        sh_out(fmt::format("ip link show dev {} | awk '/link\\/ether/ {{print $2}}'", rx_));
    auto vb_mac =
        sh_out(in_b + fmt::format("ip link show dev {} | awk '/link\\/ether/ {{print $2}}'", tx_));
    if (!va_mac || !vb_mac || va_mac->empty() || vb_mac->empty()) {
      return DIMCTL_FAIL(0, "read veth MAC addresses");
    }
    if (auto r = sh(fmt::format("ip neigh replace {} lladdr {} dev {} nud permanent", tx_addr_,
                                *vb_mac, rx_));
        !r) {
      return r;
    }
    if (auto r = sh(fmt::format("{}ip neigh replace {} lladdr {} dev {} nud permanent", in_b,
                                rx_addr_, *va_mac, tx_));
        !r) {
      return r;
    }
    // A listening socket on the receiver: no ICMP port-unreachable goes back.
    rx_sock_ = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(kPort);
    ::inet_pton(AF_INET, rx_addr_.c_str(), &a.sin_addr);
    if (!rx_sock_.valid() ||
        ::bind(rx_sock_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      return DIMCTL_FAIL(errno, "bind receiver socket");
    }
    return ok();
  }

  uint32_t rx_ifindex() const { return ::if_nametoindex(rx_.c_str()); }
  const std::string& rx_name() const { return rx_; }

  // Sends `count` UDP datagrams from netns B, round-robin over `flows` source ports (different
  // flow hashes spread them over the TX queues of vb, hence the RX queues of va).
  Result<void> send_udp(int count, int flows) {
    Result<void> result;
    std::thread t([&] {
      Fd ns(::open(fmt::format("/run/netns/{}", ns_).c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns.valid() || ::setns(ns.get(), CLONE_NEWNET) != 0) {
        result = DIMCTL_ERR(errno, "setns {}", ns_);
        return;
      }
      std::vector<Fd> socks;
      for (int f = 0; f < flows; ++f) {
        Fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        sockaddr_in src{};
        src.sin_family = AF_INET;
        src.sin_port = htons(static_cast<uint16_t>(41000 + f));
        ::inet_pton(AF_INET, tx_addr_.c_str(), &src.sin_addr);
        if (!s.valid() || ::bind(s.get(), reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0) {
          result = DIMCTL_ERR(errno, "bind sender socket {}", f);
          return;
        }
        socks.push_back(std::move(s));
      }
      sockaddr_in dst{};
      dst.sin_family = AF_INET;
      dst.sin_port = htons(kPort);
      ::inet_pton(AF_INET, rx_addr_.c_str(), &dst.sin_addr);
      const char payload[32] = "dimctl kernel test";
      for (int i = 0; i < count; ++i) {
        const Fd& s = socks[static_cast<size_t>(i % flows)];
        if (::sendto(s.get(), payload, sizeof(payload), 0, reinterpret_cast<sockaddr*>(&dst),
                     sizeof(dst)) != static_cast<ssize_t>(sizeof(payload))) {
          result = DIMCTL_ERR(errno, "sendto #{}", i);
          return;
        }
        // veth (noqueue) drops when the peer's 256-slot NAPI ring is full: pace the bursts.
        if (i % 32 == 31) ::usleep(300);
      }
    });
    t.join();
    return result;
  }

 private:
  static constexpr uint16_t kPort = 9999;
  int id_;
  std::string ns_prefix_;
  std::string rx_, tx_, rx_addr_, tx_addr_;
  std::string ns_;
  Fd rx_sock_;
};

}  // namespace dimctl::testing
