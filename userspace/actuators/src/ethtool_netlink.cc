#include "dimctl/actuators/ethtool_netlink.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "dimctl/actuators/nl_codec.h"

namespace dimctl::actuators {
namespace {

static_assert(MAX_NUM_QUEUE == kMaxPerQueueIndex + 1);

Result<void> check_ifname(const std::string& dev) {
  if (dev.empty() || dev.size() >= IFNAMSIZ) {
    return DIMCTL_FAIL(EINVAL, "invalid network device name \"{}\"", dev);
  }
  return ok();
}

// Fields of `req` that `supported` (a GET result) does not report.
std::vector<std::string_view> unsupported_fields(const seam::Coalesce& req,
                                                 const seam::Coalesce& supported) {
  std::vector<std::string_view> out;
  const auto want = nl::present_fields(req);
  const auto have = nl::present_fields(supported);
  for (auto f : want) {
    if (std::find(have.begin(), have.end(), f) == have.end()) out.push_back(f);
  }
  return out;
}

// struct ethtool_coalesce <-> seam::Coalesce, restricted to what the device reports.
seam::Coalesce from_ioctl(const ethtool_coalesce& ec, const seam::Coalesce& supported) {
  seam::Coalesce c;
  if (supported.rx_usecs) c.rx_usecs = ec.rx_coalesce_usecs;
  if (supported.rx_max_frames) c.rx_max_frames = ec.rx_max_coalesced_frames;
  if (supported.tx_usecs) c.tx_usecs = ec.tx_coalesce_usecs;
  if (supported.tx_max_frames) c.tx_max_frames = ec.tx_max_coalesced_frames;
  if (supported.use_adaptive_rx) c.use_adaptive_rx = ec.use_adaptive_rx_coalesce != 0;
  if (supported.use_adaptive_tx) c.use_adaptive_tx = ec.use_adaptive_tx_coalesce != 0;
  return c;
}

void overlay_ioctl(ethtool_coalesce& ec, const seam::Coalesce& req) {
  if (req.rx_usecs) ec.rx_coalesce_usecs = *req.rx_usecs;
  if (req.rx_max_frames) ec.rx_max_coalesced_frames = *req.rx_max_frames;
  if (req.tx_usecs) ec.tx_coalesce_usecs = *req.tx_usecs;
  if (req.tx_max_frames) ec.tx_max_coalesced_frames = *req.tx_max_frames;
  if (req.use_adaptive_rx) ec.use_adaptive_rx_coalesce = *req.use_adaptive_rx ? 1 : 0;
  if (req.use_adaptive_tx) ec.use_adaptive_tx_coalesce = *req.use_adaptive_tx ? 1 : 0;
}

// One ETHTOOL_PERQUEUE request for a single queue: struct ethtool_per_queue_op followed by one
// struct ethtool_coalesce.
Result<void> perqueue_ioctl(int fd, const std::string& dev, uint32_t queue, uint32_t sub_cmd,
                            ethtool_coalesce& ec) {
  if (queue > kMaxPerQueueIndex) {
    return DIMCTL_FAIL(EINVAL, "{}: queue {} out of range for ETHTOOL_PERQUEUE (max {})", dev,
                       queue, kMaxPerQueueIndex);
  }
  constexpr size_t kHdr = sizeof(ethtool_per_queue_op);
  std::vector<uint32_t> buf((kHdr + sizeof(ethtool_coalesce)) / sizeof(uint32_t) + 1, 0);
  auto* bytes = reinterpret_cast<char*>(buf.data());
  ethtool_per_queue_op op{};
  op.cmd = ETHTOOL_PERQUEUE;
  op.sub_command = sub_cmd;
  op.queue_mask[queue / 32] = 1U << (queue % 32);
  ec.cmd = sub_cmd;
  std::memcpy(bytes, &op, kHdr);
  std::memcpy(bytes + kHdr, &ec, sizeof ec);
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, dev.c_str(), dev.size() + 1);
  ifr.ifr_data = bytes;
  if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) {
    return DIMCTL_ERRNO("{}: SIOCETHTOOL ETHTOOL_PERQUEUE {} queue {}", dev,
                        sub_cmd == ETHTOOL_GCOALESCE ? "GCOALESCE" : "SCOALESCE", queue);
  }
  std::memcpy(&ec, bytes + kHdr, sizeof ec);
  return ok();
}

}  // namespace

Result<std::unique_ptr<EthtoolNetlink>> EthtoolNetlink::open() {
  auto req = NetlinkSocket::open(NETLINK_GENERIC, "ethtool netlink", NetlinkFamily::kEthtool);
  if (!req) return std::move(req).error();
  nl::GenlFamily fam;
  bool found = false;
  const uint32_t seq = req->next_seq();
  nlmsghdr* msg = nl::build_getfamily(req->request_buffer().data(), seq, ETHTOOL_GENL_NAME);
  auto r = req->transact(msg, "resolve generic netlink family \"ethtool\"",
                         [&](const nlmsghdr* nlh) -> Result<void> {
                           auto f = nl::decode_getfamily(nlh, ETHTOOL_GENL_NAME);
                           if (!f) return std::move(f).error();
                           fam = std::move(*f);
                           found = true;
                           return ok();
                         });
  if (!r) {
    if (r.error().code() == ENOENT) {
      return std::move(r).error().wrap("kernel has no ethtool netlink (CONFIG_ETHTOOL_NETLINK)");
    }
    return std::move(r).error();
  }
  if (!found) return DIMCTL_FAIL(0, "resolve generic netlink family \"ethtool\": no reply");
  auto grp = fam.mcast_groups.find(ETHTOOL_MCGRP_MONITOR_NAME);
  if (grp == fam.mcast_groups.end()) {
    return DIMCTL_FAIL(0, "generic netlink family \"ethtool\" has no \"{}\" multicast group",
                       ETHTOOL_MCGRP_MONITOR_NAME);
  }
  auto mon = NetlinkSocket::open(NETLINK_GENERIC, "ethtool monitor", NetlinkFamily::kEthtool);
  if (!mon) return std::move(mon).error();
  if (auto j = mon->join_group(grp->second); !j)
    return std::move(j).error().wrap("ethtool monitor");
  if (auto nb = mon->set_nonblocking(); !nb) return std::move(nb).error();

  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return DIMCTL_ERRNO("socket for SIOCETHTOOL");
  return std::unique_ptr<EthtoolNetlink>(
      new EthtoolNetlink(std::move(*req), std::move(*mon), fam.id, Fd(fd)));
}

Result<seam::Coalesce> EthtoolNetlink::get(const std::string& dev) {
  if (auto c = check_ifname(dev); !c) return std::move(c).error();
  const std::string what = fmt::format("ethtool COALESCE_GET {}", dev);
  const uint32_t seq = req_.next_seq();
  nlmsghdr* msg = nl::build_coalesce_get(req_.request_buffer().data(), family_, seq, dev);
  std::optional<seam::Coalesce> got;
  auto r = req_.transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    auto m = nl::decode_coalesce(nlh, family_, what);
    if (!m) return std::move(m).error();
    if (m->cmd != ETHTOOL_MSG_COALESCE_GET_REPLY) {
      return DIMCTL_FAIL(0, "{}: reply has ethtool command {}, want COALESCE_GET_REPLY", what,
                         m->cmd);
    }
    if (m->device != dev) {
      return DIMCTL_FAIL(0, "{}: reply is for device \"{}\"", what, m->device);
    }
    got = m->values;
    return ok();
  });
  if (!r) return std::move(r).error();
  if (!got) return DIMCTL_FAIL(0, "{}: kernel acknowledged without a reply", what);
  return *got;
}

Result<seam::Coalesce> EthtoolNetlink::set(const std::string& dev, const seam::Coalesce& req) {
  auto cur = get(dev);
  if (!cur) return std::move(cur).error();
  if (auto bad = unsupported_fields(req, *cur); !bad.empty()) {
    return DIMCTL_FAIL(EOPNOTSUPP,
                       "{}: refusing to set {}: not reported by the device's COALESCE_GET "
                       "(unsupported by the driver); nothing was sent",
                       dev, fmt::join(bad, ", "));
  }
  if (req.empty()) return cur;
  const std::string what =
      fmt::format("ethtool COALESCE_SET {} ({})", dev, fmt::join(nl::present_fields(req), ", "));
  const uint32_t seq = req_.next_seq();
  nlmsghdr* msg = nl::build_coalesce_set(req_.request_buffer().data(), family_, seq, dev, req);
  auto r = req_.transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    return DIMCTL_FAIL(0, "{}: unexpected reply message type {}", what, nlh->nlmsg_type);
  });
  if (!r) return std::move(r).error();
  auto back = get(dev);
  if (!back) return std::move(back).error().wrap(fmt::format("{}: read-back", dev));
  return back;
}

bool EthtoolNetlink::supports_per_queue(const std::string& dev) {
  if (!check_ifname(dev)) return false;
  ethtool_coalesce ec{};
  auto r = perqueue_ioctl(ioctl_.get(), dev, 0, ETHTOOL_GCOALESCE, ec);
  if (!r && r.error().code() != EOPNOTSUPP) {
    spdlog::debug("per-queue coalescing probe: {}", r.error().message());
  }
  return r.ok();
}

Result<seam::Coalesce> EthtoolNetlink::get_queue(const std::string& dev, uint32_t queue) {
  auto dev_wide = get(dev);
  if (!dev_wide) return std::move(dev_wide).error();
  ethtool_coalesce ec{};
  if (auto r = perqueue_ioctl(ioctl_.get(), dev, queue, ETHTOOL_GCOALESCE, ec); !r) {
    return std::move(r).error();
  }
  return from_ioctl(ec, *dev_wide);
}

Result<seam::Coalesce> EthtoolNetlink::set_queue(const std::string& dev, uint32_t queue,
                                                 const seam::Coalesce& req) {
  if (req.use_cqe_mode_rx || req.use_cqe_mode_tx) {
    return DIMCTL_FAIL(EOPNOTSUPP,
                       "{} queue {}: refusing to set CQE mode per queue: ETHTOOL_PERQUEUE cannot "
                       "express it; nothing was sent",
                       dev, queue);
  }
  auto dev_wide = get(dev);
  if (!dev_wide) return std::move(dev_wide).error();
  if (auto bad = unsupported_fields(req, *dev_wide); !bad.empty()) {
    return DIMCTL_FAIL(EOPNOTSUPP,
                       "{} queue {}: refusing to set {}: not reported by the device's "
                       "COALESCE_GET (unsupported by the driver); nothing was sent",
                       dev, queue, fmt::join(bad, ", "));
  }
  ethtool_coalesce ec{};
  if (auto r = perqueue_ioctl(ioctl_.get(), dev, queue, ETHTOOL_GCOALESCE, ec); !r) {
    return std::move(r).error();
  }
  if (req.empty()) return from_ioctl(ec, *dev_wide);
  overlay_ioctl(ec, req);
  if (auto r = perqueue_ioctl(ioctl_.get(), dev, queue, ETHTOOL_SCOALESCE, ec); !r) {
    return std::move(r).error();
  }
  ethtool_coalesce back{};
  if (auto r = perqueue_ioctl(ioctl_.get(), dev, queue, ETHTOOL_GCOALESCE, back); !r) {
    return std::move(r).error().wrap("read-back");
  }
  return from_ioctl(back, *dev_wide);
}

std::vector<seam::CoalesceChange> EthtoolNetlink::drain_changes() {
  std::vector<seam::CoalesceChange> out;
  for (;;) {
    auto data = mon_.recv_nonblocking();
    if (!data) {
      if (data.error().code() == ENOBUFS) {
        ++lost_;
        spdlog::warn("ethtool monitor: the kernel dropped notifications (socket overrun)");
        continue;
      }
      spdlog::warn("ethtool monitor: {}", data.error().message());
      break;
    }
    if (data->empty()) break;
    auto r = for_each_msg(
        data->data(), data->size(), "ethtool monitor", [&](const nlmsghdr* nlh) -> Result<void> {
          if (nlh->nlmsg_type != family_) return ok();
          if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return ok();
          const auto* g = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
          if (g->cmd != ETHTOOL_MSG_COALESCE_NTF) return ok();  // other ethtool notifications
          auto m = nl::decode_coalesce(nlh, family_, "ethtool COALESCE_NTF");
          if (!m) {
            ++bad_;
            spdlog::warn("{}", m.error().message());
            return ok();
          }
          out.push_back({std::move(m->device), m->values});
          return ok();
        });
    if (!r) {
      ++bad_;
      spdlog::warn("{}", r.error().message());
    }
  }
  return out;
}

}  // namespace dimctl::actuators
