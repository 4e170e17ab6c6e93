// The config's words for its values: the tables of dimctl/seam/names.h (one spelling per value
// everywhere), plus what only the config has (static's index, compare).
#include <fmt/format.h>

#include "dimctl/config/config.h"
#include "dimctl/seam/names.h"

namespace dimctl::config {

std::string_view mode_name(seam::Mode m) {
  return seam::kModeNames.name(m);
}

std::string algorithm_name(seam::Algorithm a, uint8_t static_index) {
  if (a == seam::Algorithm::kStatic)
    return fmt::format("{}:{}", seam::kAlgorithmNames.name(a), static_index);
  return std::string(seam::kAlgorithmNames.name(a));
}

std::string_view combine_name(seam::CombinePolicy c) {
  return seam::kCombineNames.name(c);
}

std::string_view compare_name(CompareWith c) {
  return kCompareNames.name(c);
}

std::string_view timer_name(dim::TimerMode t) {
  return seam::kTimerModeNames.name(t);
}

std::string_view method_name(seam::Method m) {
  return seam::kMethodNames.name(m);
}

}  // namespace dimctl::config
