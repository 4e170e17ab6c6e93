#include "dimctl/common/duration.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <utility>

namespace dimctl {
namespace {

constexpr std::array<std::pair<std::string_view, int64_t>, 4> kUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
}};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::optional<int64_t> parse_duration(std::string_view text, DurationError* why) {
  auto fail = [why](DurationError e) -> std::optional<int64_t> {
    if (why) *why = e;
    return std::nullopt;
  };
  if (text == "0") return 0;
  if (!text.empty() && text[0] == '-') return fail(DurationError::kNegative);
  size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  const std::string_view whole = text.substr(0, i);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const size_t from = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    fraction = text.substr(from, i - from);
  }
  if (whole.empty() && fraction.empty()) return fail(DurationError::kSyntax);
  const std::string_view unit = text.substr(i);
  if (unit.empty()) return fail(DurationError::kNoUnit);
  int64_t scale = 0;
  for (const auto& [name, ns] : kUnits)
    if (unit == name) scale = ns;
  if (scale == 0) return fail(DurationError::kSyntax);

  // Integers, not doubles: "1.1us" is 1100 ns exactly, and "1.0000001ns" is refused rather than
  // rounded to 1 ns.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t n = 0;
  for (char c : whole) {
    if (n > (kMax - (c - '0')) / 10) return fail(DurationError::kOverflow);
    n = n * 10 + (c - '0');
  }
  if (n > kMax / scale) return fail(DurationError::kOverflow);
  n *= scale;
  // The fraction's digits down to nanoseconds; any below them must be zeros.
  int64_t place = scale;
  int64_t part = 0;
  for (char c : fraction) {
    place /= 10;
    if (place == 0) {
      if (c != '0') return fail(DurationError::kFraction);
      continue;
    }
    part += (c - '0') * place;
  }
  if (n > kMax - part) return fail(DurationError::kOverflow);
  return n + part;
}

std::string duration_error(std::string_view text, DurationError why, std::string_view unit) {
  switch (why) {
    case DurationError::kNoUnit:
      return fmt::format("'{}' has no unit; write e.g. {}{} (units: ns, us, ms, s)", text, text,
                         unit);
    case DurationError::kNegative:
      return fmt::format("'{}': durations cannot be negative", text);
    case DurationError::kFraction:
      return fmt::format("'{}' is not a whole number of nanoseconds", text);
    case DurationError::kOverflow:
      return fmt::format("'{}' is too long (durations end at about 292 years)", text);
    case DurationError::kSyntax:
      break;
  }
  // An example in the reader's usual unit, of the size its values usually have.
  std::string_view example = unit == "s"    ? "1s"
                             : unit == "us" ? "5us"
                             : unit == "ns" ? "250ns"
                                            : "20ms";
  return fmt::format("'{}' is not a duration (a number and one of ns, us, ms, s, e.g. {})", text,
                     example);
}

std::optional<int64_t> parse_duration_or_seconds(std::string_view text, DurationError* why) {
  DurationError e = DurationError::kSyntax;
  if (auto v = parse_duration(text, &e)) return v;
  if (e == DurationError::kNoUnit) return parse_duration(std::string(text) + "s", why);
  if (why) *why = e;
  return std::nullopt;
}

std::string format_duration(int64_t ns) {
  if (ns == 0) return "0";
  // The magnitude as unsigned, so that INT64_MIN has one too.
  const uint64_t v = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const char* sign = ns < 0 ? "-" : "";
  for (size_t u = kUnits.size() - 1; u > 0; --u) {
    const auto [name, scale_ns] = kUnits[u];
    const auto scale = static_cast<uint64_t>(scale_ns);
    if (v >= scale && v % (scale / 1000) == 0) {
      // Three decimals, trailing zeros trimmed: 1500000 -> 1.5ms.
      std::string s = fmt::format("{}{}.{:03}", sign, v / scale, (v % scale) / (scale / 1000));
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
      return s + std::string(name);
    }
  }
  return fmt::format("{}{}ns", sign, v);
}

}  // namespace dimctl
