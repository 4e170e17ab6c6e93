// NAPI originals in JsonOriginalsStore: round trip (and files without NAPIs unchanged), first
// value wins, validation of hand-edited "napi" records, forget/rename, and restore_all against
// FakeNapiActuator (restored, gone after a re-created NAPI, failed and kept).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dimctl/state/json_originals_store.h"
#include "fakes/fake_actuators.h"
#include "fakes/fake_napi_actuator.h"

namespace dimctl::state {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const seam::NapiConfig kDefaults{0, 0, 0};
const seam::NapiConfig kModerated{2, 200'000, 0};

class NapiOriginalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dimctl-napi-state-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    path_ = root_ + "/run/dimctl/state.json";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_, path_;
  fakes::FakeNetActuator net_;
  fakes::FakeNapiActuator napi_;
};

TEST_F(NapiOriginalsTest, RoundTripsAndLeavesFilesWithoutNapisAsBefore) {
  {
    JsonOriginalsStore s(path_);
    seam::Coalesce c;
    c.rx_max_frames = 0;
    ASSERT_TRUE(s.record_net("tun0", c).ok());
    EXPECT_THAT(slurp(path_), Not(HasSubstr("napi"))) << "an older dimctl must still read it";
    ASSERT_TRUE(s.record_napi("veth1", 8193, kDefaults).ok());
    ASSERT_TRUE(s.record_napi("veth1", 8194, {7, std::nullopt, std::nullopt}).ok());
    ASSERT_TRUE(s.record_napi("veth2", 9000, {0, 5'000'000'000ULL, 1}).ok());
  }
  const std::string text = slurp(path_);
  EXPECT_THAT(text, HasSubstr("\"version\": 1"));
  EXPECT_THAT(text, HasSubstr("\"napi\""));
  EXPECT_THAT(text, HasSubstr("\"gro_flush_timeout_ns\": 5000000000"));
  JsonOriginalsStore again(path_);
  ASSERT_TRUE(again.load().ok());
  const auto& n = again.originals().napi;
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n.at("veth1").at(8193), kDefaults);
  EXPECT_EQ(n.at("veth1").at(8194), (seam::NapiConfig{7, std::nullopt, std::nullopt}));
  EXPECT_EQ(n.at("veth2").at(9000), (seam::NapiConfig{0, 5'000'000'000ULL, 1}));
  EXPECT_EQ(again.originals().net.size(), 1u);
}

TEST_F(NapiOriginalsTest, FirstValueWinsPerField) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_napi("veth1", 8193, {0, std::nullopt, std::nullopt}).ok());
  ASSERT_TRUE(s.record_napi("veth1", 8193, {2, 200'000, std::nullopt}).ok());
  JsonOriginalsStore again(path_);
  ASSERT_TRUE(again.load().ok());
  EXPECT_EQ(again.originals().napi.at("veth1").at(8193),
            (seam::NapiConfig{0, 200'000, std::nullopt}));
  EXPECT_FALSE(s.record_napi("veth1", 0, kDefaults).ok()) << "NAPI id 0 does not exist";
  EXPECT_FALSE(s.record_napi("averyveryverylongname", 1, kDefaults).ok());
}

TEST_F(NapiOriginalsTest, HandEditedRecordsAreValidated) {
  struct Case {
    std::string json, problem;
  };
  const Case cases[] = {
      {R"({"version": 1, "napi": []})", "napi: expected an object"},
      {R"({"version": 1, "napi": {"veth1": {}}})", "napi.veth1: records nothing"},
      {R"({"version": 1, "napi": {"veth1": {"0": {"defer_hard_irqs": 1}}}})",
       "napi.veth1.0: NAPI key must be a decimal NAPI id"},
      {R"({"version": 1, "napi": {"veth1": {"x1": {"defer_hard_irqs": 1}}}})",
       "NAPI key must be a decimal NAPI id"},
      {R"({"version": 1, "napi": {"veth1": {"4294967296": {"defer_hard_irqs": 1}}}})",
       "NAPI key must be a decimal NAPI id"},
      {R"({"version": 1, "napi": {"veth1": {"8193": {}}}})", "napi.veth1.8193: records no field"},
      {R"({"version": 1, "napi": {"veth1": {"8193": {"defer": 1}}}})", "unknown field \"defer\""},
      {R"({"version": 1, "napi": {"veth1": {"8193": {"defer_hard_irqs": 4294967296}}}})",
       "napi.veth1.8193.defer_hard_irqs: expected an unsigned 32-bit integer"},
      {R"({"version": 1, "napi": {"veth1": {"8193": {"gro_flush_timeout_ns": -1}}}})",
       "gro_flush_timeout_ns: expected an unsigned integer (ns)"},
      {R"({"version": 1, "napi": {"a/b": {"8193": {"defer_hard_irqs": 1}}}})",
       "invalid network device name"},
  };
  for (const auto& c : cases) {
    auto r = JsonOriginalsStore::from_json(c.json, "f.json");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.error().code(), 0);
    EXPECT_THAT(r.error().message(), HasSubstr(c.problem)) << c.json;
  }
}

TEST_F(NapiOriginalsTest, ForgetAndRename) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_napi("veth1", 8193, kDefaults).ok());
  ASSERT_TRUE(s.record_napi("veth1", 8194, kDefaults).ok());
  ASSERT_TRUE(s.record_napi("veth2", 9000, kDefaults).ok());
  ASSERT_TRUE(s.rename_net({{"veth1", "veth2"}, {"veth2", "veth1"}}).ok());
  EXPECT_EQ(s.originals().napi.at("veth1").count(9000), 1u);
  EXPECT_EQ(s.originals().napi.at("veth2").size(), 2u);
  ASSERT_TRUE(s.forget_napi("veth2", 8193).ok());
  EXPECT_EQ(s.originals().napi.at("veth2").size(), 1u);
  ASSERT_TRUE(s.forget_net("veth2").ok());
  EXPECT_EQ(s.originals().napi.count("veth2"), 1u) << "forget_net is the ethtool records only";
  ASSERT_TRUE(s.forget("veth2").ok());
  EXPECT_EQ(s.originals().napi.count("veth2"), 0u);
  ASSERT_TRUE(s.forget_napi("veth1", 9000).ok());
  EXPECT_FALSE(fs::exists(path_)) << "nothing left: the file goes away";
}

TEST_F(NapiOriginalsTest, RestorePutsTheOriginalBackAndRemovesTheFile) {
  napi_.add_napi(4, 8193, kModerated);  // what dimctl left when it was killed
  {
    JsonOriginalsStore s(path_);
    ASSERT_TRUE(s.record_napi("veth1", 8193, kDefaults).ok());
  }
  JsonOriginalsStore restorer(path_);
  RestoreReport rep = restorer.restore_all(net_, nullptr, &napi_);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].device, "veth1 napi 8193");
  EXPECT_EQ(rep.results[0].outcome, RestoreOutcome::kRestored) << rep.results[0].detail;
  EXPECT_EQ(napi_.config(8193), kDefaults);
  EXPECT_TRUE(rep.file_removed);
  EXPECT_TRUE(rep.all_restored());
}

TEST_F(NapiOriginalsTest, ARecreatedNapiIsGoneAndItsSuccessorUntouched) {
  napi_.add_napi(4, 8193, kModerated);
  {
    JsonOriginalsStore s(path_);
    ASSERT_TRUE(s.record_napi("veth1", 8193, {1, 50'000, 0}).ok());
  }
  napi_.recreate(8193, 8200);  // GRO off and on
  JsonOriginalsStore restorer(path_);
  RestoreReport rep = restorer.restore_all(net_, nullptr, &napi_);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, RestoreOutcome::kGone);
  EXPECT_THAT(rep.results[0].detail, HasSubstr("device's defaults"));
  EXPECT_EQ(napi_.set_calls, 1);
  EXPECT_TRUE(napi_.set_history.empty());
  EXPECT_EQ(napi_.config(8200), fakes::FakeNapiActuator::defaults());
  EXPECT_TRUE(rep.file_removed);
  EXPECT_TRUE(rep.all_restored());
}

TEST_F(NapiOriginalsTest, FailuresAreKeptForALaterRestore) {
  napi_.add_napi(4, 8193, kModerated);
  napi_.add_napi(4, 8194, kModerated);
  napi_.add_napi(4, 8195, kModerated);
  {
    JsonOriginalsStore s(path_);
    ASSERT_TRUE(s.record_napi("veth1", 8193, kDefaults).ok());
    ASSERT_TRUE(s.record_napi("veth1", 8194, kDefaults).ok());
    ASSERT_TRUE(s.record_napi("veth1", 8195, kDefaults).ok());
  }
  napi_.fail_sets(8193, EPERM);
  napi_.stuck(8194, true);
  JsonOriginalsStore restorer(path_);
  RestoreReport rep = restorer.restore_all(net_, nullptr, &napi_);
  ASSERT_EQ(rep.results.size(), 3u);
  EXPECT_EQ(rep.results[0].outcome, RestoreOutcome::kFailed);
  EXPECT_EQ(rep.results[1].outcome, RestoreOutcome::kFailed);
  EXPECT_THAT(rep.results[1].detail, HasSubstr("defer_hard_irqs: recorded 0, reads 2"));
  EXPECT_EQ(rep.results[2].outcome, RestoreOutcome::kRestored);
  EXPECT_FALSE(rep.all_restored());
  JsonOriginalsStore left(path_);
  ASSERT_TRUE(left.load().ok());
  EXPECT_EQ(left.originals().napi.at("veth1").size(), 2u);
  EXPECT_EQ(left.originals().napi.at("veth1").count(8195), 0u);

  // Without a NAPI actuator (a caller that could not open netdev netlink) nothing is dropped.
  RestoreReport none = left.restore_all(net_, nullptr);
  ASSERT_EQ(none.results.size(), 2u);
  EXPECT_EQ(none.results[0].outcome, RestoreOutcome::kFailed);
  EXPECT_THAT(none.results[0].detail, HasSubstr("no netdev netlink"));
  JsonOriginalsStore still(path_);
  ASSERT_TRUE(still.load().ok());
  EXPECT_EQ(still.originals().napi.at("veth1").size(), 2u);
}

}  // namespace
}  // namespace dimctl::state
