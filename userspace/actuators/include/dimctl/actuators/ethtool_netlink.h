// EthtoolNetlink: seam::NetActuator over the kernel's ethtool generic netlink family (libmnl),
// plus the legacy SIOCETHTOOL ETHTOOL_PERQUEUE ioctl for per-queue coalescing.
//
// - get(): ETHTOOL_MSG_COALESCE_GET by device name; attributes absent from the reply are
//   nullopt (the driver does not support them).
// - set(): refuses, before sending anything, any field of the request that get() does not
//   report; sends only the present fields (the kernel does get-modify-set), then reads back.
//   Kernel errors carry the extack message ("cannot modify an unsupported parameter").
// - get_queue()/set_queue(): ETHTOOL_PERQUEUE + ETHTOOL_GCOALESCE/SCOALESCE for one queue. The
//   ioctl carries no "supported" information, so the fields reported are those the device-wide
//   netlink GET reports; CQE mode cannot be expressed and is refused.
// - drain_changes(): a second socket subscribed to the "monitor" multicast group (non-blocking)
//   yields every ETHTOOL_MSG_COALESCE_NTF (ours included, and ioctl changes by anyone).
//
// Needs CAP_NET_ADMIN (in the device's network namespace) to set; get works unprivileged.
// Sockets are bound to the network namespace of the thread that calls open().
// Not thread-safe: use from one thread (the controller's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dimctl/actuators/netlink_socket.h"
#include "dimctl/common/fd.h"
#include "dimctl/seam/net_actuator.h"

namespace dimctl::actuators {

class EthtoolNetlink final : public seam::NetActuator {
 public:
  // Resolves the "ethtool" family and its "monitor" group, opens both sockets and the ioctl
  // socket.
  static Result<std::unique_ptr<EthtoolNetlink>> open();

  Result<seam::Coalesce> get(const std::string& dev) override;
  Result<seam::Coalesce> set(const std::string& dev, const seam::Coalesce& req) override;
  bool supports_per_queue(const std::string& dev) override;
  Result<seam::Coalesce> get_queue(const std::string& dev, uint32_t queue) override;
  Result<seam::Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                   const seam::Coalesce& req) override;
  std::vector<seam::CoalesceChange> drain_changes() override;

  uint16_t family_id() const { return family_; }
  // Notifications the kernel dropped because the monitor socket overflowed (ENOBUFS), and
  // notifications that failed validation. Both are logged.
  uint64_t lost_notifications() const { return lost_; }
  uint64_t bad_notifications() const { return bad_; }

 private:
  EthtoolNetlink(NetlinkSocket req, NetlinkSocket mon, uint16_t family, Fd ioctl_fd)
      : req_(std::move(req)), mon_(std::move(mon)), family_(family), ioctl_(std::move(ioctl_fd)) {}

  NetlinkSocket req_;
  NetlinkSocket mon_;
  uint16_t family_;
  Fd ioctl_;
  uint64_t lost_ = 0;
  uint64_t bad_ = 0;
};

// Largest queue index ETHTOOL_PERQUEUE can address (MAX_NUM_QUEUE - 1).
inline constexpr uint32_t kMaxPerQueueIndex = 4095;

}  // namespace dimctl::actuators
