// `dimctl sim`: the real command (main.cc + cmd_sim.cc) run as a process. Argument and input
// errors exit 2 with a message naming what is wrong; a run prints its tables or one JSON
// document on stdout and nothing else.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "dimctl/trace/trace_writer.h"

#ifndef DIMCTL_SIM_BINARY
#error "DIMCTL_SIM_BINARY must name the dimctl executable built with cmd_sim.cc"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CmdResult {
  int rc = -1;
  std::string out;
  std::string err;
};

class SimCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dimctl-sim-cli-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  CmdResult run(const std::string& args) {
    const fs::path err = dir_ / "stderr";
    const std::string cmd = std::string(DIMCTL_SIM_BINARY) + " sim " + args + " 2>" + err.string();
    CmdResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err);
    std::stringstream s;
    s << in.rdbuf();
    r.err = s.str();
    return r;
  }

  // A small workload: 100 ms of Poisson load on one queue (~17k completions).
  std::string tiny() {
    return write("tiny.yaml",
                 "name: tiny\n"
                 "description: \"cli test\"\n"
                 "table: net-eqe\n"
                 "warmup: 2ms\n"
                 "stages:\n"
                 "  - service: 2us\n"
                 "    cost: net\n"
                 "sources:\n"
                 "  - {kind: poisson, rate: 200k, flow: rx}\n"
                 "phases:\n"
                 "  - {name: low, duration: 50ms, load: 0.5}\n"
                 "  - {name: high, duration: 50ms, load: 1.2}\n");
  }

  fs::path dir_;
};

TEST_F(SimCli, NeedsAWorkloadOrATrace) {
  CmdResult r = run("--policy none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "dimctl sim: give exactly one of --workload FILE.yaml and --trace FILE\n");
  EXPECT_EQ(r.out, "");
  r = run("--workload " + tiny() + " --trace x.dtr --policy none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "dimctl sim: give exactly one of --workload FILE.yaml and --trace FILE\n");
}

TEST_F(SimCli, NeedsAPolicy) {
  CmdResult r = run("--workload " + tiny());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--policy is required"), std::string::npos) << r.err;
}

TEST_F(SimCli, UnknownPolicyIsNamed) {
  CmdResult r = run("--workload " + tiny() + " --policy none,kernel-dimm");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("dimctl sim: unknown policy 'kernel-dimm' (known: none, static:IX", 0), 0u)
      << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(SimCli, PolicyErrorsExitTwo) {
  const std::string w = tiny();
  CmdResult r = run("--workload " + w + " --policy none,none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "dimctl sim: policy 'none' is given twice\n");
  r = run("--workload " + w + " --policy static:5");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "dimctl sim: policy 'static:5': the net-eqe table has profiles 0..4\n");
  r = run("--workload " + w + " --policy static:5 --table rdma --dry-run");
  EXPECT_EQ(r.rc, 0) << r.err;
  r = run("--workload " + w + " --policy kernel-rdma@20ms");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("only dimctl-* (@PERIOD) and oracle (@LAG) take @"), std::string::npos)
      << r.err;
}

// The model under the efficiency objective: dimctl-model-eff:BUDGET; a bad budget exits 2.
TEST_F(SimCli, TheEfficiencyObjectiveTakesABudget) {
  const std::string w = tiny();
  CmdResult r = run("--workload " + w +
                    " --policy dimctl-model-eff:50us,dimctl-model-eff:100us "
                    "--dry-run");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("policies: dimctl-model-eff:50us, dimctl-model-eff:100us"),
            std::string::npos)
      << r.out;
  r = run("--workload " + w + " --policy dimctl-model-eff");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "dimctl sim: policy 'dimctl-model-eff': -eff needs a latency budget, e.g. "
            "dimctl-model-eff:50us\n");
  r = run("--workload " + w + " --policy dimctl-model-eff:50");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "dimctl sim: policy 'dimctl-model-eff:50': bad latency budget: '50' has no unit; "
            "write e.g. 50us (units: ns, us, ms, s)\n");
  r = run("--workload " + w + " --policy dimctl-model-eff:0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "dimctl sim: policy 'dimctl-model-eff:0': the latency budget must be above 0 and at "
            "most 1s\n");
  r = run("--workload " + w + " --policy dimctl-rdma-eff:50us");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("only the model policies"), std::string::npos) << r.err;
  r = run("--workload " + w + " --policy dimctl-model-eff:50us,dimctl-model-eff:50us");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "dimctl sim: policy 'dimctl-model-eff:50us' is given twice\n");
  EXPECT_EQ(r.out, "");
}

// @PERIOD and --duration are durations as everywhere (dimctl/common/duration.h): decimals too.
TEST_F(SimCli, PeriodsAndDurationsTakeDecimals) {
  const std::string w = tiny();
  CmdResult r = run("--workload " + w + " --policy dimctl-rdma@1.5ms --duration 1.5s --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("policies: dimctl-rdma@1.5ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.5s in all"), std::string::npos) << r.out;
  r = run("--workload " + w + " --policy dimctl-rdma@1.0000001ns --dry-run");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "dimctl sim: policy 'dimctl-rdma@1.0000001ns': bad period: '1.0000001ns' is not a "
            "whole number of nanoseconds\n");
}

// As check-config: every error with file:line:column, then a count, exit 2.
TEST_F(SimCli, BadWorkloadFileGetsItsPositions) {
  const std::string w = write("bad.yaml",
                              "queues: 0\n"
                              "stages:\n"
                              "  - sevice: 5us\n");
  CmdResult r = run("--workload " + w + " --policy none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, w + ":1:9: queues: 0 is out of range 1..65536\n" + w +
                       ":3:5: stages[0].sevice: unknown key 'sevice'; did you mean 'service'? "
                       "(allowed here: name, service, servers, shared_servers, timer, "
                       "poll_budget, cost, cores, moderated, fixed, software)\n" +
                       w + ": invalid (2 errors)\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(SimCli, MissingWorkloadFile) {
  CmdResult r = run("--workload " + (dir_ / "nope.yaml").string() + " --policy none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("nope.yaml: cannot open workload: No such file or directory"),
            std::string::npos)
      << r.err;
}

TEST_F(SimCli, BadFlagValues) {
  const std::string w = tiny();
  struct Case {
    std::string args;
    std::string err;  // a substring of stderr
  };
  for (const Case& c : std::vector<Case>{
           {"--duration fast", "--duration 'fast': want a positive duration such as 500ms or 2s"},
           {"--duration 0", "--duration '0': want a positive duration"},
           {"--service 5", "--service '5': want a duration (5us), exp:MEAN or lognormal:MEAN:CV"},
           {"--timer eqe", "--timer: eqe not in {rate-limit,idle-gap,absolute}"},
           {"--cost 8k", "--cost: 8k not in {free,net,512B,4k,64k,trace}"},
           {"--queues 0", "--queues: Value 0 not in range 1 to 65536"},
           {"--trace-device veth0", "--trace-device applies to --trace only"},
       }) {
    CmdResult r = run("--workload " + w + " --policy none " + c.args);
    EXPECT_EQ(r.rc, 2) << c.args;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

TEST_F(SimCli, DurationTooShortForThePhases) {
  CmdResult r = run("--workload " + tiny() + " --policy none --duration 1ns");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "dimctl sim: --duration 1ns: too short for 2 phases\n");
}

TEST_F(SimCli, DryRunPrintsTheRunAndSimulatesNothing) {
  CmdResult r = run("--workload " + tiny() +
                    " --policy none,kernel-net-eqe,oracle --dry-run --seed 9 --queues 3 "
                    "--cost 4k --timer idle-gap --service exp:3us");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("workload tiny ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seed 9, 3 queues, table net-eqe"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stage host: service exp:3us, no server limit, timer idle-gap"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cost 4k (irq 2us, completion 1.5us, poll 300ns, app 2us)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("policies: none, kernel-net-eqe, oracle"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("phase low"), std::string::npos) << "a dry run has no results";
}

TEST_F(SimCli, JsonIsOneDocumentWithEveryPolicyAndPhase) {
  // dimctl-net-eqe runs the daemon's Controller, which logs; none of it may reach stdout.
  CmdResult r = run("--workload " + tiny() + " --policy none,dimctl-net-eqe,oracle --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc;
  ASSERT_NO_THROW(doc = json::parse(r.out)) << r.out.substr(0, 300);
  EXPECT_EQ(doc["tool"], "dimctl sim");
  EXPECT_EQ(doc["workload"]["name"], "tiny");
  EXPECT_EQ(doc["workload"]["cost_model"], "net");
  EXPECT_EQ(doc["workload"]["stages"][0]["cost"]["irq_ns"], 1500);
  ASSERT_EQ(doc["runs"].size(), 3u);
  const char* names[] = {"none", "dimctl-net-eqe", "oracle"};
  for (size_t i = 0; i < 3; ++i) {
    const json& run = doc["runs"][i];
    EXPECT_EQ(run["policy"], names[i]);
    EXPECT_EQ(run["cost_model"], "net");
    EXPECT_FALSE(run.contains("windows")) << "windows only with --timeline";
    ASSERT_EQ(run["phases"].size(), 2u);
    EXPECT_EQ(run["phases"][0]["phase"], "low");
    EXPECT_EQ(run["phases"][1]["phase"], "high");
    const json& total = run["total"];
    EXPECT_GT(total["completions"].get<uint64_t>(), 10'000u);
    for (const char* q : {"p50", "p99", "p99.9", "p99.99", "p99.999"})
      EXPECT_TRUE(total["latency"]["quantiles"].contains(q)) << q;
    // ~17k completions: p99 has >= 100 beyond it, p99.99 cannot.
    EXPECT_TRUE(total["latency"]["quantiles"]["p99"]["significant"].get<bool>());
    EXPECT_FALSE(total["latency"]["quantiles"]["p99.99"]["significant"].get<bool>());
    // The CDF: quantiles ascending, latencies non-decreasing, ending at the maximum.
    const json& cdf = total["latency"]["cdf"];
    ASSERT_GT(cdf.size(), 50u);
    for (size_t k = 1; k < cdf.size(); ++k) {
      EXPECT_GT(cdf[k][0].get<double>(), cdf[k - 1][0].get<double>());
      EXPECT_GE(cdf[k][1].get<double>(), cdf[k - 1][1].get<double>());
    }
    EXPECT_EQ(cdf.back()[0].get<double>(), 1.0);
    EXPECT_EQ(cdf.back()[1].get<double>(), total["latency"]["max_ns"].get<double>());
  }
  // Convergence is filled against the oracle for the others; the oracle names its choices.
  EXPECT_FALSE(doc["runs"][0]["phases"][0]["convergence_ns"].is_null());
  EXPECT_TRUE(doc["runs"][2]["phases"][0].contains("oracle_choice"));
  EXPECT_EQ(r.err, "") << "nothing on stderr without a terminal or --progress";
}

// The report reads the controller's settings from the JSON instead of repeating C++ defaults:
// each dimctl-* run carries the period it ran at, a model run its change budget, and the
// default-cost model its costs (dimctl-model-host's are the workload's stage costs).
TEST_F(SimCli, JsonCarriesWhatTheControllerRanWith) {
  CmdResult r = run("--workload " + tiny() +
                    " --policy none,kernel-net-eqe,dimctl-net-eqe@5ms,dimctl-model,"
                    "dimctl-model-host,dimctl-model-eff:50us --json --duration 100ms");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["runs"].size(), 6u);
  EXPECT_FALSE(doc["runs"][0].contains("controller")) << "none runs no controller";
  EXPECT_FALSE(doc["runs"][1].contains("controller")) << "kernel DIM runs no controller";
  const json& dim = doc["runs"][2].at("controller");
  EXPECT_EQ(dim.at("period_ns"), 5'000'000) << "the @PERIOD the policy was given";
  EXPECT_FALSE(dim.contains("max_changes_per_s")) << "DIM has no change budget";
  // seam::ModelSettings' defaults: 10 changes/s, 1 us per completion, 2 us per interrupt.
  const json& model = doc["runs"][3].at("controller");
  EXPECT_EQ(model.at("period_ns"), 20'000'000) << "the daemon's default interval";
  EXPECT_EQ(model.at("max_changes_per_s"), 10);
  EXPECT_EQ(model.at("completion_cost_ns"), 1000);
  EXPECT_EQ(model.at("interrupt_cost_ns"), 2000);
  const json& host = doc["runs"][4].at("controller");
  EXPECT_EQ(host.at("period_ns"), 20'000'000);
  EXPECT_EQ(host.at("max_changes_per_s"), 10);
  EXPECT_FALSE(host.contains("completion_cost_ns")) << "told the stage's costs, not the defaults";
  EXPECT_FALSE(host.contains("interrupt_cost_ns"));
  EXPECT_EQ(model.at("costs"), "measured");
  EXPECT_EQ(host.at("costs"), "told");
  // The objective: latency (the default config) unless the policy names efficiency and a budget.
  EXPECT_EQ(model.at("objective"), "latency");
  EXPECT_FALSE(model.contains("latency_budget_ns"));
  EXPECT_EQ(host.at("objective"), "latency");
  const json& eff = doc["runs"][5].at("controller");
  EXPECT_EQ(eff.at("objective"), "efficiency");
  EXPECT_EQ(eff.at("latency_budget_ns"), 50'000);
  EXPECT_EQ(eff.at("costs"), "measured");
  // What each core's model judged with at the end: the measured costs (the simulator reports
  // CPU times, so the estimate leaves the defaults from the second period of traffic).
  const json& cores = doc["runs"][3].at("model_cores");
  ASSERT_FALSE(cores.empty());
  for (const json& c : cores) {
    EXPECT_GE(c.at("confidence").get<int>(), 1) << c.dump();
    EXPECT_GT(c.at("completion_cost_ns").get<double>(), 0) << c.dump();
    EXPECT_GT(c.at("interrupt_cost_ns").get<double>(), 0) << c.dump();
    EXPECT_GE(c.at("background").get<double>(), 0);
    EXPECT_LE(c.at("background").get<double>(), 0.8) << "the estimator's bound";
    EXPECT_TRUE(c.at("saturated").is_boolean());
    EXPECT_TRUE(c.at("saturation_descents_kept").is_number_unsigned()) << c.dump();
    EXPECT_TRUE(c.at("saturation_descents_back").is_number_unsigned()) << c.dump();
    EXPECT_TRUE(c.at("saturation_rejudged").is_number_unsigned()) << c.dump();
  }
  EXPECT_FALSE(doc["runs"][0].contains("model_cores")) << "none runs no controller";
}

TEST_F(SimCli, TimelineAndOverridesInJson) {
  CmdResult r =
      run("--workload " + tiny() + " --policy none --json --timeline --seed 77 --duration 40ms");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["workload"]["seed"], 77);
  EXPECT_EQ(doc["runs"][0]["seed"], 77);
  // --duration stretches every phase (and the warm-up) in proportion.
  EXPECT_EQ(doc["workload"]["duration_ns"], 40'000'000);
  EXPECT_EQ(doc["workload"]["phases"][0]["duration_ns"], 20'000'000);
  EXPECT_EQ(doc["workload"]["phases"][1]["duration_ns"], 20'000'000);
  EXPECT_EQ(doc["workload"]["warmup_ns"], 800'000);
  const json& w = doc["runs"][0]["windows"];
  ASSERT_EQ(w["t_ns"].size(), 40u);  // 1 ms windows
  for (const char* k : {"completions", "mean_latency_ns", "max_latency_ns", "cpu_per_completion_ns",
                        "count", "timer_ns", "profile"})
    EXPECT_EQ(w[k].size(), 40u) << k;
}

TEST_F(SimCli, TextTablePutsPoliciesSideBySide) {
  CmdResult r = run("--workload " + tiny() + " --policy none,static:2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("phase low: 50ms, load 0.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("phase high: 50ms, load 1.2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("whole run"), std::string::npos) << r.out;
  // The header row names both policies; each metric row has a cell for each.
  EXPECT_NE(r.out.find("none  static:2"), std::string::npos) << r.out;
  for (const char* row : {"latency p99.999 (us)", "throughput (/s)", "CPU per completion (us)",
                          "interrupts/s", "completions/interrupt", "changes/s", "convergence"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row;
  EXPECT_NE(r.out.find("* fewer than 100 completions beyond this quantile"), std::string::npos);
  EXPECT_NE(r.out.find("convergence: needs the oracle among the policies"), std::string::npos);
}

// Two veth queues (400 and 100 packets per 20 ms interval) or one CQ, 11 frames: 200 ms.
void write_trace(const std::string& path, bool cq_only) {
  auto w = dimctl::trace::TraceWriter::open(path, {});
  ASSERT_TRUE(w) << w.error().message();
  constexpr int64_t kMs = 1'000'000;
  for (uint64_t i = 0; i < 11; ++i) {
    dimctl::seam::Snapshot s;
    s.time_ns = 7'000 * kMs + static_cast<int64_t>(i) * 20 * kMs;
    if (cq_only) {
      dimctl::seam::CqCounters c;
      c.key = {0, 4};
      c.ibdev = "rxe0";
      c.completions = 300 * i;
      s.cqs = {c};
    } else {
      s.devices = {"veth0", "veth1"};
      dimctl::seam::QueueCounters a, b;
      a.key = {7, 8193};
      a.queue = 0;
      a.packets = a.polls = 400 * i;
      a.device_ix = 0;
      b.key = {9, 8194};
      b.queue = 0;
      b.packets = b.polls = 100 * i;
      b.device_ix = 1;
      s.queues = {a, b};
    }
    ASSERT_TRUE(w->write(s));
  }
  ASSERT_TRUE(w->close());
}

TEST_F(SimCli, TraceReplaysEachQueueForTheTracesLength) {
  const std::string t = (dir_ / "veth.dtr").string();
  write_trace(t, false);
  CmdResult r = run("--trace " + t + " --policy none,kernel-net-eqe --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["trace"]["queues"], 2);
  EXPECT_EQ(doc["trace"]["arrivals"], 5000);
  EXPECT_EQ(doc["workload"]["queues"], 2);
  EXPECT_EQ(doc["workload"]["duration_ns"], 200'000'000);
  EXPECT_EQ(doc["workload"]["table"], "net-eqe");
  EXPECT_EQ(doc["workload"]["cost_model"], "net");
  EXPECT_EQ(doc["workload"]["sources"][0]["kind"], "trace");
  EXPECT_EQ(doc["workload"]["stages"][0]["cores"], 2) << "a core per queue, as RSS spreads them";
  // Light load: (almost) every recorded packet is delivered within the run.
  for (const json& run : doc["runs"])
    EXPECT_NEAR(run["total"]["completions"].get<double>(), 5000, 50) << run["policy"];

  r = run("--trace " + t + " --trace-device veth1 --policy none --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json one = json::parse(r.out);
  EXPECT_EQ(one["workload"]["queues"], 1);
  EXPECT_NEAR(one["runs"][0]["total"]["completions"].get<double>(), 1000, 10);

  // Text: the queues it replays are named.
  r = run("--trace " + t + " --policy none --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("queue 0: replays veth0 queue 0 (napi 8193)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("queue 1: replays veth1 queue 0 (napi 8194)"), std::string::npos) << r.out;
}

// A recording's length is whatever the recorder's clock said: the text rounds it for people,
// the JSON keeps the nanoseconds.
TEST_F(SimCli, TraceDurationsReadAsRoundedTextAndExactJson) {
  const std::string t = (dir_ / "odd.dtr").string();
  {
    auto w = dimctl::trace::TraceWriter::open(t, {});
    ASSERT_TRUE(w) << w.error().message();
    for (int64_t at : {int64_t{5'000'000'000}, int64_t{5'000'000'000} + 4'001'741'174}) {
      dimctl::seam::Snapshot s;
      s.time_ns = at;
      s.devices = {"veth0"};
      dimctl::seam::QueueCounters q;
      q.key = {7, 8193};
      q.packets = q.polls = at == 5'000'000'000 ? 0 : 4000;
      s.queues = {q};
      ASSERT_TRUE(w->write(s));
    }
    ASSERT_TRUE(w->close());
  }
  CmdResult r = run("--trace " + t + " --policy none --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("4000 arrivals over 4.002s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4.002s in all"), std::string::npos) << r.out;
  r = run("--trace " + t + " --policy none --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["trace"]["duration_ns"], 4'001'741'174);
}

TEST_F(SimCli, ATraceOfCqsIsStorage) {
  const std::string t = (dir_ / "cq.dtr").string();
  write_trace(t, true);
  CmdResult r = run("--trace " + t + " --policy none,kernel-rdma --json --cost 512B");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["workload"]["table"], "rdma");
  EXPECT_EQ(doc["workload"]["cost_model"], "512B");  // the flag wins over the default (4k)
  EXPECT_EQ(doc["workload"]["stages"][0]["poll_budget"], 256);
  EXPECT_NEAR(doc["runs"][1]["total"]["completions"].get<double>(), 3000, 30);
}

TEST_F(SimCli, BadTraceIsAUsageError) {
  const std::string t = write("junk.dtr", "this is not a trace\n");
  CmdResult r = run("--trace " + t + " --policy none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(t), std::string::npos) << r.err;
  const std::string v = (dir_ / "veth.dtr").string();
  write_trace(v, false);
  r = run("--trace " + v + " --trace-device eth9 --policy none");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("eth9"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("veth0"), std::string::npos) << "the devices seen are listed: " << r.err;
}

// Same seed, same numbers: the report's figures are reproducible.
TEST_F(SimCli, RunsAreDeterministic) {
  const std::string args = "--workload " + tiny() + " --policy kernel-net-eqe --json";
  CmdResult a = run(args), b = run(args);
  ASSERT_EQ(a.rc, 0);
  ASSERT_EQ(b.rc, 0);
  json ja = json::parse(a.out), jb = json::parse(b.out);
  ja["runs"][0].erase("wall_seconds");
  jb["runs"][0].erase("wall_seconds");
  EXPECT_EQ(ja, jb);
}

}  // namespace
