// NetActuator: reads and writes NIC interrupt coalescing (ethtool netlink; per queue through
// the ETHTOOL_PERQUEUE ioctl where the driver implements it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/coalesce.h"

namespace dimctl::seam {

class NetActuator {
 public:
  virtual ~NetActuator() = default;
  // Device-wide settings; fields the driver does not report are nullopt.
  virtual Result<Coalesce> get(const std::string& dev) = 0;
  // Writes the present fields of `req` only (never a field get() did not report), then reads
  // back and returns what the device actually holds (drivers round and clamp).
  virtual Result<Coalesce> set(const std::string& dev, const Coalesce& req) = 0;
  // Whether per-queue coalescing (ETHTOOL_PERQUEUE) works on this device.
  virtual bool supports_per_queue(const std::string& dev) = 0;
  virtual Result<Coalesce> get_queue(const std::string& dev, uint32_t queue) = 0;
  virtual Result<Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                     const Coalesce& req) = 0;
  // Coalesce changes notified since the last call (ours included), without blocking.
  virtual std::vector<CoalesceChange> drain_changes() = 0;
};

}  // namespace dimctl::seam
