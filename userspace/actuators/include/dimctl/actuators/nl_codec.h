// Netlink message encoding and decoding for the actuators, free of sockets so that unit tests
// can feed hand-built byte buffers.
//
// Every decoder validates framing (message and attribute lengths) and the type/length of every
// attribute it reads (mnl_attr_validate). A bad message becomes an Error whose context names
// what was being decoded (`what`: device and message), the attribute and the problem. Unknown
// attributes are skipped (newer kernels add attributes), but their framing is still checked.
//
// Numbers come from the installed uapi headers (<linux/ethtool_netlink.h>,
// <rdma/rdma_netlink.h>, linux-libc-dev 6.1); dim-spec 8.3 / 8.5 list the same ids.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/coalesce.h"
#include "dimctl/seam/rdma_actuator.h"

namespace dimctl::actuators::nl {

// ---------------------------------------------------------------------------------- generic

// Walks the attributes in [data, data + len). Fails on a truncated attribute (header or payload
// running past the end) naming `what`, the offset, the type and the lengths. cb is called for
// every well-framed attribute; its error stops the walk.
Result<void> for_each_attr(const void* data, size_t len, std::string_view what,
                           const std::function<Result<void>(const nlattr*)>& cb);

// mnl_attr_validate(attr, type) with an error naming `what` and the attribute `name`.
Result<void> validate_attr(const nlattr* attr, mnl_attr_data_type type, std::string_view what,
                           std::string_view name);

// Decodes an NLMSG_ERROR message (or the payload of an NLMSG_DONE of a dump). An ACK (error 0)
// is ok(); an error becomes Error{-error, "<what>: <extack message> (attribute at offset N)"};
// a code that is no -errno (positive, or below -4095) is an Error with code 0.
// Handles both capped (NETLINK_CAP_ACK) and uncapped acks.
Result<void> decode_error(const nlmsghdr* nlh, std::string_view what);

// The extack message (NLMSGERR_ATTR_MSG) of an NLMSG_ERROR/NLMSG_DONE, "" when absent.
std::string extack_message(const nlmsghdr* nlh);

// ------------------------------------------------------------------- generic netlink control

struct GenlFamily {
  uint16_t id = 0;
  uint32_t version = 0;
  std::map<std::string, uint32_t> mcast_groups;  // name -> group id
  std::set<uint32_t> ops;                        // CTRL_ATTR_OPS: the commands it knows
};

// CTRL_CMD_GETFAMILY request for `name` into buf (at least MNL_SOCKET_BUFFER_SIZE bytes).
nlmsghdr* build_getfamily(void* buf, uint32_t seq, std::string_view name);
Result<GenlFamily> decode_getfamily(const nlmsghdr* nlh, std::string_view name);

// ---------------------------------------------------------------------------- ethtool coalesce

// Names of the Coalesce fields as used in errors, JSON and logs ("rx_usecs", ...).
std::vector<std::string_view> present_fields(const seam::Coalesce& c);

nlmsghdr* build_coalesce_get(void* buf, uint16_t family, uint32_t seq, std::string_view dev);
// Only present fields of `req` become attributes.
nlmsghdr* build_coalesce_set(void* buf, uint16_t family, uint32_t seq, std::string_view dev,
                             const seam::Coalesce& req);

struct CoalesceMsg {
  uint8_t cmd = 0;  // ETHTOOL_MSG_COALESCE_GET_REPLY or ETHTOOL_MSG_COALESCE_NTF
  std::string device;
  uint32_t ifindex = 0;
  seam::Coalesce values;  // attributes absent from the message are nullopt
};

// Decodes a COALESCE_GET_REPLY or COALESCE_NTF of `family`. `what` names the request context
// ("ethtool COALESCE_GET eth1").
Result<CoalesceMsg> decode_coalesce(const nlmsghdr* nlh, uint16_t family, std::string_view what);

// ---------------------------------------------------------------------------------- rdma nldev

uint16_t rdma_nldev_type(uint16_t op);  // RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)

nlmsghdr* build_rdma_dev_dump(void* buf, uint32_t seq);
nlmsghdr* build_rdma_dev_get(void* buf, uint32_t seq, uint32_t index);
nlmsghdr* build_rdma_dev_set_dim(void* buf, uint32_t seq, uint32_t index, bool enabled);

struct RdmaDevMsg {
  seam::RdmaDevice dev;
  bool has_dim = false;  // RDMA_NLDEV_ATTR_DEV_DIM present (kernel >= 5.3)
};
Result<RdmaDevMsg> decode_rdma_dev(const nlmsghdr* nlh, std::string_view what);

}  // namespace dimctl::actuators::nl
