// ConfigPolicy: allowlist cap, rule mapping, matching by glob/driver/kind, conflicts.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "dimctl/config/config.h"
#include "dimctl/config/config_policy.h"

namespace dimctl::config {
namespace {

using seam::Algorithm;
using seam::CombinePolicy;
using seam::DeviceInfo;
using seam::DeviceKind;
using seam::DevicePolicy;
using seam::Mode;

ConfigPolicy policy(std::string_view yaml) {
  auto r = parse_config(yaml, "policy.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().context());
  return ConfigPolicy(r.ok() ? std::move(r).value() : Config{});
}

DeviceInfo net(std::string name, std::string driver = "") {
  return {DeviceKind::kNet, std::move(name), std::move(driver)};
}
DeviceInfo rdma(std::string name, std::string driver = "") {
  return {DeviceKind::kRdma, std::move(name), std::move(driver)};
}

TEST(ConfigPolicy, UnnamedDevicesAreCappedAtShadow) {
  for (auto [global, want] :
       {std::pair{Mode::kObserve, Mode::kObserve}, std::pair{Mode::kShadow, Mode::kShadow},
        std::pair{Mode::kEnforce, Mode::kShadow}}) {
    Config cfg;
    cfg.mode = global;
    ConfigPolicy p(cfg);
    DevicePolicy n = p.policy_for(net("eth0", "virtio_net"));
    EXPECT_EQ(n.mode, want);
    EXPECT_EQ(n.algorithm, Algorithm::kNetEqe);
    EXPECT_EQ(n.rule, "");
    EXPECT_EQ(n.conflict, "");
    DevicePolicy r = p.policy_for(rdma("mlx5_0"));
    EXPECT_EQ(r.mode, want);
    EXPECT_EQ(r.algorithm, Algorithm::kRdma);
  }
}

TEST(ConfigPolicy, EnforceOnlyThroughARule) {
  ConfigPolicy p = policy(
      "mode: enforce\n"
      "devices:\n"
      "  - name: lab\n"
      "    match: {interface: [\"dimtap*\"]}\n");
  EXPECT_EQ(p.policy_for(net("dimtap0", "tun")).mode, Mode::kEnforce);  // inherits global
  EXPECT_EQ(p.policy_for(net("dimtap0", "tun")).rule, "lab");
  EXPECT_EQ(p.policy_for(net("eth0", "tun")).mode, Mode::kShadow);  // not named
  EXPECT_EQ(p.policy_for(net("eth0", "tun")).rule, "");
}

TEST(ConfigPolicy, RuleFieldsAreMapped) {
  ConfigPolicy p = policy(
      "mode: observe\n"
      "devices:\n"
      "  - name: lab\n"
      "    match: {interface: eth0}\n"
      "    mode: enforce\n"
      "    algorithm: static:2\n"
      "    profiles: {min: 1, max: 3}\n"
      "    rx_profile: [{usec: 1, pkts: 2}, {usec: 3, pkts: 4}, {usec: 5, pkts: 6},\n"
      "                 {usec: 7, pkts: 8}, {usec: 9, pkts: 10, comps: 11}]\n"
      "    rate_limit: 250ms\n"
      "    combine: min\n"
      "    adaptive: leave\n");
  DevicePolicy d = p.policy_for(net("eth0"));
  EXPECT_EQ(d.mode, Mode::kEnforce);
  EXPECT_EQ(d.algorithm, Algorithm::kStatic);
  EXPECT_EQ(d.static_index, 2);
  EXPECT_EQ(d.min_profile, 1);
  EXPECT_EQ(d.max_profile, 3);
  ASSERT_TRUE(d.rx_profiles.has_value());
  EXPECT_EQ((*d.rx_profiles)[0], (dim::Profile{1, 2, 0}));
  EXPECT_EQ((*d.rx_profiles)[4], (dim::Profile{9, 10, 11}));
  EXPECT_FALSE(d.tx_profiles.has_value());
  EXPECT_EQ(d.rate_limit_ns, 250'000'000);
  EXPECT_EQ(d.combine, CombinePolicy::kMinProfile);
  EXPECT_FALSE(d.take_over_adaptive);
  EXPECT_FALSE(d.rdma_kernel_dim.has_value());
  EXPECT_EQ(d.rule, "lab");
  EXPECT_EQ(d.conflict, "");
}

TEST(ConfigPolicy, ModelAlgorithmCompareAndSettingsAreMapped) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: both-kinds\n"
      "    match: {driver: mlx5*}\n"
      "    algorithm: model\n"
      "    compare: dim\n"
      "    model: {interrupt_cost: 4us, max_changes: 2, timer: idle-gap}\n"
      "  - name: cqe\n"
      "    match: {interface: eth9}\n"
      "    algorithm: model-cqe\n"
      "  - name: dim-vs-model\n"
      "    match: {interface: eth8}\n"
      "    compare: model\n");
  // `model` names net and RDMA devices alike.
  for (const DeviceInfo& dev : {net("eth0", "mlx5_core"), rdma("mlx5_0", "mlx5_core")}) {
    DevicePolicy d = p.policy_for(dev);
    EXPECT_EQ(d.algorithm, Algorithm::kModel) << dev.name;
    EXPECT_TRUE(d.compare);
    EXPECT_EQ(d.model.completion_cost_ns, 1000);  // default kept
    EXPECT_EQ(d.model.interrupt_cost_ns, 4000);
    EXPECT_EQ(d.model.max_changes_per_s, 2u);
    EXPECT_EQ(d.model.timer, dim::TimerMode::kIdleGap);
    EXPECT_TRUE(d.model.shared_load);  // default kept
  }
  // `model-cqe` is a net algorithm, like net-cqe.
  DevicePolicy c = p.policy_for(net("eth9"));
  EXPECT_EQ(c.algorithm, Algorithm::kModelCqe);
  EXPECT_FALSE(c.compare);
  EXPECT_EQ(c.model, seam::ModelSettings{});
  // compare: model on the default algorithm (net-eqe).
  DevicePolicy m = p.policy_for(net("eth8"));
  EXPECT_EQ(m.algorithm, Algorithm::kNetEqe);
  EXPECT_TRUE(m.compare);
  // A rule without the keys: no comparison.
  EXPECT_FALSE(policy("devices:\n  - {name: a, match: {driver: tun}}\n")
                   .policy_for(net("tap0", "tun"))
                   .compare);
}

TEST(ConfigPolicy, ModelCqeRuleNamesNoRdmaDevice) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: cqe\n"
      "    match: {driver: mlx5*}\n"
      "    algorithm: model-cqe\n");
  EXPECT_EQ(p.policy_for(net("eth0", "mlx5_core")).rule, "cqe");
  EXPECT_EQ(p.policy_for(rdma("mlx5_0", "mlx5_core")).rule, "");
}

TEST(ConfigPolicy, RulesDifferingInCompareOrModelSettingsConflict) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: a\n"
      "    match: {interface: eth0}\n"
      "    algorithm: model\n"
      "    compare: dim\n"
      "  - name: b\n"
      "    match: {driver: mlx5_core}\n"
      "    algorithm: model\n"
      "    model: {max_changes: 3}\n");
  DevicePolicy d = p.policy_for(net("eth0", "mlx5_core"));
  EXPECT_EQ(d.mode, Mode::kObserve);
  EXPECT_NE(d.conflict.find("compare on"), std::string::npos) << d.conflict;
  EXPECT_NE(d.conflict.find("max_changes 3"), std::string::npos) << d.conflict;
}

TEST(ConfigPolicy, RuleDefaultsMatchTheContractDefaults) {
  ConfigPolicy p = policy("devices:\n  - {name: a, match: {driver: tun}}\n");
  DevicePolicy d = p.policy_for(net("tap0", "tun"));
  DevicePolicy contract;
  EXPECT_EQ(d.mode, Mode::kShadow);
  EXPECT_EQ(d.algorithm, contract.algorithm);
  EXPECT_EQ(d.min_profile, contract.min_profile);
  EXPECT_EQ(d.max_profile, contract.max_profile);
  EXPECT_EQ(d.rate_limit_ns, contract.rate_limit_ns);
  EXPECT_EQ(d.combine, contract.combine);
  EXPECT_EQ(d.take_over_adaptive, contract.take_over_adaptive);
  EXPECT_EQ(d.rule, "a");
}

TEST(ConfigPolicy, GlobAndDriverMatching) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: nics\n"
      "    match: {interface: [\"eth[0-1]\", \"ens*\"], driver: [\"mlx5*\", ice]}\n");
  EXPECT_EQ(p.policy_for(net("eth0", "mlx5_core")).rule, "nics");
  EXPECT_EQ(p.policy_for(net("eth1", "ice")).rule, "nics");
  EXPECT_EQ(p.policy_for(net("ens3f0", "mlx5_core")).rule, "nics");
  EXPECT_EQ(p.policy_for(net("eth2", "mlx5_core")).rule, "");   // name outside the glob
  EXPECT_EQ(p.policy_for(net("eth0", "virtio_net")).rule, "");  // driver does not match
  EXPECT_EQ(p.policy_for(net("eth0", "")).rule, "");            // unknown driver never matches
  EXPECT_EQ(p.policy_for(net("xeth0", "ice")).rule, "");        // globs are anchored
}

TEST(ConfigPolicy, SelectorsBindDeviceKinds) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - {name: ib, match: {rdma_device: [\"mlx5_*\"]}, kernel_dim: on, mode: enforce, "
      "algorithm: rdma}\n"
      "  - {name: if, match: {interface: [\"mlx5_*\"]}, mode: observe}\n"
      "  - {name: drv, match: {driver: rdma_rxe}, kernel_dim: off, "
      "rx_profile: [{usec: 1, pkts: 1}, {usec: 2, pkts: 2}, {usec: 3, pkts: 3}, "
      "{usec: 4, pkts: 4}, {usec: 5, pkts: 5}]}\n"
      "  - {name: netonly, match: {driver: virtio_net}, algorithm: net-cqe}\n");
  // Same name, different kinds: each selector names its own kind only.
  DevicePolicy ib = p.policy_for(rdma("mlx5_0", "mlx5_core"));
  EXPECT_EQ(ib.rule, "ib");
  EXPECT_EQ(ib.mode, Mode::kEnforce);
  EXPECT_EQ(ib.algorithm, Algorithm::kRdma);
  EXPECT_EQ(ib.rdma_kernel_dim, true);
  EXPECT_EQ(p.policy_for(net("mlx5_0", "mlx5_core")).rule, "if");

  // A driver-only rule names both kinds; kind-specific settings land on their kind only.
  DevicePolicy rxe = p.policy_for(rdma("rxe0", "rdma_rxe"));
  EXPECT_EQ(rxe.rule, "drv");
  EXPECT_EQ(rxe.algorithm, Algorithm::kRdma);
  EXPECT_EQ(rxe.rdma_kernel_dim, false);
  EXPECT_FALSE(rxe.rx_profiles.has_value());
  DevicePolicy rxe_net = p.policy_for(net("rxe-net", "rdma_rxe"));
  EXPECT_EQ(rxe_net.rule, "drv");
  EXPECT_EQ(rxe_net.algorithm, Algorithm::kNetEqe);
  EXPECT_TRUE(rxe_net.rx_profiles.has_value());
  EXPECT_FALSE(rxe_net.rdma_kernel_dim.has_value());

  // A net algorithm narrows a driver-only rule to net devices.
  EXPECT_EQ(p.policy_for(net("eth0", "virtio_net")).rule, "netonly");
  EXPECT_EQ(p.policy_for(rdma("rxe1", "virtio_net")).rule, "");
}

TEST(ConfigPolicy, RuleNamingBothKindsUsesTheSelectorOfEachKind) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: nic\n"
      "    match: {interface: [\"ens1f*\"], rdma_device: [\"mlx5_*\"], driver: mlx5_core}\n"
      "    kernel_dim: on\n"
      "    tx_profile: [{usec: 1, pkts: 1}, {usec: 2, pkts: 2}, {usec: 3, pkts: 3}, "
      "{usec: 4, pkts: 4}, {usec: 5, pkts: 5}]\n");
  EXPECT_EQ(p.policy_for(net("ens1f0", "mlx5_core")).rule, "nic");
  EXPECT_TRUE(p.policy_for(net("ens1f0", "mlx5_core")).tx_profiles.has_value());
  EXPECT_EQ(p.policy_for(rdma("mlx5_1", "mlx5_core")).rule, "nic");
  EXPECT_EQ(p.policy_for(rdma("mlx5_1", "mlx5_core")).rdma_kernel_dim, true);
  EXPECT_EQ(p.policy_for(net("mlx5_1", "mlx5_core")).rule, "");   // interface glob decides
  EXPECT_EQ(p.policy_for(rdma("ens1f0", "mlx5_core")).rule, "");  // rdma_device glob decides
  EXPECT_EQ(p.policy_for(rdma("mlx5_1", "")).rule, "");           // driver unknown
}

TEST(ConfigPolicy, ConflictingRulesRefuseTheDevice) {
  ConfigPolicy p = policy(
      "mode: enforce\n"
      "devices:\n"
      "  - {name: a, match: {interface: [\"eth*\"]}}\n"
      "  - {name: b, match: {driver: virtio_net}, mode: shadow}\n");
  DevicePolicy d = p.policy_for(net("eth0", "virtio_net"));
  EXPECT_EQ(d.conflict, "matched by rules 'a' (mode enforce) and 'b' (mode shadow)");
  EXPECT_EQ(d.mode, Mode::kObserve);
  EXPECT_EQ(d.rule, "");
  // Each rule alone is fine.
  EXPECT_EQ(p.policy_for(net("eth0", "ice")).mode, Mode::kEnforce);
  EXPECT_EQ(p.policy_for(net("ens1", "virtio_net")).mode, Mode::kShadow);
  EXPECT_EQ(p.matching_rules(net("eth0", "virtio_net")), (std::vector<std::string>{"a", "b"}));
}

TEST(ConfigPolicy, ConflictTextNamesEveryDifferenceAndEveryRule) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - {name: a, match: {interface: eth0}, algorithm: net-eqe, rate_limit: 1s}\n"
      "  - {name: b, match: {driver: ice}, algorithm: net-cqe, rate_limit: 2s}\n"
      "  - {name: c, match: {interface: [\"e*\"]}, algorithm: net-eqe, rate_limit: 1s}\n"
      "  - {name: d, match: {interface: [\"eth?\"]}, algorithm: net-eqe, rate_limit: 1s, "
      "adaptive: leave}\n");
  DevicePolicy d = p.policy_for(net("eth0", "ice"));
  EXPECT_EQ(d.conflict,
            "matched by rules 'a' (algorithm net-eqe, rate_limit 1s) and 'b' (algorithm net-cqe, "
            "rate_limit 2s); and by 'a' (adaptive take-over) and 'd' (adaptive leave)");
}

TEST(ConfigPolicy, IdenticalOverlappingRulesAreFine) {
  auto r =
      load_config((std::filesystem::path(DIMCTL_CONFIG_TEST_DIR) / "good/overlap.yaml").string());
  ASSERT_TRUE(r.ok()) << r.error().message();
  ConfigPolicy p(std::move(*r));
  DevicePolicy d = p.policy_for(net("dimtap0", "tun"));
  EXPECT_EQ(d.conflict, "");
  EXPECT_EQ(d.rule, "by-name");  // the first matching rule is reported
  EXPECT_EQ(d.mode, Mode::kEnforce);
  EXPECT_EQ(d.rate_limit_ns, 50'000'000);
  EXPECT_EQ(p.policy_for(net("tap9", "tun")).rule, "by-driver");
}

TEST(ConfigPolicy, SameLiteralMatchWithSameSettingsLoads) {
  // Identical selectors with identical settings are redundant, not an error.
  ConfigPolicy p = policy(
      "devices:\n"
      "  - {name: a, match: {interface: eth0}, mode: enforce}\n"
      "  - {name: b, match: {interface: [eth0]}, mode: enforce}\n");
  EXPECT_EQ(p.policy_for(net("eth0")).rule, "a");
  EXPECT_EQ(p.policy_for(net("eth0")).conflict, "");
}

TEST(ConfigPolicy, KindSpecificDifferencesOnlyCountForThatKind) {
  // kernel_dim differs, but it does not apply to net devices: no conflict for eth0.
  ConfigPolicy p = policy(
      "devices:\n"
      "  - {name: a, match: {driver: mlx5_core}, kernel_dim: on}\n"
      "  - {name: b, match: {driver: mlx5_core, interface: [\"eth*\"]}}\n");
  EXPECT_EQ(p.policy_for(net("eth0", "mlx5_core")).conflict, "");
  EXPECT_EQ(p.policy_for(rdma("mlx5_0", "mlx5_core")).rule, "a");
  EXPECT_EQ(p.policy_for(rdma("mlx5_0", "mlx5_core")).rdma_kernel_dim, true);
}

TEST(ConfigPolicy, DiffPolicies) {
  DevicePolicy a, b;
  EXPECT_TRUE(diff_policies(a, b).empty());
  b.max_profile = 3;
  b.rdma_kernel_dim = true;
  b.rule = "ignored";
  b.conflict = "ignored";
  auto d = diff_policies(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].left, "profiles.max unset");
  EXPECT_EQ(d[0].right, "profiles.max 3");
  EXPECT_EQ(d[1].left, "kernel_dim unset");
  EXPECT_EQ(d[1].right, "kernel_dim on");
}

// method: ethtool unless a rule says otherwise (a config from before napi writes nothing new);
// software_profiles reach the net policy as written, durations in the one grammar.
TEST(ConfigPolicy, MethodAndSoftwareProfiles) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: old\n"
      "    match: {interface: eth1}\n"
      "    mode: enforce\n"
      "  - name: sw\n"
      "    match: {interface: dnc*}\n"
      "    mode: enforce\n"
      "    method: napi\n"
      "    software_profiles:\n"
      "      - {gro_flush_timeout: 0us, defer_hard_irqs: 0}\n"
      "      - {gro_flush_timeout: 8us, defer_hard_irqs: 1}\n"
      "      - {gro_flush_timeout: 0.05ms, defer_hard_irqs: 1}\n"
      "      - {gro_flush_timeout: 128us, defer_hard_irqs: 2}\n"
      "      - {gro_flush_timeout: 1ms, defer_hard_irqs: 3}\n"
      "  - name: either\n"
      "    match: {driver: virtio_net}\n"
      "    method: auto\n");
  DevicePolicy old = p.policy_for(net("eth1"));
  EXPECT_EQ(old.method, seam::Method::kEthtool);
  EXPECT_FALSE(old.software_profiles);
  DevicePolicy sw = p.policy_for(net("dnc0"));
  EXPECT_EQ(sw.method, seam::Method::kNapi);
  ASSERT_TRUE(sw.software_profiles);
  EXPECT_EQ((*sw.software_profiles)[0], (seam::SoftwareProfile{0, 0}));
  EXPECT_EQ((*sw.software_profiles)[2], (seam::SoftwareProfile{1, 50'000}));
  EXPECT_EQ((*sw.software_profiles)[4], (seam::SoftwareProfile{3, 1'000'000}));
  DevicePolicy either = p.policy_for(net("ens3", "virtio_net"));
  EXPECT_EQ(either.method, seam::Method::kAuto);
  EXPECT_FALSE(either.software_profiles);
  // Unnamed devices: ethtool (they are never written anyway).
  EXPECT_EQ(p.policy_for(net("lo")).method, seam::Method::kEthtool);
}

TEST(ConfigPolicy, DefaultSoftwareProfile) {
  // Index 0 no moderation, then 16, 64, 128, 256 us with one deferral: every index differs.
  EXPECT_EQ(seam::default_software_profile(0), (seam::SoftwareProfile{0, 0}));
  EXPECT_EQ(seam::default_software_profile(1), (seam::SoftwareProfile{1, 16'000}));
  EXPECT_EQ(seam::default_software_profile(2), (seam::SoftwareProfile{1, 64'000}));
  EXPECT_EQ(seam::default_software_profile(3), (seam::SoftwareProfile{1, 128'000}));
  EXPECT_EQ(seam::default_software_profile(4), (seam::SoftwareProfile{1, 256'000}));
  EXPECT_EQ(seam::default_software_profile(9), (seam::SoftwareProfile{1, 256'000}));
  for (size_t i = 1; i < seam::kDefaultSoftwareProfiles.size(); ++i) {
    EXPECT_NE(seam::kDefaultSoftwareProfiles[i], seam::kDefaultSoftwareProfiles[i - 1]) << i;
  }
  // The cost model's view of the table: usec the timer, pkts the deferrals; a timer without
  // deferral is no moderation.
  seam::DevicePolicy p;
  const dim::NetProfiles t = seam::software_table(p);
  EXPECT_EQ(t[0], (dim::Profile{0, 0, 0}));
  EXPECT_EQ(t[1], (dim::Profile{16, 1, 0}));
  EXPECT_EQ(t[4], (dim::Profile{256, 1, 0}));
  p.software_profiles = {{{0, 0}, {0, 50'000}, {2, 32'500}, {1, 0}, {1, 1'000'000'000}}};
  const dim::NetProfiles u = seam::software_table(p);
  EXPECT_EQ(u[1], (dim::Profile{0, 0, 0}));
  EXPECT_EQ(u[2], (dim::Profile{32, 2, 0}));
  EXPECT_EQ(u[3], (dim::Profile{0, 0, 0}));
  EXPECT_EQ(u[4], (dim::Profile{65535, 1, 0}));
}

TEST(ConfigPolicy, MethodDifferenceIsAConflict) {
  ConfigPolicy p = policy(
      "devices:\n"
      "  - name: a\n"
      "    match: {interface: veth*}\n"
      "  - name: b\n"
      "    match: {driver: veth}\n"
      "    method: napi\n");
  DevicePolicy d = p.policy_for(net("veth0", "veth"));
  EXPECT_EQ(d.mode, Mode::kObserve);
  EXPECT_NE(d.conflict.find("method ethtool"), std::string::npos) << d.conflict;
  EXPECT_NE(d.conflict.find("method napi"), std::string::npos) << d.conflict;
}

}  // namespace
}  // namespace dimctl::config
