// OriginalsStore: records a device's original settings before dimctl first changes it, so they
// can be restored on exit, by `dimctl restore` after a crash, or at the next start. record_*
// must be durable (persisted) before it returns OK; the controller writes nothing otherwise.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/coalesce.h"
#include "dimctl/seam/napi_actuator.h"

namespace dimctl::seam {

class OriginalsStore {
 public:
  virtual ~OriginalsStore() = default;
  // Idempotent: a device already recorded keeps its first (true original) value.
  virtual Result<void> record_net(const std::string& dev, const Coalesce& original) = 0;
  virtual Result<void> record_net_queue(const std::string& dev, uint32_t queue,
                                        const Coalesce& original) = 0;
  virtual Result<void> record_rdma_dim(const std::string& ibdev, bool original) = 0;
  // A NAPI's software moderation, keyed by its device's name and its NAPI id (ids are not
  // reused; a NAPI re-created by the driver gets a new one and is recorded afresh).
  virtual Result<void> record_napi(const std::string& dev, uint32_t napi_id,
                                   const NapiConfig& original) = 0;
  // Drops the records of a device whose originals were put back (durably, like record_*), so
  // neither exit nor `dimctl restore` writes it again and the next first write records afresh.
  virtual Result<void> forget_net(const std::string& dev) = 0;  // device-wide and its queues
  virtual Result<void> forget_rdma(const std::string& ibdev) = 0;
  virtual Result<void> forget_napi(const std::string& dev, uint32_t napi_id) = 0;
  // Devices were renamed, and a restore must find them under their new names: moves every net
  // record (device-wide, per queue and per NAPI) of each (from, to) pair to `to`, all pairs at once
  // and durably (a swap of two names is two pairs), replacing what a `to` had unless it moves too.
  // A `from` with nothing recorded changes nothing.
  virtual Result<void> rename_net(
      const std::vector<std::pair<std::string, std::string>>& renames) = 0;
};

}  // namespace dimctl::seam
