// The config's words for its values and durations, shared with the CLI (check-config, record)
// and the reload diff.
#include <fmt/format.h>

#include <charconv>

#include "dimctl/config/config.h"

namespace dimctl::config {

using model::Algorithm;
using model::CombinePolicy;
using model::Mode;

std::optional<int64_t> parse_duration(std::string_view text) {
  if (text == "0") return 0;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1'000;
  } else if (unit == "ms") {
    scale = 1'000'000;
  } else if (unit == "s") {
    scale = 1'000'000'000;
  } else {
    return std::nullopt;
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || ptr != text.data() + digits) return std::nullopt;
  if (value > INT64_MAX / scale) return std::nullopt;
  return value * scale;
}

std::string format_duration(int64_t ns) {
  if (ns == 0) return "0";
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  if (ns % 1'000 == 0) return fmt::format("{}us", ns / 1'000);
  return fmt::format("{}ns", ns);
}

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
