// Kernel replies built with MsgBuilder, shared by the decoder tests (nl_codec_test.cc) and the
// fuzz seed corpus (tests/fuzz/netlink_seeds.cc), so the seeds start from the messages the tests
// prove the decoders read.
#pragma once

#include <linux/ethtool_netlink.h>
#include <linux/netlink.h>

#include <cstdint>
#include <string>

#include "unit/actuators/nl_builder.h"

namespace dimctl::testing_nl {

// An ethtool coalesce message (GET reply or NTF) with its header naming `dev` (ifindex 7); the
// caller adds the coalesce attributes.
inline MsgBuilder coalesce_reply(uint16_t family, uint8_t cmd, const std::string& dev) {
  MsgBuilder b(family);
  b.genl(cmd);
  const size_t h = b.begin(ETHTOOL_A_COALESCE_HEADER);
  b.u32(ETHTOOL_A_HEADER_DEV_INDEX, 7).str(ETHTOOL_A_HEADER_DEV_NAME, dev);
  b.end(h);
  return b;
}

// NLMSG_ERROR for a rejected request of `family`, as the kernel sends it with NETLINK_CAP_ACK:
// only the request's header (a 48-byte request, sequence 5) follows struct nlmsgerr, then the
// extack message and the offset of the offending attribute.
inline MsgBuilder capped_extack_error(uint16_t family, int32_t error, const std::string& message,
                                      uint32_t offset) {
  MsgBuilder b(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 5, 99);
  nlmsgerr err{};
  err.error = error;
  err.msg.nlmsg_len = 48;
  err.msg.nlmsg_type = family;
  err.msg.nlmsg_seq = 5;
  b.raw(&err, sizeof err);
  b.str(NLMSGERR_ATTR_MSG, message);
  b.u32(NLMSGERR_ATTR_OFFS, offset);
  return b;
}

// The same without NETLINK_CAP_ACK: the whole request (here 8 bytes of payload) is echoed after
// struct nlmsgerr, before the extack message.
inline MsgBuilder uncapped_extack_error(int32_t error, const std::string& message) {
  MsgBuilder b(NLMSG_ERROR, NLM_F_ACK_TLVS);
  nlmsgerr err{};
  err.error = error;
  err.msg.nlmsg_len = sizeof(nlmsghdr) + 8;
  b.raw(&err, sizeof err);
  const uint8_t echoed[8] = {19, 1, 0, 0, 4, 0, 1, 0};
  b.raw(echoed, sizeof echoed);
  b.str(NLMSGERR_ATTR_MSG, message);
  return b;
}

}  // namespace dimctl::testing_nl
