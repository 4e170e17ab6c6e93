// Config parsing: defaults, exact field values, helpers, and the shipped configs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "config_internal.h"
#include "dimctl/config/config.h"

namespace dimctl::config {
namespace {

namespace fs = std::filesystem;
using seam::Algorithm;
using seam::CombinePolicy;
using seam::Mode;

std::string good(const char* name) {
  return (fs::path(DIMCTL_CONFIG_TEST_DIR) / "good" / name).string();
}

Config must_parse(std::string_view yaml) {
  auto r = parse_config(yaml, "test.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().context());
  return r.ok() ? std::move(r).value() : Config{};
}

std::vector<Diagnostic> diagnostics(std::string_view yaml) {
  Config cfg;
  std::vector<Diagnostic> d;
  EXPECT_FALSE(parse_config_diagnostics(yaml, "test.yaml", cfg, d));
  return d;
}

TEST(ConfigDefaults, EmptyDocumentGivesDocumentedDefaults) {
  for (const char* text : {"", "# only a comment\n", "{}\n"}) {
    Config c = must_parse(text);
    EXPECT_EQ(c.mode, Mode::kShadow);
    EXPECT_EQ(c.interval_ns, 20'000'000);
    EXPECT_EQ(c.state_file, "/run/dimctl/state.json");
    EXPECT_EQ(c.metrics.listen.to_string(), "127.0.0.1:9977");
    EXPECT_EQ(c.metrics.listen.host, "127.0.0.1");
    EXPECT_EQ(c.metrics.listen.port, 9977);
    EXPECT_EQ(c.metrics.max_queue_series, 4096u);
    EXPECT_EQ(c.metrics.max_cq_series, 4096u);
    EXPECT_EQ(c.metrics.publish_interval_ns, 1'000'000'000);
    EXPECT_EQ(c.metrics.web_config, "");
    EXPECT_TRUE(c.collectors.napi);
    EXPECT_TRUE(c.collectors.rdma);
    EXPECT_TRUE(c.collectors.skb_bytes.empty());
    EXPECT_TRUE(c.rules.empty());
    EXPECT_EQ(c.source, "test.yaml");
  }
}

TEST(ConfigDefaults, MinimalFileLoads) {
  auto r = load_config(good("minimal.yaml"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->rules.empty());
  EXPECT_EQ(r->source, good("minimal.yaml"));
}

TEST(ConfigFull, EveryFieldHasTheValueWritten) {
  auto r = load_config(good("full.yaml"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Config& c = *r;
  EXPECT_EQ(c.mode, Mode::kObserve);
  EXPECT_EQ(c.interval_ns, 250'000'000);
  EXPECT_EQ(c.state_file, "/var/lib/dimctl/state.json");
  EXPECT_EQ(c.metrics.listen.to_string(), "[::1]:9978");
  EXPECT_EQ(c.metrics.listen.host, "::1");
  EXPECT_EQ(c.metrics.listen.port, 9978);
  EXPECT_EQ(c.metrics.max_queue_series, 512u);
  EXPECT_EQ(c.metrics.max_cq_series, 128u);
  EXPECT_EQ(c.metrics.publish_interval_ns, 1'000'000'000);
  EXPECT_FALSE(c.collectors.napi);
  EXPECT_FALSE(c.collectors.rdma);
  EXPECT_EQ(c.collectors.skb_bytes, (std::vector<std::string>{"eth*", "dimtap0"}));
  ASSERT_EQ(c.rules.size(), 3u);

  const Rule& a = c.rules[0];
  EXPECT_EQ(a.name, "lab-tun");
  EXPECT_EQ(a.match.interface, (std::vector<std::string>{"dimtap*", "tap[0-3]"}));
  EXPECT_EQ(a.match.driver, (std::vector<std::string>{"tun"}));
  EXPECT_TRUE(a.match.rdma_device.empty());
  EXPECT_EQ(a.mode, Mode::kEnforce);
  EXPECT_EQ(a.algorithm, Algorithm::kNetCqe);
  EXPECT_EQ(a.min_profile, 1);
  EXPECT_EQ(a.max_profile, 3);
  ASSERT_TRUE(a.rx_profile.has_value());
  ASSERT_TRUE(a.tx_profile.has_value());
  EXPECT_EQ((*a.rx_profile)[0], (dim::Profile{2, 256, 0}));
  EXPECT_EQ((*a.rx_profile)[2], (dim::Profile{16, 64, 0}));
  EXPECT_EQ((*a.rx_profile)[4], (dim::Profile{64, 64, 7}));
  EXPECT_EQ((*a.tx_profile)[0], (dim::Profile{5, 128, 0}));
  EXPECT_EQ((*a.tx_profile)[4], (dim::Profile{65535, 65535, 0}));
  EXPECT_EQ(a.rate_limit_ns, 1'000'000'000);
  EXPECT_EQ(a.combine, CombinePolicy::kMaxProfile);
  EXPECT_FALSE(a.take_over_adaptive);
  EXPECT_FALSE(a.kernel_dim.has_value());
  EXPECT_EQ(a.compare, CompareWith::kModel);
  ASSERT_TRUE(a.model.has_value());
  EXPECT_EQ(a.model->completion_cost_ns, 500);
  EXPECT_EQ(a.model->interrupt_cost_ns, 3000);
  EXPECT_EQ(a.model->max_changes_per_s, 4u);
  EXPECT_EQ(a.model->timer, dim::TimerMode::kAbsolute);
  EXPECT_FALSE(a.model->shared_load);
  EXPECT_EQ(a.mark.line, 16);
  EXPECT_TRUE(a.applies_to_net());
  EXPECT_FALSE(a.applies_to_rdma());

  const Rule& b = c.rules[1];
  EXPECT_EQ(b.name, "storage.rxe");
  EXPECT_EQ(b.match.rdma_device, (std::vector<std::string>{"rxe*"}));
  EXPECT_EQ(b.match.driver, (std::vector<std::string>{"rdma_rxe", "mlx5_*"}));
  EXPECT_EQ(b.mode, Mode::kShadow);
  EXPECT_EQ(b.algorithm, Algorithm::kStatic);
  EXPECT_EQ(b.static_index, 8);
  EXPECT_EQ(b.kernel_dim, false);
  EXPECT_EQ(b.rate_limit_ns, 0);
  EXPECT_EQ(b.combine, CombinePolicy::kMinProfile);
  EXPECT_TRUE(b.take_over_adaptive);
  EXPECT_FALSE(b.min_profile.has_value());
  EXPECT_FALSE(b.max_profile.has_value());
  EXPECT_FALSE(b.compare.has_value());
  EXPECT_FALSE(b.model.has_value());
  EXPECT_FALSE(b.applies_to_net());
  EXPECT_TRUE(b.applies_to_rdma());

  const Rule& p = c.rules[2];
  EXPECT_EQ(p.name, "pinned");
  EXPECT_FALSE(p.mode.has_value());  // inherits the global mode at policy time
  EXPECT_EQ(p.algorithm, Algorithm::kOff);
  EXPECT_EQ(p.kernel_dim, true);
  EXPECT_EQ(p.rate_limit_ns, 100'000'000);
  EXPECT_TRUE(p.applies_to_net());
  EXPECT_TRUE(p.applies_to_rdma());
}

TEST(ConfigValues, WebConfigIsAnAbsolutePath) {
  // Read as a path only: the exporter's loader checks the file (dimctl check-config, run).
  EXPECT_EQ(must_parse("metrics:\n  web_config: /etc/dimctl/web/web.yml\n").metrics.web_config,
            "/etc/dimctl/web/web.yml");
  for (const char* bad : {"web.yml", "/etc/dimctl/web/", "''"}) {
    auto d = diagnostics(std::string("metrics:\n  web_config: ") + bad + "\n");
    ASSERT_EQ(d.size(), 1u) << bad;
    EXPECT_EQ(d[0].path, "metrics.web_config");
  }
}

TEST(ConfigValues, KernelDimSpellings) {
  for (auto [text, want] : {std::pair{"on", true}, std::pair{"off", false}, std::pair{"true", true},
                            std::pair{"false", false}}) {
    Config c = must_parse(fmt::format(
        "devices:\n  - name: s\n    match: {{rdma_device: rxe0}}\n    kernel_dim: {}\n", text));
    ASSERT_EQ(c.rules.size(), 1u);
    EXPECT_EQ(c.rules[0].kernel_dim, want) << text;
  }
}

TEST(ConfigValues, AlgorithmsAndStaticIndex) {
  Config c = must_parse(
      "devices:\n"
      "  - {name: a, match: {interface: eth0}, algorithm: net-eqe}\n"
      "  - {name: b, match: {interface: eth1}, algorithm: off, mode: shadow}\n"
      "  - {name: c, match: {interface: eth2}, algorithm: 'static:0'}\n"
      "  - {name: d, match: {rdma_device: mlx5_0}, algorithm: rdma}\n"
      "  - {name: e, match: {interface: eth3}}\n");
  ASSERT_EQ(c.rules.size(), 5u);
  EXPECT_EQ(c.rules[0].algorithm, Algorithm::kNetEqe);
  EXPECT_EQ(c.rules[1].algorithm, Algorithm::kOff);
  EXPECT_EQ(c.rules[2].algorithm, Algorithm::kStatic);
  EXPECT_EQ(c.rules[2].static_index, 0);
  EXPECT_EQ(c.rules[3].algorithm, Algorithm::kRdma);
  EXPECT_FALSE(c.rules[4].algorithm.has_value());
}

// Metric labels and the JSON API spelt algorithms with underscores before the one vocabulary; a
// value copied from them into a config still reads, and is written the config's way.
TEST(ConfigValues, FormerAlgorithmSpellingsAreAliases) {
  Config c = must_parse(
      "devices:\n"
      "  - {name: a, match: {interface: eth0}, algorithm: net_eqe}\n"
      "  - {name: b, match: {interface: eth1}, algorithm: net_cqe}\n"
      "  - {name: c, match: {interface: eth2}, algorithm: model_cqe}\n");
  ASSERT_EQ(c.rules.size(), 3u);
  EXPECT_EQ(c.rules[0].algorithm, Algorithm::kNetEqe);
  EXPECT_EQ(c.rules[1].algorithm, Algorithm::kNetCqe);
  EXPECT_EQ(c.rules[2].algorithm, Algorithm::kModelCqe);
  EXPECT_EQ(algorithm_name(*c.rules[1].algorithm), "net-cqe");
  EXPECT_EQ(algorithm_name(*c.rules[2].algorithm), "model-cqe");
  EXPECT_EQ(algorithm_name(Algorithm::kStatic, 3), "static:3");
  // The message offers the names only, not the aliases.
  EXPECT_EQ(
      diagnostics("devices:\n  - {name: a, match: {interface: e}, algorithm: net}\n")[0].reason,
      "'net' is not one of net-eqe, net-cqe, rdma, off, model, model-cqe");
}

TEST(ConfigValues, CompatFileLoads) {
  auto r = load_config(good("compat.yaml"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->interval_ns, 1'500'000);
  ASSERT_EQ(r->rules.size(), 2u);
  EXPECT_EQ(r->rules[0].algorithm, Algorithm::kNetCqe);
  EXPECT_EQ(r->rules[1].algorithm, Algorithm::kModelCqe);
}

// The one duration grammar (dimctl/common/duration.h): decimals in the config too.
TEST(ConfigValues, DecimalDurations) {
  Config c = must_parse(
      "interval: 1.5ms\n"
      "metrics: {publish_interval: 0.25s}\n"
      "devices:\n"
      "  - name: a\n"
      "    match: {interface: eth0}\n"
      "    algorithm: model\n"
      "    rate_limit: 2.5ms\n"
      "    model: {completion_cost: 1.5us, interrupt_cost: .5us}\n");
  EXPECT_EQ(c.interval_ns, 1'500'000);
  EXPECT_EQ(c.metrics.publish_interval_ns, 250'000'000);
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(c.rules[0].rate_limit_ns, 2'500'000);
  EXPECT_EQ(c.rules[0].model->completion_cost_ns, 1'500);
  EXPECT_EQ(c.rules[0].model->interrupt_cost_ns, 500);
  EXPECT_EQ(diagnostics("interval: 1.0000001ns\n")[0].reason,
            "'1.0000001ns' is not a whole number of nanoseconds");
  EXPECT_EQ(diagnostics("interval: 99999999999s\n")[0].reason,
            "'99999999999s' is too long (durations end at about 292 years)");
  EXPECT_EQ(diagnostics("interval: 0.5ms\n")[0].reason, "0.5ms is out of range 1ms..10s");
}

TEST(ConfigValues, ModelCostsMeasuredByDefaultExplicitValuesMarked) {
  Config c = must_parse(
      "devices:\n"
      "  - name: a\n"
      "    match: {interface: eth0}\n"
      "    algorithm: model\n"
      "    model: {interrupt_cost: 3us}\n"
      "  - name: b\n"
      "    match: {interface: eth1}\n"
      "    algorithm: model\n"
      "    model: {costs: defaults}\n");
  ASSERT_EQ(c.rules.size(), 2u);
  EXPECT_TRUE(c.rules[0].model->measured_costs);
  EXPECT_TRUE(c.rules[0].model->interrupt_cost_set);
  EXPECT_FALSE(c.rules[0].model->completion_cost_set);
  EXPECT_EQ(c.rules[0].model->interrupt_cost_ns, 3'000);
  EXPECT_FALSE(c.rules[1].model->measured_costs);
  EXPECT_FALSE(c.rules[1].model->interrupt_cost_set);
  EXPECT_TRUE(seam::ModelSettings{}.measured_costs);
  EXPECT_FALSE(diagnostics("devices:\n"
                           "  - name: a\n"
                           "    match: {interface: eth0}\n"
                           "    model: {costs: guessed}\n")
                   .empty());
}

TEST(ConfigValues, ModelObjectiveLatencyByDefaultEfficiencyWithABudget) {
  Config c = must_parse(
      "devices:\n"
      "  - name: a\n"
      "    match: {interface: eth0}\n"
      "    algorithm: model\n"
      "    model: {objective: efficiency, latency_budget: 50us}\n"
      "  - name: b\n"
      "    match: {interface: eth1}\n"
      "    algorithm: model\n"
      "    model: {objective: latency}\n"
      "  - name: c\n"
      "    match: {interface: eth2}\n"
      "    algorithm: model\n"
      "    model: {max_changes: 3}\n");
  ASSERT_EQ(c.rules.size(), 3u);
  EXPECT_EQ(c.rules[0].model->objective, dim::Objective::kEfficiency);
  EXPECT_EQ(c.rules[0].model->latency_budget_ns, 50'000);
  EXPECT_EQ(c.rules[1].model->objective, dim::Objective::kLatency);
  EXPECT_EQ(c.rules[1].model->latency_budget_ns, 0);
  EXPECT_EQ(c.rules[2].model->objective, dim::Objective::kLatency);
  EXPECT_EQ(seam::ModelSettings{}.objective, dim::Objective::kLatency);
  // Settings that differ only in the objective or the budget are different settings (the
  // controller's table cache and reload compare them).
  seam::ModelSettings x = *c.rules[0].model, y = x;
  y.latency_budget_ns = 25'000;
  EXPECT_NE(x, y);
  y = x;
  y.objective = dim::Objective::kLatency;
  EXPECT_NE(x, y);
}

TEST(ConfigErrors, ModelObjectiveAndBudgetNeedEachOther) {
  auto rule = [](const char* model) {
    return diagnostics(
        fmt::format("devices:\n  - name: a\n    match: {{interface: eth0}}\n    algorithm: model\n"
                    "    model:\n{}",
                    model));
  };
  struct Case {
    const char* model;
    const char* path;
    int line, column;
    const char* reason;
  };
  for (const Case& k : {
           Case{"      objective: efficiency\n", "devices[0].model.objective", 6, 18,
                "objective: efficiency needs latency_budget"},
           Case{"      latency_budget: 50us\n", "devices[0].model.latency_budget", 6, 23,
                "latency_budget applies to objective: efficiency only"},
           Case{"      objective: latency\n      latency_budget: 50us\n",
                "devices[0].model.latency_budget", 7, 23,
                "latency_budget applies to objective: efficiency only"},
           Case{"      objective: efficiency\n      latency_budget: 0\n",
                "devices[0].model.latency_budget", 7, 23,
                "latency_budget must be above 0 with objective: efficiency"},
           Case{"      objective: efficiency\n      latency_budget: 2s\n",
                "devices[0].model.latency_budget", 7, 23, "2s is out of range 0..1s"},
           Case{"      objective: efficiency\n      latency_budget: 50\n",
                "devices[0].model.latency_budget", 7, 23, "50"},
           Case{"      objective: throughput\n      latency_budget: 50us\n",
                "devices[0].model.objective", 6, 18,
                "'throughput' is not one of latency, efficiency"},
       }) {
    auto d = rule(k.model);
    ASSERT_EQ(d.size(), 1u) << k.model << (d.empty() ? "" : d[1].to_string());
    EXPECT_EQ(d[0].path, k.path) << k.model;
    EXPECT_EQ(d[0].line, k.line) << k.model;
    EXPECT_EQ(d[0].column, k.column) << k.model;
    EXPECT_NE(d[0].reason.find(k.reason), std::string::npos) << d[0].to_string();
  }
}

TEST(ConfigValues, ListenForms) {
  struct Case {
    const char* listen;
    const char* host;
    uint16_t port;
  };
  for (const Case& k : {Case{"127.0.0.1:9977", "127.0.0.1", 9977}, Case{"0.0.0.0:1", "0.0.0.0", 1},
                        Case{"localhost:65535", "localhost", 65535},
                        Case{"'[::]:9977'", "::", 9977}, Case{"'[fe80::1]:80'", "fe80::1", 80},
                        // Empty host: every IPv4 and IPv6 address, as --web.listen-address.
                        Case{"':9977'", "", 9977}, Case{":1", "", 1}}) {
    Config c = must_parse(fmt::format("metrics:\n  listen: {}\n", k.listen));
    EXPECT_EQ(c.metrics.listen.host, k.host) << k.listen;
    EXPECT_EQ(c.metrics.listen.port, k.port) << k.listen;
  }
  for (const char* bad :
       {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:x", "[::1]", "[::1]9977", "[nope]:1", "300.1.1.1:80",
        "127.0.0.1:+80", ":0", ":", ":x", "9977", "::9977", "[]:9977"}) {
    auto d = diagnostics(fmt::format("metrics:\n  listen: \"{}\"\n", bad));
    ASSERT_EQ(d.size(), 1u) << bad;
    EXPECT_EQ(d[0].path, "metrics.listen") << bad;
    EXPECT_EQ(d[0].line, 2) << bad;
  }
}

// metrics.listen is read by the one parser (dimctl/common/listen_address.h) that
// --web.listen-address and the exporter use: same texts accepted, same words when refused.
TEST(ConfigValues, MetricsListenIsTheOneParser) {
  for (const char* text : {"127.0.0.1:9977", ":9977", "[::1]:1", "localhost:80"}) {
    Config c = must_parse(fmt::format("metrics:\n  listen: \"{}\"\n", text));
    EXPECT_EQ(c.metrics.listen, *parse_listen_address(text)) << text;
  }
  for (const char* text : {"example.com:9977", "127.0.0.1", "[::1]9977", "127.0.0.1:0", ":0"}) {
    auto d = diagnostics(fmt::format("metrics:\n  listen: \"{}\"\n", text));
    ASSERT_EQ(d.size(), 1u) << text;
    EXPECT_EQ(d[0].reason, parse_listen_address(text).error().message()) << text;
  }
}

TEST(ConfigValues, ListenWithoutHostMeansEveryAddress) {
  // The same ":PORT" form --web.listen-address takes; passed to the exporter as written, whose
  // empty host binds the dual-stack wildcard.
  auto r = load_config(good("listen-all-addresses.yaml"));
  ASSERT_TRUE(r.ok()) << r.error().context();
  EXPECT_EQ(r->metrics.listen.to_string(), ":9977");
  EXPECT_EQ(r->metrics.listen.host, "");
  EXPECT_EQ(r->metrics.listen.port, 9977);
}

TEST(ConfigErrors, EveryProblemIsReportedInFileOrder) {
  auto d = diagnostics(
      "mode: bogus\n"
      "interval: 5\n"
      "devices:\n"
      "  - name: a\n"
      "    match: {interface: eth0}\n"
      "    profiles: {min: 4, max: 2}\n"
      "  - name: a\n"
      "    match: {interface: eth1}\n");
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].line, 1);
  EXPECT_EQ(d[0].path, "mode");
  EXPECT_EQ(d[1].line, 2);
  EXPECT_EQ(d[1].path, "interval");
  EXPECT_EQ(d[2].line, 6);
  EXPECT_EQ(d[2].path, "devices[0].profiles.max");
  EXPECT_EQ(d[3].line, 7);
  EXPECT_EQ(d[3].path, "devices[1].name");
  EXPECT_EQ(d[0].to_string().rfind("test.yaml:1:7: mode: ", 0), 0u) << d[0].to_string();

  auto r = parse_config("mode: bogus\ninterval: 5\n", "x.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::count(r.error().context().begin(), r.error().context().end(), '\n'), 1);
}

TEST(ConfigErrors, KeysInTheWrongSectionPointToTheRightOne) {
  EXPECT_NE(diagnostics("listen: 127.0.0.1:1\n")[0].reason.find("did you mean 'metrics.listen'?"),
            std::string::npos);
  EXPECT_NE(diagnostics("rules: []\n")[0].reason.find("did you mean 'devices'?"),
            std::string::npos);
  auto d = diagnostics("devices:\n  - name: a\n    match: {driver: x}\n    max: 3\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].reason.find("did you mean 'profiles.max'?"), std::string::npos);
  EXPECT_EQ(d[0].line, 4);
  EXPECT_EQ(d[0].column, 5);
}

TEST(ConfigErrors, ErrorCountIsCapped) {
  std::string text = "devices:\n";
  for (int i = 0; i < 200; ++i)
    text += fmt::format("  - {{name: r{}, match: {{interface: eth0}}, mode: x}}\n", i);
  auto d = diagnostics(text);
  EXPECT_LE(d.size(), 51u);
  EXPECT_EQ(d.back().reason, "too many errors, stopping here");
}

TEST(ConfigErrors, UnreadableFileCarriesErrno) {
  auto r = load_config("/nonexistent/dimctl.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ENOENT);
  EXPECT_NE(r.error().message().find("/nonexistent/dimctl.yaml"), std::string::npos);
}

TEST(ConfigErrors, YamlTypesFollowTheCoreSchema) {
  // yaml-cpp alone would read `yes` as true and 123 as a string; the schema would not.
  EXPECT_EQ(diagnostics("collectors:\n  rdma: on\n")[0].reason,
            "expected true or false, got string 'on'");
  EXPECT_EQ(diagnostics("devices:\n  - name: 7\n    match: {driver: x}\n")[0].reason,
            "expected a string, got integer '7' (quote it: \"7\")");
  EXPECT_EQ(diagnostics("metrics:\n  max_cq_series: \"12\"\n")[0].reason,
            "expected an integer, got string '12'");
  Config c = must_parse("devices:\n  - name: \"7\"\n    match: {driver: \"8139too\"}\n");
  EXPECT_EQ(c.rules.at(0).name, "7");
}

TEST(Globs, Validation) {
  std::string why;
  for (const char* ok : {"eth0", "eth*", "en[ops]*", "tap[!0]", "x[]]", "a\\*b", "*", "?"})
    EXPECT_TRUE(validate_glob(ok, 15, why)) << ok << ": " << why;
  for (const char* bad : {"", "eth[0", "eth\\", "a/b", "a b", "x[]"})
    EXPECT_FALSE(validate_glob(bad, 15, why)) << bad;
  EXPECT_TRUE(validate_glob("abcdefghijklmno", 15, why));
  EXPECT_TRUE(validate_glob("abcdefghijklmno*", 15, why));
  EXPECT_FALSE(validate_glob("abcdefghijklmnop", 15, why));
  EXPECT_TRUE(validate_glob("abcdefghijklmnop", 0, why));  // drivers: no length limit
}

TEST(Suggestions, TyposAndPrefixes) {
  const std::vector<std::string> keys{"interval", "mode", "metrics", "devices"};
  EXPECT_EQ(suggest("intreval", keys), "interval");
  EXPECT_EQ(suggest("mdoe", keys), "mode");
  EXPECT_EQ(suggest("device", keys), "devices");
  EXPECT_EQ(suggest("zzz", keys), std::nullopt);
  EXPECT_EQ(suggest("collectors", keys), std::nullopt);
  EXPECT_EQ(edit_distance("abc", "acb"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

// Mutated files (bytes flipped, deleted, duplicated): the parser must answer with diagnostics,
// never throw or crash (yaml-cpp throws from several accessors; run under ASan in CI builds).
TEST(Robustness, MutatedConfigsNeverThrow) {
  std::vector<std::string> corpus;
  for (const char* dir : {"good", "bad"}) {
    for (const auto& e : fs::directory_iterator(fs::path(DIMCTL_CONFIG_TEST_DIR) / dir)) {
      std::ifstream in(e.path());
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  ASSERT_GT(corpus.size(), 30u);
  std::mt19937 rng(42);  // fixed: a failure must reproduce
  const std::string alphabet = " :-[]{}#*&!|>'\"\n\t,?0123456789abcxyz";
  size_t parsed = 0;
  for (const std::string& base : corpus) {
    for (int round = 0; round < 25; ++round) {
      std::string text = base;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits && !text.empty(); ++k) {
        size_t pos = rng() % text.size();
        switch (rng() % 3) {
          case 0:
            text[pos] = alphabet[rng() % alphabet.size()];
            break;
          case 1:
            text.erase(pos, 1 + rng() % 8);
            break;
          default:
            text.insert(pos, text.substr(pos, 1 + rng() % 16));
        }
      }
      if (const char* dump = std::getenv("DIMCTL_FUZZ_DUMP")) {
        std::ofstream(dump, std::ios::trunc) << text;
      }
      Config cfg;
      std::vector<Diagnostic> diags;
      bool ok = false;
      EXPECT_NO_THROW(ok = parse_config_diagnostics(text, "fuzz.yaml", cfg, diags)) << text;
      EXPECT_EQ(ok, diags.empty()) << text;
      ++parsed;
    }
  }
  EXPECT_GT(parsed, 1000u);  // the corpus has 59 files
}

// Every YAML file we ship must load: `sudo make run` and the docs depend on them.
TEST(ShippedConfigs, AllLoad) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(DIMCTL_DEPLOY_CONFIG_DIR))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  ASSERT_GE(files.size(), 3u) << "expected dimctl.yaml and at least two examples";
  for (const auto& f : files) {
    auto r = load_config(f.string());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  }
}

TEST(ShippedConfigs, DefaultConfigIsShadowWithoutEnforceRules) {
  auto r = load_config((fs::path(DIMCTL_DEPLOY_CONFIG_DIR) / "dimctl.yaml").string());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->mode, Mode::kShadow);
  EXPECT_EQ(r->metrics.listen.to_string(), "127.0.0.1:9977");
  for (const auto& rule : r->rules)
    EXPECT_NE(rule.mode.value_or(r->mode), Mode::kEnforce) << rule.name;
}

}  // namespace
}  // namespace dimctl::config
