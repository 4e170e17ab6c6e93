#include "dimctl/actuators/rdma_netlink.h"

#include <linux/netlink.h>

#include <cerrno>

namespace dimctl::actuators {

RdmaNetlink::RdmaNetlink() {
  auto s = NetlinkSocket::open(NETLINK_RDMA, "rdma netlink", NetlinkFamily::kRdma);
  if (s) {
    sock_.emplace(std::move(*s));
  } else if (s.error().code() == EPROTONOSUPPORT) {
    open_error_ = DIMCTL_ERR(EPROTONOSUPPORT, "NETLINK_RDMA unavailable: ib_core not loaded");
  } else {
    open_error_ = std::move(s).error();
  }
}

Result<std::vector<nl::RdmaDevMsg>> RdmaNetlink::dump() {
  std::vector<nl::RdmaDevMsg> out;
  if (!sock_) {
    if (open_error_ && open_error_->code() == EPROTONOSUPPORT) return out;  // no ib_core
    return fail(*open_error_);
  }
  const std::string what = "rdma netlink RDMA_NLDEV_CMD_GET dump";
  const uint32_t seq = sock_->next_seq();
  nlmsghdr* msg = nl::build_rdma_dev_dump(sock_->request_buffer().data(), seq);
  auto r = sock_->transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    auto d = nl::decode_rdma_dev(nlh, what);
    if (!d) return std::move(d).error();
    out.push_back(std::move(*d));
    return ok();
  });
  if (!r) return std::move(r).error();
  return out;
}

Result<nl::RdmaDevMsg> RdmaNetlink::find(const std::string& ibdev) {
  auto all = dump();
  if (!all) return std::move(all).error();
  for (auto& d : *all) {
    if (d.dev.name == ibdev) return std::move(d);
  }
  if (!sock_) {
    return DIMCTL_FAIL(ENODEV, "no RDMA device \"{}\": {}", ibdev, unavailable_reason());
  }
  return DIMCTL_FAIL(ENODEV, "no RDMA device \"{}\"", ibdev);
}

Result<std::vector<seam::RdmaDevice>> RdmaNetlink::list() {
  auto all = dump();
  if (!all) return std::move(all).error();
  std::vector<seam::RdmaDevice> out;
  out.reserve(all->size());
  for (auto& d : *all) out.push_back(std::move(d.dev));
  return out;
}

Result<bool> RdmaNetlink::get_dim(const std::string& ibdev) {
  auto d = find(ibdev);
  if (!d) return std::move(d).error();
  if (!d->has_dim) {
    return DIMCTL_FAIL(
        EOPNOTSUPP, "{}: kernel does not report RDMA_NLDEV_ATTR_DEV_DIM (needs Linux 5.3+)", ibdev);
  }
  return d->dev.dim_enabled;
}

Result<bool> RdmaNetlink::set_dim(const std::string& ibdev, bool enabled) {
  auto d = find(ibdev);
  if (!d) return std::move(d).error();
  const std::string what = fmt::format("rdma netlink RDMA_NLDEV_CMD_SET {} (index {}) DEV_DIM={}",
                                       ibdev, d->dev.index, enabled ? 1 : 0);
  const uint32_t seq = sock_->next_seq();
  nlmsghdr* msg =
      nl::build_rdma_dev_set_dim(sock_->request_buffer().data(), seq, d->dev.index, enabled);
  auto r = sock_->transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    return DIMCTL_FAIL(0, "{}: unexpected reply message type {}", what, nlh->nlmsg_type);
  });
  if (!r) return std::move(r).error();
  auto back = get_dim(ibdev);
  if (!back) return std::move(back).error().wrap(fmt::format("{}: read-back", ibdev));
  return back;
}

}  // namespace dimctl::actuators
