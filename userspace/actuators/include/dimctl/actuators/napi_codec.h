// Encoding and decoding of the netdev generic netlink NAPI messages (NAPI_GET do and dump,
// NAPI_SET), free of sockets so that unit tests and the fuzzer feed them bytes. Same discipline
// as nl_codec.h: framing and the type and length of every attribute read are validated, a bad
// message is an Error naming `what` and the attribute, unknown attributes are skipped.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "dimctl/actuators/nl_codec.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/napi_actuator.h"

namespace dimctl::actuators::nl {

// "defer-hard-irqs=2 gro-flush-timeout=200000ns": the present fields, as errors and logs show
// them (the netdev spec's attribute names); "(nothing)" when none is present.
std::string describe(const seam::NapiConfig& c);

// NAPI_GET of one NAPI by id.
nlmsghdr* build_napi_get(void* buf, uint16_t family, uint32_t seq, uint32_t napi_id);
// NAPI_GET dump of the NAPIs of one device.
nlmsghdr* build_napi_dump(void* buf, uint16_t family, uint32_t seq, uint32_t ifindex);
// NAPI_SET of the present fields of `req` only (timeouts as 8-byte NLA_UINT).
nlmsghdr* build_napi_set(void* buf, uint16_t family, uint32_t seq, uint32_t napi_id,
                         const seam::NapiConfig& req);

// One NAPI_GET reply (do or dump entry) of `family`: message type, command, and the required
// NETDEV_A_NAPI_ID and NETDEV_A_NAPI_IFINDEX are checked; the timeouts are NLA_UINT (4 or 8
// bytes), anything else is a malformed attribute.
Result<seam::Napi> decode_napi(const nlmsghdr* nlh, uint16_t family, std::string_view what);

// ok() when the family knows NAPI_SET; else EOPNOTSUPP naming the kernel requirement.
Result<void> check_napi_set(const GenlFamily& family);

}  // namespace dimctl::actuators::nl
