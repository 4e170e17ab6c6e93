// The rotation set of a trace: FILE.N (oldest) .. FILE.1, FILE (newest), as TraceWriter leaves
// it. Each file is a complete trace on its own (own header, self-contained first frame).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::trace {

// "FILE.n"; n == 0 is FILE itself.
std::string rotated_path(const std::string& path, uint32_t n);

// The files of FILE's rotation set that exist, oldest first: FILE.k .. FILE.1 for the longest
// run FILE.1, FILE.2, ... present, then FILE. ENOENT when none exists.
Result<std::vector<std::string>> rotation_set(const std::string& path);

}  // namespace dimctl::trace
