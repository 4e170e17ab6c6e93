#include "dimctl/collector/netdev_codec.h"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "netdev_uapi.h"

namespace dimctl::collector::netdev_codec {
namespace nu = netdev_uapi;

namespace {

// The attributes after the generic netlink header, indexed by type (1..max; newer ones are
// ignored); nullopt when one runs past the message. Not mnl_attr_parse(): it bounds attributes
// by nlmsg_len rounded up to 4 bytes, so the last one of a message with an unaligned length could
// end up to 3 bytes past the message (and the datagram).
std::optional<std::vector<const nlattr*>> parse(const nlmsghdr* nlh, int max) {
  std::vector<const nlattr*> tb(static_cast<size_t>(max) + 1, nullptr);
  const auto* base = reinterpret_cast<const uint8_t*>(nlh);
  const size_t end = nlh->nlmsg_len;
  for (size_t off = NLMSG_HDRLEN + GENL_HDRLEN; off < end;) {
    nlattr a{};
    if (end - off < sizeof a) return std::nullopt;
    std::memcpy(&a, base + off, sizeof a);
    if (a.nla_len < sizeof a || a.nla_len > end - off) return std::nullopt;
    const size_t type = a.nla_type & NLA_TYPE_MASK;
    if (type > 0 && type < tb.size()) tb[type] = reinterpret_cast<const nlattr*>(base + off);
    off += NLA_ALIGN(a.nla_len);
  }
  return tb;
}

// Values of an attribute of exactly its type's length; nullopt otherwise (or when absent).
// mnl_attr_get_u32() and friends read 4 bytes whatever the attribute holds: past its end, and
// past the message, for a shorter one.
template <typename T>
std::optional<T> fixed(const nlattr* a) {
  if (a == nullptr || mnl_attr_get_payload_len(a) != sizeof(T)) return std::nullopt;
  T v{};
  std::memcpy(&v, mnl_attr_get_payload(a), sizeof v);
  return v;
}

// NLA_UINT attributes (qstats) are 4 or 8 bytes.
std::optional<uint64_t> get_uint(const nlattr* a) {
  if (auto v = fixed<uint64_t>(a)) return v;
  return fixed<uint32_t>(a);
}

struct CbCtx {
  const std::function<void(const nlmsghdr*)>* fn;
};

int msg_cb(const nlmsghdr* nlh, void* data) {
  (*static_cast<CbCtx*>(data)->fn)(nlh);
  return MNL_CB_OK;
}

}  // namespace

std::optional<QueueRecord> decode_queue(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, nu::kAQueueMax);
  if (!tb) return std::nullopt;
  const auto ifindex = fixed<uint32_t>((*tb)[nu::kAQueueIfindex]);
  const auto id = fixed<uint32_t>((*tb)[nu::kAQueueId]);
  const auto type = fixed<uint32_t>((*tb)[nu::kAQueueType]);
  if (!ifindex || !id || !type) return std::nullopt;
  return QueueRecord{*ifindex, *id, *type, fixed<uint32_t>((*tb)[nu::kAQueueNapiId])};
}

std::optional<NapiRecord> decode_napi(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, nu::kANapiMax);
  if (!tb) return std::nullopt;
  const auto ifindex = fixed<uint32_t>((*tb)[nu::kANapiIfindex]);
  const auto id = fixed<uint32_t>((*tb)[nu::kANapiId]);
  if (!ifindex || !id) return std::nullopt;
  return NapiRecord{*ifindex, *id, fixed<uint32_t>((*tb)[nu::kANapiIrq])};
}

std::optional<QstatsRecord> decode_qstats(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, nu::kAQstatsMax);
  if (!tb) return std::nullopt;
  const auto ifindex = fixed<uint32_t>((*tb)[nu::kAQstatsIfindex]);
  const auto queue_id = get_uint((*tb)[nu::kAQstatsQueueId]);
  const auto queue_type = get_uint((*tb)[nu::kAQstatsQueueType]);
  const auto rx_bytes = get_uint((*tb)[nu::kAQstatsRxBytes]);
  if (!ifindex || !queue_id || !queue_type || !rx_bytes) return std::nullopt;
  return QstatsRecord{*ifindex, static_cast<uint32_t>(*queue_id), *queue_type, *rx_bytes};
}

std::optional<uint16_t> decode_family_id(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, CTRL_ATTR_FAMILY_ID);
  if (!tb) return std::nullopt;
  return fixed<uint16_t>((*tb)[CTRL_ATTR_FAMILY_ID]);
}

int run_reply(const void* buf, size_t len, uint32_t seq, uint32_t portid,
              const std::function<void(const nlmsghdr*)>& fn) {
  // libmnl (1.0.4) checks nlmsg_len as an int in mnl_nlmsg_ok(): a length of 2 GiB or more
  // passes, and mnl_cb_run() then walks that far past the datagram. Check the framing first.
  const auto* p = static_cast<const uint8_t*>(buf);
  for (size_t off = 0; off < len;) {
    nlmsghdr hdr{};
    if (len - off < sizeof hdr) {
      errno = EBADMSG;
      return MNL_CB_ERROR;
    }
    std::memcpy(&hdr, p + off, sizeof hdr);
    if (hdr.nlmsg_len < sizeof hdr || hdr.nlmsg_len > len - off) {
      errno = EBADMSG;
      return MNL_CB_ERROR;
    }
    off += NLMSG_ALIGN(hdr.nlmsg_len);
  }
  CbCtx ctx{&fn};
  return mnl_cb_run(buf, len, seq, portid, msg_cb, &ctx);
}

}  // namespace dimctl::collector::netdev_codec
