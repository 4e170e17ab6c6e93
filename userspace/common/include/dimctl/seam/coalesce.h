// Coalesce: the ethtool interrupt-coalescing parameters dimctl reads and writes.
// std::nullopt means "absent": in a GET result, not reported by the driver (unsupported); in a
// SET request, leave unchanged (the kernel does get-modify-set).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dimctl::seam {

struct Coalesce {
  std::optional<uint32_t> rx_usecs;
  std::optional<uint32_t> rx_max_frames;
  std::optional<uint32_t> tx_usecs;
  std::optional<uint32_t> tx_max_frames;
  std::optional<bool> use_adaptive_rx;
  std::optional<bool> use_adaptive_tx;
  std::optional<bool> use_cqe_mode_rx;
  std::optional<bool> use_cqe_mode_tx;

  bool operator==(const Coalesce&) const = default;
  bool empty() const { return *this == Coalesce{}; }
};

// A coalesce change reported by the kernel (ETHTOOL_MSG_COALESCE_NTF), by anyone.
struct CoalesceChange {
  std::string device;
  Coalesce values;
};

}  // namespace dimctl::seam
