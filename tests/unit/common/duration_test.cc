// The one duration grammar (dimctl/common/duration.h): what the config, workload files,
// `--policy NAME@PERIOD` and the CLI's flags all accept, refuse and print. The readers' own tests
// (tests/unit/config, tests/unit/sim) check that each of them goes through it.
#include "dimctl/common/duration.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace dimctl {
namespace {

std::optional<DurationError> error_of(const std::string& text) {
  DurationError why = DurationError::kSyntax;
  if (parse_duration(text, &why)) return std::nullopt;
  return why;
}

TEST(Duration, AcceptsIntegersAndDecimalsOfEveryUnit) {
  EXPECT_EQ(parse_duration("0"), 0);
  EXPECT_EQ(parse_duration("15ns"), 15);
  EXPECT_EQ(parse_duration("250ns"), 250);
  EXPECT_EQ(parse_duration("15us"), 15'000);
  EXPECT_EQ(parse_duration("5us"), 5'000);
  EXPECT_EQ(parse_duration("1.5us"), 1'500);
  EXPECT_EQ(parse_duration(".5ms"), 500'000);
  EXPECT_EQ(parse_duration("5.ms"), 5'000'000);
  EXPECT_EQ(parse_duration("1.5ms"), 1'500'000);
  EXPECT_EQ(parse_duration("20ms"), 20'000'000);
  EXPECT_EQ(parse_duration("3s"), 3'000'000'000);
  EXPECT_EQ(parse_duration("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration("0.001us"), 1);
  EXPECT_EQ(parse_duration("0ms"), 0);
  // Exact, not through a double: 1.1 has no exact binary form, 1.1us is still 1100 ns.
  EXPECT_EQ(parse_duration("1.1us"), 1'100);
  EXPECT_EQ(parse_duration("9007199254740993ns"), int64_t{9007199254740993});
  // Zeros below a nanosecond change nothing.
  EXPECT_EQ(parse_duration("1.5000000000s"), 1'500'000'000);
  EXPECT_EQ(parse_duration("1.000ns"), 1);
  EXPECT_EQ(parse_duration("9223372036854775807ns"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_duration("9223372036.854775807s"), std::numeric_limits<int64_t>::max());
}

TEST(Duration, RefusesEverythingElseAndSaysWhy) {
  for (const char* bad : {"", "ms", "us", ".us", "20 ms", "5 us", "20m", "20min", "20MS", "5usec",
                          "1..5us", "1e3us", "+5ms", "fast", "0x10ms"})
    EXPECT_EQ(error_of(bad), DurationError::kSyntax) << bad;
  for (const char* bad : {"20", "5", "1.5", "00", ".5"})
    EXPECT_EQ(error_of(bad), DurationError::kNoUnit) << bad;
  for (const char* bad : {"-1ms", "-5us", "-0", "-5"})
    EXPECT_EQ(error_of(bad), DurationError::kNegative) << bad;
  for (const char* bad : {"1.5ns", "0.0001us", "1.0000001ns", "0.0000000001s"})
    EXPECT_EQ(error_of(bad), DurationError::kFraction) << bad;
  for (const char* bad : {"99999999999s", "9223372036854775808ns", "9223372036.854775808s",
                          "99999999999999999999999ns", "9223372037s"})
    EXPECT_EQ(error_of(bad), DurationError::kOverflow) << bad;
  EXPECT_FALSE(parse_duration("1.5ns").has_value());
  EXPECT_FALSE(parse_duration("1.0000001ns").has_value());
}

TEST(Duration, ErrorTexts) {
  EXPECT_EQ(duration_error("20min", DurationError::kSyntax),
            "'20min' is not a duration (a number and one of ns, us, ms, s, e.g. 20ms)");
  EXPECT_EQ(duration_error("100msec", DurationError::kSyntax, "us"),
            "'100msec' is not a duration (a number and one of ns, us, ms, s, e.g. 5us)");
  EXPECT_EQ(duration_error("20", DurationError::kNoUnit),
            "'20' has no unit; write e.g. 20ms (units: ns, us, ms, s)");
  EXPECT_EQ(duration_error("1.5", DurationError::kNoUnit, "us"),
            "'1.5' has no unit; write e.g. 1.5us (units: ns, us, ms, s)");
  EXPECT_EQ(duration_error("-5ms", DurationError::kNegative),
            "'-5ms': durations cannot be negative");
  EXPECT_EQ(duration_error("1.0000001ns", DurationError::kFraction),
            "'1.0000001ns' is not a whole number of nanoseconds");
  EXPECT_EQ(duration_error("99999999999s", DurationError::kOverflow),
            "'99999999999s' is too long (durations end at about 292 years)");
}

TEST(Duration, BareNumbersAreSecondsWhereFlagsTookSeconds) {
  EXPECT_EQ(parse_duration_or_seconds("2"), 2'000'000'000);
  EXPECT_EQ(parse_duration_or_seconds("0.5"), 500'000'000);
  EXPECT_EQ(parse_duration_or_seconds("0"), 0);
  EXPECT_EQ(parse_duration_or_seconds("250ms"), 250'000'000);
  DurationError why = DurationError::kSyntax;
  EXPECT_FALSE(parse_duration_or_seconds("2x", &why));
  EXPECT_EQ(why, DurationError::kSyntax);
  EXPECT_FALSE(parse_duration_or_seconds("-2", &why));
  EXPECT_EQ(why, DurationError::kNegative);
  EXPECT_FALSE(parse_duration_or_seconds("0.0000000001", &why));
  EXPECT_EQ(why, DurationError::kFraction);
}

TEST(Duration, FormatsTheShortestExactSpellingItReadsBack) {
  EXPECT_EQ(format_duration(0), "0");
  EXPECT_EQ(format_duration(7), "7ns");
  EXPECT_EQ(format_duration(999), "999ns");
  EXPECT_EQ(format_duration(1'500), "1.5us");
  EXPECT_EQ(format_duration(83'900), "83.9us");
  EXPECT_EQ(format_duration(1'000'001), "1000.001us");
  EXPECT_EQ(format_duration(1'500'000), "1.5ms");
  EXPECT_EQ(format_duration(20'000'000), "20ms");
  EXPECT_EQ(format_duration(10'000'000'000), "10s");
  EXPECT_EQ(format_duration(-1'500'000), "-1.5ms");
  for (int64_t ns :
       {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1'000}, int64_t{1'500}, int64_t{83'900},
        int64_t{1'000'001}, int64_t{20'000'000}, int64_t{1'500'000'000}, int64_t{3'600'000'000'000},
        std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(parse_duration(format_duration(ns)), ns) << format_duration(ns);
  }
  EXPECT_EQ(format_duration(std::numeric_limits<int64_t>::min()), "-9223372036854775.808us");
}

}  // namespace
}  // namespace dimctl
