// The config's words for its values: the tables of dimctl/model/names.h (one spelling per value
// everywhere), plus what only the config has (static's index, compare).
#include <fmt/format.h>

#include "dimctl/config/config.h"
#include "dimctl/model/names.h"

namespace dimctl::config {

std::string_view mode_name(model::Mode m) {
  return model::kModeNames.name(m);
}

std::string algorithm_name(model::Algorithm a, uint8_t static_index) {
  if (a == model::Algorithm::kStatic)
    return fmt::format("{}:{}", model::kAlgorithmNames.name(a), static_index);
  return std::string(model::kAlgorithmNames.name(a));
}

std::string_view combine_name(model::CombinePolicy c) {
  return model::kCombineNames.name(c);
}

std::string_view compare_name(CompareWith c) {
  return kCompareNames.name(c);
}

std::string_view timer_name(dim::TimerMode t) {
  return model::kTimerModeNames.name(t);
}

std::string_view method_name(model::Method m) {
  return model::kMethodNames.name(m);
}

}  // namespace dimctl::config
