// A problem found in a human-written file, with where it is: what the config and workload
// loaders collect (every problem, not only the first) and print as
// "source:line:column: key.path: reason".
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace dimctl {

// A position in a file (1-based, 0 = unknown).
struct SourceMark {
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  std::string source;
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
  std::string path;  // key path, e.g. devices[2].profiles.max ("" for the document)
  std::string reason;

  std::string to_string() const {
    std::string where = source;
    if (line > 0) where += fmt::format(":{}:{}", line, column);
    if (path.empty()) return fmt::format("{}: {}", where, reason);
    return fmt::format("{}: {}: {}", where, path, reason);
  }
};

// File order; problems at the same position keep the order they were found in.
inline void sort_by_position(std::vector<Diagnostic>& diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
}

// One to_string() per line, as a Result's error context.
inline std::string diagnostics_text(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (size_t i = 0; i < diags.size(); ++i) {
    if (i) out += '\n';
    out += diags[i].to_string();
  }
  return out;
}

}  // namespace dimctl
