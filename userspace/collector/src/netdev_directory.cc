#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <vector>

#include "dimctl/collector/netdev_codec.h"
#include "dimctl/collector/netdev_directory.h"
#include "dimctl/common/fd.h"
#include "dimctl/common/net_driver.h"
#include "dimctl/common/netlink_requests.h"
#include "netdev_uapi.h"

namespace dimctl::collector {
namespace nu = netdev_uapi;
namespace nc = netdev_codec;

namespace {

struct MnlDeleter {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};

using MsgFn = std::function<void(const nlmsghdr*)>;

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

struct NetlinkNetdevDirectory::Impl {
  std::unique_ptr<mnl_socket, MnlDeleter> sock;
  uint32_t portid = 0;
  uint32_t seq = 1;
  uint16_t family = 0;  // 0 = not resolved / absent
  bool family_tried = false;
  std::vector<char> buf = std::vector<char>(64 * 1024);

  // The names cache and the RTMGRP_LINK socket that invalidates it and the topology.
  Fd link_events;
  bool link_events_tried = false;
  bool devices_valid = false;
  bool topology_stale = true;  // a link changed since the last topology read
  std::map<uint32_t, std::string> devices;

  // Drains the link notifications; any (or an overrun) invalidates the names and the topology.
  // Without the socket both are stale at every call.
  void poll_link_changes() {
    if (!link_events_tried) open_link_events();
    if (!link_events.valid() || drain_link_events()) {
      devices_valid = false;
      topology_stale = true;
    }
  }

  Result<void> fill_devices() {
    auto out = net_devices();
    if (!out) return std::move(out).error();
    devices = std::move(*out);
    devices_valid = link_events.valid();  // without notifications, never trusted later
    return ok();
  }

  void open_link_events() {
    link_events_tried = true;
    Fd s(::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE));
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    sa.nl_groups = RTMGRP_LINK;
    if (!s.valid() || ::bind(s.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) return;
    link_events = std::move(s);
  }

  // True when a link changed since the last call (or notifications were lost: ENOBUFS).
  bool drain_link_events() {
    bool changed = false;
    for (;;) {
      ssize_t n = ::recv(link_events.get(), buf.data(), buf.size(), MSG_DONTWAIT);
      if (n > 0) {
        changed = true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == ENOBUFS) {  // overrun: the next recv goes on; re-read anyway
        changed = true;
        continue;
      }
      return changed;  // EAGAIN (drained), or an error: nothing more to read
    }
  }

  Result<void> open() {
    if (sock) return ok();
    mnl_socket* s = mnl_socket_open(NETLINK_GENERIC);
    if (s == nullptr) return DIMCTL_FAIL(errno, "netlink socket (generic)");
    sock.reset(s);
    if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
      return DIMCTL_FAIL(errno, "bind generic netlink socket");
    }
    portid = mnl_socket_get_portid(s);
    return ok();
  }

  // Sends one request and runs `fn` on every reply message. Returns the netlink error, if any.
  Result<void> request(uint16_t type, uint8_t cmd, uint8_t version, bool dump,
                       const std::function<void(nlmsghdr*)>& add_attrs, const MsgFn& fn) {
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK));
    nlh->nlmsg_seq = ++seq;
    auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
    genl->cmd = cmd;
    genl->version = version;
    if (add_attrs) add_attrs(nlh);
    count_netlink_request(NetlinkFamily::kNetdev);
    if (mnl_socket_sendto(sock.get(), nlh, nlh->nlmsg_len) < 0) {
      return DIMCTL_FAIL(errno, "netlink send (cmd {})", cmd);
    }
    const uint32_t want_seq = nlh->nlmsg_seq;
    for (;;) {
      ssize_t n = mnl_socket_recvfrom(sock.get(), buf.data(), buf.size());
      if (n < 0) return DIMCTL_FAIL(errno, "netlink recv (cmd {})", cmd);
      int rc = nc::run_reply(buf.data(), static_cast<size_t>(n), want_seq, portid, fn);
      if (rc < 0) return DIMCTL_FAIL(errno, "netlink cmd {}", cmd);
      if (rc == MNL_CB_STOP) return ok();
    }
  }

  void resolve_family() {
    if (family_tried) return;
    family_tried = true;
    MsgFn fn = [this](const nlmsghdr* nlh) {
      if (auto id = nc::decode_family_id(nlh)) family = *id;
    };
    auto r = request(
        GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, false,
        [](nlmsghdr* nlh) { mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, nu::kFamilyName); }, fn);
    if (!r) family = 0;  // ENOENT: kernel older than v6.3
  }
};

NetlinkNetdevDirectory::NetlinkNetdevDirectory() : impl_(std::make_unique<Impl>()) {}
NetlinkNetdevDirectory::~NetlinkNetdevDirectory() = default;

Result<void> NetlinkNetdevDirectory::refresh() {
  if (auto r = impl_->open(); !r) return r;
  impl_->resolve_family();
  caps_.family = impl_->family != 0;
  reread_used_ = false;
  impl_->poll_link_changes();
  if (!impl_->devices_valid && impl_->link_events.valid()) {
    if (auto r = impl_->fill_devices(); !r) return r;
  }
  if (!caps_.family) return ok();  // label by napi id only
  if (impl_->topology_stale || monotonic_ns() - topology_read_ns_ >= kTopologyMaxAgeNs) {
    return read_topology();
  }
  return qstats_reported_ ? read_qstats() : ok();
}

bool NetlinkNetdevDirectory::reread() {
  if (reread_used_) return false;
  reread_used_ = true;
  bool again = false;
  if (impl_->link_events.valid()) again = impl_->fill_devices().ok();
  if (caps_.family) again = read_topology().ok() || again;
  return again;
}

Result<void> NetlinkNetdevDirectory::read_topology() {
  impl_->topology_stale = false;
  napis_.clear();
  listed_.clear();
  napi_rxqs_.clear();
  // RX queue -> NAPI (v6.8). A NAPI may serve several RX queues: keep them all.
  {
    MsgFn fn = [&](const nlmsghdr* nlh) {
      const auto q = nc::decode_queue(nlh);
      if (!q || q->type != nu::kQueueTypeRx || !q->napi_id) return;
      napi_rxqs_[{q->ifindex, *q->napi_id}].push_back(q->id);
    };
    auto r = impl_->request(impl_->family, nu::kCmdQueueGet, nu::kFamilyVersion, true, {}, fn);
    caps_.queue_get = r.ok();
  }
  // NAPI -> IRQ (v6.8); also the authoritative list of live NAPIs per device.
  {
    MsgFn fn = [&](const nlmsghdr* nlh) {
      const auto n = nc::decode_napi(nlh);
      if (!n) return;
      NapiInfo& info = napis_[{n->ifindex, n->id}];
      if (n->irq) info.irq = static_cast<int32_t>(*n->irq);
      listed_[n->ifindex] = true;
    };
    auto r = impl_->request(impl_->family, nu::kCmdNapiGet, nu::kFamilyVersion, true, {}, fn);
    caps_.napi_get = r.ok();
  }
  for (const auto& [key, qs] : napi_rxqs_) {
    NapiInfo& info = napis_[key];
    info.queue = static_cast<int32_t>(*std::min_element(qs.begin(), qs.end()));
  }
  topology_read_ns_ = monotonic_ns();
  // Whether any device reports qstats is learned here, so a host whose drivers have none pays
  // for no qstats dump between two topology reads.
  return read_qstats();
}

Result<void> NetlinkNetdevDirectory::read_qstats() {
  // Per-queue rx-bytes (v6.9, drivers with netdev_stat_ops; EOPNOTSUPP elsewhere).
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> rxq_bytes;
  MsgFn fn = [&](const nlmsghdr* nlh) {
    const auto st = nc::decode_qstats(nlh);
    if (!st || st->queue_type != nu::kQueueTypeRx) return;
    rxq_bytes[{st->ifindex, st->queue_id}] = st->rx_bytes;
  };
  auto r = impl_->request(
      impl_->family, nu::kCmdQstatsGet, nu::kFamilyVersion, true,
      [](nlmsghdr* nlh) { mnl_attr_put_u32(nlh, nu::kAQstatsScope, nu::kQstatsScopeQueue); }, fn);
  caps_.qstats_get = r.ok();
  qstats_reported_ = !rxq_bytes.empty();
  for (const auto& [key, qs] : napi_rxqs_) {
    uint64_t sum = 0;
    bool any = false;
    for (uint32_t q : qs) {
      if (auto it = rxq_bytes.find({key.first, q}); it != rxq_bytes.end()) {
        sum += it->second;
        any = true;
      }
    }
    if (any) {
      napis_[key].rx_bytes = sum;
    } else if (auto it = napis_.find(key); it != napis_.end()) {
      it->second.rx_bytes.reset();
    }
  }
  return ok();
}

std::optional<std::string> NetlinkNetdevDirectory::ifname(uint32_t ifindex) const {
  // The link-notified cache (refresh() invalidated it on any link change); if_indextoname(3)
  // only where there is no cache (no notification socket, or the dump failed).
  if (impl_->devices_valid) {
    auto it = impl_->devices.find(ifindex);
    if (it == impl_->devices.end()) return std::nullopt;
    return it->second;
  }
  char name[IF_NAMESIZE] = {};
  if (if_indextoname(ifindex, name) == nullptr) return std::nullopt;
  return std::string(name);
}

bool NetlinkNetdevDirectory::lists_napis(uint32_t ifindex) const {
  return caps_.napi_get && listed_.count(ifindex) != 0;
}

std::optional<NapiInfo> NetlinkNetdevDirectory::napi(uint32_t ifindex, uint32_t napi_id) const {
  auto it = napis_.find({ifindex, napi_id});
  if (it == napis_.end()) return std::nullopt;
  return it->second;
}

bool NetlinkNetdevDirectory::knows_napis(uint32_t ifindex) const {
  auto it = napis_.lower_bound({ifindex, 0});
  return it != napis_.end() && it->first.first == ifindex;
}

Result<std::map<uint32_t, std::string>> NetlinkNetdevDirectory::devices() {
  // Subscribed before the first dump: a change between the two is then seen next time.
  impl_->poll_link_changes();
  if (!impl_->devices_valid) {
    if (auto r = impl_->fill_devices(); !r) return std::move(r).error();
  }
  return impl_->devices;
}

}  // namespace dimctl::collector
