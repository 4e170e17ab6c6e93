#include "dimctl/actuators/netlink_socket.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <optional>

#include "dimctl/actuators/nl_codec.h"

namespace dimctl::actuators {

Result<void> for_each_msg(const void* data, size_t len, std::string_view what,
                          const std::function<Result<void>(const nlmsghdr*)>& cb) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t off = 0;
  while (off < len) {
    const size_t rem = len - off;
    if (rem < sizeof(nlmsghdr)) {
      return DIMCTL_FAIL(0, "{}: truncated netlink message header at offset {} ({} bytes left)",
                         what, off, rem);
    }
    nlmsghdr hdr{};
    std::memcpy(&hdr, p + off, sizeof hdr);
    if (hdr.nlmsg_len < sizeof(nlmsghdr) || hdr.nlmsg_len > rem) {
      return DIMCTL_FAIL(0,
                         "{}: truncated netlink message type {} at offset {}: length {} but {} "
                         "bytes left",
                         what, hdr.nlmsg_type, off, hdr.nlmsg_len, rem);
    }
    auto r = cb(reinterpret_cast<const nlmsghdr*>(p + off));
    if (!r) return r;
    off += NLMSG_ALIGN(hdr.nlmsg_len);
  }
  return ok();
}

Result<NetlinkSocket> NetlinkSocket::open(int bus, std::string_view what, NetlinkFamily family) {
  mnl_socket* s = mnl_socket_open(bus);
  if (s == nullptr) return DIMCTL_ERRNO("{}: socket(AF_NETLINK, {})", what, bus);
  NetlinkSocket sock(s, family);
  if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
    return DIMCTL_ERRNO("{}: bind netlink socket", what);
  }
  int one = 1;
  // Best effort: kernels without extended acks still answer with plain errno acks.
  (void)mnl_socket_setsockopt(s, NETLINK_EXT_ACK, &one, sizeof one);
  (void)mnl_socket_setsockopt(s, NETLINK_CAP_ACK, &one, sizeof one);
  // The kernel always answers a request; a missing answer must not hang the controller.
  timeval tv{};
  tv.tv_sec = 5;
  if (setsockopt(mnl_socket_get_fd(s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
    return DIMCTL_ERRNO("{}: SO_RCVTIMEO", what);
  }
  return sock;
}

Result<void> NetlinkSocket::transact(const nlmsghdr* req, std::string_view what,
                                     const std::function<Result<void>(const nlmsghdr*)>& on_msg) {
  const bool dump = (req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  const uint32_t seq = req->nlmsg_seq;
  count_netlink_request(family_);
  if (mnl_socket_sendto(sock_.get(), req, req->nlmsg_len) < 0) {
    return DIMCTL_ERRNO("{}: send", what);
  }
  std::optional<Error> first;
  bool done = false;
  while (!done) {
    const ssize_t n = mnl_socket_recvfrom(sock_.get(), rx_.data(), rx_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return DIMCTL_FAIL(ETIMEDOUT, "{}: no reply from the kernel", what);
      }
      return DIMCTL_ERRNO("{}: receive", what);
    }
    auto r = for_each_msg(rx_.data(), static_cast<size_t>(n), what,
                          [&](const nlmsghdr* nlh) -> Result<void> {
                            if (nlh->nlmsg_seq != seq || nlh->nlmsg_pid != portid()) {
                              return ok();  // a late reply to an earlier, abandoned request
                            }
                            switch (nlh->nlmsg_type) {
                              case NLMSG_NOOP:
                                return ok();
                              case NLMSG_OVERRUN:
                                if (!first) first = DIMCTL_ERR(ENOBUFS, "{}: overrun", what);
                                done = true;
                                return ok();
                              case NLMSG_ERROR: {
                                auto e = nl::decode_error(nlh, what);
                                if (!e && !first) first = std::move(e).error();
                                if (!e || !dump) done = true;
                                return ok();
                              }
                              case NLMSG_DONE: {
                                auto e = nl::decode_error(nlh, what);
                                if (!e && !first) first = std::move(e).error();
                                done = true;
                                return ok();
                              }
                              default:
                                if (!first) {
                                  auto m = on_msg(nlh);
                                  if (!m) first = std::move(m).error();
                                }
                                return ok();
                            }
                          });
    if (!r) return r;  // broken framing: the rest of the datagram cannot be trusted
  }
  if (first) return fail(std::move(*first));
  return ok();
}

Result<void> NetlinkSocket::join_group(uint32_t group) {
  int g = static_cast<int>(group);
  if (mnl_socket_setsockopt(sock_.get(), NETLINK_ADD_MEMBERSHIP, &g, sizeof g) < 0) {
    return DIMCTL_ERRNO("join netlink multicast group {}", group);
  }
  return ok();
}

Result<void> NetlinkSocket::set_nonblocking() {
  const int flags = fcntl(fd(), F_GETFL);
  if (flags < 0 || fcntl(fd(), F_SETFL, flags | O_NONBLOCK) < 0) {
    return DIMCTL_ERRNO("netlink socket O_NONBLOCK");
  }
  return ok();
}

Result<std::vector<char>> NetlinkSocket::recv_nonblocking() {
  for (;;) {
    const ssize_t n = recv(fd(), rx_.data(), rx_.size(), MSG_DONTWAIT);
    if (n >= 0) return std::vector<char>(rx_.begin(), rx_.begin() + n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::vector<char>{};
    return DIMCTL_ERRNO("netlink receive");
  }
}

}  // namespace dimctl::actuators
