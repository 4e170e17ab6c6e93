// VerbsCqModerator: CQ interrupt moderation for completion queues an application owns, through
// libibverbs (ibv_modify_cq with IBV_CQ_ATTR_MODERATE: cq_count completions / cq_period µs).
// A library class: an application embeds it next to the CQs it creates and drives it from its
// own DIM (dimctl's dim::RdmaDim, for instance).
//
// SCOPE LIMIT: a process can only moderate CQs it created through its own verbs context.
// Kernel ULP CQs (NVMe-oF, iSER, SRP, NFS/RDMA, SMC-R, RDS ...) — the ones dimctl's rdma_core
// tracepoints observe — cannot be moderated from user space; their only knob is the
// device-level kernel DIM switch (RdmaNetlink), which affects CQs created after the change.
//
// Capabilities are checked first (ibv_query_device_ex: cq_mod_caps.max_cq_count and
// max_cq_period; both non-zero = supported). When they are zero (rxe, siw, most soft
// providers) moderate() fails with "moderation not supported by DEV (cq_mod_caps zero)"
// without calling into the driver. Values above the caps are refused (moderate) or clamped
// (moderate_clamped). ibv_modify_cq returns a positive errno, which becomes Error::code().
//
// The moderator does not own the CQ or the context; both must outlive it.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::actuators {

class VerbsCqModerator {
 public:
  struct Caps {
    uint16_t max_count = 0;      // cq_mod_caps.max_cq_count
    uint16_t max_period_us = 0;  // cq_mod_caps.max_cq_period
    bool supported() const { return max_count != 0 && max_period_us != 0; }
  };
  struct Moderation {
    uint16_t count = 0;
    uint16_t period_us = 0;
  };

  // Queries the device's CQ moderation capabilities. Fails when cq is null, does not belong to
  // ctx, or the query fails; unsupported moderation is not an error here (see check()).
  static Result<VerbsCqModerator> create(ibv_context* ctx, ibv_cq* cq);

  const Caps& caps() const { return caps_; }
  const std::string& device() const { return device_; }

  // ok() when the device can moderate CQs; otherwise the error moderate() would return.
  Result<void> check() const;
  // Applies {count, period_us}; refuses values above the caps (nothing sent to the driver).
  Result<void> moderate(uint16_t count, uint16_t period_us);
  // Clamps into the caps, applies and returns what was applied.
  Result<Moderation> moderate_clamped(uint16_t count, uint16_t period_us);

 private:
  VerbsCqModerator(ibv_cq* cq, std::string device, Caps caps)
      : cq_(cq), device_(std::move(device)), caps_(caps) {}
  Result<void> apply(uint16_t count, uint16_t period_us);

  ibv_cq* cq_;
  std::string device_;
  Caps caps_;
};

// RAII verbs context (ibv_open_device by name). Unknown device: Error with code ENODEV.
class VerbsContext {
 public:
  static Result<std::vector<std::string>> device_names();
  static Result<VerbsContext> open(const std::string& name);
  ibv_context* get() const { return ctx_.get(); }
  const std::string& name() const { return name_; }

 private:
  struct Closer {
    void operator()(ibv_context* c) const { ibv_close_device(c); }
  };
  VerbsContext(ibv_context* c, std::string name) : ctx_(c), name_(std::move(name)) {}
  std::unique_ptr<ibv_context, Closer> ctx_;
  std::string name_;
};

// RAII completion queue (ibv_create_cq without a channel; no PD needed). Must not outlive its
// context.
class VerbsCq {
 public:
  static Result<VerbsCq> create(const VerbsContext& ctx, int cqe);
  ibv_cq* get() const { return cq_.get(); }

 private:
  struct Destroyer {
    void operator()(ibv_cq* c) const { ibv_destroy_cq(c); }
  };
  explicit VerbsCq(ibv_cq* c) : cq_(c) {}
  std::unique_ptr<ibv_cq, Destroyer> cq_;
};

}  // namespace dimctl::actuators
