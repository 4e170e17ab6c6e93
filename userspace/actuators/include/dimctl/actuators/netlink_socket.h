// NetlinkSocket: a thin RAII owner of a libmnl socket with a request/reply loop that validates
// every message and turns kernel errors (with their extack message) into Error.
// Not thread-safe: one socket per thread of use.
#pragma once

#include <libmnl/libmnl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "dimctl/common/netlink_requests.h"
#include "dimctl/common/result.h"

namespace dimctl::actuators {

class NetlinkSocket {
 public:
  // socket(AF_NETLINK, bus) + bind. Requests extended acks (NETLINK_EXT_ACK) and capped acks.
  // Every request sent is counted under `family` (dimctl/common/netlink_requests.h).
  static Result<NetlinkSocket> open(int bus, std::string_view what, NetlinkFamily family);

  NetlinkSocket(NetlinkSocket&&) noexcept = default;
  NetlinkSocket& operator=(NetlinkSocket&&) noexcept = default;

  uint32_t portid() const { return mnl_socket_get_portid(sock_.get()); }
  int fd() const { return mnl_socket_get_fd(sock_.get()); }
  uint32_t next_seq() { return ++seq_; }

  // A buffer large enough for any request this code builds.
  std::vector<char>& request_buffer() { return req_; }

  // Sends `req` (its nlmsg_seq must come from next_seq()) and reads replies until the ACK (or,
  // for an NLM_F_DUMP request, NLMSG_DONE). Every other message of this request is handed to
  // on_msg; the first error (kernel NLMSG_ERROR with extack, malformed framing, on_msg) is
  // returned after the rest of the reply has been drained. `what` names the request in errors.
  Result<void> transact(const nlmsghdr* req, std::string_view what,
                        const std::function<Result<void>(const nlmsghdr*)>& on_msg);

  Result<void> join_group(uint32_t group);
  Result<void> set_nonblocking();
  // One datagram without blocking: the message bytes, an empty vector when nothing is queued.
  // ENOBUFS (the kernel dropped messages for us) is returned as an error with that code.
  Result<std::vector<char>> recv_nonblocking();

 private:
  struct Closer {
    void operator()(mnl_socket* s) const { mnl_socket_close(s); }
  };
  NetlinkSocket(mnl_socket* s, NetlinkFamily family)
      : sock_(s), family_(family), req_(MNL_SOCKET_BUFFER_SIZE), rx_(kRxSize) {}

  static constexpr size_t kRxSize = 64 * 1024;
  std::unique_ptr<mnl_socket, Closer> sock_;
  NetlinkFamily family_;
  uint32_t seq_ = 0;
  std::vector<char> req_;
  std::vector<char> rx_;
};

// Walks the messages of one received datagram, validating their framing. cb gets each message.
Result<void> for_each_msg(const void* data, size_t len, std::string_view what,
                          const std::function<Result<void>(const nlmsghdr*)>& cb);

}  // namespace dimctl::actuators
