// OriginalsStore: records a device's original settings before dimctl first changes it, so they
// can be restored on exit, by `dimctl restore` after a crash, or at the next start. record_*
// must be durable (persisted) before it returns OK; the controller writes nothing otherwise.
#pragma once

#include <string>

#include "dimctl/common/result.h"
#include "dimctl/model/coalesce.h"

namespace dimctl::model {

class OriginalsStore {
 public:
  virtual ~OriginalsStore() = default;
  // Idempotent: a device already recorded keeps its first (true original) value.
  virtual Result<void> record_net(const std::string& dev, const Coalesce& original) = 0;
  virtual Result<void> record_net_queue(const std::string& dev, uint32_t queue,
                                        const Coalesce& original) = 0;
  virtual Result<void> record_rdma_dim(const std::string& ibdev, bool original) = 0;
  // Drops the records of a device whose originals were put back (durably, like record_*), so
  // neither exit nor `dimctl restore` writes it again and the next first write records afresh.
  virtual Result<void> forget_net(const std::string& dev) = 0;  // device-wide and its queues
  virtual Result<void> forget_rdma(const std::string& ibdev) = 0;
};

}  // namespace dimctl::model
