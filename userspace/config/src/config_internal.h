// Helpers of the config library shared between its translation units and its tests.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/suggest.h"

namespace dimctl::config {

// Shared with the simulator's workload loader (dimctl/common/suggest.h).
using dimctl::edit_distance;
using dimctl::suggest;
// Whether `pattern` is a usable fnmatch(3) glob for device names of at most `max_name_len`
// characters (0 = no limit). fnmatch itself accepts anything, so a typo such as "eth[0" would
// silently match nothing; we refuse it instead and say why in `why`.
bool validate_glob(std::string_view pattern, size_t max_name_len, std::string& why);

}  // namespace dimctl::config
