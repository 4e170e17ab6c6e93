// A state file cut short at every byte (a crash of whatever wrote it, a full disk, a bad copy) or
// replaced with garbage: load() refuses it with an error naming the file, and restore_all writes
// nothing (no device, queue, RDMA switch or NAPI touched) and keeps the file for a human. And
// the temporary file of a writer killed between create and rename does not stay forever.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "dimctl/state/json_originals_store.h"
#include "fakes/fake_actuators.h"
#include "fakes/fake_napi_actuator.h"

namespace dimctl::state {
namespace {

namespace fs = std::filesystem;

class StateCutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dimctl-cut-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    path_ = root_ + "/state.json";
    seam::Coalesce c;
    c.rx_usecs = 8;
    c.rx_max_frames = 32;
    c.use_adaptive_rx = true;
    net_.add_device("eth1", c, /*nqueues=*/2);
    rdma_.add_device("mlx5_0", false);  // the daemon turned DIM off; the file says on
    napi_.add_napi(7, 8193);
    // A complete file as the daemon writes it: every kind of record.
    JsonOriginalsStore s(path_);
    ASSERT_TRUE(s.record_net("eth1", c).ok());
    ASSERT_TRUE(s.record_net_queue("eth1", 1, c).ok());
    ASSERT_TRUE(s.record_rdma_dim("mlx5_0", true).ok());
    ASSERT_TRUE(s.record_napi("veth1", 8193, {2, 50'000ULL, 0}).ok());
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    whole_ = ss.str();
    while (!whole_.empty() && (whole_.back() == '\n' || whole_.back() == ' ')) whole_.pop_back();
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& text) {
    std::ofstream out(path_, std::ios::trunc | std::ios::binary);
    out << text;
  }
  // Loads and restores the file as `dimctl restore` does; returns the load error ("" if none).
  std::string restore_refuses() {
    JsonOriginalsStore s(path_);
    auto l = s.load();
    RestoreReport rep = s.restore_all(net_, &rdma_, &napi_);
    EXPECT_TRUE(rep.results.empty()) << "restored from a refused file";
    EXPECT_FALSE(rep.file_removed);
    EXPECT_TRUE(fs::exists(path_)) << "a refused file must be kept";
    return l.ok() ? std::string() : l.error().message();
  }
  size_t writes() const {
    return net_.set_history.size() + napi_.set_history.size() +
           static_cast<size_t>(rdma_.set_calls + net_.queue_set_calls);
  }

  std::string root_, path_, whole_;
  fakes::FakeNetActuator net_;
  fakes::FakeRdmaDimSwitch rdma_;
  fakes::FakeNapiActuator napi_;
};

TEST_F(StateCutTest, EveryStrictPrefixIsRefusedAndWritesNothing) {
  ASSERT_GT(whole_.size(), 200U);
  for (size_t off = 0; off < whole_.size(); ++off) {
    write(whole_.substr(0, off));
    const std::string err = restore_refuses();
    ASSERT_FALSE(err.empty()) << "a file cut at byte " << off << " was accepted";
    ASSERT_NE(err.find("state file " + path_), std::string::npos) << off << ": " << err;
  }
  EXPECT_EQ(writes(), 0U);
  EXPECT_FALSE(rdma_.dim("mlx5_0"));
  // The whole file still restores everything.
  write(whole_);
  JsonOriginalsStore s(path_);
  RestoreReport rep = s.restore_all(net_, &rdma_, &napi_);
  EXPECT_TRUE(rep.all_restored());
  EXPECT_EQ(rep.results.size(), 4U);
}

TEST_F(StateCutTest, GarbageIsRefusedAndWritesNothing) {
  std::mt19937 rng(20260101);  // fixed: a failure reproduces
  for (int i = 0; i < 300; ++i) {
    std::string junk(1 + rng() % 1024, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng());
    if (i % 3 == 1) {
      // The real file with some bytes overwritten: mostly valid framing, spoiled content.
      junk = whole_;
      for (int k = 0; k < 4; ++k) junk[rng() % junk.size()] = static_cast<char>(rng());
    }
    write(junk);
    JsonOriginalsStore s(path_);
    if (s.load().ok()) continue;  // a flip inside a string (writer, written_at): see below
    const std::string err = restore_refuses();
    ASSERT_NE(err.find("state file " + path_), std::string::npos) << err;
  }
  // Nothing is restored from a refused file; a spoiled file that still loads (a flipped byte in
  // a string, or a digit: the file carries no checksum) restores only devices it names.
  for (const auto& [dev, c] : net_.set_history) EXPECT_EQ(dev, "eth1");
}

TEST_F(StateCutTest, TemporaryFilesOfDeadWritersAreRemoved) {
  const int dead = INT_MAX - 1;  // above any pid_max: no such process
  ASSERT_EQ(::kill(dead, 0), -1);
  ASSERT_EQ(errno, ESRCH);
  const auto touch = [&](const std::string& name) { std::ofstream(root_ + "/" + name) << "{"; };
  const std::string dead_tmp = ".state.json." + std::to_string(dead) + ".a1b2c3";
  const std::string live_tmp = ".state.json.1.d4e5f6";  // init: alive
  const std::string own_tmp = ".state.json." + std::to_string(getpid()) + ".g7h8i9";
  touch(dead_tmp);
  touch(live_tmp);
  touch(own_tmp);
  touch(".state.json.zzzzzz");        // not a pid-tagged name: left alone
  touch(".other.json.99999999.abc");  // another file's
  JsonOriginalsStore s(path_);
  seam::Coalesce c;
  c.rx_usecs = 9;
  ASSERT_TRUE(s.record_net("eth2", c).ok());  // a write sweeps
  EXPECT_FALSE(fs::exists(root_ + "/" + dead_tmp));
  EXPECT_TRUE(fs::exists(root_ + "/" + live_tmp));
  EXPECT_TRUE(fs::exists(root_ + "/" + own_tmp));
  EXPECT_TRUE(fs::exists(root_ + "/.state.json.zzzzzz"));
  EXPECT_TRUE(fs::exists(root_ + "/.other.json.99999999.abc"));
  // The restore that removes the file sweeps too.
  touch(dead_tmp);
  RestoreReport rep = s.restore_all(net_, &rdma_, &napi_);
  EXPECT_TRUE(rep.file_removed);
  EXPECT_FALSE(fs::exists(root_ + "/" + dead_tmp));
}

}  // namespace
}  // namespace dimctl::state
