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

// Every loader reads durations with the one grammar (dimctl/common/duration.h); the unit it
// names completes a bare number in the message.
std::string duration_error(const std::string& value, std::string_view unit = "us") {
  std::vector<Diagnostic> diags;
  Ctx ctx("t.yaml", diags);
  YAML::Node doc = YAML::Load("d: " + value);
  MapReader r(ctx, doc, mark_of(doc), "", {"d"});
  EXPECT_FALSE(read_duration(ctx, *r.get("d"), 0, 1'000, unit).has_value()) << value;
  return diags.size() == 1 ? diags[0].to_string() : "";
}

TEST(ReadDuration, MessagesFollowTheGrammar) {
  EXPECT_EQ(duration_error("20"),
            "t.yaml:1:4: d: '20' has no unit; write e.g. 20us (units: "
            "ns, us, ms, s)");
  EXPECT_EQ(duration_error("20", "ms"),
            "t.yaml:1:4: d: '20' has no unit; write e.g. 20ms (units: ns, us, ms, s)");
  // A bare decimal lacks only its unit, as a bare integer does: every format takes decimals.
  EXPECT_EQ(duration_error("1.5"),
            "t.yaml:1:4: d: '1.5' has no unit; write e.g. 1.5us "
            "(units: ns, us, ms, s)");
  EXPECT_EQ(duration_error("1.5ns"), "t.yaml:1:4: d: '1.5ns' is not a whole number of nanoseconds");
  EXPECT_EQ(
      duration_error("fast"),
      "t.yaml:1:4: d: 'fast' is not a duration (a number and one of ns, us, ms, s, e.g. 5us)");
  EXPECT_EQ(duration_error("-5ms"), "t.yaml:1:4: d: '-5ms': durations cannot be negative");
  EXPECT_EQ(duration_error("5ms"), "t.yaml:1:4: d: 5ms is out of range 0..1us");
  EXPECT_EQ(duration_error(""),
            "t.yaml:1:1: d: expected a duration such as 20ms, got "
            "nothing (null)");
}

}  // namespace
}  // namespace dimctl::yaml
