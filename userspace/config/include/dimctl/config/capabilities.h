// The Linux capabilities a configuration needs, and the check `dimctl run` makes at start (and
// on every SIGHUP reload) against its effective set: each missing capability is named with the
// feature that needs it, before anything is loaded or written (docs/SECURITY.md).
//
// What needs what (measured on Linux 6.18 under a reduced bounding set, tests/kernel/privilege):
//   CAP_BPF + CAP_PERFMON   the BPF collectors (napi:napi_poll, the per-skb byte counter,
//                           rdma_core:cq_*, the cost model's cpu_time programs): maps, BTF and
//                           tracing programs (Linux >= 5.8; before, CAP_SYS_ADMIN instead)
//   CAP_NET_ADMIN           every write: ethtool COALESCE_SET (method ethtool/auto), netdev
//                           napi-set (method napi/auto), rdma netlink DIM switch (kernel_dim),
//                           and restoring the originals a previous run left in the state file
//   CAP_NET_BIND_SERVICE    a metrics port below net.ipv4.ip_unprivileged_port_start
//   CAP_SYS_RESOURCE        Linux < 5.11 only (BPF memory charged to RLIMIT_MEMLOCK), when the
//                           memlock limit is not unlimited
// CAP_SYS_ADMIN is not needed on Linux >= 5.8: without it libbpf cannot read module BTF (the
// rdma_core programs on a modular ib_core), and the collector loads those as raw_tp instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/config/config.h"

namespace dimctl::config {

enum class Capability : uint8_t {
  kNetBindService,
  kNetAdmin,
  kSysAdmin,
  kSysResource,
  kPerfmon,
  kBpf,
};

// "CAP_NET_ADMIN", ...
std::string_view capability_name(Capability c);
// The kernel's number (CAP_NET_ADMIN = 12, ...).
int capability_number(Capability c);

// One capability and the feature of the configuration that needs it.
struct CapabilityNeed {
  Capability cap;
  std::string feature;  // e.g. "rule 'lab-tun' (line 14): enforce with method ethtool (...)"
  bool operator==(const CapabilityNeed&) const = default;
};

// What the check needs to know about the host; probe_host() reads it.
struct HostFacts {
  bool cap_bpf_known = true;           // CAP_BPF/CAP_PERFMON exist (Linux >= 5.8)
  bool memlock_accounted = true;       // BPF memory charged to the memory cgroup (Linux >= 5.11)
  bool memlock_unlimited = false;      // RLIMIT_MEMLOCK is already unlimited
  int unprivileged_port_start = 1024;  // net.ipv4.ip_unprivileged_port_start
};

HostFacts probe_host();

// Every capability `cfg` needs on `host`, one entry per (capability, feature), in a stable order.
std::vector<CapabilityNeed> required_capabilities(const Config& cfg, const HostFacts& host);
// CAP_NET_ADMIN to put back the originals a crashed run recorded in `state_file`.
CapabilityNeed restore_need(const std::string& state_file);

// The calling thread's effective capabilities as a bit set (bit N = capability N).
Result<uint64_t> effective_capabilities();
// The needs whose capability is not in `effective`.
std::vector<CapabilityNeed> missing_capabilities(const std::vector<CapabilityNeed>& needs,
                                                 uint64_t effective);
// One line per missing need: "missing capability CAP_X, needed by FEATURE".
std::vector<std::string> describe_missing(const std::vector<CapabilityNeed>& missing);
// The distinct capabilities of `needs`, as "CAP_BPF CAP_PERFMON ..." (kernel number order).
std::string capability_list(const std::vector<CapabilityNeed>& needs);

}  // namespace dimctl::config
