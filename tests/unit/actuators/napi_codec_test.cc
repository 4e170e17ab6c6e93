// The netdev NAPI codec (napi_codec.h): requests byte for byte, replies as the kernel sends
// them (do and dump entries, NLA_UINT of 4 and 8 bytes), every malformed attribute named, and
// the napi-set probe on the family's op list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <map>
#include <vector>

#include "dimctl/actuators/napi_codec.h"
#include "dimctl/actuators/netlink_socket.h"
#include "unit/actuators/napi_replies.h"
#include "unit/actuators/nl_builder.h"

namespace dimctl::actuators {
namespace {

using ::testing::HasSubstr;
using testing_nl::kNetdevFamily;
using testing_nl::MsgBuilder;
using testing_nl::NapiAttrs;
namespace t = testing_nl;

const std::string kWhat = "netdev NAPI_GET napi 8193";

std::map<uint16_t, std::vector<uint8_t>> attrs_of(const nlmsghdr* nlh) {
  std::map<uint16_t, std::vector<uint8_t>> out;
  const auto* base = static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh));
  const size_t len = nlh->nlmsg_len - NLMSG_HDRLEN;
  size_t off = GENL_HDRLEN;
  while (off + sizeof(nlattr) <= len) {
    const auto* a = reinterpret_cast<const nlattr*>(base + off);
    const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
    out[mnl_attr_get_type(a)] = std::vector<uint8_t>(p, p + mnl_attr_get_payload_len(a));
    off += MNL_ALIGN(a->nla_len);
  }
  return out;
}

template <typename T>
T as(const std::vector<uint8_t>& v) {
  T x{};
  EXPECT_EQ(v.size(), sizeof x);
  std::memcpy(&x, v.data(), std::min(v.size(), sizeof x));
  return x;
}

const genlmsghdr* genl_of(const nlmsghdr* nlh) {
  return static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
}

// ------------------------------------------------------------------------------- requests

TEST(NapiCodec, GetRequestCarriesTheIdOnly) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  const nlmsghdr* nlh = nl::build_napi_get(buf.data(), kNetdevFamily, 7, 8193);
  EXPECT_EQ(nlh->nlmsg_type, kNetdevFamily);
  EXPECT_EQ(nlh->nlmsg_seq, 7u);
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(genl_of(nlh)->cmd, t::kNapiGet);
  EXPECT_EQ(genl_of(nlh)->version, 1);
  auto a = attrs_of(nlh);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(as<uint32_t>(a.at(t::kNapiId)), 8193u);
}

TEST(NapiCodec, DumpRequestFiltersByIfindex) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  const nlmsghdr* nlh = nl::build_napi_dump(buf.data(), kNetdevFamily, 8, 5);
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(genl_of(nlh)->cmd, t::kNapiGet);
  auto a = attrs_of(nlh);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(as<uint32_t>(a.at(t::kNapiIfindex)), 5u);
}

TEST(NapiCodec, SetEncodesOnlyPresentFields) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  seam::NapiConfig req;
  req.defer_hard_irqs = 2;
  req.gro_flush_timeout_ns = 200'000;
  const nlmsghdr* nlh = nl::build_napi_set(buf.data(), kNetdevFamily, 9, 8193, req);
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(genl_of(nlh)->cmd, t::kNapiSet);
  auto a = attrs_of(nlh);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(as<uint32_t>(a.at(t::kNapiId)), 8193u);
  EXPECT_EQ(as<uint32_t>(a.at(t::kNapiDefer)), 2u);
  EXPECT_EQ(as<uint64_t>(a.at(t::kNapiGroFlush)), 200'000u);
  EXPECT_EQ(a.count(t::kNapiIrqSuspend), 0u);

  seam::NapiConfig only;
  only.irq_suspend_timeout_ns = 1ULL << 33;
  auto b = attrs_of(nl::build_napi_set(buf.data(), kNetdevFamily, 10, 1, only));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(as<uint64_t>(b.at(t::kNapiIrqSuspend)), 1ULL << 33);
}

TEST(NapiCodec, DescribeNamesThePresentFields) {
  EXPECT_EQ(nl::describe(seam::NapiConfig{}), "(nothing)");
  EXPECT_EQ(nl::describe(seam::NapiConfig{2, 200'000, std::nullopt}),
            "defer-hard-irqs=2 gro-flush-timeout=200000ns");
  EXPECT_EQ(nl::describe(seam::NapiConfig{std::nullopt, std::nullopt, 5}),
            "irq-suspend-timeout=5ns");
}

// ------------------------------------------------------------------------------- replies

TEST(NapiCodec, DecodesAFullReply) {
  NapiAttrs a;
  a.irq = 41;
  a.defer = 2;
  a.gro_flush_ns = 200'000;
  a.irq_suspend_ns = 0;
  MsgBuilder b = t::napi_reply(a);
  b.u32(t::kNapiPid, 1234).u32(t::kNapiThreaded, 0).u32(99, 1);  // skipped
  auto n = nl::decode_napi(b.msg(), kNetdevFamily, kWhat);
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(n->id, 8193u);
  EXPECT_EQ(n->ifindex, 2u);
  EXPECT_EQ(n->irq, 41u);
  EXPECT_EQ(n->config, (seam::NapiConfig{2, 200'000, 0}));
}

TEST(NapiCodec, AbsentAttributesAreUnsupported) {
  MsgBuilder b = t::napi_reply(NapiAttrs{});  // a 6.8-6.12 kernel: no moderation attributes
  auto n = nl::decode_napi(b.msg(), kNetdevFamily, kWhat);
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_FALSE(n->irq.has_value());
  EXPECT_TRUE(n->config.empty());
}

TEST(NapiCodec, TimeoutsAreUintsOfFourOrEightBytes) {
  NapiAttrs a;
  a.gro_flush_ns = 5'000'000'000ULL;  // 8 bytes on the wire
  a.irq_suspend_ns = 7;               // 4 bytes
  MsgBuilder b = t::napi_reply(a);
  auto n = nl::decode_napi(b.msg(), kNetdevFamily, kWhat);
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(n->config.gro_flush_timeout_ns, 5'000'000'000ULL);
  EXPECT_EQ(n->config.irq_suspend_timeout_ns, 7u);
}

TEST(NapiCodec, AUintOfAnotherLengthIsNamed) {
  MsgBuilder b = t::napi_reply(NapiAttrs{});
  const uint16_t two = 9;
  b.attr(t::kNapiGroFlush, &two, sizeof two);
  auto n = nl::decode_napi(b.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.error().message(), HasSubstr(kWhat));
  EXPECT_THAT(n.error().message(), HasSubstr("NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT"));
  EXPECT_THAT(n.error().message(), HasSubstr("payload length 2"));
}

TEST(NapiCodec, AU32OfAnotherLengthIsNamed) {
  for (uint16_t type : {t::kNapiId, t::kNapiIfindex, t::kNapiIrq, t::kNapiDefer}) {
    MsgBuilder b(kNetdevFamily);
    b.genl(t::kNapiGet);
    const uint16_t two = 1;
    b.attr(type, &two, sizeof two);
    auto n = nl::decode_napi(b.msg(), kNetdevFamily, kWhat);
    ASSERT_FALSE(n.ok()) << "type " << type;
    EXPECT_THAT(n.error().message(), HasSubstr("is not a valid u32"));
  }
  MsgBuilder b = t::napi_reply(NapiAttrs{});
  b.u8(t::kNapiDefer, 1);
  auto n = nl::decode_napi(b.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.error().message(), HasSubstr("NETDEV_A_NAPI_DEFER_HARD_IRQS"));
}

TEST(NapiCodec, RequiredAttributesAreChecked) {
  MsgBuilder noid(kNetdevFamily);
  noid.genl(t::kNapiGet).u32(t::kNapiIfindex, 2);
  auto a = nl::decode_napi(noid.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.error().message(), HasSubstr("no NETDEV_A_NAPI_ID"));

  MsgBuilder noif(kNetdevFamily);
  noif.genl(t::kNapiGet).u32(t::kNapiId, 1);
  auto b = nl::decode_napi(noif.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.error().message(), HasSubstr("no NETDEV_A_NAPI_IFINDEX"));
}

TEST(NapiCodec, FamilyCommandAndHeaderAreChecked) {
  MsgBuilder other = t::napi_reply(NapiAttrs{}, 0, 23);
  auto a = nl::decode_napi(other.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.error().message(), HasSubstr("unexpected message type 23"));

  MsgBuilder queue(kNetdevFamily);
  queue.genl(t::kQueueGet).u32(t::kNapiId, 1).u32(t::kNapiIfindex, 2);
  auto b = nl::decode_napi(queue.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.error().message(), HasSubstr("unexpected netdev command 10"));

  MsgBuilder bare(kNetdevFamily);
  auto c = nl::decode_napi(bare.msg(), kNetdevFamily, kWhat);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message(), HasSubstr("missing its generic netlink header"));
}

TEST(NapiCodec, TruncatedAttributeIsAnError) {
  NapiAttrs a;
  a.defer = 2;
  MsgBuilder b = t::napi_reply(a);
  const uint32_t full = static_cast<uint32_t>(b.size());
  auto n = nl::decode_napi(b.msg(full - 2), kNetdevFamily, kWhat);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.error().message(), HasSubstr("truncated attribute type 5"));
}

TEST(NapiCodec, ADumpDatagramDecodesEntryByEntry) {
  NapiAttrs one, two;
  two.id = 8194;
  two.defer = 0;
  MsgBuilder m1 = t::napi_reply(one, NLM_F_MULTI);
  MsgBuilder m2 = t::napi_reply(two, NLM_F_MULTI);
  m1.msg();
  m2.msg();
  std::vector<uint8_t> dgram = m1.bytes();
  dgram.insert(dgram.end(), m2.bytes().begin(), m2.bytes().end());
  std::vector<uint32_t> ids;
  auto r = for_each_msg(dgram.data(), dgram.size(), kWhat, [&](const nlmsghdr* nlh) {
    auto n = nl::decode_napi(nlh, kNetdevFamily, kWhat);
    if (!n) return Result<void>(std::move(n).error());
    ids.push_back(n->id);
    return ok();
  });
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(ids, (std::vector<uint32_t>{8193, 8194}));
}

// ------------------------------------------------------------------------------- probe

TEST(NapiCodec, ProbeNeedsNapiSetInTheOpList) {
  MsgBuilder now = t::netdev_family({1, 10, 11, 12, 13, 14});
  auto f = nl::decode_getfamily(now.msg(), "netdev");
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(f->id, kNetdevFamily);
  EXPECT_EQ(f->ops, (std::set<uint32_t>{1, 10, 11, 12, 13, 14}));
  EXPECT_TRUE(nl::check_napi_set(*f).ok());

  MsgBuilder old = t::netdev_family({1, 10, 11, 12});  // 6.12
  auto g = nl::decode_getfamily(old.msg(), "netdev");
  ASSERT_TRUE(g.ok()) << g.error().message();
  auto c = nl::check_napi_set(*g);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), EOPNOTSUPP);
  EXPECT_THAT(c.error().message(), HasSubstr("Linux >= 6.13"));
  EXPECT_THAT(c.error().message(), HasSubstr("napi-set"));
}

TEST(NapiCodec, AMalformedOpListIsNamed) {
  MsgBuilder b(GENL_ID_CTRL);
  b.genl(CTRL_CMD_NEWFAMILY, 2);
  b.str(CTRL_ATTR_FAMILY_NAME, "netdev").u16(CTRL_ATTR_FAMILY_ID, kNetdevFamily);
  const size_t list = b.begin(CTRL_ATTR_OPS);
  const size_t e = b.begin(1);
  b.u16(CTRL_ATTR_OP_ID, 14);
  b.end(e);
  b.end(list);
  auto f = nl::decode_getfamily(b.msg(), "netdev");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message(), HasSubstr("CTRL_ATTR_OP_ID"));
}

}  // namespace
}  // namespace dimctl::actuators
