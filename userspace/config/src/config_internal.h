// Helpers of the config library shared between its translation units and its tests.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dimctl::config {

// Edit distance with transpositions (optimal string alignment).
size_t edit_distance(std::string_view a, std::string_view b);
// The closest candidate within a typo's reach of `word`, if any.
std::optional<std::string> suggest(std::string_view word,
                                   const std::vector<std::string>& candidates);
// Whether `pattern` is a usable fnmatch(3) glob for device names of at most `max_name_len`
// characters (0 = no limit). fnmatch itself accepts anything, so a typo such as "eth[0" would
// silently match nothing; we refuse it instead and say why in `why`.
bool validate_glob(std::string_view pattern, size_t max_name_len, std::string& why);

}  // namespace dimctl::config
