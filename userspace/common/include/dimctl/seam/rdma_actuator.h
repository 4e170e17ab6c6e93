// RdmaDimSwitch: the per-IB-device kernel RDMA DIM switch (rdma netlink
// RDMA_NLDEV_ATTR_DEV_DIM, what `rdma dev set DEV adaptive-moderation on|off` sends). It
// affects CQs created after the change only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::seam {

struct RdmaDevice {
  uint32_t index = 0;
  std::string name;
  bool dim_enabled = false;
};

class RdmaDimSwitch {
 public:
  virtual ~RdmaDimSwitch() = default;
  virtual Result<std::vector<RdmaDevice>> list() = 0;
  virtual Result<bool> get_dim(const std::string& ibdev) = 0;
  // Sets the switch, reads it back and returns the read-back value.
  virtual Result<bool> set_dim(const std::string& ibdev, bool enabled) = 0;
};

}  // namespace dimctl::seam
