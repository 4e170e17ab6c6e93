// required_capabilities: what each mode, method and collector of a config needs, and the lines
// `dimctl run` prints for what its effective set lacks.
#include "dimctl/config/capabilities.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dimctl/config/config.h"

namespace dimctl::config {
namespace {

Config parse(std::string_view yaml) {
  auto r = parse_config(yaml, "caps.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().context());
  return r.ok() ? std::move(r).value() : Config{};
}

uint64_t bits(std::initializer_list<Capability> caps) {
  uint64_t b = 0;
  for (Capability c : caps) b |= uint64_t{1} << capability_number(c);
  return b;
}

constexpr std::string_view kNoCollectors = R"(
collectors: {napi: false, rdma: false}
)";

TEST(Capabilities, NamesAndNumbersAreTheKernels) {
  EXPECT_EQ(capability_name(Capability::kNetAdmin), "CAP_NET_ADMIN");
  EXPECT_EQ(capability_number(Capability::kNetBindService), 10);
  EXPECT_EQ(capability_number(Capability::kNetAdmin), 12);
  EXPECT_EQ(capability_number(Capability::kSysAdmin), 21);
  EXPECT_EQ(capability_number(Capability::kSysResource), 24);
  EXPECT_EQ(capability_number(Capability::kPerfmon), 38);
  EXPECT_EQ(capability_number(Capability::kBpf), 39);
}

TEST(Capabilities, ShadowNeedsBpfAndPerfmonOnly) {
  // The shipped default: shadow, both collectors.
  const auto needs = required_capabilities(parse("mode: shadow\n"), HostFacts{});
  EXPECT_EQ(capability_list(needs), "CAP_PERFMON CAP_BPF");
  for (const auto& n : needs) EXPECT_NE(n.cap, Capability::kSysAdmin);
}

TEST(Capabilities, ObserveWithoutCollectorsNeedsNothing) {
  const auto needs = required_capabilities(
      parse(std::string("mode: observe\n") + std::string(kNoCollectors)), HostFacts{});
  EXPECT_TRUE(needs.empty()) << capability_list(needs);
}

TEST(Capabilities, EnforceNeedsNetAdminPerMethod) {
  const Config cfg = parse(std::string(kNoCollectors) + R"(
mode: shadow
devices:
  - name: by-ethtool
    match: {interface: ["tap*"]}
    mode: enforce
  - name: by-napi
    match: {interface: ["veth*"]}
    mode: enforce
    method: napi
  - name: watched
    match: {interface: ["eth*"]}
)");
  const auto needs = required_capabilities(cfg, HostFacts{});
  ASSERT_EQ(needs.size(), 2U) << capability_list(needs);
  EXPECT_EQ(needs[0].cap, Capability::kNetAdmin);
  EXPECT_NE(needs[0].feature.find("rule 'by-ethtool' (line 6): enforce with method ethtool"),
            std::string::npos)
      << needs[0].feature;
  EXPECT_NE(needs[1].feature.find("rule 'by-napi' (line 9): enforce with method napi (netdev "
                                  "netlink napi-set)"),
            std::string::npos)
      << needs[1].feature;
}

TEST(Capabilities, GlobalEnforceWithoutRulesWritesNothing) {
  const auto needs = required_capabilities(
      parse(std::string("mode: enforce\n") + std::string(kNoCollectors)), HostFacts{});
  EXPECT_TRUE(needs.empty()) << capability_list(needs);
}

TEST(Capabilities, RuleInheritsGlobalEnforce) {
  const auto needs = required_capabilities(parse(std::string(kNoCollectors) + R"(
mode: enforce
devices:
  - name: all-taps
    match: {interface: ["tap*"]}
    algorithm: static:2
)"),
                                           HostFacts{});
  EXPECT_EQ(capability_list(needs), "CAP_NET_ADMIN");
}

TEST(Capabilities, RdmaRuleWithoutKernelDimWritesNothing) {
  // Kernel ULP CQs have no userspace knob: an RDMA rule writes only the DIM switch it names.
  const auto needs = required_capabilities(parse(std::string(kNoCollectors) + R"(
devices:
  - name: rxe
    match: {rdma_device: ["rxe*"]}
    mode: enforce
    algorithm: rdma
)"),
                                           HostFacts{});
  EXPECT_TRUE(needs.empty()) << capability_list(needs);
}

TEST(Capabilities, RdmaKernelDimNeedsNetAdmin) {
  const auto needs = required_capabilities(parse(std::string(kNoCollectors) + R"(
devices:
  - name: rxe
    match: {rdma_device: ["rxe*"]}
    mode: enforce
    kernel_dim: false
)"),
                                           HostFacts{});
  ASSERT_EQ(needs.size(), 1U);
  EXPECT_EQ(needs[0].cap, Capability::kNetAdmin);
  EXPECT_NE(needs[0].feature.find("kernel_dim (rdma netlink"), std::string::npos);
}

TEST(Capabilities, OldKernelsNeedSysAdminAndSysResource) {
  HostFacts old;
  old.cap_bpf_known = false;
  old.memlock_accounted = false;
  const auto needs = required_capabilities(parse("collectors: {rdma: false}\n"), old);
  EXPECT_EQ(capability_list(needs), "CAP_SYS_ADMIN CAP_SYS_RESOURCE");
  HostFacts unlimited = old;
  unlimited.memlock_unlimited = true;
  EXPECT_EQ(capability_list(required_capabilities(parse("collectors: {rdma: false}\n"), unlimited)),
            "CAP_SYS_ADMIN");
}

TEST(Capabilities, LowPortNeedsBindService) {
  const std::string cfg = std::string(kNoCollectors) + "metrics: {listen: \"127.0.0.1:99\"}\n";
  auto needs = required_capabilities(parse(cfg), HostFacts{});
  ASSERT_EQ(needs.size(), 1U);
  EXPECT_EQ(needs[0].cap, Capability::kNetBindService);
  HostFacts open_ports;
  open_ports.unprivileged_port_start = 0;
  EXPECT_TRUE(required_capabilities(parse(cfg), open_ports).empty());
}

TEST(Capabilities, ModelRuleNamesTheCpuTimePrograms) {
  const auto needs = required_capabilities(parse(std::string(kNoCollectors) + R"(
devices:
  - name: cost
    match: {interface: ["veth*"]}
    algorithm: model
)"),
                                           HostFacts{});
  ASSERT_EQ(needs.size(), 2U);
  EXPECT_NE(needs[0].feature.find("rule 'cost' (line 5): the cost model (the cpu_time"),
            std::string::npos)
      << needs[0].feature;
}

TEST(Capabilities, MissingNamesEachCapabilityAndFeature) {
  const Config cfg = parse(R"(
collectors: {rdma: false}
devices:
  - name: lab-tun
    match: {interface: ["tap*"]}
    mode: enforce
)");
  const auto needs = required_capabilities(cfg, HostFacts{});
  EXPECT_EQ(capability_list(needs), "CAP_NET_ADMIN CAP_PERFMON CAP_BPF");
  EXPECT_TRUE(missing_capabilities(
                  needs, bits({Capability::kNetAdmin, Capability::kPerfmon, Capability::kBpf}))
                  .empty());
  const auto missing = missing_capabilities(needs, bits({Capability::kBpf, Capability::kPerfmon}));
  const auto lines = describe_missing(missing);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0],
            "missing capability CAP_NET_ADMIN, needed by rule 'lab-tun' (line 4): enforce with "
            "method ethtool (ethtool netlink COALESCE_SET, the per-queue SIOCETHTOOL)");
  const auto none = describe_missing(missing_capabilities(needs, 0));
  EXPECT_EQ(none.size(), 3U);
}

TEST(Capabilities, RestoreNeedNamesTheFile) {
  const auto n = restore_need("/run/dimctl/state.json");
  EXPECT_EQ(n.cap, Capability::kNetAdmin);
  EXPECT_EQ(n.feature, "restoring the originals a previous run left in /run/dimctl/state.json");
}

TEST(Capabilities, EffectiveSetIsReadable) {
  auto eff = effective_capabilities();
  ASSERT_TRUE(eff.ok()) << eff.error().message();
}

}  // namespace
}  // namespace dimctl::config
