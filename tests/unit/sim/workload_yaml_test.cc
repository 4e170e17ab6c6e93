// Workload files: every key read into the Workload, the defaults, the shipped workloads, and
// one bad file per error class refused with its exact "file:line:column: key: reason".
#include "dimctl/sim/workload_yaml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace dimctl::sim {
namespace {

namespace fs = std::filesystem;

std::string test_file(const std::string& dir, const std::string& name) {
  return (fs::path(DIMCTL_SIM_TEST_DIR) / dir / name).string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> yaml_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WorkloadYaml, FullFileHasEveryValueWritten) {
  const std::string path = test_file("good", "full.yaml");
  auto w = load_workload(path);
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->name, "full-example");
  EXPECT_EQ(w->description, "every key");
  EXPECT_EQ(w->seed, 18446744073709551615ULL);
  EXPECT_EQ(w->queues, 12u);
  EXPECT_EQ(w->table, ProfileTable::kNetCqe);
  EXPECT_EQ(w->apply_delay_ns, 1'500'000);
  EXPECT_EQ(w->warmup_ns, 250'000);
  EXPECT_EQ(w->window_ns, 500'000);

  ASSERT_EQ(w->stages.size(), 3u);
  const StageSpec& t = w->stages[0];
  EXPECT_EQ(t.name, "target");
  EXPECT_EQ(t.service.kind, Dist::Kind::kLogNormal);
  EXPECT_DOUBLE_EQ(t.service.mean_ns, 10'000);
  EXPECT_DOUBLE_EQ(t.service.cv, 0.5);
  EXPECT_EQ(t.servers, 2u);
  EXPECT_TRUE(t.shared_servers);
  EXPECT_EQ(t.timer, TimerMode::kAbsolute);
  EXPECT_EQ(t.poll_budget, 16u);
  // base 64k with irq overridden: named by its values, so a report never calls it "64k".
  EXPECT_EQ(t.cpu.name, "irq=3us,completion=3us,poll=300ns,app=2us");
  EXPECT_EQ(t.cpu.irq_ns, 3'000);
  EXPECT_EQ(t.cpu.completion_ns, builtin_cost_model("64k")->completion_ns);
  EXPECT_EQ(t.cpu.poll_ns, builtin_cost_model("64k")->poll_ns);
  EXPECT_EQ(t.cpu.app_ns, builtin_cost_model("64k")->app_ns);
  EXPECT_EQ(t.cores, 3u);
  EXPECT_FALSE(t.moderated);
  EXPECT_EQ(t.fixed, (Moderation{4, 8'000}));
  const StageSpec& h = w->stages[1];
  EXPECT_EQ(h.name, "host");
  EXPECT_EQ(h.service.kind, Dist::Kind::kExponential);
  EXPECT_DOUBLE_EQ(h.service.mean_ns, 2'500);
  EXPECT_EQ(h.timer, TimerMode::kIdleGap);
  EXPECT_EQ(h.cpu.name, "512B");
  EXPECT_EQ(h.cpu.irq_ns, builtin_cost_model("512B")->irq_ns);
  const StageSpec& wire = w->stages[2];
  EXPECT_EQ(wire.service.kind, Dist::Kind::kConstant);
  EXPECT_DOUBLE_EQ(wire.service.mean_ns, 250);
  EXPECT_EQ(wire.cpu.name, "measured");
  EXPECT_EQ(wire.cpu.irq_ns, 1'200);
  EXPECT_EQ(wire.cpu.completion_ns, 700);
  EXPECT_EQ(wire.cpu.poll_ns, 90);
  EXPECT_EQ(wire.cpu.app_ns, 2'500);

  ASSERT_EQ(w->sources.size(), 4u);
  const SourceSpec& c = w->sources[0];
  EXPECT_EQ(c.kind, SourceSpec::Kind::kClosed);
  EXPECT_EQ(c.flow, "latency");
  EXPECT_EQ(c.depth, 3u);
  EXPECT_EQ(c.think.kind, Dist::Kind::kConstant);
  EXPECT_DOUBLE_EQ(c.think.mean_ns, 20'000);
  EXPECT_EQ(c.bytes, 512u);
  const SourceSpec& p = w->sources[1];
  EXPECT_EQ(p.kind, SourceSpec::Kind::kPoisson);
  EXPECT_EQ(p.flow, "bulk");
  EXPECT_DOUBLE_EQ(p.rate, 1.5e6);
  const SourceSpec& o = w->sources[2];
  EXPECT_EQ(o.kind, SourceSpec::Kind::kOnOff);
  EXPECT_EQ(o.flow, "main");
  EXPECT_DOUBLE_EQ(o.rate, 250'000);
  EXPECT_EQ(o.on_ns, 1'000'000);
  EXPECT_EQ(o.off_ns, 9'000'000);
  EXPECT_TRUE(o.periodic);
  const SourceSpec& tr = w->sources[3];
  EXPECT_EQ(tr.kind, SourceSpec::Kind::kTrace);
  // Relative to the workload file, not to the current directory.
  EXPECT_EQ(tr.trace_path, (fs::path(path).parent_path() / "traces/veth.dtr").string());
  EXPECT_EQ(tr.trace_device, "veth-demo0");

  ASSERT_EQ(w->phases.size(), 2u);
  EXPECT_EQ(w->phases[0].name, "low");
  EXPECT_EQ(w->phases[0].duration_ns, 100'000'000);
  EXPECT_DOUBLE_EQ(w->phases[0].load, 0.5);
  EXPECT_FALSE(w->phases[0].ramp);
  EXPECT_FALSE(w->phases[0].depth.has_value());
  EXPECT_EQ(w->phases[1].name, "phase1");  // unnamed: its index
  EXPECT_EQ(w->phases[1].duration_ns, 1'500'000'000);
  EXPECT_DOUBLE_EQ(w->phases[1].load, 2);
  EXPECT_TRUE(w->phases[1].ramp);
  EXPECT_EQ(w->phases[1].depth, 64u);
}

TEST(WorkloadYaml, EmptyDocumentGivesTheDefaults) {
  auto w = load_workload_from_string("", "dir/empty.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message();
  Workload d;
  EXPECT_EQ(w->name, "empty");  // the file name without its extension
  EXPECT_EQ(w->seed, d.seed);
  EXPECT_EQ(w->queues, d.queues);
  EXPECT_EQ(w->table, d.table);
  EXPECT_EQ(w->apply_delay_ns, d.apply_delay_ns);
  EXPECT_EQ(w->warmup_ns, d.warmup_ns);
  EXPECT_EQ(w->window_ns, d.window_ns);
  ASSERT_EQ(w->stages.size(), 1u);
  EXPECT_EQ(w->stages[0].name, d.stages[0].name);
  EXPECT_EQ(w->stages[0].cpu.name, "free");
  EXPECT_EQ(w->stages[0].timer, d.stages[0].timer);
  EXPECT_EQ(w->stages[0].poll_budget, d.stages[0].poll_budget);
  EXPECT_EQ(w->stages[0].shared_servers, d.stages[0].shared_servers);
  ASSERT_EQ(w->sources.size(), 1u);
  EXPECT_EQ(w->sources[0].kind, SourceSpec::Kind::kClosed);
  EXPECT_EQ(w->sources[0].depth, 1u);
  ASSERT_EQ(w->phases.size(), 1u);
  EXPECT_EQ(w->phases[0].duration_ns, d.phases[0].duration_ns);
}

TEST(WorkloadYaml, MinimalFileLoads) {
  auto w = load_workload(test_file("good", "minimal.yaml"));
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->name, "minimal");
  ASSERT_EQ(w->phases.size(), 1u);
  EXPECT_EQ(w->phases[0].duration_ns, 10'000'000);
  EXPECT_EQ(w->phases[0].name, "phase0");
}

// The report's workloads: every one loads, and W1..W8 and the host benchmark's H1..H3 (software
// moderation) are all there.
TEST(WorkloadYaml, BenchWorkloadsLoad) {
  std::set<std::string> ids;
  const auto files = yaml_files(DIMCTL_SIM_WORKLOAD_DIR);
  for (const std::string& f : files) {
    auto w = load_workload(f);
    ASSERT_TRUE(w.ok()) << w.error().message();
    EXPECT_EQ(w->name, fs::path(f).stem().string()) << f << ": name differs from the file name";
    EXPECT_FALSE(w->description.empty()) << f;
    // Reports name the cost model: a built-in one, or an inline one given a name.
    for (const StageSpec& s : w->stages) {
      EXPECT_EQ(s.cpu.name.find("irq="), std::string::npos)
          << f << ": stage " << s.name << " uses an unnamed cost model";
    }
    ids.insert(w->name.substr(0, 2));
  }
  EXPECT_EQ(ids, (std::set<std::string>{"e1", "e2", "e3", "h1", "h2", "h3", "w1", "w2", "w3", "w4",
                                        "w5", "w6", "w7", "w8"}));
}

// Every file in bad/ starts with "# expect: LINE:COLUMN: key: reason", the message the loader
// must give after "FILE:".
class BadWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(BadWorkload, IsRefusedWithTheAnnouncedMessage) {
  const std::string file = GetParam();
  const std::string text = read_text(file);
  const std::string prefix = "# expect: ";
  ASSERT_EQ(text.rfind(prefix, 0), 0u) << file << ": first line must be '# expect: ...'";
  const std::string expect = text.substr(prefix.size(), text.find('\n') - prefix.size());
  auto w = load_workload(file);
  ASSERT_FALSE(w.ok()) << file << " was accepted";
  EXPECT_EQ(w.error().code(), 0);
  // One mistake, one message: a bad file that also trips unrelated checks would hide regressions.
  EXPECT_EQ(w.error().message(), file + ":" + expect);
}

std::vector<std::string> bad_files() {
  return yaml_files(fs::path(DIMCTL_SIM_TEST_DIR) / "bad");
}

INSTANTIATE_TEST_SUITE_P(Files, BadWorkload, ::testing::ValuesIn(bad_files()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = fs::path(p.param).stem().string();
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(WorkloadYaml, EveryProblemIsReportedInFileOrder) {
  auto w = load_workload_from_string(
      "phases:\n"
      "  - duration: 5\n"
      "queues: 0\n"
      "stages:\n"
      "  - cost: huge\n"
      "    timer: eqe\n",
      "multi.yaml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message(),
            "multi.yaml:2:15: phases[0].duration: '5' has no unit; write e.g. 5us (units: ns, us, "
            "ms, s)\n"
            "multi.yaml:3:9: queues: 0 is out of range 1..65536\n"
            "multi.yaml:5:11: stages[0].cost: 'huge' is not one of free, net, 512B, 4k, 64k\n"
            "multi.yaml:6:12: stages[0].timer: 'eqe' is not one of rate-limit, idle-gap, "
            "absolute; did you mean 'rate-limit'?");
}

TEST(WorkloadYaml, ErrorCountIsCapped) {
  std::string text = "phases:\n";
  for (int i = 0; i < 80; ++i) text += "  - duration: 1\n";
  auto w = load_workload_from_string(text, "many.yaml");
  ASSERT_FALSE(w.ok());
  const std::string m = w.error().message();
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 50);
  EXPECT_NE(m.find("too many errors, stopping here"), std::string::npos);
}

TEST(WorkloadYaml, UnreadableFileCarriesErrno) {
  auto w = load_workload("/nonexistent/w.yaml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), ENOENT);
  EXPECT_EQ(w.error().message(),
            "/nonexistent/w.yaml: cannot open workload: " + std::string(std::strerror(ENOENT)));
}

TEST(WorkloadYaml, AbsoluteTracePathIsKept) {
  auto w = load_workload_from_string("sources:\n  - {kind: trace, trace: /tmp/x.dtr}\n",
                                     "/some/dir/w.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->sources[0].trace_path, "/tmp/x.dtr");
}

TEST(WorkloadYaml, RatesAsNumbersAndWithSuffixes) {
  for (auto [text, want] :
       {std::pair{"250000", 250'000.0}, std::pair{"2.5e5", 250'000.0}, std::pair{"250k", 250'000.0},
        std::pair{"\"0.25M/s\"", 250'000.0}, std::pair{"1G", 1e9}}) {
    auto w = load_workload_from_string(
        fmt::format("sources:\n  - kind: poisson\n    rate: {}\n", text), "r.yaml");
    ASSERT_TRUE(w.ok()) << text << ": " << w.error().message();
    EXPECT_DOUBLE_EQ(w->sources[0].rate, want) << text;
  }
}

TEST(WorkloadYaml, SoftwareModerationAndPacedArrivals) {
  auto w = load_workload_from_string(
      "stages:\n  - name: napi\n"
      "    software: {defer_hard_irqs: 2, timer_latency: 28us, timer_cost: 1.5us}\n"
      "sources:\n  - kind: poisson\n    rate: 10k\n    periodic: true\n",
      "s.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message();
  ASSERT_TRUE(w->stages[0].software.has_value());
  EXPECT_EQ(w->stages[0].software->defer_hard_irqs, 2u);
  EXPECT_EQ(w->stages[0].software->timer_latency_ns, 28'000);
  EXPECT_EQ(w->stages[0].software->timer_cost_ns, 1'500);
  EXPECT_TRUE(w->sources[0].periodic);
  auto plain = load_workload_from_string("sources:\n  - kind: poisson\n    rate: 10k\n", "p.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_FALSE(plain->stages[0].software.has_value());
  EXPECT_FALSE(plain->sources[0].periodic);
}

// Durations are the one grammar of every dimctl input (dimctl/common/duration.h, tested in
// tests/unit/common): the file's durations go through it, decimals exactly.
TEST(WorkloadYaml, DurationsAreTheOneGrammar) {
  auto w = load_workload_from_string(
      "apply_delay: 1.5ms\nwindow: 0.5ms\nstages:\n  - {service: 1.1us}\nphases:\n"
      "  - {duration: 1.5ms}\n",
      "d.yaml");
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->apply_delay_ns, 1'500'000);
  EXPECT_EQ(w->window_ns, 500'000);
  EXPECT_EQ(w->stages[0].service.mean_ns, 1'100);
  EXPECT_EQ(w->phases[0].duration_ns, 1'500'000);
  // Once rounded to 1 ns through a double; not a whole number of nanoseconds.
  auto bad = load_workload_from_string("apply_delay: 1.0000001ns\n", "d.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "d.yaml:1:14: apply_delay: '1.0000001ns' is not a whole number of nanoseconds");
  bad = load_workload_from_string("apply_delay: 99999999999s\n", "d.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "d.yaml:1:14: apply_delay: '99999999999s' is too long (durations end at about 292 "
            "years)");
}

TEST(ScalarSyntax, Rates) {
  EXPECT_EQ(parse_rate("100"), 100);
  EXPECT_EQ(parse_rate("1e6"), 1e6);
  EXPECT_EQ(parse_rate("100k"), 1e5);
  EXPECT_EQ(parse_rate("100K"), 1e5);
  EXPECT_EQ(parse_rate("1.5M"), 1.5e6);
  EXPECT_EQ(parse_rate("2G/s"), 2e9);
  EXPECT_EQ(parse_rate("300/s"), 300);
  for (const char* bad : {"", "k", "-5", "-5k", "1.5m", "100kpps", "1e3k", "fast", "1/2"})
    EXPECT_FALSE(parse_rate(bad).has_value()) << bad;
}

TEST(ScalarSyntax, Distributions) {
  auto c = parse_dist("5us");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Dist::Kind::kConstant);
  EXPECT_DOUBLE_EQ(c->mean_ns, 5'000);
  auto e = parse_dist("exp:20us");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Dist::Kind::kExponential);
  EXPECT_DOUBLE_EQ(e->mean_ns, 20'000);
  auto l = parse_dist("lognormal:10us:0.5");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->kind, Dist::Kind::kLogNormal);
  EXPECT_DOUBLE_EQ(l->mean_ns, 10'000);
  EXPECT_DOUBLE_EQ(l->cv, 0.5);
  for (const char* bad :
       {"", "5", "exp:", "exp:0", "lognormal:10us", "lognormal:10us:x", "normal:5us", "exp:5"})
    EXPECT_FALSE(parse_dist(bad).has_value()) << bad;
  for (const char* text : {"5us", "exp:20us", "lognormal:10us:0.5", "0"})
    EXPECT_EQ(format_dist(*parse_dist(text)), text);
}

TEST(ScalarSyntax, NamesRoundTrip) {
  for (TimerMode m : {TimerMode::kRateLimit, TimerMode::kIdleGap, TimerMode::kAbsolute})
    EXPECT_EQ(parse_timer_mode(timer_mode_name(m)), m);
  for (ProfileTable t : {ProfileTable::kNetEqe, ProfileTable::kNetCqe, ProfileTable::kRdma})
    EXPECT_EQ(parse_table(table_name(t)), t);
  EXPECT_FALSE(parse_timer_mode("eqe"));
  EXPECT_FALSE(parse_table("net"));
  // A table is named as the algorithm that indexes it.
  for (auto [t, a] : {std::pair{ProfileTable::kNetEqe, seam::Algorithm::kNetEqe},
                      std::pair{ProfileTable::kNetCqe, seam::Algorithm::kNetCqe},
                      std::pair{ProfileTable::kRdma, seam::Algorithm::kRdma}})
    EXPECT_EQ(table_name(t), seam::kAlgorithmNames.name(a));
  for (SourceSpec::Kind k : {SourceSpec::Kind::kClosed, SourceSpec::Kind::kPoisson,
                             SourceSpec::Kind::kOnOff, SourceSpec::Kind::kTrace})
    EXPECT_EQ(kSourceKindNames.parse(source_kind_name(k)), k);
  for (Dist::Kind k : {Dist::Kind::kConstant, Dist::Kind::kExponential, Dist::Kind::kLogNormal})
    EXPECT_EQ(kDistKindNames.parse(kDistKindNames.name(k)), k);
}

// Research section 4 bounds: C_irq 1-2 us direct (plus indirect), C_c 0.5-7 us; free is all 0.
TEST(CostModels, BuiltinsAreDistinctAndWithinTheResearchRanges) {
  std::set<std::string> names;
  for (const CostModel& c : builtin_cost_models()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(builtin_cost_model(c.name)->irq_ns, c.irq_ns);
    if (c.name == "free") {
      EXPECT_EQ(c.irq_ns + c.completion_ns + c.poll_ns, 0);
      continue;
    }
    EXPECT_GE(c.irq_ns, 1'000) << c.name;
    EXPECT_LE(c.irq_ns, 5'000) << c.name;
    EXPECT_GE(c.completion_ns, 500) << c.name;
    EXPECT_LE(c.completion_ns, 7'000) << c.name;
    EXPECT_LT(c.poll_ns, c.irq_ns) << c.name;
    // Everything an unmoderated I/O costs the host stays near anchor A1's <= 6.8 us per I/O.
    EXPECT_LE(c.irq_ns + c.completion_ns + c.poll_ns + c.app_ns, 7'300) << c.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"free", "net", "512B", "4k", "64k"}));
  // Larger I/O costs more per completion (more pages per request).
  EXPECT_LT(builtin_cost_model("512B")->completion_ns, builtin_cost_model("4k")->completion_ns);
  EXPECT_LT(builtin_cost_model("4k")->completion_ns, builtin_cost_model("64k")->completion_ns);
}

// Truncated and byte-mutated versions of real files are refused or accepted, never thrown on
// and never hung on (yaml-cpp's LoadAll loops on some inputs; the loader must not use it).
TEST(Robustness, MutatedFilesNeverThrow) {
  std::vector<std::string> texts;
  for (const std::string& f : yaml_files(DIMCTL_SIM_WORKLOAD_DIR)) texts.push_back(read_text(f));
  texts.push_back(read_text(test_file("good", "full.yaml")));
  const std::string noise = ",:-[]{}#&*!|>'\"%@`\t\n ";
  size_t n = 0;
  for (const std::string& t : texts) {
    for (size_t cut = 0; cut < t.size(); cut += 37) {
      std::string m = t;
      m[cut] = noise[(cut / 37) % noise.size()];
      for (const std::string& text : {t.substr(0, cut), m}) {
        Result<Workload> w = Workload{};
        EXPECT_NO_THROW(w = load_workload_from_string(text, "mut.yaml"));
        // The loader's last-resort catch is not a way to handle a shape it should know.
        if (!w.ok()) {
          EXPECT_EQ(w.error().message().find("unexpected document structure"), std::string::npos)
              << w.error().message() << "\n--- from:\n"
              << text;
        }
        ++n;
      }
    }
  }
  EXPECT_GT(n, 500u);
}

}  // namespace
}  // namespace dimctl::sim
