#include "dimctl/actuators/napi_netlink.h"

#include <linux/genetlink.h>

#include <cerrno>

#include "dimctl/actuators/napi_codec.h"
#include "dimctl/actuators/netdev_napi_uapi.h"
#include "dimctl/actuators/nl_codec.h"

namespace dimctl::actuators {
namespace {
namespace nu = netdev_uapi;
}  // namespace

Result<std::unique_ptr<NapiNetlink>> NapiNetlink::open() {
  auto sock = NetlinkSocket::open(NETLINK_GENERIC, "netdev netlink", NetlinkFamily::kNetdev);
  if (!sock) return std::move(sock).error();
  std::optional<nl::GenlFamily> fam;
  const uint32_t seq = sock->next_seq();
  nlmsghdr* msg = nl::build_getfamily(sock->request_buffer().data(), seq, nu::kFamilyName);
  auto r = sock->transact(msg, "resolve generic netlink family \"netdev\"",
                          [&](const nlmsghdr* nlh) -> Result<void> {
                            auto f = nl::decode_getfamily(nlh, nu::kFamilyName);
                            if (!f) return std::move(f).error();
                            fam = std::move(*f);
                            return ok();
                          });
  if (!r && r.error().code() == ENOENT) {
    auto why = DIMCTL_ERR(EOPNOTSUPP,
                          "per-NAPI software moderation needs Linux >= 6.13: this kernel has no "
                          "netdev generic netlink family");
    return std::unique_ptr<NapiNetlink>(new NapiNetlink(std::move(*sock), 0, std::move(why)));
  }
  if (!r) return std::move(r).error();
  if (!fam) return DIMCTL_FAIL(0, "resolve generic netlink family \"netdev\": no reply");
  std::optional<Error> why;
  if (auto c = nl::check_napi_set(*fam); !c) why = std::move(c).error();
  return std::unique_ptr<NapiNetlink>(new NapiNetlink(std::move(*sock), fam->id, std::move(why)));
}

Result<void> NapiNetlink::available() {
  if (unavailable_) return fail(*unavailable_);
  return ok();
}

Result<std::vector<seam::Napi>> NapiNetlink::list(uint32_t ifindex) {
  if (unavailable_) return fail(*unavailable_);
  const std::string what = fmt::format("netdev NAPI_GET dump of ifindex {}", ifindex);
  std::vector<seam::Napi> out;
  nlmsghdr* msg =
      nl::build_napi_dump(sock_.request_buffer().data(), family_, sock_.next_seq(), ifindex);
  auto r = sock_.transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    auto n = nl::decode_napi(nlh, family_, what);
    if (!n) return std::move(n).error();
    // The kernel filters by ifindex; an entry of another device is a broken reply, not ours.
    if (n->ifindex != ifindex) {
      return DIMCTL_FAIL(0, "{}: reply lists NAPI {} of ifindex {}", what, n->id, n->ifindex);
    }
    out.push_back(*n);
    return ok();
  });
  if (!r) return std::move(r).error();
  return out;
}

Result<seam::Napi> NapiNetlink::get(uint32_t napi_id) {
  if (unavailable_) return fail(*unavailable_);
  const std::string what = fmt::format("netdev NAPI_GET napi {}", napi_id);
  std::optional<seam::Napi> got;
  nlmsghdr* msg =
      nl::build_napi_get(sock_.request_buffer().data(), family_, sock_.next_seq(), napi_id);
  auto r = sock_.transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    auto n = nl::decode_napi(nlh, family_, what);
    if (!n) return std::move(n).error();
    if (got) return DIMCTL_FAIL(0, "{}: more than one reply", what);
    if (n->id != napi_id) return DIMCTL_FAIL(0, "{}: reply is for NAPI {}", what, n->id);
    got = *n;
    return ok();
  });
  if (!r && r.error().code() == ENOENT) {
    return DIMCTL_FAIL(ENOENT, "{}: no NAPI has id {} (gone, or in another network namespace)",
                       what, napi_id);
  }
  if (!r) return std::move(r).error();
  if (!got) return DIMCTL_FAIL(0, "{}: the kernel acknowledged without a reply", what);
  return *got;
}

Result<seam::Napi> NapiNetlink::set(uint32_t napi_id, const seam::NapiConfig& req) {
  if (unavailable_) return fail(*unavailable_);
  const std::string what = fmt::format("netdev NAPI_SET napi {} ({})", napi_id, nl::describe(req));
  if (req.empty()) return DIMCTL_FAIL(EINVAL, "{}: nothing to set", what);
  if (req.defer_hard_irqs && *req.defer_hard_irqs > nu::kMaxDeferHardIrqs) {
    return DIMCTL_FAIL(EINVAL, "{}: defer-hard-irqs above the kernel's maximum {}", what,
                       nu::kMaxDeferHardIrqs);
  }
  nlmsghdr* msg =
      nl::build_napi_set(sock_.request_buffer().data(), family_, sock_.next_seq(), napi_id, req);
  auto r = sock_.transact(msg, what, [&](const nlmsghdr* nlh) -> Result<void> {
    return DIMCTL_FAIL(0, "{}: unexpected reply message type {}", what, nlh->nlmsg_type);
  });
  if (!r && r.error().code() == ENOENT) {
    return DIMCTL_FAIL(ENOENT, "{}: no NAPI has id {} (gone, or in another network namespace)",
                       what, napi_id);
  }
  if (!r) return std::move(r).error();
  auto back = get(napi_id);
  if (!back) return std::move(back).error().wrap(fmt::format("napi {}: read-back", napi_id));
  return back;
}

}  // namespace dimctl::actuators
