// The config's words for its values, shared with the CLI (check-config) and the reload diff.
#include <fmt/format.h>

#include "dimctl/config/config.h"

namespace dimctl::config {

using model::Algorithm;
using model::CombinePolicy;
using model::Mode;

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::kObserve:
      return "observe";
    case Mode::kShadow:
      return "shadow";
    case Mode::kEnforce:
      return "enforce";
  }
  return "?";
}

std::string algorithm_name(Algorithm a, uint8_t static_index) {
  switch (a) {
    case Algorithm::kNetEqe:
      return "net-eqe";
    case Algorithm::kNetCqe:
      return "net-cqe";
    case Algorithm::kRdma:
      return "rdma";
    case Algorithm::kStatic:
      return fmt::format("static:{}", static_index);
    case Algorithm::kOff:
      return "off";
    case Algorithm::kModel:
      return "model";
    case Algorithm::kModelCqe:
      return "model-cqe";
  }
  return "?";
}

std::string_view compare_name(CompareWith c) {
  return c == CompareWith::kDim ? "dim" : "model";
}

std::string_view timer_name(dim::TimerMode t) {
  switch (t) {
    case dim::TimerMode::kRateLimit:
      return "rate-limit";
    case dim::TimerMode::kIdleGap:
      return "idle-gap";
    case dim::TimerMode::kAbsolute:
      return "absolute";
  }
  return "?";
}

std::string_view combine_name(CombinePolicy c) {
  switch (c) {
    case CombinePolicy::kBusiestQueue:
      return "busiest-queue";
    case CombinePolicy::kMaxProfile:
      return "max";
    case CombinePolicy::kMinProfile:
      return "min";
  }
  return "?";
}

}  // namespace dimctl::config
