// The netdev generic netlink replies NetlinkNetdevDirectory reads (netdev_codec), against
// hand-built byte buffers: well-formed dumps, and the malformed ones it must survive.
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "dimctl/collector/netdev_codec.h"
#include "netdev_uapi.h"
#include "unit/actuators/nl_builder.h"

namespace dimctl::collector {
namespace {

namespace nc = netdev_codec;
namespace nu = netdev_uapi;
using testing_nl::MsgBuilder;

constexpr uint16_t kFamily = 31;

MsgBuilder entry(uint8_t cmd) {
  MsgBuilder b(kFamily, NLM_F_MULTI);
  b.genl(cmd);
  return b;
}

std::vector<uint8_t> bytes(MsgBuilder& b) {
  b.msg();
  return b.bytes();
}

std::vector<uint8_t> done() {
  MsgBuilder b(NLMSG_DONE, NLM_F_MULTI);
  const int32_t zero = 0;
  b.raw(&zero, sizeof zero);
  return bytes(b);
}

TEST(NetdevCodec, DecodesQueueNapiAndQstatsEntries) {
  MsgBuilder q = entry(nu::kCmdQueueGet);
  q.u32(nu::kAQueueId, 1).u32(nu::kAQueueIfindex, 2).u32(nu::kAQueueType, 0);
  q.u32(nu::kAQueueNapiId, 8193);
  const auto qr = nc::decode_queue(q.msg());
  ASSERT_TRUE(qr.has_value());
  EXPECT_EQ(qr->ifindex, 2u);
  EXPECT_EQ(qr->id, 1u);
  EXPECT_EQ(qr->type, 0u);
  EXPECT_EQ(qr->napi_id, 8193u);

  MsgBuilder n = entry(nu::kCmdNapiGet);
  n.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 8193).u32(nu::kANapiIrq, 41);
  const auto nr = nc::decode_napi(n.msg());
  ASSERT_TRUE(nr.has_value());
  EXPECT_EQ(nr->ifindex, 2u);
  EXPECT_EQ(nr->id, 8193u);
  EXPECT_EQ(nr->irq, 41u);

  // NLA_UINT: 4 or 8 bytes.
  MsgBuilder s = entry(nu::kCmdQstatsGet);
  const uint64_t big = 1ULL << 40, three = 3;
  s.u32(nu::kAQstatsIfindex, 2).u32(nu::kAQstatsQueueType, 0);
  s.attr(nu::kAQstatsQueueId, &three, 8).attr(nu::kAQstatsRxBytes, &big, 8);
  const auto sr = nc::decode_qstats(s.msg());
  ASSERT_TRUE(sr.has_value());
  EXPECT_EQ(sr->ifindex, 2u);
  EXPECT_EQ(sr->queue_id, 3u);
  EXPECT_EQ(sr->queue_type, 0u);
  EXPECT_EQ(sr->rx_bytes, big);

  MsgBuilder f(GENL_ID_CTRL);
  f.genl(CTRL_CMD_NEWFAMILY).str(CTRL_ATTR_FAMILY_NAME, "netdev").u16(CTRL_ATTR_FAMILY_ID, 31);
  EXPECT_EQ(nc::decode_family_id(f.msg()), 31);
}

TEST(NetdevCodec, EntriesWithoutARequiredAttributeAreSkipped) {
  MsgBuilder q = entry(nu::kCmdQueueGet);
  q.u32(nu::kAQueueId, 1).u32(nu::kAQueueType, 0);  // no ifindex
  EXPECT_FALSE(nc::decode_queue(q.msg()).has_value());

  MsgBuilder n = entry(nu::kCmdNapiGet);
  n.u32(nu::kANapiIfindex, 2).u32(nu::kANapiIrq, 41);  // no NAPI id
  EXPECT_FALSE(nc::decode_napi(n.msg()).has_value());

  MsgBuilder s = entry(nu::kCmdQstatsGet);
  s.u32(nu::kAQstatsIfindex, 2).u32(nu::kAQstatsQueueType, 0).u32(nu::kAQstatsQueueId, 0);
  EXPECT_FALSE(nc::decode_qstats(s.msg()).has_value());  // no rx-bytes (driver without them)

  MsgBuilder napi_only_irq = entry(nu::kCmdNapiGet);
  napi_only_irq.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 7);
  const auto nr = nc::decode_napi(napi_only_irq.msg());
  ASSERT_TRUE(nr.has_value());
  EXPECT_FALSE(nr->irq.has_value());
}

TEST(NetdevCodec, RunReplyHandsOverEveryEntryAndStopsAtDone) {
  MsgBuilder a = entry(nu::kCmdNapiGet);
  a.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 1);
  MsgBuilder b = entry(nu::kCmdNapiGet);
  b.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 2);
  std::vector<uint8_t> dgram = bytes(a);
  for (const auto& m : {bytes(b), done()}) dgram.insert(dgram.end(), m.begin(), m.end());
  std::vector<uint32_t> ids;
  const int rc = nc::run_reply(dgram.data(), dgram.size(), 0, 0, [&](const nlmsghdr* nlh) {
    if (auto n = nc::decode_napi(nlh)) ids.push_back(n->id);
  });
  EXPECT_EQ(rc, MNL_CB_STOP);
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2}));
}

// An attribute shorter than its type was read anyway: mnl_attr_get_u32() on a 0-byte IRQ read
// the 4 bytes after the message (here 0xab..., in the daemon whatever the receive buffer held).
TEST(NetdevCodec, AnAttributeOfTheWrongLengthIsNotRead) {
  MsgBuilder n = entry(nu::kCmdNapiGet);
  n.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 8193).attr(nu::kANapiIrq, nullptr, 0);
  n.msg();
  std::vector<uint8_t> buf = n.bytes();
  buf.insert(buf.end(), {0xab, 0xab, 0xab, 0xab});
  const auto nr = nc::decode_napi(reinterpret_cast<const nlmsghdr*>(buf.data()));
  ASSERT_TRUE(nr.has_value());
  EXPECT_EQ(nr->id, 8193u);
  EXPECT_FALSE(nr->irq.has_value()) << "irq read as " << nr->irq.value_or(0);

  // A required attribute of the wrong length: the entry is skipped.
  const uint16_t two = 2;
  MsgBuilder q = entry(nu::kCmdQueueGet);
  q.u32(nu::kAQueueId, 1).attr(nu::kAQueueIfindex, &two, sizeof two).u32(nu::kAQueueType, 0);
  EXPECT_FALSE(nc::decode_queue(q.msg()).has_value());

  // NLA_UINT is 4 or 8 bytes; 6 is neither.
  const uint8_t six[6] = {1, 2, 3, 4, 5, 6};
  MsgBuilder s = entry(nu::kCmdQstatsGet);
  s.u32(nu::kAQstatsIfindex, 2).u32(nu::kAQstatsQueueType, 0).u32(nu::kAQstatsQueueId, 0);
  s.attr(nu::kAQstatsRxBytes, six, sizeof six);
  EXPECT_FALSE(nc::decode_qstats(s.msg()).has_value());

  MsgBuilder f(GENL_ID_CTRL);
  f.genl(CTRL_CMD_NEWFAMILY).attr(CTRL_ATTR_FAMILY_ID, nullptr, 0);
  EXPECT_FALSE(nc::decode_family_id(f.msg()).has_value());
}

// Found by fuzz_netlink: mnl_attr_parse() bounds attributes by the message length rounded up to
// 4 bytes, so the last attribute of a message whose nlmsg_len is not a multiple of 4 could end
// up to 3 bytes past the message (and past the datagram: the 8-byte rx-bytes read 2 beyond).
TEST(NetdevCodec, AnAttributeRunningPastAnUnalignedMessageEndIsNotRead) {
  MsgBuilder n = entry(nu::kCmdNapiGet);
  n.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 8193).u32(nu::kANapiIrq, 41);
  const auto full = static_cast<uint32_t>(n.size());
  n.msg(full - 2);  // the IRQ attribute (8 bytes) now ends 2 bytes past the message
  EXPECT_FALSE(nc::decode_napi(reinterpret_cast<const nlmsghdr*>(n.bytes().data())).has_value())
      << "an entry with broken attribute framing is skipped";
  n.msg(full);
  EXPECT_TRUE(nc::decode_napi(reinterpret_cast<const nlmsghdr*>(n.bytes().data())).has_value());
}

// Found by fuzz_netlink: libmnl 1.0.4's mnl_nlmsg_ok() compares nlmsg_len as an int, so a length
// of 2 GiB or more passed, and mnl_cb_run() jumped that far past the datagram (SIGSEGV).
TEST(NetdevCodec, RunReplyRefusesAMessageLongerThanTheDatagram) {
  for (const uint32_t len : {0xe9e9e9e9U, 0x80000000U, 8U}) {
    MsgBuilder a = entry(nu::kCmdNapiGet);
    a.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 1);
    std::vector<uint8_t> dgram = bytes(a);
    MsgBuilder bad = entry(nu::kCmdNapiGet);
    bad.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 2);
    bad.msg(len);
    dgram.insert(dgram.end(), bad.bytes().begin(), bad.bytes().end());
    int calls = 0;
    errno = 0;
    const int rc =
        nc::run_reply(dgram.data(), dgram.size(), 0, 0, [&](const nlmsghdr*) { ++calls; });
    EXPECT_EQ(rc, MNL_CB_ERROR) << len;
    EXPECT_EQ(errno, EBADMSG) << len;
    EXPECT_EQ(calls, 0) << "nothing of a datagram with broken framing is used (" << len << ")";
  }
  // A message running past the end by a little, and a tail too short for a header.
  MsgBuilder a = entry(nu::kCmdNapiGet);
  a.u32(nu::kANapiIfindex, 2).u32(nu::kANapiId, 1);
  std::vector<uint8_t> dgram = bytes(a);
  dgram.resize(dgram.size() - 4);
  EXPECT_EQ(nc::run_reply(dgram.data(), dgram.size(), 0, 0, [](const nlmsghdr*) {}), MNL_CB_ERROR);
  dgram = bytes(a);
  dgram.insert(dgram.end(), {1, 2, 3, 4});
  EXPECT_EQ(nc::run_reply(dgram.data(), dgram.size(), 0, 0, [](const nlmsghdr*) {}), MNL_CB_ERROR);
}

}  // namespace
}  // namespace dimctl::collector
