// libFuzzer harness: the YAML config loader (parse_config_diagnostics, what load_config and
// `dimctl check-config` run on a file's bytes), then the allowlist rule on what it accepted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "dimctl/config/config.h"
#include "dimctl/config/config_policy.h"

namespace {

using dimctl::config::Config;
using dimctl::config::ConfigPolicy;
using dimctl::config::Diagnostic;
using dimctl::seam::DeviceInfo;
using dimctl::seam::DeviceKind;
using dimctl::seam::Mode;

// Devices a rule in the seed corpus names, and one nothing names.
const DeviceInfo kDevices[] = {
    {DeviceKind::kNet, "eth1", "mlx5_core"},  {DeviceKind::kNet, "dimt0", "veth"},
    {DeviceKind::kRdma, "mlx5_0", "mlx5_ib"}, {DeviceKind::kRdma, "rxe0", "rdma_rxe"},
    {DeviceKind::kNet, "unnamed-device", ""},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  Config cfg;
  std::vector<Diagnostic> diags;
  const bool accepted = dimctl::config::parse_config_diagnostics(yaml, "fuzz.yaml", cfg, diags);
  // The contract of the loader: refused exactly when there is something to say.
  if (accepted != diags.empty()) std::abort();
  for (const auto& d : diags) {
    if (d.to_string().empty()) std::abort();
  }
  if (!accepted) return 0;

  const ConfigPolicy policy(std::move(cfg));
  for (const auto& dev : kDevices) {
    const auto p = policy.policy_for(dev);
    // Only a device named by a rule is ever written; conflicting rules apply none.
    if (p.rule.empty() && p.mode == Mode::kEnforce) std::abort();
    if (!p.conflict.empty() && p.mode != Mode::kObserve) std::abort();
    (void)policy.matching_rules(dev);
  }
  return 0;
}
