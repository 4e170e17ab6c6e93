// Writes the seed corpus of fuzz_netlink (tests/fuzz/README.md): the replies of
// tests/unit/actuators/nl_codec_test.cc and the netdev dumps NetlinkNetdevDirectory reads, each
// as one datagram behind fuzz_netlink's selector byte.
//   fuzz_netlink_seeds tests/fuzz/corpus/netlink
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "netdev_uapi.h"
#include "unit/actuators/napi_replies.h"
#include "unit/actuators/nl_builder.h"
#include "unit/actuators/nl_replies.h"

namespace {

namespace nu = dimctl::collector::netdev_uapi;
using dimctl::testing_nl::MsgBuilder;

constexpr uint8_t kEthtool = 0, kRdma = 1, kGenl = 2, kNetdev = 3, kNapi = 4;  // fuzz_netlink.cc
constexpr uint16_t kFamily = 23;
constexpr uint16_t kNetdevFamily = 31;
constexpr uint16_t kRdmaGet = 5121;  // RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)

std::string g_dir;
int g_written = 0;

std::vector<uint8_t> bytes(MsgBuilder& b) {
  b.msg();
  return b.bytes();
}

void write(const std::string& name, uint8_t selector,
           std::initializer_list<std::vector<uint8_t>> msgs) {
  std::vector<uint8_t> out{selector};
  for (const auto& m : msgs) out.insert(out.end(), m.begin(), m.end());
  std::ofstream f(g_dir + "/" + name, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!f) {
    std::perror(name.c_str());
    std::exit(1);
  }
  ++g_written;
}

MsgBuilder coalesce_reply(uint8_t cmd, const std::string& dev) {
  return dimctl::testing_nl::coalesce_reply(kFamily, cmd, dev);
}

std::vector<uint8_t> ack(uint16_t flags = NLM_F_CAPPED, int32_t error = 0) {
  MsgBuilder b(NLMSG_ERROR, flags);
  nlmsgerr err{};
  err.error = error;
  b.raw(&err, sizeof err);
  return bytes(b);
}

std::vector<uint8_t> done(int32_t error = 0, const char* extack = nullptr) {
  MsgBuilder b(NLMSG_DONE, static_cast<uint16_t>(NLM_F_MULTI | (extack ? NLM_F_ACK_TLVS : 0)));
  b.raw(&error, sizeof error);
  if (extack) b.str(NLMSGERR_ATTR_MSG, extack);
  return bytes(b);
}

void ethtool() {
  MsgBuilder full = coalesce_reply(ETHTOOL_MSG_COALESCE_GET_REPLY, "dimt0");
  full.u32(ETHTOOL_A_COALESCE_RX_USECS, 8).u32(ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 64);
  full.u32(ETHTOOL_A_COALESCE_TX_USECS, 16).u32(ETHTOOL_A_COALESCE_TX_MAX_FRAMES, 32);
  full.u8(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1).u8(ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, 0);
  full.u8(ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, 1).u8(ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, 0);
  full.u32(26, 1000);            // TX_AGGR_MAX_BYTES, not used
  size_t prof = full.begin(29);  // RX_PROFILE (6.11+), not used
  size_t e = full.begin(1);
  full.u32(1, 8).u32(2, 64);
  full.end(e);
  full.end(prof);
  write("ethtool_get_reply_and_ack", kEthtool, {bytes(full), ack()});

  MsgBuilder ntf = coalesce_reply(ETHTOOL_MSG_COALESCE_NTF, "veth1");
  ntf.u32(ETHTOOL_A_COALESCE_RX_USECS, 0);
  write("ethtool_ntf", kEthtool, {bytes(ntf)});

  MsgBuilder minimal = coalesce_reply(ETHTOOL_MSG_COALESCE_GET_REPLY, "dimt0");
  minimal.u32(ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 64).u8(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1);
  write("ethtool_get_reply", kEthtool, {bytes(minimal)});

  // A rejected COALESCE_SET: capped, extack message and offset.
  MsgBuilder capped = dimctl::testing_nl::capped_extack_error(
      kFamily, -EINVAL, "cannot modify an unsupported parameter", 32);
  write("ethtool_error_capped_extack", kEthtool, {bytes(capped)});

  // Uncapped: the echoed request, then the TLVs.
  MsgBuilder uncapped =
      dimctl::testing_nl::uncapped_extack_error(-ENODEV, "no device matches name");
  write("ethtool_error_uncapped_extack", kEthtool, {bytes(uncapped)});

  write("ethtool_eperm", kEthtool, {ack(NLM_F_CAPPED, -EPERM)});
}

void rdma() {
  MsgBuilder rxe(kRdmaGet, NLM_F_MULTI);
  rxe.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3).str(RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  rxe.str(RDMA_NLDEV_ATTR_FW_VERSION, "1.0").u8(RDMA_NLDEV_ATTR_DEV_DIM, 1);
  MsgBuilder old(kRdmaGet, NLM_F_MULTI);
  old.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 1).str(RDMA_NLDEV_ATTR_DEV_NAME, "mlx4_0");
  write("rdma_dump", kRdma, {bytes(rxe), bytes(old), done()});

  MsgBuilder one(kRdmaGet);
  one.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 2).str(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  one.u8(RDMA_NLDEV_ATTR_DEV_DIM, 0);
  write("rdma_get_and_ack", kRdma, {bytes(one), ack()});
  write("rdma_dump_error", kRdma, {done(-EMSGSIZE, "dump too big")});
}

void genl() {
  MsgBuilder b(GENL_ID_CTRL);
  b.genl(CTRL_CMD_NEWFAMILY, 2);
  b.str(CTRL_ATTR_FAMILY_NAME, "ethtool").u16(CTRL_ATTR_FAMILY_ID, kFamily);
  b.u32(CTRL_ATTR_VERSION, 1);
  size_t groups = b.begin(CTRL_ATTR_MCAST_GROUPS);
  size_t g1 = b.begin(1);
  b.str(CTRL_ATTR_MCAST_GRP_NAME, "monitor").u32(CTRL_ATTR_MCAST_GRP_ID, 5);
  b.end(g1);
  b.end(groups);
  write("genl_ethtool_family_and_ack", kGenl, {bytes(b), ack()});
}

MsgBuilder entry_napi(uint32_t ifindex, uint32_t id) {
  MsgBuilder b(kNetdevFamily, NLM_F_MULTI);
  b.genl(nu::kCmdNapiGet);
  b.u32(nu::kANapiIfindex, ifindex).u32(nu::kANapiId, id);
  return b;
}

void netdev() {
  // QUEUE_GET dump: two RX queues on one NAPI, a TX queue, an RX queue without NAPI.
  auto queue = [](uint32_t ifindex, uint32_t id, uint32_t type, uint32_t napi) {
    MsgBuilder b(kNetdevFamily, NLM_F_MULTI);
    b.genl(nu::kCmdQueueGet);
    b.u32(nu::kAQueueId, id).u32(nu::kAQueueIfindex, ifindex).u32(nu::kAQueueType, type);
    if (napi != 0) b.u32(nu::kAQueueNapiId, napi);
    return bytes(b);
  };
  write("netdev_queue_dump", kNetdev,
        {queue(2, 0, 0, 8193), queue(2, 1, 0, 8193), queue(2, 0, 1, 8194), queue(3, 0, 0, 0),
         done()});

  auto napi = [](uint32_t ifindex, uint32_t id, int32_t irq) {
    MsgBuilder b(kNetdevFamily, NLM_F_MULTI);
    b.genl(nu::kCmdNapiGet);
    b.u32(nu::kANapiIfindex, ifindex).u32(nu::kANapiId, id);
    if (irq >= 0) b.u32(nu::kANapiIrq, static_cast<uint32_t>(irq));
    return bytes(b);
  };
  write("netdev_napi_dump", kNetdev, {napi(2, 8193, 41), napi(2, 8194, -1), done()});

  // QSTATS_GET with queue scope: NLA_UINT values of 4 and of 8 bytes.
  MsgBuilder q4(kNetdevFamily, NLM_F_MULTI);
  q4.genl(nu::kCmdQstatsGet);
  q4.u32(nu::kAQstatsIfindex, 2).u32(nu::kAQstatsQueueType, 0).u32(nu::kAQstatsQueueId, 1);
  q4.u32(nu::kAQstatsRxBytes, 123456);
  MsgBuilder q8(kNetdevFamily, NLM_F_MULTI);
  q8.genl(nu::kCmdQstatsGet);
  const uint64_t big = 1ULL << 40, zero = 0, one = 1;
  q8.u32(nu::kAQstatsIfindex, 2);
  q8.attr(nu::kAQstatsQueueType, &zero, 8).attr(nu::kAQstatsQueueId, &one, 8);
  q8.attr(nu::kAQstatsRxBytes, &big, 8);
  write("netdev_qstats_dump", kNetdev, {bytes(q4), bytes(q8), done()});
  write("netdev_qstats_unsupported", kNetdev, {ack(NLM_F_CAPPED, -EOPNOTSUPP)});

  MsgBuilder fam(GENL_ID_CTRL);
  fam.genl(CTRL_CMD_NEWFAMILY, 2);
  fam.str(CTRL_ATTR_FAMILY_NAME, nu::kFamilyName).u16(CTRL_ATTR_FAMILY_ID, kNetdevFamily);
  write("netdev_family_and_ack", kNetdev, {bytes(fam), ack()});
}

// NapiNetlink's replies (napi_codec_test.cc): the family with its op list, a NAPI_GET do answer,
// a dump with both NLA_UINT widths, napi-set refused for an unknown id (ENOENT, bad attribute).
void napi() {
  namespace t = dimctl::testing_nl;
  MsgBuilder fam = t::netdev_family({1, 10, 11, 12, 13, 14});
  write("napi_netdev_family_ops_and_ack", kNapi, {bytes(fam), ack()});
  MsgBuilder old = t::netdev_family({1, 10, 11, 12});
  write("napi_netdev_family_without_napi_set", kNapi, {bytes(old), ack()});

  t::NapiAttrs a;
  a.defer = 2;
  a.gro_flush_ns = 200'000;
  a.irq_suspend_ns = 0;
  MsgBuilder one = t::napi_reply(a);
  write("napi_get_reply_and_ack", kNapi, {bytes(one), ack()});

  t::NapiAttrs b = a, c;
  b.id = 8194;
  b.irq = 41;
  b.gro_flush_ns = 5'000'000'000ULL;  // 8 bytes
  c.id = 8195;                        // a 6.8-6.12 entry: no moderation attributes
  MsgBuilder d1 = t::napi_reply(a, NLM_F_MULTI), d2 = t::napi_reply(b, NLM_F_MULTI),
             d3 = t::napi_reply(c, NLM_F_MULTI);
  write("napi_dump", kNapi, {bytes(d1), bytes(d2), bytes(d3), done()});

  MsgBuilder enoent = dimctl::testing_nl::capped_extack_error(t::kNetdevFamily, -ENOENT, "", 20);
  write("napi_set_enoent", kNapi, {bytes(enoent)});
}

// Inputs that crashed a decoder once (regression tests in the unit tests name them).
void regressions() {
  // nl_codec_test.cc ErrorCodeOutsideTheErrnoRangeIsInvalid: -INT_MIN overflowed.
  write("regress_error_int_min", kEthtool, {ack(NLM_F_CAPPED, INT32_MIN)});
  // netdev_codec_test.cc RunReplyRefusesAMessageLongerThanTheDatagram: libmnl took an
  // nlmsg_len >= 2 GiB as valid and walked past the datagram.
  MsgBuilder ok = entry_napi(2, 1);
  MsgBuilder huge = entry_napi(2, 2);
  huge.msg(0xe9e9e9e9U);
  write("regress_netdev_huge_len", kNetdev, {bytes(ok), huge.bytes()});
  // netdev_codec_test.cc AnAttributeRunningPastAnUnalignedMessageEndIsNotRead: the last
  // attribute ended 2 bytes past a message of unaligned length, and past the datagram.
  MsgBuilder unaligned(kNetdevFamily, NLM_F_MULTI);
  unaligned.genl(nu::kCmdQstatsGet);
  const uint64_t big = 1ULL << 40;
  unaligned.u32(nu::kAQstatsIfindex, 2).u32(nu::kAQstatsQueueType, 0);
  unaligned.u32(nu::kAQstatsQueueId, 1).attr(nu::kAQstatsRxBytes, &big, 8);
  unaligned.msg(static_cast<uint32_t>(unaligned.size() - 2));
  std::vector<uint8_t> cut = unaligned.bytes();
  cut.resize(cut.size() - 2);
  write("regress_netdev_unaligned_len", kNetdev, {cut});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  ethtool();
  rdma();
  genl();
  netdev();
  napi();
  regressions();
  std::printf("%d seeds written to %s\n", g_written, g_dir.c_str());
  return 0;
}
