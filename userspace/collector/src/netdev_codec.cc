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

int attr_cb(const nlattr* attr, void* data) {
  auto* tb = static_cast<std::vector<const nlattr*>*>(data);
  // Attributes newer than what we know are ignored.
  const auto type = static_cast<size_t>(mnl_attr_get_type(attr));
  if (type > 0 && type < tb->size()) (*tb)[type] = attr;
  return MNL_CB_OK;
}

// The attributes after the generic netlink header, indexed by type (1..max).
std::vector<const nlattr*> parse(const nlmsghdr* nlh, int max) {
  std::vector<const nlattr*> tb(static_cast<size_t>(max) + 1, nullptr);
  mnl_attr_parse(nlh, sizeof(genlmsghdr), attr_cb, &tb);
  return tb;
}

// NLA_UINT attributes (qstats) are 4 or 8 bytes.
uint64_t get_uint(const nlattr* a) {
  return mnl_attr_get_payload_len(a) == 8 ? mnl_attr_get_u64(a) : mnl_attr_get_u32(a);
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
  if (!tb[nu::kAQueueIfindex] || !tb[nu::kAQueueId] || !tb[nu::kAQueueType]) return std::nullopt;
  QueueRecord r;
  r.ifindex = mnl_attr_get_u32(tb[nu::kAQueueIfindex]);
  r.id = mnl_attr_get_u32(tb[nu::kAQueueId]);
  r.type = mnl_attr_get_u32(tb[nu::kAQueueType]);
  if (tb[nu::kAQueueNapiId]) r.napi_id = mnl_attr_get_u32(tb[nu::kAQueueNapiId]);
  return r;
}

std::optional<NapiRecord> decode_napi(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, nu::kANapiMax);
  if (!tb[nu::kANapiIfindex] || !tb[nu::kANapiId]) return std::nullopt;
  NapiRecord r;
  r.ifindex = mnl_attr_get_u32(tb[nu::kANapiIfindex]);
  r.id = mnl_attr_get_u32(tb[nu::kANapiId]);
  if (tb[nu::kANapiIrq]) r.irq = mnl_attr_get_u32(tb[nu::kANapiIrq]);
  return r;
}

std::optional<QstatsRecord> decode_qstats(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, nu::kAQstatsMax);
  if (!tb[nu::kAQstatsIfindex] || !tb[nu::kAQstatsQueueId] || !tb[nu::kAQstatsQueueType] ||
      !tb[nu::kAQstatsRxBytes]) {
    return std::nullopt;
  }
  QstatsRecord r;
  r.ifindex = mnl_attr_get_u32(tb[nu::kAQstatsIfindex]);
  r.queue_id = static_cast<uint32_t>(get_uint(tb[nu::kAQstatsQueueId]));
  r.queue_type = get_uint(tb[nu::kAQstatsQueueType]);
  r.rx_bytes = get_uint(tb[nu::kAQstatsRxBytes]);
  return r;
}

std::optional<uint16_t> decode_family_id(const nlmsghdr* nlh) {
  const auto tb = parse(nlh, CTRL_ATTR_FAMILY_ID);
  if (!tb[CTRL_ATTR_FAMILY_ID]) return std::nullopt;
  return mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
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
