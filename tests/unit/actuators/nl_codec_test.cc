// Netlink encode/decode of the actuators against hand-built byte buffers, including malformed
// replies: every bad message must become an Error naming what, the attribute and the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <limits>
#include <map>
#include <vector>

#include "dimctl/actuators/netlink_socket.h"
#include "dimctl/actuators/nl_codec.h"
#include "unit/actuators/nl_builder.h"
#include "unit/actuators/nl_replies.h"

namespace dimctl::actuators {
namespace {

using ::testing::HasSubstr;
using testing_nl::MsgBuilder;

constexpr uint16_t kFamily = 23;
const std::string kWhat = "ethtool COALESCE_GET dimt0";

// Top-level attributes of a built request, type -> payload bytes (walked with libmnl).
std::map<uint16_t, std::vector<uint8_t>> attrs_of(const nlmsghdr* nlh, size_t hdrlen) {
  std::map<uint16_t, std::vector<uint8_t>> out;
  const auto* base = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh));
  const size_t len = nlh->nlmsg_len - NLMSG_HDRLEN;
  size_t off = MNL_ALIGN(hdrlen);
  while (off + sizeof(nlattr) <= len) {
    const auto* a = reinterpret_cast<const nlattr*>(base + off);
    const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
    out[mnl_attr_get_type(a)] = std::vector<uint8_t>(p, p + mnl_attr_get_payload_len(a));
    off += MNL_ALIGN(a->nla_len);
  }
  return out;
}

MsgBuilder coalesce_reply(uint8_t cmd = ETHTOOL_MSG_COALESCE_GET_REPLY,
                          const std::string& dev = "dimt0") {
  return testing_nl::coalesce_reply(kFamily, cmd, dev);
}

// ------------------------------------------------------------------------------- encoding

TEST(EthtoolCodec, CoalesceGetRequestNamesTheDevice) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  const nlmsghdr* nlh = nl::build_coalesce_get(buf.data(), kFamily, 42, "dimt0");
  EXPECT_EQ(nlh->nlmsg_type, kFamily);
  EXPECT_EQ(nlh->nlmsg_seq, 42u);
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  const auto* g = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
  EXPECT_EQ(g->cmd, 19);  // ETHTOOL_MSG_COALESCE_GET (dim-spec 8.3)
  EXPECT_EQ(g->version, 1);
  auto top = attrs_of(nlh, GENL_HDRLEN);
  ASSERT_EQ(top.size(), 1u);
  ASSERT_TRUE(top.count(ETHTOOL_A_COALESCE_HEADER));
  const auto& nest = top[ETHTOOL_A_COALESCE_HEADER];
  // One attribute inside: DEV_NAME "dimt0\0".
  ASSERT_GE(nest.size(), 4u + 6u);
  uint16_t len = 0, type = 0;
  std::memcpy(&len, nest.data(), 2);
  std::memcpy(&type, nest.data() + 2, 2);
  EXPECT_EQ(type, ETHTOOL_A_HEADER_DEV_NAME);
  EXPECT_EQ(len, 4 + 6);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(nest.data() + 4)), "dimt0");
}

TEST(EthtoolCodec, CoalesceSetEncodesOnlyPresentFields) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  seam::Coalesce req;
  req.rx_max_frames = 32;
  req.use_adaptive_rx = false;
  const nlmsghdr* nlh = nl::build_coalesce_set(buf.data(), kFamily, 1, "dimt0", req);
  const auto* g = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
  EXPECT_EQ(g->cmd, 20);  // ETHTOOL_MSG_COALESCE_SET
  auto top = attrs_of(nlh, GENL_HDRLEN);
  EXPECT_EQ(top.size(), 3u);
  ASSERT_TRUE(top.count(3));   // RX_MAX_FRAMES
  ASSERT_TRUE(top.count(11));  // USE_ADAPTIVE_RX
  EXPECT_FALSE(top.count(2));  // RX_USECS absent: unchanged
  ASSERT_EQ(top[3].size(), 4u);
  uint32_t v = 0;
  std::memcpy(&v, top[3].data(), 4);
  EXPECT_EQ(v, 32u);
  ASSERT_EQ(top[11].size(), 1u);
  EXPECT_EQ(top[11][0], 0);
}

TEST(EthtoolCodec, PresentFieldsInOrder) {
  seam::Coalesce c;
  c.tx_usecs = 1;
  c.rx_usecs = 2;
  c.use_cqe_mode_rx = true;
  EXPECT_THAT(nl::present_fields(c),
              ::testing::ElementsAre("rx_usecs", "tx_usecs", "use_cqe_mode_rx"));
}

// ------------------------------------------------------------------------------- decoding

TEST(EthtoolCodec, DecodesGetReplyAndIgnoresUnknownAttributes) {
  MsgBuilder b = coalesce_reply();
  b.u32(ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 64);
  b.u8(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1);
  b.u32(26, 1000);            // TX_AGGR_MAX_BYTES (6.1+), not used
  size_t prof = b.begin(29);  // RX_PROFILE (6.11+), not used
  size_t e = b.begin(1);
  b.u32(1, 8).u32(2, 64);
  b.end(e);
  b.end(prof);
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->cmd, ETHTOOL_MSG_COALESCE_GET_REPLY);
  EXPECT_EQ(m->device, "dimt0");
  EXPECT_EQ(m->ifindex, 7u);
  seam::Coalesce want;
  want.rx_max_frames = 64;
  want.use_adaptive_rx = true;
  EXPECT_EQ(m->values, want);  // everything else absent = unsupported
}

TEST(EthtoolCodec, DecodesNotification) {
  MsgBuilder b = coalesce_reply(ETHTOOL_MSG_COALESCE_NTF, "veth1");
  b.u32(ETHTOOL_A_COALESCE_RX_USECS, 0);
  auto m = nl::decode_coalesce(b.msg(), kFamily, "ntf");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->cmd, 21);  // ETHTOOL_MSG_COALESCE_NTF
  EXPECT_EQ(m->device, "veth1");
  EXPECT_EQ(m->values.rx_usecs, 0u);  // present with value 0 != absent
}

TEST(EthtoolCodec, TruncatedAttributeIsAnError) {
  MsgBuilder b = coalesce_reply();
  b.u32(ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 64);
  // Cut the message in the middle of the last attribute (its nla_len still says 8).
  const auto full = static_cast<uint32_t>(b.size());
  auto m = nl::decode_coalesce(b.msg(full - 2), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr(kWhat));
  EXPECT_THAT(m.error().message(), HasSubstr("truncated attribute type 3"));
}

TEST(EthtoolCodec, TruncatedAttributeHeaderIsAnError) {
  MsgBuilder b = coalesce_reply();
  const uint8_t junk[2] = {8, 0};
  b.raw(junk, 2);
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("truncated attribute header"));
}

TEST(EthtoolCodec, WrongTypeLengthIsAnError) {
  MsgBuilder b = coalesce_reply();
  const uint16_t v = 5;
  b.attr(ETHTOOL_A_COALESCE_RX_USECS, &v, sizeof v);  // u32 attribute with 2 bytes
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("ETHTOOL_A_COALESCE_RX_USECS"));
  EXPECT_THAT(m.error().message(), HasSubstr("not a valid u32"));
  EXPECT_THAT(m.error().message(), HasSubstr(kWhat));
}

TEST(EthtoolCodec, BoolWithU32LengthIsAnError) {
  MsgBuilder b = coalesce_reply();
  b.u32(ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, 1);
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX"));
  EXPECT_THAT(m.error().message(), HasSubstr("u8"));
}

TEST(EthtoolCodec, MissingGenlHeaderIsAnError) {
  MsgBuilder b(kFamily);
  const uint8_t two[2] = {ETHTOOL_MSG_COALESCE_GET_REPLY, 1};
  b.raw(two, 2);
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("missing its generic netlink header"));
}

TEST(EthtoolCodec, MissingCoalesceHeaderIsAnError) {
  MsgBuilder b(kFamily);
  b.genl(ETHTOOL_MSG_COALESCE_GET_REPLY).u32(ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 1);
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("no ETHTOOL_A_COALESCE_HEADER"));
}

TEST(EthtoolCodec, DeviceNameWithoutNulIsAnError) {
  MsgBuilder b(kFamily);
  b.genl(ETHTOOL_MSG_COALESCE_GET_REPLY);
  size_t h = b.begin(ETHTOOL_A_COALESCE_HEADER);
  b.attr(ETHTOOL_A_HEADER_DEV_NAME, "dimt0", 5);  // no terminating NUL
  b.end(h);
  auto m = nl::decode_coalesce(b.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("ETHTOOL_A_HEADER_DEV_NAME"));
}

TEST(EthtoolCodec, WrongFamilyOrCommandIsAnError) {
  MsgBuilder other(kFamily + 1);
  other.genl(ETHTOOL_MSG_COALESCE_GET_REPLY);
  auto m = nl::decode_coalesce(other.msg(), kFamily, kWhat);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message(), HasSubstr("unexpected message type"));

  MsgBuilder rings = coalesce_reply(ETHTOOL_MSG_RINGS_GET_REPLY);
  auto r = nl::decode_coalesce(rings.msg(), kFamily, kWhat);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr("unexpected ethtool command"));
}

// ------------------------------------------------------------------------- errors and acks

// NLMSG_ERROR as sent for a rejected COALESCE_SET: capped, with extack message and offset.
TEST(NetlinkErrors, ExtackMessageBecomesErrorContext) {
  MsgBuilder b = testing_nl::capped_extack_error(kFamily, -EINVAL,
                                                 "cannot modify an unsupported parameter", 32);
  auto r = nl::decode_error(b.msg(), "ethtool COALESCE_SET dimt0 (rx_usecs)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_EQ(r.error().context(),
            "ethtool COALESCE_SET dimt0 (rx_usecs): cannot modify an unsupported parameter");
  EXPECT_THAT(r.error().message(), HasSubstr("Invalid argument"));
}

// Uncapped: the original request follows struct nlmsgerr, then the TLVs.
TEST(NetlinkErrors, ExtackAfterEchoedRequest) {
  MsgBuilder b = testing_nl::uncapped_extack_error(-ENODEV, "no device matches name");
  auto r = nl::decode_error(b.msg(), "ethtool COALESCE_GET nope0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENODEV);
  EXPECT_EQ(r.error().context(), "ethtool COALESCE_GET nope0: no device matches name");
}

TEST(NetlinkErrors, AckIsOkAndPlainErrnoIsKept) {
  MsgBuilder ack(NLMSG_ERROR, NLM_F_CAPPED);
  nlmsgerr err{};
  ack.raw(&err, sizeof err);
  EXPECT_TRUE(nl::decode_error(ack.msg(), "x").ok());

  MsgBuilder eperm(NLMSG_ERROR, NLM_F_CAPPED);
  err.error = -EPERM;
  eperm.raw(&err, sizeof err);
  auto r = nl::decode_error(eperm.msg(), "rdma netlink RDMA_NLDEV_CMD_SET rxe0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EPERM);
  EXPECT_EQ(r.error().context(), "rdma netlink RDMA_NLDEV_CMD_SET rxe0");
}

// Found by fuzz_netlink: -error overflowed for INT_MIN (UB). The kernel's errnos are 1..4095
// (MAX_ERRNO); anything else is not an errno to report.
TEST(NetlinkErrors, ErrorCodeOutsideTheErrnoRangeIsInvalid) {
  for (const int32_t code : {std::numeric_limits<int32_t>::min(), -4096, 1}) {
    MsgBuilder b(NLMSG_ERROR, NLM_F_CAPPED);
    nlmsgerr err{};
    err.error = code;
    b.raw(&err, sizeof err);
    auto r = nl::decode_error(b.msg(), "x");
    ASSERT_FALSE(r.ok()) << code;
    EXPECT_EQ(r.error().code(), 0) << code;
    EXPECT_EQ(r.error().message(), fmt::format("x: invalid netlink error code {}", code));
  }
  MsgBuilder done(NLMSG_DONE, NLM_F_MULTI);
  const int32_t min = std::numeric_limits<int32_t>::min();
  done.raw(&min, sizeof min);
  auto r = nl::decode_error(done.msg(), "dump");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), 0);
  MsgBuilder last(NLMSG_ERROR, NLM_F_CAPPED);
  nlmsgerr err{};
  err.error = -4095;
  last.raw(&err, sizeof err);
  EXPECT_EQ(nl::decode_error(last.msg(), "x").error().code(), 4095);
}

TEST(NetlinkErrors, TruncatedErrorMessage) {
  MsgBuilder b(NLMSG_ERROR);
  const int32_t e = -EINVAL;
  b.raw(&e, sizeof e);  // no room for the echoed header
  auto r = nl::decode_error(b.msg(), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr("truncated NLMSG_ERROR"));
}

TEST(NetlinkErrors, DumpDoneCarriesError) {
  MsgBuilder done(NLMSG_DONE, NLM_F_MULTI);
  const int32_t zero = 0;
  done.raw(&zero, sizeof zero);
  EXPECT_TRUE(nl::decode_error(done.msg(), "dump").ok());

  MsgBuilder bad(NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS);
  const int32_t e = -EMSGSIZE;
  bad.raw(&e, sizeof e);
  bad.str(NLMSGERR_ATTR_MSG, "dump too big");
  auto r = nl::decode_error(bad.msg(), "dump");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EMSGSIZE);
  EXPECT_EQ(r.error().context(), "dump: dump too big");
}

TEST(NetlinkFraming, TruncatedMessageInDatagram) {
  MsgBuilder b = coalesce_reply();
  std::vector<uint8_t> dgram = b.bytes();
  b.msg();
  dgram = b.bytes();
  dgram.resize(dgram.size() - 4);  // nlmsg_len now exceeds the datagram
  int calls = 0;
  auto r = for_each_msg(dgram.data(), dgram.size(), "ethtool monitor",
                        [&](const nlmsghdr*) -> Result<void> {
                          ++calls;
                          return ok();
                        });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(calls, 0);
  EXPECT_THAT(r.error().message(), HasSubstr("ethtool monitor: truncated netlink message"));
}

// ---------------------------------------------------------------------- genl family lookup

TEST(GenlCodec, DecodesFamilyAndMulticastGroups) {
  MsgBuilder b(GENL_ID_CTRL);
  b.genl(CTRL_CMD_NEWFAMILY, 2);
  b.str(CTRL_ATTR_FAMILY_NAME, "ethtool").u16(CTRL_ATTR_FAMILY_ID, 23).u32(CTRL_ATTR_VERSION, 1);
  size_t groups = b.begin(CTRL_ATTR_MCAST_GROUPS);
  size_t g1 = b.begin(1);
  b.str(CTRL_ATTR_MCAST_GRP_NAME, "monitor").u32(CTRL_ATTR_MCAST_GRP_ID, 5);
  b.end(g1);
  b.end(groups);
  auto f = nl::decode_getfamily(b.msg(), "ethtool");
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(f->id, 23);
  EXPECT_EQ(f->version, 1u);
  ASSERT_EQ(f->mcast_groups.count("monitor"), 1u);
  EXPECT_EQ(f->mcast_groups.at("monitor"), 5u);
}

TEST(GenlCodec, FamilyWithoutIdOrWithBadGroupIsAnError) {
  MsgBuilder noid(GENL_ID_CTRL);
  noid.genl(CTRL_CMD_NEWFAMILY).str(CTRL_ATTR_FAMILY_NAME, "ethtool");
  auto f = nl::decode_getfamily(noid.msg(), "ethtool");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message(), HasSubstr("no CTRL_ATTR_FAMILY_ID"));

  MsgBuilder badgrp(GENL_ID_CTRL);
  badgrp.genl(CTRL_CMD_NEWFAMILY).u16(CTRL_ATTR_FAMILY_ID, 23);
  size_t groups = badgrp.begin(CTRL_ATTR_MCAST_GROUPS);
  size_t g1 = badgrp.begin(1);
  badgrp.u16(CTRL_ATTR_MCAST_GRP_ID, 5);  // u32 expected
  badgrp.end(g1);
  badgrp.end(groups);
  auto g = nl::decode_getfamily(badgrp.msg(), "ethtool");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message(), HasSubstr("CTRL_ATTR_MCAST_GRP_ID"));
}

// ------------------------------------------------------------------------------ rdma nldev

TEST(RdmaCodec, SetDimRequest) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  const nlmsghdr* nlh = nl::build_rdma_dev_set_dim(buf.data(), 3, 2, true);
  EXPECT_EQ(nlh->nlmsg_type, 5122);  // (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_SET
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  auto top = attrs_of(nlh, 0);
  ASSERT_EQ(top.size(), 2u);
  ASSERT_EQ(top[1].size(), 4u);   // DEV_INDEX u32
  ASSERT_EQ(top[84].size(), 1u);  // DEV_DIM u8 (dim-spec 8.5)
  uint32_t idx = 0;
  std::memcpy(&idx, top[1].data(), 4);
  EXPECT_EQ(idx, 2u);
  EXPECT_EQ(top[84][0], 1);

  const nlmsghdr* dump = nl::build_rdma_dev_dump(buf.data(), 4);
  EXPECT_EQ(dump->nlmsg_type, 5121);
  EXPECT_EQ(dump->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
}

TEST(RdmaCodec, DecodesDevice) {
  MsgBuilder b(5121, NLM_F_MULTI);
  b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3).str(RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  b.str(RDMA_NLDEV_ATTR_FW_VERSION, "1.0");
  b.u8(RDMA_NLDEV_ATTR_DEV_DIM, 1);
  auto d = nl::decode_rdma_dev(b.msg(), "rdma dump");
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->dev.index, 3u);
  EXPECT_EQ(d->dev.name, "rxe0");
  EXPECT_TRUE(d->dev.dim_enabled);
  EXPECT_TRUE(d->has_dim);

  MsgBuilder old(5121);
  old.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 1).str(RDMA_NLDEV_ATTR_DEV_NAME, "mlx4_0");
  auto o = nl::decode_rdma_dev(old.msg(), "rdma dump");
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->has_dim);  // kernel < 5.3
}

TEST(RdmaCodec, MalformedDevice) {
  MsgBuilder wide(5121);
  wide.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3).str(RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  wide.u32(RDMA_NLDEV_ATTR_DEV_DIM, 1);  // u8 expected
  auto d = nl::decode_rdma_dev(wide.msg(), "rdma dump");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().message(), HasSubstr("RDMA_NLDEV_ATTR_DEV_DIM"));

  MsgBuilder noname(5121);
  noname.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  auto n = nl::decode_rdma_dev(noname.msg(), "rdma dump");
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.error().message(), HasSubstr("no RDMA_NLDEV_ATTR_DEV_NAME"));

  MsgBuilder other(5132);
  auto t = nl::decode_rdma_dev(other.msg(), "rdma dump");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message(), HasSubstr("unexpected message type 5132"));
}

}  // namespace
}  // namespace dimctl::actuators
