// NullOriginalsStore: an OriginalsStore for a controller whose devices are not real (the
// simulator's, a trace replay's): nothing it writes needs putting back, so every record and
// forget succeeds and keeps nothing.
#pragma once

#include "dimctl/seam/originals_store.h"

namespace dimctl::seam {

class NullOriginalsStore final : public OriginalsStore {
 public:
  Result<void> record_net(const std::string&, const Coalesce&) override { return ok(); }
  Result<void> record_net_queue(const std::string&, uint32_t, const Coalesce&) override {
    return ok();
  }
  Result<void> record_rdma_dim(const std::string&, bool) override { return ok(); }
  Result<void> record_napi(const std::string&, uint32_t, const NapiConfig&) override {
    return ok();
  }
  Result<void> forget_net(const std::string&) override { return ok(); }
  Result<void> forget_rdma(const std::string&) override { return ok(); }
  Result<void> forget_napi(const std::string&, uint32_t) override { return ok(); }
  Result<void> rename_net(const std::vector<std::pair<std::string, std::string>>&) override {
    return ok();
  }
};

}  // namespace dimctl::seam
