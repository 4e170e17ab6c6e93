// JsonOriginalsStore: round trip, first-value-wins, atomic durable writes, validation of
// corrupt or hand-edited files, and restore_all against the in-memory fakes.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dimctl/state/json_originals_store.h"
#include "fakes/fake_actuators.h"

namespace dimctl::state {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

seam::Coalesce C(std::optional<uint32_t> rx_usecs, std::optional<uint32_t> rx_frames = {},
                 std::optional<bool> adaptive_rx = {}) {
  seam::Coalesce c;
  c.rx_usecs = rx_usecs;
  c.rx_max_frames = rx_frames;
  c.use_adaptive_rx = adaptive_rx;
  return c;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dimctl-state-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/run/dimctl";  // does not exist yet: the store creates it 0700
    path_ = dir_ + "/state.json";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_, dir_, path_;
};

TEST_F(StateStoreTest, MissingFileIsEmpty) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.load().ok());
  EXPECT_TRUE(s.originals().empty());
  EXPECT_FALSE(s.writer().has_value());
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(StateStoreTest, RoundTripWithWriterAndPermissions) {
  {
    JsonOriginalsStore s(path_);
    ASSERT_TRUE(s.record_net("eth1", C(8, 32, true)).ok());
    seam::Coalesce q = C(16);
    q.tx_usecs = 4;
    ASSERT_TRUE(s.record_net_queue("eth1", 3, q).ok());
    ASSERT_TRUE(s.record_net_queue("eth2", 0, C(50)).ok());
    ASSERT_TRUE(s.record_rdma_dim("mlx5_0", true).ok());
    ASSERT_TRUE(s.record_rdma_dim("rxe0", false).ok());
  }
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(dir_entries(dir_), std::vector<std::string>{"state.json"});  // no temp left

  JsonOriginalsStore again(path_);
  ASSERT_TRUE(again.load().ok());
  const Originals& o = again.originals();
  ASSERT_EQ(o.net.size(), 2u);
  EXPECT_EQ(o.net.at("eth1").device, C(8, 32, true));
  ASSERT_EQ(o.net.at("eth1").queues.size(), 1u);
  EXPECT_EQ(o.net.at("eth1").queues.at(3).rx_usecs, 16u);
  EXPECT_EQ(o.net.at("eth1").queues.at(3).tx_usecs, 4u);
  EXPECT_FALSE(o.net.at("eth2").device.has_value());
  EXPECT_EQ(o.net.at("eth2").queues.at(0), C(50));
  EXPECT_EQ(o.rdma, (std::map<std::string, bool>{{"mlx5_0", true}, {"rxe0", false}}));
  ASSERT_TRUE(again.writer().has_value());
  EXPECT_EQ(again.writer()->pid, getpid());
  EXPECT_GT(again.writer()->start_ticks, 0u);
  EXPECT_FALSE(again.writer()->start_time.empty());
  EXPECT_FALSE(again.writer()->boot_id.empty());
  EXPECT_TRUE(JsonOriginalsStore::writer_alive(*again.writer()));

  // The file is plain, readable JSON with the documented keys.
  const std::string text = slurp(path_);
  EXPECT_THAT(text, HasSubstr("\"version\": 1"));
  EXPECT_THAT(text, HasSubstr("\"rx_max_frames\": 32"));
  EXPECT_THAT(text, HasSubstr("\"use_adaptive_rx\": true"));
  EXPECT_THAT(text, HasSubstr("\"pid\": " + std::to_string(getpid())));
}

TEST_F(StateStoreTest, RecordIsIdempotentFirstValueWins) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8, 32)).ok());
  const std::string first = slurp(path_);
  // The controller has since written rx_usecs=100; recording again must not overwrite.
  ASSERT_TRUE(s.record_net("eth1", C(100, 64)).ok());
  EXPECT_EQ(slurp(path_), first);  // nothing new: not even rewritten
  // A field not recorded yet is added; recorded ones keep their first value.
  ASSERT_TRUE(s.record_net("eth1", C(100, 64, false)).ok());
  EXPECT_EQ(s.originals().net.at("eth1").device, C(8, 32, false));
  ASSERT_TRUE(s.record_net_queue("eth1", 0, C(8)).ok());
  ASSERT_TRUE(s.record_net_queue("eth1", 0, C(9)).ok());
  EXPECT_EQ(s.originals().net.at("eth1").queues.at(0), C(8));
  ASSERT_TRUE(s.record_rdma_dim("rxe0", true).ok());
  ASSERT_TRUE(s.record_rdma_dim("rxe0", false).ok());
  EXPECT_TRUE(s.originals().rdma.at("rxe0"));

  // A second store (the next start after a crash) keeps the crashed run's originals.
  JsonOriginalsStore next(path_);
  ASSERT_TRUE(next.record_net("eth1", C(1, 1, true)).ok());
  EXPECT_EQ(next.originals().net.at("eth1").device, C(8, 32, false));
  EXPECT_TRUE(next.originals().rdma.at("rxe0"));
}

TEST_F(StateStoreTest, ForgetDropsADeviceAndRemovesTheFileWhenEmpty) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8, 32)).ok());
  ASSERT_TRUE(s.record_net("eth2", C(16)).ok());
  ASSERT_TRUE(s.record_rdma_dim("rxe0", true).ok());

  ASSERT_TRUE(s.forget("eth1").ok());
  JsonOriginalsStore reread(path_);
  ASSERT_TRUE(reread.load().ok());
  EXPECT_EQ(reread.originals().net.count("eth1"), 0u);
  EXPECT_EQ(reread.originals().net.at("eth2").device, C(16));
  EXPECT_TRUE(reread.originals().rdma.at("rxe0"));

  ASSERT_TRUE(s.forget("unknown").ok());  // nothing recorded: no error, file unchanged
  ASSERT_TRUE(s.forget("eth2").ok());
  EXPECT_TRUE(fs::exists(path_));
  ASSERT_TRUE(s.forget("rxe0").ok());
  EXPECT_FALSE(fs::exists(path_)) << "an empty store must not leave a file behind";
}

TEST_F(StateStoreTest, ForgetNetAndForgetRdmaDropOnlyTheirKind) {
  JsonOriginalsStore s(path_);
  // A net device and an IB device may share a name: handing one back keeps the other.
  ASSERT_TRUE(s.record_net("dev0", C(8, 32)).ok());
  ASSERT_TRUE(s.record_net_queue("dev0", 3, C(4)).ok());
  ASSERT_TRUE(s.record_rdma_dim("dev0", true).ok());

  ASSERT_TRUE(s.forget_net("dev0").ok());
  JsonOriginalsStore reread(path_);
  ASSERT_TRUE(reread.load().ok());
  EXPECT_EQ(reread.originals().net.count("dev0"), 0u) << "device-wide and queues both dropped";
  EXPECT_TRUE(reread.originals().rdma.at("dev0"));

  ASSERT_TRUE(s.forget_rdma("dev0").ok());
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(StateStoreTest, RenameNetMovesDeviceAndQueueRecordsInOneWrite) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8, 32)).ok());
  ASSERT_TRUE(s.record_net_queue("eth1", 3, C(4)).ok());
  ASSERT_TRUE(s.record_net("eth2", C(99)).ok());  // a stale record under the new name
  ASSERT_TRUE(s.record_rdma_dim("eth1", true).ok());

  ASSERT_TRUE(s.rename_net({{"eth1", "eth2"}}).ok());
  JsonOriginalsStore reread(path_);
  ASSERT_TRUE(reread.load().ok());
  EXPECT_EQ(reread.originals().net.count("eth1"), 0u);
  EXPECT_EQ(reread.originals().net.at("eth2").device, C(8, 32)) << "the renamed device's wins";
  EXPECT_EQ(reread.originals().net.at("eth2").queues.at(3), C(4));
  EXPECT_TRUE(reread.originals().rdma.at("eth1")) << "an IB device of that name is not moved";

  ASSERT_TRUE(s.rename_net({{"nothing", "eth3"}}).ok());  // nothing recorded: no change
  EXPECT_EQ(s.originals().net.count("eth3"), 0u);
  EXPECT_FALSE(s.rename_net({{"eth2", "a-name-too-long-for-linux"}}).ok());
  EXPECT_EQ(s.originals().net.count("eth2"), 1u);
}

TEST_F(StateStoreTest, RenameNetSwapsTwoNamesWithoutLosingEither) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8)).ok());
  ASSERT_TRUE(s.record_net("eth2", C(16)).ok());
  ASSERT_TRUE(s.rename_net({{"eth1", "eth2"}, {"eth2", "eth1"}}).ok());
  JsonOriginalsStore reread(path_);
  ASSERT_TRUE(reread.load().ok());
  EXPECT_EQ(reread.originals().net.at("eth1").device, C(16));
  EXPECT_EQ(reread.originals().net.at("eth2").device, C(8));
}

TEST_F(StateStoreTest, FailedWriteLeavesOldFileAndNoTemp) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8)).ok());
  const std::string before = slurp(path_);
  // Make rename(temp, state.json) fail: replace the file by a non-empty directory.
  ASSERT_EQ(rename(path_.c_str(), (dir_ + "/saved").c_str()), 0);
  fs::create_directories(path_ + "/blocker");
  auto r = s.record_net("eth2", C(9));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr(path_));
  EXPECT_THAT(r.error().message(), HasSubstr("eth2"));
  EXPECT_FALSE(s.originals().net.count("eth2"));  // not recorded in memory either
  for (const auto& e : dir_entries(dir_)) EXPECT_EQ(e.find(".state.json."), std::string::npos) << e;
  fs::remove_all(path_);
  ASSERT_EQ(rename((dir_ + "/saved").c_str(), path_.c_str()), 0);
  EXPECT_EQ(slurp(path_), before);
}

TEST_F(StateStoreTest, StateDirectoryThatIsAFileIsAnError) {
  fs::create_directories(root_ + "/run");
  spit(dir_, "not a directory");
  JsonOriginalsStore s(path_);
  auto r = s.record_net("eth1", C(8));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr(dir_));
}

struct CorruptCase {
  const char* name;
  const char* content;
  const char* expect;
};

class CorruptFileTest : public StateStoreTest, public ::testing::WithParamInterface<CorruptCase> {};

TEST_P(CorruptFileTest, LoadNamesFileAndProblem) {
  fs::create_directories(dir_);
  spit(path_, GetParam().content);
  JsonOriginalsStore s(path_);
  auto r = s.load();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), 0) << "bad input, not an OS error";
  EXPECT_THAT(r.error().message(), HasSubstr("state file " + path_));
  EXPECT_THAT(r.error().message(), HasSubstr(GetParam().expect));
  // Recording on top of a corrupt file refuses and leaves it for the operator.
  auto rec = s.record_net("eth9", C(1));
  EXPECT_FALSE(rec.ok());
  EXPECT_EQ(slurp(path_), GetParam().content);
}

INSTANTIATE_TEST_SUITE_P(
    Files, CorruptFileTest,
    ::testing::Values(
        CorruptCase{"empty", "", "not valid JSON"},
        CorruptCase{"garbage", "this is not json", "not valid JSON"},
        CorruptCase{"truncated", R"({"version": 1, "net": {"eth1": {"device": {"rx_usecs": 8)",
                    "not valid JSON"},
        CorruptCase{"array", "[1, 2]", "top level: expected an object"},
        CorruptCase{"no_version", R"({"net": {}})", "version: missing"},
        CorruptCase{"future_version", R"({"version": 2})", "unsupported version 2"},
        CorruptCase{"unknown_top", R"({"version": 1, "nets": {}})", "unknown key \"nets\""},
        CorruptCase{"typo_field", R"({"version": 1, "net": {"eth1": {"device": {"rx_usec": 8}}}})",
                    "net.eth1.device: unknown field \"rx_usec\""},
        CorruptCase{"negative", R"({"version": 1, "net": {"eth1": {"device": {"rx_usecs": -1}}}})",
                    "net.eth1.device.rx_usecs: expected an unsigned 32-bit integer"},
        CorruptCase{"too_big",
                    R"({"version": 1, "net": {"eth1": {"device": {"rx_usecs": 4294967296}}}})",
                    "expected an unsigned 32-bit integer"},
        CorruptCase{"float", R"({"version": 1, "net": {"eth1": {"device": {"rx_usecs": 1.5}}}})",
                    "expected an unsigned 32-bit integer"},
        // Found by fuzz_state: nlohmann throws out_of_range, not parse_error, for this number.
        CorruptCase{"number_overflow",
                    R"({"version": 1, "net": {"eth1": {"device": {"rx_usecs": 1e400}}}})",
                    "not valid JSON: number overflow parsing '1e400'"},
        CorruptCase{"bool_string",
                    R"({"version": 1, "net": {"eth1": {"device": {"use_adaptive_rx": "yes"}}}})",
                    "use_adaptive_rx: expected true or false"},
        CorruptCase{"empty_record", R"({"version": 1, "net": {"eth1": {"device": {}}}})",
                    "records no field"},
        CorruptCase{"bad_queue",
                    R"({"version": 1, "net": {"eth1": {"queues": {"x": {"rx_usecs": 1}}}}})",
                    "net.eth1.queues.x: queue key must be a decimal queue index"},
        CorruptCase{
            "long_name",
            R"({"version": 1, "net": {"averyveryverylongname": {"device": {"rx_usecs": 1}}}})",
            "invalid network device name"},
        CorruptCase{"rdma_not_bool", R"({"version": 1, "rdma": {"rxe0": {"dim": 1}}})",
                    "rdma.rxe0: expected {\"dim\": true|false}"},
        CorruptCase{"bad_pid", R"({"version": 1, "writer": {"pid": "me"}})",
                    "writer.pid: expected a positive pid"}),
    [](const ::testing::TestParamInfo<CorruptCase>& i) { return std::string(i.param.name); });

// ------------------------------------------------------------------------------ restore_all

class RestoreTest : public StateStoreTest {
 protected:
  fakes::FakeNetActuator net_;
  fakes::FakeRdmaDimSwitch rdma_;
};

TEST_F(RestoreTest, RestoresEverythingAndRemovesTheFile) {
  net_.add_device("eth1", C(8, 32, true), /*nqueues=*/2);
  net_.add_device("eth2", C(0, 1));
  rdma_.add_device("mlx5_0", true);
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8, 32, true)).ok());
  ASSERT_TRUE(s.record_net_queue("eth1", 1, C(8, 32, true)).ok());
  ASSERT_TRUE(s.record_net("eth2", C(0, 1)).ok());
  ASSERT_TRUE(s.record_rdma_dim("mlx5_0", true).ok());
  // What the controller did: adaptive off, other values; queue 1 its own value; DIM off.
  ASSERT_TRUE(net_.set("eth1", C(64, 128, false)).ok());
  ASSERT_TRUE(net_.set_queue("eth1", 1, C(100)).ok());
  ASSERT_TRUE(net_.set("eth2", C(50, 64)).ok());
  ASSERT_TRUE(rdma_.set_dim("mlx5_0", false).ok());

  JsonOriginalsStore restorer(path_);  // e.g. `dimctl restore` after SIGKILL
  RestoreReport rep = restorer.restore_all(net_, &rdma_);
  EXPECT_TRUE(rep.all_restored());
  EXPECT_TRUE(rep.file_removed);
  EXPECT_FALSE(fs::exists(path_));
  ASSERT_EQ(rep.results.size(), 4u);
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.outcome, RestoreOutcome::kRestored) << r.device << ": " << r.detail;
  }
  EXPECT_EQ(net_.values("eth1"), C(8, 32, true));  // adaptive turned back on
  EXPECT_EQ(net_.queue_values("eth1", 1), C(8, 32, true));
  EXPECT_EQ(net_.values("eth2"), C(0, 1));
  EXPECT_TRUE(rdma_.dim("mlx5_0"));
  EXPECT_TRUE(restorer.originals().empty());
}

TEST_F(RestoreTest, VanishedDevicesAreReportedAndDropped) {
  net_.add_device("eth1", C(8));
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8)).ok());
  ASSERT_TRUE(s.record_net("veth7", C(3)).ok());
  ASSERT_TRUE(s.record_net_queue("veth7", 0, C(3)).ok());
  ASSERT_TRUE(s.record_rdma_dim("rxe9", true).ok());
  RestoreReport rep = s.restore_all(net_, &rdma_);
  EXPECT_TRUE(rep.all_restored());
  EXPECT_TRUE(rep.file_removed);
  int gone = 0;
  for (const auto& r : rep.results) {
    if (r.outcome == RestoreOutcome::kGone) {
      ++gone;
      EXPECT_THAT(r.detail, HasSubstr("no longer exists"));
    }
  }
  EXPECT_EQ(gone, 2);  // veth7 (with its queue) and rdma rxe9
}

TEST_F(RestoreTest, FailuresAreKeptInTheFileForALaterAttempt) {
  net_.add_device("eth1", C(8));
  net_.add_device("eth2", C(5));
  rdma_.add_device("rxe0", false);
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(8)).ok());
  ASSERT_TRUE(s.record_net("eth2", C(5)).ok());
  ASSERT_TRUE(s.record_rdma_dim("rxe0", false).ok());
  ASSERT_TRUE(net_.set("eth1", C(99)).ok());
  ASSERT_TRUE(rdma_.set_dim("rxe0", true).ok());
  net_.fail_sets("eth1", EBUSY);
  rdma_.fail_sets("rxe0", EPERM);

  RestoreReport rep = s.restore_all(net_, &rdma_);
  EXPECT_FALSE(rep.all_restored());
  EXPECT_FALSE(rep.file_removed);
  EXPECT_FALSE(rep.file_error.has_value());
  ASSERT_TRUE(fs::exists(path_));
  JsonOriginalsStore left(path_);
  ASSERT_TRUE(left.load().ok());
  EXPECT_EQ(left.originals().net.size(), 1u);  // eth2 restored and dropped
  EXPECT_EQ(left.originals().net.at("eth1").device, C(8));
  EXPECT_FALSE(left.originals().rdma.at("rxe0"));
  for (const auto& r : rep.results) {
    if (r.device == "eth1" || r.device == "rdma rxe0") {
      EXPECT_EQ(r.outcome, RestoreOutcome::kFailed);
      EXPECT_FALSE(r.detail.empty());
    }
  }

  net_.fail_sets("eth1", 0);
  rdma_.fail_sets("rxe0", 0);
  RestoreReport again = left.restore_all(net_, &rdma_);
  EXPECT_TRUE(again.all_restored());
  EXPECT_TRUE(again.file_removed);
  EXPECT_EQ(net_.values("eth1"), C(8));
  EXPECT_FALSE(rdma_.dim("rxe0"));
}

TEST_F(RestoreTest, ReadBackMismatchIsAFailure) {
  net_.add_device("eth1", C(10));
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(80)).ok());
  net_.set_limits("eth1", C(50));  // the driver clamps to 50
  RestoreReport rep = s.restore_all(net_, &rdma_);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, RestoreOutcome::kFailed);
  EXPECT_THAT(rep.results[0].detail, HasSubstr("rx_usecs: recorded 80, reads 50"));
  EXPECT_TRUE(fs::exists(path_));
}

TEST_F(RestoreTest, AdaptiveValuesAreNotComparedButTheFlagIs) {
  net_.add_device("eth1", C(10, 20, false));
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_net("eth1", C(80, 20, true)).ok());
  net_.set_limits("eth1", C(50));  // the driver's DIM would move rx values anyway
  RestoreReport rep = s.restore_all(net_, &rdma_);
  EXPECT_TRUE(rep.all_restored()) << rep.results[0].detail;
  EXPECT_EQ(net_.values("eth1").use_adaptive_rx, true);
}

TEST_F(RestoreTest, RdmaRecordsWithoutRdmaSwitchFail) {
  JsonOriginalsStore s(path_);
  ASSERT_TRUE(s.record_rdma_dim("rxe0", true).ok());
  RestoreReport rep = s.restore_all(net_, nullptr);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, RestoreOutcome::kFailed);
  EXPECT_TRUE(fs::exists(path_));
}

TEST_F(RestoreTest, NothingToDo) {
  JsonOriginalsStore s(path_);
  RestoreReport rep = s.restore_all(net_, &rdma_);
  EXPECT_TRUE(rep.all_restored());
  EXPECT_TRUE(rep.results.empty());
  EXPECT_EQ(net_.set_calls, 0);
}

TEST_F(RestoreTest, CorruptFileIsAFileErrorAndNothingIsWritten) {
  fs::create_directories(dir_);
  spit(path_, "{");
  net_.add_device("eth1", C(8));
  JsonOriginalsStore s(path_);
  RestoreReport rep = s.restore_all(net_, &rdma_);
  ASSERT_TRUE(rep.file_error.has_value());
  EXPECT_THAT(rep.file_error->message(), HasSubstr("not valid JSON"));
  EXPECT_FALSE(rep.all_restored());
  EXPECT_EQ(net_.set_calls, 0);
  EXPECT_TRUE(fs::exists(path_));
}

TEST(WriterInfo, DeadOrForeignWriterIsNotAlive) {
  WriterInfo w = JsonOriginalsStore::current_writer();
  EXPECT_TRUE(JsonOriginalsStore::writer_alive(w));
  WriterInfo other_start = w;
  other_start.start_ticks += 1;  // same pid, different process (pid reuse)
  EXPECT_FALSE(JsonOriginalsStore::writer_alive(other_start));
  WriterInfo other_boot = w;
  other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
  EXPECT_FALSE(JsonOriginalsStore::writer_alive(other_boot));
  WriterInfo none;
  EXPECT_FALSE(JsonOriginalsStore::writer_alive(none));
}

}  // namespace
}  // namespace dimctl::state
