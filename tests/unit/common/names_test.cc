// The name tables of the policy vocabulary (dimctl/seam/names.h): every value has one name
// that reads back as itself, in the config's kebab-case, and the former label spellings are
// read (never written).
#include "dimctl/seam/names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace dimctl::seam {
namespace {

template <typename E, size_t N, size_t A>
void expect_round_trip(const NameTable<E, N, A>& table) {
  std::set<std::string_view> seen;
  for (const auto& [value, name] : table.names) {
    EXPECT_TRUE(seen.insert(name).second) << name << " is given twice";
    EXPECT_EQ(table.name(value), name);
    EXPECT_EQ(table.parse(name), value) << name;
    EXPECT_EQ(table.parse_name(name), value) << name;
    // One spelling everywhere: the config's kebab-case.
    EXPECT_EQ(name.find('_'), std::string_view::npos) << name;
  }
  for (const auto& [value, alias] : table.aliases) {
    EXPECT_EQ(table.parse(alias), value) << alias;
    EXPECT_FALSE(table.parse_name(alias)) << alias << " is an alias, not a name";
    EXPECT_NE(table.name(value), alias) << "an alias is never written";
  }
  EXPECT_EQ(table.words().size(), N);
  EXPECT_FALSE(table.parse(""));
}

TEST(Names, EveryTableRoundTrips) {
  expect_round_trip(kModeNames);
  expect_round_trip(kAlgorithmNames);
  expect_round_trip(kCombineNames);
  expect_round_trip(kTimerModeNames);
}

TEST(Names, EveryEnumeratorHasAName) {
  for (Mode m : {Mode::kObserve, Mode::kShadow, Mode::kEnforce})
    EXPECT_NE(kModeNames.name(m), "unknown");
  for (Algorithm a : {Algorithm::kNetEqe, Algorithm::kNetCqe, Algorithm::kRdma, Algorithm::kStatic,
                      Algorithm::kOff, Algorithm::kModel, Algorithm::kModelCqe})
    EXPECT_NE(kAlgorithmNames.name(a), "unknown");
  for (CombinePolicy c :
       {CombinePolicy::kBusiestQueue, CombinePolicy::kMaxProfile, CombinePolicy::kMinProfile})
    EXPECT_NE(kCombineNames.name(c), "unknown");
  for (dim::TimerMode t :
       {dim::TimerMode::kRateLimit, dim::TimerMode::kIdleGap, dim::TimerMode::kAbsolute})
    EXPECT_NE(kTimerModeNames.name(t), "unknown");
  EXPECT_EQ(kModeNames.name(static_cast<Mode>(200)), "unknown");
}

TEST(Names, TheFormerLabelSpellingsAreReadAndNeverWritten) {
  EXPECT_EQ(kAlgorithmNames.name(Algorithm::kNetEqe), "net-eqe");
  EXPECT_EQ(kAlgorithmNames.name(Algorithm::kNetCqe), "net-cqe");
  EXPECT_EQ(kAlgorithmNames.name(Algorithm::kModelCqe), "model-cqe");
  EXPECT_EQ(kAlgorithmNames.parse("net_eqe"), Algorithm::kNetEqe);
  EXPECT_EQ(kAlgorithmNames.parse("net_cqe"), Algorithm::kNetCqe);
  EXPECT_EQ(kAlgorithmNames.parse("model_cqe"), Algorithm::kModelCqe);
  EXPECT_FALSE(kAlgorithmNames.parse("net-cqe "));
  EXPECT_FALSE(kAlgorithmNames.parse("NET-CQE"));
  EXPECT_EQ(kTimerModeNames.parse("idle-gap"), dim::TimerMode::kIdleGap);
  EXPECT_FALSE(kTimerModeNames.parse("idle_gap"));  // never a spelling: a typo, not an alias
}

}  // namespace
}  // namespace dimctl::seam
