// RdmaNetlink: seam::RdmaDimSwitch over NETLINK_RDMA (client RDMA_NL_NLDEV): the per-IB-device
// kernel RDMA DIM switch (RDMA_NLDEV_ATTR_DEV_DIM), i.e. what `rdma dev set DEV
// adaptive-moderation on|off` sends.
//
// Scope: the switch is read by ib_core when a kernel CQ is allocated, so it only affects kernel
// ULP CQs (NVMe-oF, iSER, SRP, NFS/RDMA ...) created after the change; existing CQs keep their
// DIM state until they are re-created. User-space verbs CQs are never affected.
//
// Without ib_core the kernel has no NETLINK_RDMA protocol; that simply means "no RDMA devices":
// list() returns an empty list and available() is false. SET needs CAP_NET_ADMIN.
// Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dimctl/actuators/netlink_socket.h"
#include "dimctl/actuators/nl_codec.h"
#include "dimctl/seam/rdma_actuator.h"

namespace dimctl::actuators {

class RdmaNetlink final : public seam::RdmaDimSwitch {
 public:
  // Never fails: when NETLINK_RDMA cannot be opened the reason is kept (unavailable_reason()).
  RdmaNetlink();

  // False when this kernel has no NETLINK_RDMA (ib_core not loaded).
  bool available() const { return sock_.has_value(); }
  // Why NETLINK_RDMA could not be opened ("" when available()).
  std::string unavailable_reason() const { return open_error_ ? open_error_->context() : ""; }

  Result<std::vector<seam::RdmaDevice>> list() override;
  Result<bool> get_dim(const std::string& ibdev) override;
  Result<bool> set_dim(const std::string& ibdev, bool enabled) override;

 private:
  Result<std::vector<nl::RdmaDevMsg>> dump();
  Result<nl::RdmaDevMsg> find(const std::string& ibdev);

  std::optional<NetlinkSocket> sock_;
  std::optional<Error> open_error_;
};

}  // namespace dimctl::actuators
