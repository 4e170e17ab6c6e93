#include "dimctl/trace/rotation.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

namespace dimctl::trace {

std::string rotated_path(const std::string& path, uint32_t n) {
  return n == 0 ? path : fmt::format("{}.{}", path, n);
}

Result<std::vector<std::string>> rotation_set(const std::string& path) {
  auto exists = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
  };
  std::vector<std::string> files;
  for (uint32_t n = 1; exists(rotated_path(path, n)); ++n) files.push_back(rotated_path(path, n));
  std::reverse(files.begin(), files.end());
  if (exists(path)) files.push_back(path);
  if (files.empty())
    return DIMCTL_FAIL(ENOENT, "no trace at {} (nor {})", path, rotated_path(path, 1));
  return files;
}

}  // namespace dimctl::trace
