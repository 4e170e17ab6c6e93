// Durations as people write them, the one grammar of every place dimctl reads or prints one:
// the daemon's config, the simulator's workload files, `dimctl sim --policy NAME@PERIOD` and
// every command-line duration flag, so that what one accepts the others accept too.
//
//   duration := "0" | number unit
//   number   := digits ["." [digits]] | "." digits          no sign, no exponent
//   unit     := "ns" | "us" | "ms" | "s"
//
// The value must come to a whole number of nanoseconds that fits int64_t: 1.5ms, .5us and 250ns
// are durations, 1.5ns and 1.0000001ns are not. Decimals are read exactly (no floating point),
// so nothing is rounded into a value the writer did not mean. Library dimctl::vocab.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dimctl {

// Which rule a text broke, so that each reader can say it in its own words around the one text
// duration_error() gives.
enum class DurationError : uint8_t {
  kSyntax,    // no number and unit at all: "20min", "fast", "", "1e3us"
  kNoUnit,    // a bare number: "20", "1.5" (only the unit is missing)
  kNegative,  // "-5ms"
  kFraction,  // not a whole number of nanoseconds: "1.5ns", "0.0001us"
  kOverflow,  // more nanoseconds than int64_t holds (about 292 years)
};

// The nanoseconds `text` stands for; nullopt, with the reason in `why` when given, if it is not
// a duration.
std::optional<int64_t> parse_duration(std::string_view text, DurationError* why = nullptr);

// Why `text` is not a duration, quoting it:
//   kSyntax    '20min' is not a duration (a number and one of ns, us, ms, s, e.g. 20ms)
//   kNoUnit    '20' has no unit; write e.g. 20ms (units: ns, us, ms, s)
//   kNegative  '-5ms': durations cannot be negative
//   kFraction  '1.5ns' is not a whole number of nanoseconds
//   kOverflow  '99999999999s' is too long (durations end at about 292 years)
// `unit` is the unit the reader's values are usually written in ("ms" for the daemon's periods,
// "us" for simulated service times): it completes a bare number and picks the example.
std::string duration_error(std::string_view text, DurationError why, std::string_view unit = "ms");

// For flags that took a bare number of seconds before they took durations (`dimctl list
// --interval 2`, `dimctl top --interval 0.5`): a bare number is that many seconds, anything else
// a duration.
std::optional<int64_t> parse_duration_or_seconds(std::string_view text,
                                                 DurationError* why = nullptr);

// The exact spelling parse_duration() reads back, short for the values people write: the
// largest unit the value is at least one of in which three decimals are exact (1.5ms, 83.9us,
// 20ms, 10s, 1000.001us), below a microsecond nanoseconds (999ns); "0" for zero; a negative
// value with a leading '-'.
std::string format_duration(int64_t ns);

}  // namespace dimctl
