// dimctl::replay in process: every dim-spec vector file (golden output and the spec-table
// checkpoints it carries), R6 generated in memory, bad input and bad options.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dimctl/common/exit_codes.h"
#include "dimctl/replay/replay.h"

namespace dimctl::replay {
namespace {

struct Outcome {
  int rc = -1;
  std::string out;
  std::string err;
};

Outcome replay(const std::string& input, const ReplayOptions& opts = {}) {
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  Outcome r;
  r.rc = run_replay(in, out, err, opts);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "# args: --algo rdma --start-profile 2 --apply-delay 1" -> options.
ReplayOptions options_from_header(const std::string& text) {
  ReplayOptions o;
  std::istringstream header(lines_of(text).at(0));
  std::string word;
  header >> word >> word;  // "#", "args:"
  while (header >> word) {
    std::string value;
    header >> value;
    if (word == "--algo") {
      o.algo = value == "rdma" ? Algo::kRdma : Algo::kNet;
    } else if (word == "--start-profile") {
      o.start_profile = static_cast<uint8_t>(std::stoi(value));
    } else if (word == "--apply-delay") {
      o.apply_delay = static_cast<uint32_t>(std::stoul(value));
    } else {
      ADD_FAILURE() << "unknown option in vector header: " << word;
    }
  }
  return o;
}

// Each "# expect <n> key=value ..." must hold on output line n.
void check_expectations(const std::string& input, const std::vector<std::string>& out) {
  int checked = 0;
  for (const std::string& line : lines_of(input)) {
    if (line.rfind("# expect ", 0) != 0) continue;
    std::istringstream in(line.substr(9));
    size_t n = 0;
    in >> n;
    ASSERT_GE(n, 1u);
    ASSERT_LE(n, out.size());
    const std::string padded = " " + out[n - 1] + " ";
    for (std::string kv; in >> kv;) {
      EXPECT_NE(padded.find(" " + kv + " "), std::string::npos)
          << "line " << n << ": want " << kv << ", got: " << out[n - 1];
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(ReplayVectors, EveryVectorMatchesGoldenOutputAndSpecCheckpoints) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DIMCTL_REPLAY_VECTORS_DIR)) {
    if (entry.path().extension() != ".txt") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string input = read_file(entry.path());
    const Outcome r = replay(input, options_from_header(input));
    ASSERT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_EQ(r.err, "");
    auto expected = entry.path();
    expected.replace_extension(".expected");
    EXPECT_EQ(r.out, read_file(expected));
    check_expectations(input, lines_of(r.out));
    ++files;
  }
  EXPECT_EQ(files, 19);  // N1-N12 and R1-R8 except R6 (generated below)
}

// R6 needs 65,665 events; generated rather than stored.
TEST(ReplayVectors, R6EventCounterWrap) {
  std::string input;
  int64_t t_us = 0;
  for (int k = 1; k <= 65'665; ++k) {
    const int comps = k <= 65 ? 4 : 8;
    input += "rdma " + std::to_string(t_us * 1000) + " " + std::to_string(comps) + "\n";
    t_us += 10;
  }
  ReplayOptions o;
  o.algo = Algo::kRdma;
  o.apply_delay = 56;  // the worker is held while events 130..185 arrive
  const Outcome r = replay(input, o);
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 65'665u);
  EXPECT_EQ(out[129 - 1], "129 ix=1 usec=1 count=4 tune=GOING_RIGHT state=APPLY_NEW_PROFILE");
  EXPECT_EQ(out[185 - 1], "185 ix=1 usec=1 count=4 tune=GOING_RIGHT state=APPLY_NEW_PROFILE");
  EXPECT_EQ(out[186 - 1], "186 ix=1 usec=1 count=4 tune=GOING_RIGHT state=MEASURE_IN_PROGRESS");
  for (size_t k = 186; k < 65'536; ++k) {
    ASSERT_NE(out[k - 1].find(" ix=1 "), std::string::npos) << out[k - 1];
  }
  EXPECT_EQ(out[65'536 - 1], "65536 ix=0 usec=1 count=1 tune=GOING_LEFT state=APPLY_NEW_PROFILE");
  // --apply-delay holds every change, the spec holds only the first: the change at 65536 is
  // applied after 65592, so the bouncing BETTER window (spec: event 65601) closes at 65657.
  EXPECT_EQ(out[65'592 - 1], "65592 ix=0 usec=1 count=1 tune=GOING_LEFT state=APPLY_NEW_PROFILE");
  EXPECT_EQ(out[65'601 - 1], "65601 ix=0 usec=1 count=1 tune=GOING_LEFT state=MEASURE_IN_PROGRESS");
  EXPECT_EQ(out[65'657 - 1],
            "65657 ix=0 usec=1 count=1 tune=GOING_RIGHT state=MEASURE_IN_PROGRESS");
}

TEST(Replay, CommentsBlankLinesAndCrlfAreIgnored) {
  const Outcome r =
      replay("# header\n\n   \nnet 0 0 0 0 # trailing\r\n\tnet 1000000 64 1000 1000000\n");
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out,
            "1 ix=0 usec=1 count=256 tune=PARKING_ON_TOP state=MEASURE_IN_PROGRESS\n"
            "2 ix=1 usec=8 count=256 tune=GOING_RIGHT state=APPLY_NEW_PROFILE\n");
}

TEST(Replay, ProfileTablesFollowModeAndDirection) {
  ReplayOptions o;
  o.mode = dim::CqPeriodMode::kCqe;
  o.dir = dim::Direction::kTx;
  o.start_profile = 3;
  const Outcome r = replay("net 0 0 0 0\n", o);
  EXPECT_EQ(r.out, "1 ix=3 usec=32 count=32 tune=PARKING_ON_TOP state=MEASURE_IN_PROGRESS\n");
}

TEST(Replay, EmptyInputIsFine) {
  const Outcome r = replay("");
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out, "");
}

struct BadInput {
  std::string name;
  Algo algo;
  std::string input;
  std::string error;  // expected stderr, exactly
};

class ReplayBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(ReplayBadInput, StopsAtTheBadLineWithExitTwo) {
  const BadInput& c = GetParam();
  ReplayOptions o;
  o.algo = c.algo;
  o.source_name = "in.txt";
  const std::string good = c.algo == Algo::kNet ? "net 5 0 0 0\n" : "rdma 5 1\n";
  const Outcome r = replay("# ok\n" + good + c.input + "\n" + good, o);
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err, c.error + "\n");
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;  // the good line before, nothing after
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReplayBadInput,
    ::testing::Values(
        BadInput{"UnknownKind", Algo::kNet, "tcp 1 2 3 4",
                 "in.txt:3: unknown sample kind 'tcp' (expected net or rdma)"},
        BadInput{"KindNotAlgo", Algo::kNet, "rdma 6 1", "in.txt:3: 'rdma' sample with --algo net"},
        BadInput{"NetKindInRdma", Algo::kRdma, "net 6 1 1 1",
                 "in.txt:3: 'net' sample with --algo rdma"},
        BadInput{"TooFewFields", Algo::kNet, "net 6 1 1",
                 "in.txt:3: expected 'net <time_ns> <events> <packets> <bytes>', got 4 fields"},
        BadInput{"TooManyFields", Algo::kRdma, "rdma 6 1 1",
                 "in.txt:3: expected 'rdma <time_ns> <completions>', got 4 fields"},
        BadInput{"NonNumeric", Algo::kNet, "net 6 1 x1 1",
                 "in.txt:3: packets is not a number: 'x1'"},
        BadInput{"TrailingJunk", Algo::kNet, "net 6 1 1 1k",
                 "in.txt:3: bytes is not a number: '1k'"},
        BadInput{"PlusSign", Algo::kRdma, "rdma 6 +1",
                 "in.txt:3: completions is not a number: '+1'"},
        BadInput{"Negative", Algo::kNet, "net 6 -1 1 1",
                 "in.txt:3: events must not be negative: '-1'"},
        BadInput{"NegativeTime", Algo::kRdma, "rdma -6 1",
                 "in.txt:3: time_ns must not be negative: '-6'"},
        BadInput{"TimeBackwards", Algo::kNet, "net 4 1 1 1",
                 "in.txt:3: time goes backwards (4 < 5)"},
        BadInput{"TimeBeyondInt64", Algo::kRdma, "rdma 9223372036854775808 1",
                 "in.txt:3: time_ns out of range: '9223372036854775808' (max "
                 "9223372036854775807)"},
        BadInput{"CounterBeyondU64", Algo::kNet, "net 6 18446744073709551616 1 1",
                 "in.txt:3: events out of range: '18446744073709551616'"},
        BadInput{"CompletionsBeyondU32", Algo::kRdma, "rdma 6 4294967296",
                 "in.txt:3: completions out of range: '4294967296' (max 4294967295)"}),
    [](const auto& p) { return p.param.name; });

TEST(Replay, StartProfileOutOfRangeIsAUsageError) {
  ReplayOptions o;
  o.start_profile = 5;
  const Outcome r = replay("net 0 0 0 0\n", o);
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--start-profile 5"), std::string::npos);
}

TEST(Replay, ApplyDelayKeepsTheChangePending) {
  ReplayOptions o;
  o.apply_delay = 2;
  const Outcome r = replay(
      "net 0 0 0 0\nnet 1000000 64 1000 1000000\nnet 2000000 128 2000 2000000\n"
      "net 3000000 192 3000 3000000\nnet 4000000 256 4000 4000000\n",
      o);
  const auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_NE(out[2].find("state=APPLY_NEW_PROFILE"), std::string::npos);
  EXPECT_NE(out[3].find("state=APPLY_NEW_PROFILE"), std::string::npos);
  EXPECT_NE(out[4].find("state=MEASURE_IN_PROGRESS"), std::string::npos);  // new window start
}

}  // namespace
}  // namespace dimctl::replay
