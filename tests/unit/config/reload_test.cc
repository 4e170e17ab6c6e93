// diff_for_reload: which keys a SIGHUP reload applies live, which keep their running value until
// a restart, and the config the daemon runs with afterwards.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dimctl/config/config.h"
#include "dimctl/config/reload.h"

namespace dimctl::config {
namespace {

Config parse(std::string_view yaml) {
  auto r = parse_config(yaml, "reload.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().context());
  return r.ok() ? std::move(r).value() : Config{};
}

const ReloadChange* find(const std::vector<ReloadChange>& list, const std::string& key) {
  for (const auto& c : list)
    if (c.key == key) return &c;
  return nullptr;
}

// The change of `key` in `list` as "old -> new", or "" when the key is not there.
std::string change_of(const std::vector<ReloadChange>& list, const std::string& key) {
  const ReloadChange* c = find(list, key);
  return c != nullptr ? c->old_value + " -> " + c->new_value : "";
}

std::vector<std::string> keys(const std::vector<ReloadChange>& list) {
  std::vector<std::string> out;
  for (const auto& c : list) out.push_back(c.key);
  return out;
}

constexpr std::string_view kRunning = R"(
mode: shadow
interval: 20ms
state_file: /run/dimctl/state.json
metrics:
  listen: 127.0.0.1:9977
  max_queue_series: 4096
  max_cq_series: 4096
  publish_interval: 250ms
collectors:
  napi: true
  rdma: true
  skb_bytes: ["dimtap*"]
devices:
  - name: a
    match: {interface: eth0}
    mode: enforce
  - name: b
    match: {interface: eth1}
)";

TEST(DiffForReload, SameConfigChangesNothing) {
  Config running = parse(kRunning);
  ReloadDiff d = diff_for_reload(running, parse(kRunning));
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.next.interval_ns, running.interval_ns);
}

TEST(DiffForReload, MovingARuleInTheFileIsNoChange) {
  // Same rules, written elsewhere (comments added above): only their SourceMark differs.
  Config running = parse(kRunning);
  Config fresh = parse(std::string("# a comment\n# another\n") + std::string(kRunning));
  ASSERT_NE(fresh.rules[0].mark.line, running.rules[0].mark.line);
  EXPECT_TRUE(diff_for_reload(running, fresh).empty());
}

TEST(DiffForReload, LiveKeysAreAppliedWithOldAndNewValues) {
  Config running = parse(kRunning);
  Config fresh = running;
  fresh.mode = seam::Mode::kObserve;
  fresh.interval_ns = 10'000'000;
  fresh.metrics.publish_interval_ns = 1'000'000'000;
  fresh.metrics.max_queue_series = 100;
  fresh.metrics.max_cq_series = 50;
  fresh.collectors.skb_bytes = {"dimtap0", "veth*"};
  ReloadDiff d = diff_for_reload(running, fresh);
  EXPECT_TRUE(d.needs_restart.empty()) << keys(d.needs_restart).front();
  EXPECT_EQ(keys(d.applied),
            (std::vector<std::string>{"mode", "interval", "metrics.publish_interval",
                                      "metrics.max_queue_series", "metrics.max_cq_series",
                                      "collectors.skb_bytes"}));
  EXPECT_EQ(change_of(d.applied, "interval"), "20ms -> 10ms");
  EXPECT_EQ(change_of(d.applied, "metrics.publish_interval"), "250ms -> 1s");
  EXPECT_EQ(change_of(d.applied, "metrics.max_queue_series"), "4096 -> 100");
  EXPECT_EQ(change_of(d.applied, "metrics.max_cq_series"), "4096 -> 50");
  EXPECT_EQ(change_of(d.applied, "mode"), "shadow -> observe");
  EXPECT_EQ(change_of(d.applied, "collectors.skb_bytes"), "[dimtap*] -> [dimtap0, veth*]");
  // Everything applied is what runs next.
  EXPECT_EQ(d.next.mode, seam::Mode::kObserve);
  EXPECT_EQ(d.next.interval_ns, 10'000'000);
  EXPECT_EQ(d.next.metrics.publish_interval_ns, 1'000'000'000);
  EXPECT_EQ(d.next.metrics.max_queue_series, 100u);
  EXPECT_EQ(d.next.metrics.max_cq_series, 50u);
  EXPECT_EQ(d.next.collectors.skb_bytes, fresh.collectors.skb_bytes);
  // So reloading the same file again reports nothing.
  EXPECT_TRUE(diff_for_reload(d.next, fresh).empty());
}

TEST(DiffForReload, WebConfigNeedsARestart) {
  Config running = parse("metrics:\n  web_config: /etc/dimctl/web.yml\n");
  Config fresh = parse("metrics:\n  web_config: /etc/dimctl/other.yml\n");
  ReloadDiff d = diff_for_reload(running, fresh);
  EXPECT_TRUE(d.applied.empty());
  EXPECT_EQ(keys(d.needs_restart), (std::vector<std::string>{"metrics.web_config"}));
  EXPECT_EQ(change_of(d.needs_restart, "metrics.web_config"),
            "/etc/dimctl/web.yml -> /etc/dimctl/other.yml");
  EXPECT_EQ(d.next.metrics.web_config, "/etc/dimctl/web.yml");
}

TEST(DiffForReload, RestartKeysKeepTheRunningValue) {
  Config running = parse(kRunning);
  Config fresh = parse(R"(
mode: shadow
interval: 20ms
state_file: /var/lib/dimctl/state.json
metrics:
  listen: ":9978"
  max_queue_series: 4096
  max_cq_series: 4096
  publish_interval: 250ms
collectors:
  napi: false
  rdma: false
  skb_bytes: ["dimtap*"]
devices:
  - name: a
    match: {interface: eth0}
    mode: enforce
  - name: b
    match: {interface: eth1}
)");
  ReloadDiff d = diff_for_reload(running, fresh);
  EXPECT_TRUE(d.applied.empty()) << keys(d.applied).front();
  EXPECT_EQ(keys(d.needs_restart), (std::vector<std::string>{"collectors.napi", "collectors.rdma",
                                                             "metrics.listen", "state_file"}));
  EXPECT_EQ(change_of(d.needs_restart, "metrics.listen"), "127.0.0.1:9977 -> :9978");
  EXPECT_EQ(change_of(d.needs_restart, "collectors.napi"), "true -> false");
  // `next` is the running config for every one of them.
  EXPECT_EQ(d.next.state_file, running.state_file);
  EXPECT_EQ(d.next.metrics.listen.to_string(), "127.0.0.1:9977");
  EXPECT_EQ(d.next.metrics.listen.host, "127.0.0.1");
  EXPECT_EQ(d.next.metrics.listen.port, 9977);
  EXPECT_TRUE(d.next.collectors.napi);
  EXPECT_TRUE(d.next.collectors.rdma);
  // So the next reload of the same file warns again (it still differs from what runs).
  EXPECT_EQ(diff_for_reload(d.next, fresh).needs_restart.size(), 4u);
}

TEST(DiffForReload, SkbBytesToOrFromEmptyNeedsARestart) {
  Config with = parse(kRunning);
  Config without = with;
  without.collectors.skb_bytes.clear();
  for (const auto& [running, fresh] : {std::pair{with, without}, std::pair{without, with}}) {
    ReloadDiff d = diff_for_reload(running, fresh);
    EXPECT_TRUE(d.applied.empty());
    ASSERT_EQ(keys(d.needs_restart), std::vector<std::string>{"collectors.skb_bytes"});
    EXPECT_EQ(d.needs_restart[0].old_value,
              running.collectors.skb_bytes.empty() ? "[]" : "[dimtap*]");
    EXPECT_EQ(d.next.collectors.skb_bytes, running.collectors.skb_bytes);
  }
}

TEST(DiffForReload, MixedChangeSplitsAndNextTakesOnlyTheLiveOnes) {
  Config running = parse(kRunning);
  Config fresh = running;
  fresh.interval_ns = 50'000'000;
  fresh.metrics.listen = *parse_listen_address("[::1]:9978");
  fresh.metrics.max_queue_series = 64;
  ReloadDiff d = diff_for_reload(running, fresh);
  EXPECT_EQ(keys(d.applied), (std::vector<std::string>{"interval", "metrics.max_queue_series"}));
  EXPECT_EQ(keys(d.needs_restart), std::vector<std::string>{"metrics.listen"});
  EXPECT_EQ(d.next.interval_ns, 50'000'000);
  EXPECT_EQ(d.next.metrics.max_queue_series, 64u);
  EXPECT_EQ(d.next.metrics.listen.to_string(), "127.0.0.1:9977");
}

TEST(DiffForReload, DeviceRulesAreAppliedAndNamed) {
  Config running = parse(kRunning);
  {
    Config fresh = running;
    fresh.rules[1].rate_limit_ns = 0;
    fresh.rules.push_back(fresh.rules[0]);
    fresh.rules.back().name = "c";
    fresh.rules.back().match.interface = {"eth2"};
    ReloadDiff d = diff_for_reload(running, fresh);
    ASSERT_EQ(keys(d.applied), std::vector<std::string>{"devices"});
    EXPECT_EQ(d.applied[0].old_value, "[a, b]");
    EXPECT_EQ(d.applied[0].new_value, "[a, b, c], new or edited: b, c");
    EXPECT_EQ(d.next.rules.size(), 3u);
  }
  {
    Config fresh = running;
    std::swap(fresh.rules[0], fresh.rules[1]);
    ReloadDiff d = diff_for_reload(running, fresh);
    ASSERT_EQ(keys(d.applied), std::vector<std::string>{"devices"});
    EXPECT_EQ(d.applied[0].new_value, "[b, a], order changed");
  }
  {
    Config fresh = running;
    fresh.rules.pop_back();
    ReloadDiff d = diff_for_reload(running, fresh);
    ASSERT_EQ(keys(d.applied), std::vector<std::string>{"devices"});
    EXPECT_EQ(d.applied[0].new_value, "[a]");
  }
}

TEST(SameRule, EveryFieldButThePositionCounts) {
  Config c = parse(kRunning);
  Rule a = c.rules[0];
  Rule b = a;
  b.mark = {99, 7};
  EXPECT_TRUE(same_rule(a, b));
  auto differs = [&](auto edit) {
    Rule x = a;
    edit(x);
    return !same_rule(a, x);
  };
  EXPECT_TRUE(differs([](Rule& r) { r.name = "z"; }));
  EXPECT_TRUE(differs([](Rule& r) { r.match.driver = {"ice"}; }));
  EXPECT_TRUE(differs([](Rule& r) { r.match.rdma_device = {"mlx5_*"}; }));
  EXPECT_TRUE(differs([](Rule& r) { r.mode = seam::Mode::kShadow; }));
  EXPECT_TRUE(differs([](Rule& r) { r.algorithm = seam::Algorithm::kOff; }));
  EXPECT_TRUE(differs([](Rule& r) { r.static_index = 2; }));
  EXPECT_TRUE(differs([](Rule& r) { r.min_profile = 1; }));
  EXPECT_TRUE(differs([](Rule& r) { r.max_profile = 3; }));
  EXPECT_TRUE(differs([](Rule& r) { r.rx_profile = std::array<dim::Profile, 5>{}; }));
  EXPECT_TRUE(differs([](Rule& r) { r.tx_profile = std::array<dim::Profile, 5>{}; }));
  EXPECT_TRUE(differs([](Rule& r) { r.rate_limit_ns = 1; }));
  EXPECT_TRUE(differs([](Rule& r) { r.combine = seam::CombinePolicy::kMaxProfile; }));
  EXPECT_TRUE(differs([](Rule& r) { r.take_over_adaptive = false; }));
  EXPECT_TRUE(differs([](Rule& r) { r.kernel_dim = true; }));
  EXPECT_TRUE(differs([](Rule& r) { r.compare = CompareWith::kModel; }));
  EXPECT_TRUE(differs([](Rule& r) { r.model = seam::ModelSettings{}; }));
  EXPECT_TRUE(differs([](Rule& r) { r.method = seam::Method::kEthtool; }));
  EXPECT_TRUE(
      differs([](Rule& r) { r.software_profiles = std::array<seam::SoftwareProfile, 5>{}; }));
  EXPECT_TRUE(differs([](Rule& r) {
    r.model = seam::ModelSettings{};
    r.model->interrupt_cost_ns = 1;
  }));
}

}  // namespace
}  // namespace dimctl::config
