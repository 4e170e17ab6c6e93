#include "dimctl/actuators/nl_codec.h"

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cstring>

namespace dimctl::actuators::nl {
namespace {

const char* type_name(mnl_attr_data_type t) {
  switch (t) {
    case MNL_TYPE_U8:
      return "u8";
    case MNL_TYPE_U16:
      return "u16";
    case MNL_TYPE_U32:
      return "u32";
    case MNL_TYPE_U64:
      return "u64";
    case MNL_TYPE_NUL_STRING:
      return "NUL-terminated string";
    case MNL_TYPE_STRING:
      return "string";
    case MNL_TYPE_NESTED:
      return "nest";
    case MNL_TYPE_FLAG:
      return "flag";
    default:
      return "attribute";
  }
}

struct U32Field {
  uint16_t attr;
  std::optional<uint32_t> seam::Coalesce::*field;
  std::string_view name;
  std::string_view attr_name;
};
struct BoolField {
  uint16_t attr;
  std::optional<bool> seam::Coalesce::*field;
  std::string_view name;
  std::string_view attr_name;
};

constexpr std::array<U32Field, 4> kU32Fields{{
    {ETHTOOL_A_COALESCE_RX_USECS, &seam::Coalesce::rx_usecs, "rx_usecs",
     "ETHTOOL_A_COALESCE_RX_USECS"},
    {ETHTOOL_A_COALESCE_RX_MAX_FRAMES, &seam::Coalesce::rx_max_frames, "rx_max_frames",
     "ETHTOOL_A_COALESCE_RX_MAX_FRAMES"},
    {ETHTOOL_A_COALESCE_TX_USECS, &seam::Coalesce::tx_usecs, "tx_usecs",
     "ETHTOOL_A_COALESCE_TX_USECS"},
    {ETHTOOL_A_COALESCE_TX_MAX_FRAMES, &seam::Coalesce::tx_max_frames, "tx_max_frames",
     "ETHTOOL_A_COALESCE_TX_MAX_FRAMES"},
}};
constexpr std::array<BoolField, 4> kBoolFields{{
    {ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, &seam::Coalesce::use_adaptive_rx, "use_adaptive_rx",
     "ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX"},
    {ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, &seam::Coalesce::use_adaptive_tx, "use_adaptive_tx",
     "ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX"},
    {ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, &seam::Coalesce::use_cqe_mode_rx, "use_cqe_mode_rx",
     "ETHTOOL_A_COALESCE_USE_CQE_MODE_RX"},
    {ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, &seam::Coalesce::use_cqe_mode_tx, "use_cqe_mode_tx",
     "ETHTOOL_A_COALESCE_USE_CQE_MODE_TX"},
}};

// The generic netlink header of a message, or an error when the message is too short for one.
Result<const genlmsghdr*> genl_header(const nlmsghdr* nlh, std::string_view what) {
  if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
    return DIMCTL_FAIL(0, "{}: message type {} of {} bytes is missing its generic netlink header",
                       what, nlh->nlmsg_type, nlh->nlmsg_len);
  }
  return static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
}

// Attributes of a message after `hdrlen` bytes of family header.
Result<void> for_each_msg_attr(const nlmsghdr* nlh, size_t hdrlen, std::string_view what,
                               const std::function<Result<void>(const nlattr*)>& cb) {
  const size_t payload = nlh->nlmsg_len - NLMSG_HDRLEN;
  const size_t off = MNL_ALIGN(hdrlen);
  if (payload < off) return ok();
  const auto* base = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh));
  return for_each_attr(base + off, payload - off, what, cb);
}

}  // namespace

Result<void> for_each_attr(const void* data, size_t len, std::string_view what,
                           const std::function<Result<void>(const nlattr*)>& cb) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t off = 0;
  while (off < len) {
    const size_t rem = len - off;
    if (rem < sizeof(nlattr)) {
      return DIMCTL_FAIL(0, "{}: truncated attribute header at offset {} ({} bytes left, need {})",
                         what, off, rem, sizeof(nlattr));
    }
    nlattr hdr{};
    std::memcpy(&hdr, p + off, sizeof hdr);
    if (hdr.nla_len < sizeof(nlattr) || hdr.nla_len > rem) {
      return DIMCTL_FAIL(0,
                         "{}: truncated attribute type {} at offset {}: length {} but {} bytes "
                         "left",
                         what, hdr.nla_type & NLA_TYPE_MASK, off, hdr.nla_len, rem);
    }
    auto r = cb(reinterpret_cast<const nlattr*>(p + off));
    if (!r) return r;
    off += MNL_ALIGN(hdr.nla_len);
  }
  return ok();
}

Result<void> validate_attr(const nlattr* attr, mnl_attr_data_type type, std::string_view what,
                           std::string_view name) {
  if (mnl_attr_validate(attr, type) < 0) {
    return DIMCTL_FAIL(0, "{}: attribute {} (type {}) is not a valid {} (payload length {})", what,
                       name, mnl_attr_get_type(attr), type_name(type),
                       mnl_attr_get_payload_len(attr));
  }
  return ok();
}

std::string extack_message(const nlmsghdr* nlh) {
  std::string msg;
  if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS)) return msg;
  const size_t payload = nlh->nlmsg_len - NLMSG_HDRLEN;
  size_t off = 0;
  if (nlh->nlmsg_type == NLMSG_ERROR) {
    if (payload < sizeof(nlmsgerr)) return msg;
    nlmsgerr err{};
    std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof err);
    off = sizeof(nlmsgerr);
    if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && err.msg.nlmsg_len >= NLMSG_HDRLEN) {
      off += err.msg.nlmsg_len - NLMSG_HDRLEN;
    }
  } else {
    off = sizeof(int);
  }
  off = MNL_ALIGN(off);
  if (off >= payload) return msg;
  const auto* base = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh));
  auto r = for_each_attr(base + off, payload - off, "extack", [&](const nlattr* a) -> Result<void> {
    if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
        mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0) {
      msg = mnl_attr_get_str(a);
    }
    return ok();
  });
  (void)r;  // a malformed extack is ignored: the errno still tells what happened
  return msg;
}

Result<void> decode_error(const nlmsghdr* nlh, std::string_view what) {
  const size_t payload = nlh->nlmsg_len - NLMSG_HDRLEN;
  int error = 0;
  if (nlh->nlmsg_type == NLMSG_ERROR) {
    if (payload < sizeof(nlmsgerr)) {
      return DIMCTL_FAIL(0, "{}: truncated NLMSG_ERROR ({} payload bytes, need {})", what, payload,
                         sizeof(nlmsgerr));
    }
    std::memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof error);
  } else if (nlh->nlmsg_type == NLMSG_DONE) {
    if (payload < sizeof(int)) return ok();  // old kernels: empty DONE
    std::memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof error);
  } else {
    return DIMCTL_FAIL(0, "{}: expected NLMSG_ERROR or NLMSG_DONE, got message type {}", what,
                       nlh->nlmsg_type);
  }
  if (error == 0) return ok();
  // The kernel sends -errno, errno in 1..MAX_ERRNO (4095). Outside that range it is no errno
  // (and -INT_MIN would overflow).
  constexpr int kMaxErrno = 4095;
  if (error > 0 || error < -kMaxErrno) {
    return DIMCTL_FAIL(0, "{}: invalid netlink error code {}", what, error);
  }
  std::string msg = extack_message(nlh);
  if (msg.empty()) return DIMCTL_FAIL(-error, "{}", what);
  return DIMCTL_FAIL(-error, "{}: {}", what, msg);
}

// ------------------------------------------------------------------------------ genl control

nlmsghdr* build_getfamily(void* buf, uint32_t seq, std::string_view name) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = GENL_ID_CTRL;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  g->cmd = CTRL_CMD_GETFAMILY;
  g->version = 1;
  mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, std::string(name).c_str());
  return nlh;
}

Result<GenlFamily> decode_getfamily(const nlmsghdr* nlh, std::string_view name) {
  const std::string what = fmt::format("generic netlink family \"{}\" (CTRL_CMD_GETFAMILY)", name);
  if (nlh->nlmsg_type != GENL_ID_CTRL) {
    return DIMCTL_FAIL(0, "{}: unexpected message type {}", what, nlh->nlmsg_type);
  }
  auto g = genl_header(nlh, what);
  if (!g) return std::move(g).error();
  if ((*g)->cmd != CTRL_CMD_NEWFAMILY) {
    return DIMCTL_FAIL(0, "{}: unexpected command {}", what, (*g)->cmd);
  }
  GenlFamily fam;
  bool have_id = false;
  std::string got_name;
  auto r = for_each_msg_attr(nlh, GENL_HDRLEN, what, [&](const nlattr* a) -> Result<void> {
    switch (mnl_attr_get_type(a)) {
      case CTRL_ATTR_FAMILY_ID: {
        auto v = validate_attr(a, MNL_TYPE_U16, what, "CTRL_ATTR_FAMILY_ID");
        if (!v) return v;
        fam.id = mnl_attr_get_u16(a);
        have_id = true;
        return ok();
      }
      case CTRL_ATTR_FAMILY_NAME: {
        auto v = validate_attr(a, MNL_TYPE_NUL_STRING, what, "CTRL_ATTR_FAMILY_NAME");
        if (!v) return v;
        got_name = mnl_attr_get_str(a);
        return ok();
      }
      case CTRL_ATTR_VERSION: {
        auto v = validate_attr(a, MNL_TYPE_U32, what, "CTRL_ATTR_VERSION");
        if (!v) return v;
        fam.version = mnl_attr_get_u32(a);
        return ok();
      }
      case CTRL_ATTR_MCAST_GROUPS: {
        auto v = validate_attr(a, MNL_TYPE_NESTED, what, "CTRL_ATTR_MCAST_GROUPS");
        if (!v) return v;
        return for_each_attr(
            mnl_attr_get_payload(a), mnl_attr_get_payload_len(a), what,
            [&](const nlattr* grp) -> Result<void> {
              auto vg = validate_attr(grp, MNL_TYPE_NESTED, what, "CTRL_ATTR_MCAST_GROUPS entry");
              if (!vg) return vg;
              std::string gname;
              std::optional<uint32_t> gid;
              auto rg = for_each_attr(
                  mnl_attr_get_payload(grp), mnl_attr_get_payload_len(grp), what,
                  [&](const nlattr* ga) -> Result<void> {
                    if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_NAME) {
                      auto vn =
                          validate_attr(ga, MNL_TYPE_NUL_STRING, what, "CTRL_ATTR_MCAST_GRP_NAME");
                      if (!vn) return vn;
                      gname = mnl_attr_get_str(ga);
                    } else if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_ID) {
                      auto vi = validate_attr(ga, MNL_TYPE_U32, what, "CTRL_ATTR_MCAST_GRP_ID");
                      if (!vi) return vi;
                      gid = mnl_attr_get_u32(ga);
                    }
                    return ok();
                  });
              if (!rg) return rg;
              if (!gname.empty() && gid) fam.mcast_groups[gname] = *gid;
              return ok();
            });
      }
      case CTRL_ATTR_OPS: {
        auto v = validate_attr(a, MNL_TYPE_NESTED, what, "CTRL_ATTR_OPS");
        if (!v) return v;
        return for_each_attr(
            mnl_attr_get_payload(a), mnl_attr_get_payload_len(a), what,
            [&](const nlattr* op) -> Result<void> {
              auto vo = validate_attr(op, MNL_TYPE_NESTED, what, "CTRL_ATTR_OPS entry");
              if (!vo) return vo;
              return for_each_attr(mnl_attr_get_payload(op), mnl_attr_get_payload_len(op), what,
                                   [&](const nlattr* oa) -> Result<void> {
                                     if (mnl_attr_get_type(oa) != CTRL_ATTR_OP_ID) return ok();
                                     auto vi =
                                         validate_attr(oa, MNL_TYPE_U32, what, "CTRL_ATTR_OP_ID");
                                     if (!vi) return vi;
                                     fam.ops.insert(mnl_attr_get_u32(oa));
                                     return ok();
                                   });
            });
      }
      default:
        return ok();
    }
  });
  if (!r) return std::move(r).error();
  if (!have_id) return DIMCTL_FAIL(0, "{}: reply has no CTRL_ATTR_FAMILY_ID", what);
  if (!got_name.empty() && got_name != name) {
    return DIMCTL_FAIL(0, "{}: reply is for family \"{}\"", what, got_name);
  }
  return fam;
}

// ---------------------------------------------------------------------------- ethtool coalesce

std::vector<std::string_view> present_fields(const seam::Coalesce& c) {
  std::vector<std::string_view> out;
  for (const auto& f : kU32Fields) {
    if (c.*f.field) out.push_back(f.name);
  }
  for (const auto& f : kBoolFields) {
    if (c.*f.field) out.push_back(f.name);
  }
  return out;
}

namespace {
nlmsghdr* put_ethtool_header(void* buf, uint16_t family, uint32_t seq, uint8_t cmd,
                             std::string_view dev) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = family;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  g->cmd = cmd;
  g->version = ETHTOOL_GENL_VERSION;
  nlattr* nest = mnl_attr_nest_start(nlh, ETHTOOL_A_COALESCE_HEADER);
  mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, std::string(dev).c_str());
  mnl_attr_nest_end(nlh, nest);
  return nlh;
}
}  // namespace

nlmsghdr* build_coalesce_get(void* buf, uint16_t family, uint32_t seq, std::string_view dev) {
  return put_ethtool_header(buf, family, seq, ETHTOOL_MSG_COALESCE_GET, dev);
}

nlmsghdr* build_coalesce_set(void* buf, uint16_t family, uint32_t seq, std::string_view dev,
                             const seam::Coalesce& req) {
  nlmsghdr* nlh = put_ethtool_header(buf, family, seq, ETHTOOL_MSG_COALESCE_SET, dev);
  for (const auto& f : kU32Fields) {
    if (const auto& v = req.*f.field) mnl_attr_put_u32(nlh, f.attr, *v);
  }
  for (const auto& f : kBoolFields) {
    if (const auto& v = req.*f.field) mnl_attr_put_u8(nlh, f.attr, *v ? 1 : 0);
  }
  return nlh;
}

Result<CoalesceMsg> decode_coalesce(const nlmsghdr* nlh, uint16_t family, std::string_view what) {
  if (nlh->nlmsg_type != family) {
    return DIMCTL_FAIL(0, "{}: unexpected message type {} (ethtool family is {})", what,
                       nlh->nlmsg_type, family);
  }
  auto g = genl_header(nlh, what);
  if (!g) return std::move(g).error();
  CoalesceMsg out;
  out.cmd = (*g)->cmd;
  if (out.cmd != ETHTOOL_MSG_COALESCE_GET_REPLY && out.cmd != ETHTOOL_MSG_COALESCE_NTF) {
    return DIMCTL_FAIL(0,
                       "{}: unexpected ethtool command {} (want COALESCE_GET_REPLY {} or "
                       "COALESCE_NTF {})",
                       what, out.cmd, ETHTOOL_MSG_COALESCE_GET_REPLY, ETHTOOL_MSG_COALESCE_NTF);
  }
  bool have_header = false;
  auto r = for_each_msg_attr(nlh, GENL_HDRLEN, what, [&](const nlattr* a) -> Result<void> {
    const uint16_t type = mnl_attr_get_type(a);
    if (type == ETHTOOL_A_COALESCE_HEADER) {
      auto v = validate_attr(a, MNL_TYPE_NESTED, what, "ETHTOOL_A_COALESCE_HEADER");
      if (!v) return v;
      have_header = true;
      return for_each_attr(
          mnl_attr_get_payload(a), mnl_attr_get_payload_len(a), what,
          [&](const nlattr* h) -> Result<void> {
            switch (mnl_attr_get_type(h)) {
              case ETHTOOL_A_HEADER_DEV_INDEX: {
                auto vi = validate_attr(h, MNL_TYPE_U32, what, "ETHTOOL_A_HEADER_DEV_INDEX");
                if (!vi) return vi;
                out.ifindex = mnl_attr_get_u32(h);
                return ok();
              }
              case ETHTOOL_A_HEADER_DEV_NAME: {
                auto vn = validate_attr(h, MNL_TYPE_NUL_STRING, what, "ETHTOOL_A_HEADER_DEV_NAME");
                if (!vn) return vn;
                out.device = mnl_attr_get_str(h);
                return ok();
              }
              default:
                return ok();
            }
          });
    }
    for (const auto& f : kU32Fields) {
      if (type != f.attr) continue;
      auto v = validate_attr(a, MNL_TYPE_U32, what, f.attr_name);
      if (!v) return v;
      out.values.*f.field = mnl_attr_get_u32(a);
      return ok();
    }
    for (const auto& f : kBoolFields) {
      if (type != f.attr) continue;
      auto v = validate_attr(a, MNL_TYPE_U8, what, f.attr_name);
      if (!v) return v;
      out.values.*f.field = mnl_attr_get_u8(a) != 0;
      return ok();
    }
    return ok();  // other coalesce attributes (irq/low/high/aggr/profiles) are not used
  });
  if (!r) return std::move(r).error();
  if (!have_header) return DIMCTL_FAIL(0, "{}: message has no ETHTOOL_A_COALESCE_HEADER", what);
  if (out.device.empty()) {
    return DIMCTL_FAIL(0, "{}: ETHTOOL_A_COALESCE_HEADER has no ETHTOOL_A_HEADER_DEV_NAME", what);
  }
  return out;
}

// ---------------------------------------------------------------------------------- rdma nldev

uint16_t rdma_nldev_type(uint16_t op) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op));
}

nlmsghdr* build_rdma_dev_dump(void* buf, uint32_t seq) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = rdma_nldev_type(RDMA_NLDEV_CMD_GET);
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = seq;
  return nlh;
}

nlmsghdr* build_rdma_dev_get(void* buf, uint32_t seq, uint32_t index) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = rdma_nldev_type(RDMA_NLDEV_CMD_GET);
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  return nlh;
}

nlmsghdr* build_rdma_dev_set_dim(void* buf, uint32_t seq, uint32_t index, bool enabled) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = rdma_nldev_type(RDMA_NLDEV_CMD_SET);
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_DIM, enabled ? 1 : 0);
  return nlh;
}

Result<RdmaDevMsg> decode_rdma_dev(const nlmsghdr* nlh, std::string_view what) {
  if (nlh->nlmsg_type != rdma_nldev_type(RDMA_NLDEV_CMD_GET)) {
    return DIMCTL_FAIL(0, "{}: unexpected message type {} (want RDMA_NLDEV_CMD_GET {})", what,
                       nlh->nlmsg_type, rdma_nldev_type(RDMA_NLDEV_CMD_GET));
  }
  RdmaDevMsg out;
  bool have_index = false;
  auto r = for_each_msg_attr(nlh, 0, what, [&](const nlattr* a) -> Result<void> {
    switch (mnl_attr_get_type(a)) {
      case RDMA_NLDEV_ATTR_DEV_INDEX: {
        auto v = validate_attr(a, MNL_TYPE_U32, what, "RDMA_NLDEV_ATTR_DEV_INDEX");
        if (!v) return v;
        out.dev.index = mnl_attr_get_u32(a);
        have_index = true;
        return ok();
      }
      case RDMA_NLDEV_ATTR_DEV_NAME: {
        auto v = validate_attr(a, MNL_TYPE_NUL_STRING, what, "RDMA_NLDEV_ATTR_DEV_NAME");
        if (!v) return v;
        out.dev.name = mnl_attr_get_str(a);
        return ok();
      }
      case RDMA_NLDEV_ATTR_DEV_DIM: {
        auto v = validate_attr(a, MNL_TYPE_U8, what, "RDMA_NLDEV_ATTR_DEV_DIM");
        if (!v) return v;
        out.dev.dim_enabled = mnl_attr_get_u8(a) != 0;
        out.has_dim = true;
        return ok();
      }
      default:
        return ok();
    }
  });
  if (!r) return std::move(r).error();
  if (!have_index) return DIMCTL_FAIL(0, "{}: message has no RDMA_NLDEV_ATTR_DEV_INDEX", what);
  if (out.dev.name.empty()) {
    return DIMCTL_FAIL(0, "{}: message has no RDMA_NLDEV_ATTR_DEV_NAME", what);
  }
  return out;
}

}  // namespace dimctl::actuators::nl
