// libFuzzer harness: the netlink reply decoders, fed one received datagram the way the sockets
// feed them. The first byte picks the decoder; the rest is the datagram:
//   0  ethtool COALESCE_GET_REPLY / COALESCE_NTF  (NetlinkSocket::transact + nl::decode_coalesce)
//   1  rdma nldev RDMA_NLDEV_CMD_GET              (transact + nl::decode_rdma_dev)
//   2  generic netlink CTRL_CMD_GETFAMILY         (transact + nl::decode_getfamily)
//   3  netdev QUEUE_GET / NAPI_GET / QSTATS_GET   (NetlinkNetdevDirectory: netdev_codec)
//   4  netdev NAPI_GET replies, the netdev family  (NapiNetlink: transact + nl::decode_napi,
//      with its op list                             nl::decode_getfamily + nl::check_napi_set)
// One harness rather than five: the decoders share the message and attribute walkers and the
// NLMSG_ERROR/extack decoding, so one corpus carries what is learnt about framing to all of
// them, and the two-core budget of `make test` is spent on fewer, longer runs.
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "dimctl/actuators/napi_codec.h"
#include "dimctl/actuators/netlink_socket.h"
#include "dimctl/actuators/nl_codec.h"
#include "dimctl/collector/netdev_codec.h"

namespace nl = dimctl::actuators::nl;
namespace nc = dimctl::collector::netdev_codec;
using dimctl::Result;

namespace {

constexpr uint16_t kEthtoolFamily = 23;  // as in tests/unit/actuators/nl_codec_test.cc
constexpr uint16_t kNetdevFamily = 31;   // as in tests/unit/actuators/napi_replies.h

// What NetlinkSocket::transact does with each message of a datagram: errors and DONE to
// decode_error, everything else to the request's decoder.
template <typename Decode>
void transact_like(const std::vector<uint8_t>& buf, Decode decode) {
  auto r = dimctl::actuators::for_each_msg(
      buf.data(), buf.size(), "fuzz", [&](const nlmsghdr* nlh) -> Result<void> {
        if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type == NLMSG_DONE) {
          auto e = nl::decode_error(nlh, "fuzz");
          (void)nl::extack_message(nlh);
          if (!e && e.error().message().empty()) std::abort();
          return dimctl::ok();
        }
        decode(nlh);
        return dimctl::ok();
      });
  if (!r && r.error().message().empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // A heap copy of exactly the datagram: aligned like the sockets' receive buffers, and any read
  // past its end is one AddressSanitizer sees.
  const std::vector<uint8_t> buf(data + 1, data + size);
  switch (data[0] % 5) {
    case 0:
      transact_like(buf, [](const nlmsghdr* nlh) {
        auto m = nl::decode_coalesce(nlh, kEthtoolFamily, "fuzz");
        if (m && m->device.empty()) std::abort();  // the decoder promises a device name
        if (!m && m.error().message().empty()) std::abort();
      });
      break;
    case 1:
      transact_like(buf, [](const nlmsghdr* nlh) {
        auto m = nl::decode_rdma_dev(nlh, "fuzz");
        if (m && m->dev.name.empty()) std::abort();
        if (!m && m.error().message().empty()) std::abort();
      });
      break;
    case 2:
      transact_like(buf, [](const nlmsghdr* nlh) {
        auto m = nl::decode_getfamily(nlh, "ethtool");
        if (!m && m.error().message().empty()) std::abort();
      });
      break;
    case 4:
      transact_like(buf, [](const nlmsghdr* nlh) {
        if (nlh->nlmsg_type == GENL_ID_CTRL) {
          auto f = nl::decode_getfamily(nlh, "netdev");
          if (!f && f.error().message().empty()) std::abort();
          if (f) (void)nl::check_napi_set(*f);
          return;
        }
        auto m = nl::decode_napi(nlh, kNetdevFamily, "fuzz");
        if (!m && m.error().message().empty()) std::abort();
        if (m) (void)nl::describe(m->config);
      });
      break;
    default:
      (void)nc::run_reply(buf.data(), buf.size(), 0, 0, [](const nlmsghdr* nlh) {
        (void)nc::decode_queue(nlh);
        (void)nc::decode_napi(nlh);
        (void)nc::decode_qstats(nlh);
        (void)nc::decode_family_id(nlh);
      });
      break;
  }
  return 0;
}
