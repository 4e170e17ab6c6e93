// Device-name globs, one meaning everywhere: fnmatch(3) without flags, anchored at both ends
// (config selectors, the skb byte counter's device filter).
#pragma once

#include <fnmatch.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dimctl {

inline bool matches_any_glob(const std::vector<std::string>& globs, const std::string& name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return ::fnmatch(g.c_str(), name.c_str(), 0) == 0;
  });
}

}  // namespace dimctl
