// Device-name globs as the config accepts them: fnmatch(3) itself takes any string, so a typo
// such as "eth[0" would silently match nothing; it is refused here instead, with the reason.
#include <fmt/format.h>

#include "config_internal.h"

namespace dimctl::config {

bool validate_glob(std::string_view p, size_t max_name_len, std::string& why) {
  if (p.empty()) {
    why = "empty pattern";
    return false;
  }
  size_t min_len = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '/' || c == ' ' || c == '\t' || c == '\n') {
      why = "device names cannot contain '/' or whitespace, so it can never match";
      return false;
    }
    if (c == '\\') {
      if (i + 1 == p.size()) {
        why = "trailing backslash";
        return false;
      }
      ++i;
      ++min_len;
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
      if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is a member, not the end
      while (j < p.size() && p[j] != ']') ++j;
      if (j >= p.size()) {
        why = "unterminated '[' (write \\[ for a literal bracket)";
        return false;
      }
      i = j;
      ++min_len;
    } else if (c != '*') {
      ++min_len;
    }
  }
  if (max_name_len > 0 && min_len > max_name_len) {
    why = fmt::format("matches only names longer than {} characters, which cannot exist",
                      max_name_len);
    return false;
  }
  return true;
}

}  // namespace dimctl::config
