// Decoders of the netdev generic netlink replies NetlinkNetdevDirectory reads (QUEUE_GET,
// NAPI_GET and QSTATS_GET dumps, the CTRL_CMD_GETFAMILY answer), free of sockets so that unit
// tests and the fuzzer (tests/fuzz) feed them bytes.
//
// The directory is best effort (names and IRQs for labels): an entry lacking an attribute it
// needs is skipped, not an error, so the decoders answer nullopt for it.
#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace dimctl::collector::netdev_codec {

// One entry of a QUEUE_GET dump.
struct QueueRecord {
  uint32_t ifindex = 0;
  uint32_t id = 0;
  uint32_t type = 0;                // netdev_uapi::kQueueTypeRx or TX
  std::optional<uint32_t> napi_id;  // absent for a queue no NAPI serves
};

// One entry of a NAPI_GET dump.
struct NapiRecord {
  uint32_t ifindex = 0;
  uint32_t id = 0;
  std::optional<uint32_t> irq;
};

// One entry of a QSTATS_GET dump with queue scope (only the fields the collector uses).
struct QstatsRecord {
  uint32_t ifindex = 0;
  uint32_t queue_id = 0;
  uint64_t queue_type = 0;
  uint64_t rx_bytes = 0;
};

// Each takes one reply message (netlink header, generic netlink header, attributes); nullopt
// when an attribute the record needs is missing. An attribute whose length is not its type's
// (u32: 4 bytes; the NLA_UINT qstats values: 4 or 8) counts as missing; an attribute running
// past nlmsg_len makes the whole entry unusable.
std::optional<QueueRecord> decode_queue(const nlmsghdr* nlh);
std::optional<NapiRecord> decode_napi(const nlmsghdr* nlh);
std::optional<QstatsRecord> decode_qstats(const nlmsghdr* nlh);
// CTRL_ATTR_FAMILY_ID of a CTRL_CMD_GETFAMILY answer.
std::optional<uint16_t> decode_family_id(const nlmsghdr* nlh);

// Runs `fn` on every data message of one received datagram answering the request (seq, portid),
// with libmnl's framing checks and NLMSG_ERROR/NLMSG_DONE handling (mnl_cb_run): MNL_CB_STOP
// after the last message of the reply, MNL_CB_OK when more datagrams follow, MNL_CB_ERROR with
// errno set on a kernel error, or EBADMSG (and no call of `fn`) when a message of the datagram
// is shorter than its header or runs past the datagram's end.
int run_reply(const void* buf, size_t len, uint32_t seq, uint32_t portid,
              const std::function<void(const nlmsghdr*)>& fn);

}  // namespace dimctl::collector::netdev_codec
