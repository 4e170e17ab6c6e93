// The scalar-kind table itself: the loaders' tests meet only a few of its rows, and a row that
// drifted from YAML 1.2's core schema would make a loader and its JSON schema disagree.
#include "dimctl/common/yaml_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dimctl::yaml {
namespace {

ScalarKind kind_of(const std::string& value) {
  return scalar_kind(YAML::Load("v: " + value)["v"]);
}

TEST(ScalarKind, FollowsTheYaml12CoreSchema) {
  const struct {
    const char* text;
    ScalarKind kind;
  } kRows[] = {
      {"", ScalarKind::kNull},
      {"~", ScalarKind::kNull},
      {"null", ScalarKind::kNull},
      {"NULL", ScalarKind::kNull},
      {"true", ScalarKind::kBool},
      {"False", ScalarKind::kBool},
      {"TRUE", ScalarKind::kBool},
      {"0", ScalarKind::kInt},
      {"-12", ScalarKind::kInt},
      {"+12", ScalarKind::kInt},
      {"012", ScalarKind::kInt},
      {"0o17", ScalarKind::kInt},
      {"0x1F", ScalarKind::kInt},
      {"1.5", ScalarKind::kFloat},
      {".5", ScalarKind::kFloat},
      {"1e3", ScalarKind::kFloat},
      {"-.inf", ScalarKind::kFloat},
      {".NaN", ScalarKind::kFloat},
      // YAML 1.1 spellings yaml-cpp would take as booleans, nulls or numbers: strings in 1.2.
      {"yes", ScalarKind::kString},
      {"on", ScalarKind::kString},
      {"tRUE", ScalarKind::kString},
      {"nULL", ScalarKind::kString},
      {"1_000", ScalarKind::kString},
      {"0b101", ScalarKind::kString},
      {"20ms", ScalarKind::kString},
      {"1.5.2", ScalarKind::kString},
      // Quoted or tagged: a string whatever it looks like.
      {"\"12\"", ScalarKind::kString},
      {"'true'", ScalarKind::kString},
      {"!!str 12", ScalarKind::kString},
      {"\"\"", ScalarKind::kString},
  };
  for (const auto& row : kRows)
    EXPECT_EQ(kind_name(kind_of(row.text)), kind_name(row.kind)) << "v: " << row.text;
}

TEST(ScalarKind, DescribeNamesKindAndText) {
  EXPECT_EQ(describe(YAML::Load("v: 0x1F")["v"]), "integer '0x1F'");
  EXPECT_EQ(describe(YAML::Load("v: ~")["v"]), "nothing (null)");
  EXPECT_EQ(describe(YAML::Load("v: [1]")["v"]), "a list");
  EXPECT_EQ(describe(YAML::Load("v: {a: 1}")["v"]), "a mapping");
  EXPECT_EQ(describe(YAML::Load("v: on")["v"]), "string 'on'");
}

// The loaders differ in how they write durations (DurationSyntax); which message a bad one gets
// follows from the syntax's fields, not from a copy of the reader per loader.
std::string duration_error(const std::string& value, bool decimals) {
  static constexpr auto kParse = [](std::string_view s) -> std::optional<int64_t> {
    if (s == "5ms") return 5'000'000;
    return std::nullopt;
  };
  const DurationSyntax syntax{kParse, [](int64_t ns) { return std::to_string(ns) + "ns"; },
                              decimals, "us",
                              [](std::string_view s) { return "not one: " + std::string(s); }};
  std::vector<Diagnostic> diags;
  Ctx ctx("t.yaml", diags);
  YAML::Node doc = YAML::Load("d: " + value);
  MapReader r(ctx, doc, mark_of(doc), "", {"d"});
  EXPECT_FALSE(read_duration(ctx, *r.get("d"), 0, 1'000, syntax).has_value()) << value;
  return diags.size() == 1 ? diags[0].to_string() : "";
}

TEST(ReadDuration, MessagesFollowTheSyntax) {
  EXPECT_EQ(duration_error("20", false),
            "t.yaml:1:4: d: '20' has no unit; write e.g. 20us (units: "
            "ns, us, ms, s)");
  // A bare decimal lacks only its unit where durations take decimals, else it is no duration.
  EXPECT_EQ(duration_error("1.5", true),
            "t.yaml:1:4: d: '1.5' has no unit; write e.g. 1.5us "
            "(units: ns, us, ms, s)");
  EXPECT_EQ(duration_error("1.5", false), "t.yaml:1:4: d: not one: 1.5");
  EXPECT_EQ(duration_error("-5ms", true), "t.yaml:1:4: d: '-5ms': durations cannot be negative");
  EXPECT_EQ(duration_error("5ms", true), "t.yaml:1:4: d: 5ms is out of range 0ns..1000ns");
  EXPECT_EQ(duration_error("", true),
            "t.yaml:1:1: d: expected a duration such as 20ms, got "
            "nothing (null)");
}

}  // namespace
}  // namespace dimctl::yaml
