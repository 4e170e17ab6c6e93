// netdev NAPI replies built with MsgBuilder, shared by the NAPI codec tests (napi_codec_test.cc)
// and the fuzz seed corpus (tests/fuzz/netlink_seeds.cc). The numbers are restated here rather
// than taken from dimctl/actuators/netdev_napi_uapi.h so that a wrong constant there fails the
// tests instead of agreeing with itself.
#pragma once

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "unit/actuators/nl_builder.h"

namespace dimctl::testing_nl {

inline constexpr uint16_t kNetdevFamily = 31;
inline constexpr uint8_t kNapiGet = 11, kNapiSet = 14, kQueueGet = 10;
inline constexpr uint16_t kNapiIfindex = 1, kNapiId = 2, kNapiIrq = 3, kNapiPid = 4, kNapiDefer = 5,
                          kNapiGroFlush = 6, kNapiIrqSuspend = 7, kNapiThreaded = 8;

struct NapiAttrs {
  uint32_t ifindex = 2;
  uint32_t id = 8193;
  std::optional<uint32_t> irq;
  std::optional<uint32_t> defer;
  std::optional<uint64_t> gro_flush_ns;
  std::optional<uint64_t> irq_suspend_ns;
};

// An NLA_UINT as the kernel's nla_put_uint() writes it: 4 bytes when the value fits, else 8.
inline MsgBuilder& put_uint(MsgBuilder& b, uint16_t type, uint64_t v) {
  if (v <= UINT32_MAX) return b.u32(type, static_cast<uint32_t>(v));
  return b.attr(type, &v, sizeof v);
}

// A NAPI_GET reply (flags NLM_F_MULTI for a dump entry) in the kernel's attribute order.
inline MsgBuilder napi_reply(const NapiAttrs& a, uint16_t flags = 0,
                             uint16_t family = kNetdevFamily) {
  MsgBuilder b(family, flags);
  b.genl(kNapiGet);
  b.u32(kNapiId, a.id).u32(kNapiIfindex, a.ifindex);
  if (a.irq) b.u32(kNapiIrq, *a.irq);
  if (a.defer) b.u32(kNapiDefer, *a.defer);
  if (a.gro_flush_ns) put_uint(b, kNapiGroFlush, *a.gro_flush_ns);
  if (a.irq_suspend_ns) put_uint(b, kNapiIrqSuspend, *a.irq_suspend_ns);
  return b;
}

// The CTRL_CMD_GETFAMILY answer for "netdev" listing `ops` in CTRL_ATTR_OPS (6.13+ lists
// NAPI_SET 14; 6.8-6.12 stop at QSTATS_GET 12).
inline MsgBuilder netdev_family(std::initializer_list<uint32_t> ops) {
  MsgBuilder b(GENL_ID_CTRL);
  b.genl(CTRL_CMD_NEWFAMILY, 2);
  b.str(CTRL_ATTR_FAMILY_NAME, "netdev").u16(CTRL_ATTR_FAMILY_ID, kNetdevFamily);
  b.u32(CTRL_ATTR_VERSION, 1);
  const size_t list = b.begin(CTRL_ATTR_OPS);
  uint16_t i = 1;
  for (uint32_t op : ops) {
    const size_t e = b.begin(i++);
    b.u32(CTRL_ATTR_OP_ID, op).u32(CTRL_ATTR_OP_FLAGS, 0);
    b.end(e);
  }
  b.end(list);
  return b;
}

}  // namespace dimctl::testing_nl
