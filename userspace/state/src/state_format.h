// The state file's format beside JsonOriginalsStore (json_originals_store.h): the limits of its
// names and keys, and the per-field rules shared by recording, describing and restoring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/seam/coalesce.h"
#include "dimctl/seam/napi_actuator.h"

namespace dimctl::state::format {

inline constexpr int kVersion = 1;
inline constexpr size_t kMaxNetName = 15;    // IFNAMSIZ - 1
inline constexpr size_t kMaxIbName = 63;     // IB_DEVICE_NAME_MAX - 1
inline constexpr uint32_t kMaxQueue = 4095;  // ETHTOOL_PERQUEUE (MAX_NUM_QUEUE - 1)

// First value wins per field.
seam::Coalesce merge_first_wins(const seam::Coalesce& existing, const seam::Coalesce& add);
seam::NapiConfig merge_first_wins(const seam::NapiConfig& existing, const seam::NapiConfig& add);

// Fields whose read-back differs from the original. Values under adaptive moderation are not
// compared: the driver's own DIM moves them.
std::vector<std::string> mismatches(const seam::Coalesce& orig, const seam::Coalesce& back);
std::vector<std::string> mismatches(const seam::NapiConfig& orig, const seam::NapiConfig& back);

std::string join(const std::vector<std::string>& v, std::string_view sep);

}  // namespace dimctl::state::format
