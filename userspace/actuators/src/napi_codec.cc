#include "dimctl/actuators/napi_codec.h"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <vector>

#include "dimctl/actuators/netdev_napi_uapi.h"

namespace dimctl::actuators::nl {
namespace {

namespace nu = netdev_uapi;

nlmsghdr* put_netdev_header(void* buf, uint16_t family, uint32_t seq, uint8_t cmd, uint16_t flags) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = family;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = seq;
  auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  g->cmd = cmd;
  g->version = nu::kFamilyVersion;
  return nlh;
}

// NLA_UINT: the kernel puts 4 bytes when the value fits, else 8.
Result<uint64_t> get_uint(const nlattr* a, std::string_view what, std::string_view name) {
  const uint16_t len = mnl_attr_get_payload_len(a);
  if (len == sizeof(uint32_t)) return uint64_t{mnl_attr_get_u32(a)};
  if (len == sizeof(uint64_t)) return mnl_attr_get_u64(a);
  return DIMCTL_FAIL(0, "{}: attribute {} (type {}) is not a valid uint (payload length {})", what,
                     name, mnl_attr_get_type(a), len);
}

Result<uint32_t> get_u32(const nlattr* a, std::string_view what, std::string_view name) {
  auto v = validate_attr(a, MNL_TYPE_U32, what, name);
  if (!v) return std::move(v).error();
  return mnl_attr_get_u32(a);
}

}  // namespace

std::string describe(const seam::NapiConfig& c) {
  std::vector<std::string> parts;
  if (c.defer_hard_irqs) parts.push_back(fmt::format("defer-hard-irqs={}", *c.defer_hard_irqs));
  if (c.gro_flush_timeout_ns) {
    parts.push_back(fmt::format("gro-flush-timeout={}ns", *c.gro_flush_timeout_ns));
  }
  if (c.irq_suspend_timeout_ns) {
    parts.push_back(fmt::format("irq-suspend-timeout={}ns", *c.irq_suspend_timeout_ns));
  }
  if (parts.empty()) return "(nothing)";
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out += " " + parts[i];
  return out;
}

nlmsghdr* build_napi_get(void* buf, uint16_t family, uint32_t seq, uint32_t napi_id) {
  nlmsghdr* nlh = put_netdev_header(buf, family, seq, nu::kCmdNapiGet, NLM_F_REQUEST | NLM_F_ACK);
  mnl_attr_put_u32(nlh, nu::kANapiId, napi_id);
  return nlh;
}

nlmsghdr* build_napi_dump(void* buf, uint16_t family, uint32_t seq, uint32_t ifindex) {
  nlmsghdr* nlh = put_netdev_header(buf, family, seq, nu::kCmdNapiGet, NLM_F_REQUEST | NLM_F_DUMP);
  mnl_attr_put_u32(nlh, nu::kANapiIfindex, ifindex);
  return nlh;
}

nlmsghdr* build_napi_set(void* buf, uint16_t family, uint32_t seq, uint32_t napi_id,
                         const seam::NapiConfig& req) {
  nlmsghdr* nlh = put_netdev_header(buf, family, seq, nu::kCmdNapiSet, NLM_F_REQUEST | NLM_F_ACK);
  mnl_attr_put_u32(nlh, nu::kANapiId, napi_id);
  if (req.defer_hard_irqs) mnl_attr_put_u32(nlh, nu::kANapiDeferHardIrqs, *req.defer_hard_irqs);
  if (req.gro_flush_timeout_ns) {
    mnl_attr_put_u64(nlh, nu::kANapiGroFlushTimeout, *req.gro_flush_timeout_ns);
  }
  if (req.irq_suspend_timeout_ns) {
    mnl_attr_put_u64(nlh, nu::kANapiIrqSuspendTimeout, *req.irq_suspend_timeout_ns);
  }
  return nlh;
}

Result<seam::Napi> decode_napi(const nlmsghdr* nlh, uint16_t family, std::string_view what) {
  if (nlh->nlmsg_type != family) {
    return DIMCTL_FAIL(0, "{}: unexpected message type {} (netdev family is {})", what,
                       nlh->nlmsg_type, family);
  }
  if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
    return DIMCTL_FAIL(0, "{}: message of {} bytes is missing its generic netlink header", what,
                       nlh->nlmsg_len);
  }
  const auto* g = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
  if (g->cmd != nu::kCmdNapiGet) {
    return DIMCTL_FAIL(0, "{}: unexpected netdev command {} (want NAPI_GET {})", what, g->cmd,
                       nu::kCmdNapiGet);
  }
  seam::Napi out;
  bool have_id = false, have_ifindex = false;
  const auto* base = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh));
  const size_t payload = nlh->nlmsg_len - NLMSG_HDRLEN;
  auto r = for_each_attr(
      base + GENL_HDRLEN, payload - GENL_HDRLEN, what, [&](const nlattr* a) -> Result<void> {
        auto u32_into = [&](std::string_view name, auto&& store) -> Result<void> {
          auto v = get_u32(a, what, name);
          if (!v) return std::move(v).error();
          store(*v);
          return ok();
        };
        auto uint_into = [&](std::string_view name, std::optional<uint64_t>& dst) -> Result<void> {
          auto v = get_uint(a, what, name);
          if (!v) return std::move(v).error();
          dst = *v;
          return ok();
        };
        switch (mnl_attr_get_type(a)) {
          case nu::kANapiId:
            have_id = true;
            return u32_into("NETDEV_A_NAPI_ID", [&](uint32_t v) { out.id = v; });
          case nu::kANapiIfindex:
            have_ifindex = true;
            return u32_into("NETDEV_A_NAPI_IFINDEX", [&](uint32_t v) { out.ifindex = v; });
          case nu::kANapiIrq:
            return u32_into("NETDEV_A_NAPI_IRQ", [&](uint32_t v) { out.irq = v; });
          case nu::kANapiDeferHardIrqs:
            return u32_into("NETDEV_A_NAPI_DEFER_HARD_IRQS",
                            [&](uint32_t v) { out.config.defer_hard_irqs = v; });
          case nu::kANapiGroFlushTimeout:
            return uint_into("NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT", out.config.gro_flush_timeout_ns);
          case nu::kANapiIrqSuspendTimeout:
            return uint_into("NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT",
                             out.config.irq_suspend_timeout_ns);
          default:
            return ok();  // PID, THREADED and what later kernels add
        }
      });
  if (!r) return std::move(r).error();
  if (!have_id) return DIMCTL_FAIL(0, "{}: message has no NETDEV_A_NAPI_ID", what);
  if (!have_ifindex) return DIMCTL_FAIL(0, "{}: message has no NETDEV_A_NAPI_IFINDEX", what);
  return out;
}

Result<void> check_napi_set(const GenlFamily& family) {
  if (family.ops.count(nu::kCmdNapiSet) != 0) return ok();
  return DIMCTL_FAIL(EOPNOTSUPP,
                     "per-NAPI software moderation needs Linux >= 6.13: this kernel's netdev "
                     "generic netlink family has no napi-set (NETDEV_CMD_NAPI_SET {})",
                     nu::kCmdNapiSet);
}

}  // namespace dimctl::actuators::nl
