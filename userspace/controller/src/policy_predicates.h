// What a device's policy runs, as the controller's parts ask it: the algorithm or the comparison
// beside it, the profile table, whether the config names the device. Private to
// dimctl::controller (src/, not installed).
#pragma once

#include <cstdint>
#include <optional>

#include "dimctl/seam/policy.h"

namespace dimctl::controller {

// The profile a queue or CQ without DIM asks for: its static profile, or nothing.
inline std::optional<uint8_t> static_wish(const seam::DevicePolicy& p) {
  if (p.algorithm == seam::Algorithm::kStatic && p.mode != seam::Mode::kObserve) {
    return p.static_index;
  }
  return std::nullopt;
}

// Kernel-identical net DIM runs as the algorithm, or beside `model` when the rule compares.
inline bool runs_net_dim(const seam::DevicePolicy& p) {
  return p.mode != seam::Mode::kObserve &&
         (seam::is_net_dim(p.algorithm) || (seam::is_model(p.algorithm) && p.compare));
}

// The cost model runs as the algorithm, or beside net DIM when the rule compares.
inline bool runs_net_model(const seam::DevicePolicy& p) {
  return p.mode != seam::Mode::kObserve &&
         (seam::is_model(p.algorithm) || (seam::is_net_dim(p.algorithm) && p.compare));
}

// The CQE table (and mode) for net-cqe and model-cqe, else EQE; for model, the table of the CQE
// mode the device was found in, which it keeps (CONTROLLER.md, mapping): switching it would change
// the device's timer semantics, which the operator or the driver chose, and some drivers pause
// traffic to switch.
inline bool cqe_table(const seam::DevicePolicy& p, bool found_cqe_mode) {
  return p.algorithm == seam::Algorithm::kNetCqe || p.algorithm == seam::Algorithm::kModelCqe ||
         (p.algorithm == seam::Algorithm::kModel && found_cqe_mode);
}

// RDMA devices have one DIM algorithm; a net-* algorithm from a generic rule means "DIM on".
inline bool has_rdma_policy(const seam::DevicePolicy& p) {
  return p.mode != seam::Mode::kObserve && p.algorithm != seam::Algorithm::kOff &&
         p.algorithm != seam::Algorithm::kStatic;
}
inline bool runs_rdma_dim(const seam::DevicePolicy& p) {
  return has_rdma_policy(p) && (!seam::is_model(p.algorithm) || p.compare);
}
inline bool runs_rdma_model(const seam::DevicePolicy& p) {
  return has_rdma_policy(p) && (seam::is_model(p.algorithm) || p.compare);
}

inline bool allowlisted(const seam::DevicePolicy& p) {
  return !p.rule.empty();
}

}  // namespace dimctl::controller
