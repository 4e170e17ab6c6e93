#include "dimctl/config/capabilities.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <set>

namespace dimctl::config {
namespace {

constexpr std::string_view kBpfWhat = "maps, BTF and tracing programs";

std::string rule_label(const Rule& r) {
  return fmt::format("rule '{}' (line {})", r.name, r.mark.line);
}

bool runs_model(const Rule& r) {
  return r.algorithm == seam::Algorithm::kModel || r.algorithm == seam::Algorithm::kModelCqe ||
         r.compare == CompareWith::kModel;
}

// "bpf" capabilities of one BPF feature: CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN before 5.8.
void add_bpf(std::vector<CapabilityNeed>& out, const HostFacts& host, const std::string& feature) {
  if (host.cap_bpf_known) {
    out.push_back({Capability::kBpf, feature});
    out.push_back({Capability::kPerfmon, feature});
  } else {
    out.push_back({Capability::kSysAdmin, feature + " (a kernel without CAP_BPF, before 5.8)"});
  }
}

int read_int(const char* path, int fallback) {
  std::ifstream f(path);
  int v = 0;
  return (f >> v) ? v : fallback;
}

}  // namespace

std::string_view capability_name(Capability c) {
  switch (c) {
    case Capability::kNetBindService:
      return "CAP_NET_BIND_SERVICE";
    case Capability::kNetAdmin:
      return "CAP_NET_ADMIN";
    case Capability::kSysAdmin:
      return "CAP_SYS_ADMIN";
    case Capability::kSysResource:
      return "CAP_SYS_RESOURCE";
    case Capability::kPerfmon:
      return "CAP_PERFMON";
    case Capability::kBpf:
      return "CAP_BPF";
  }
  return "?";
}

int capability_number(Capability c) {
  switch (c) {
    case Capability::kNetBindService:
      return 10;
    case Capability::kNetAdmin:
      return 12;
    case Capability::kSysAdmin:
      return 21;
    case Capability::kSysResource:
      return 24;
    case Capability::kPerfmon:
      return 38;
    case Capability::kBpf:
      return 39;
  }
  return -1;
}

HostFacts probe_host() {
  HostFacts h;
  h.cap_bpf_known = read_int("/proc/sys/kernel/cap_last_cap", 40) >= 39;
  utsname u{};
  int major = 0, minor = 0;
  if (uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2) {
    h.memlock_accounted = major > 5 || (major == 5 && minor >= 11);
  }
  rlimit rl{};
  h.memlock_unlimited = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY;
  h.unprivileged_port_start = read_int("/proc/sys/net/ipv4/ip_unprivileged_port_start", 1024);
  return h;
}

std::vector<CapabilityNeed> required_capabilities(const Config& cfg, const HostFacts& host) {
  std::vector<CapabilityNeed> out;
  bool any_bpf = false;
  if (cfg.collectors.napi) {
    add_bpf(out, host,
            fmt::format("collectors.napi (the napi:napi_poll BPF program: {})", kBpfWhat));
    any_bpf = true;
  }
  if (!cfg.collectors.skb_bytes.empty()) {
    add_bpf(
        out, host,
        fmt::format("collectors.skb_bytes (the net:netif_receive_skb BPF program: {})", kBpfWhat));
    any_bpf = true;
  }
  if (cfg.collectors.rdma) {
    add_bpf(out, host,
            fmt::format("collectors.rdma (the rdma_core:cq_* BPF programs: {})", kBpfWhat));
    any_bpf = true;
  }
  for (const Rule& r : cfg.rules) {
    if (!runs_model(r)) continue;
    add_bpf(out, host,
            fmt::format("{}: the cost model (the cpu_time BPF programs on the irq and softirq "
                        "tracepoints: {})",
                        rule_label(r), kBpfWhat));
    any_bpf = true;
  }
  if (any_bpf && !host.memlock_accounted && !host.memlock_unlimited) {
    out.push_back({Capability::kSysResource,
                   "BPF maps on a kernel before 5.11 (charged to RLIMIT_MEMLOCK, which libbpf "
                   "raises)"});
  }
  for (const Rule& r : cfg.rules) {
    if (r.mode.value_or(cfg.mode) != seam::Mode::kEnforce) continue;
    if (r.applies_to_net() && r.algorithm != seam::Algorithm::kOff) {
      switch (r.method.value_or(seam::Method::kEthtool)) {
        case seam::Method::kEthtool:
          out.push_back({Capability::kNetAdmin,
                         fmt::format("{}: enforce with method ethtool (ethtool netlink "
                                     "COALESCE_SET, the per-queue SIOCETHTOOL)",
                                     rule_label(r))});
          break;
        case seam::Method::kNapi:
          out.push_back({Capability::kNetAdmin,
                         fmt::format("{}: enforce with method napi (netdev netlink napi-set)",
                                     rule_label(r))});
          break;
        case seam::Method::kAuto:
          out.push_back({Capability::kNetAdmin,
                         fmt::format("{}: enforce with method auto (netdev netlink napi-set, "
                                     "ethtool netlink COALESCE_SET)",
                                     rule_label(r))});
          break;
      }
    }
    if (r.applies_to_rdma() && r.kernel_dim) {
      out.push_back({Capability::kNetAdmin,
                     fmt::format("{}: enforce with kernel_dim (rdma netlink, the RDMA DIM switch)",
                                 rule_label(r))});
    }
  }
  const uint16_t port = cfg.metrics.listen.port;
  if (port != 0 && static_cast<int>(port) < host.unprivileged_port_start) {
    out.push_back(
        {Capability::kNetBindService,
         fmt::format("metrics.listen {} (port {} is below "
                     "net.ipv4.ip_unprivileged_port_start {})",
                     cfg.metrics.listen.to_string(), port, host.unprivileged_port_start)});
  }
  return out;
}

CapabilityNeed restore_need(const std::string& state_file) {
  return {Capability::kNetAdmin,
          fmt::format("restoring the originals a previous run left in {}", state_file)};
}

Result<uint64_t> effective_capabilities() {
  __user_cap_header_struct hdr{};
  hdr.version = _LINUX_CAPABILITY_VERSION_3;
  hdr.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &hdr, data) != 0) return DIMCTL_ERRNO("capget");
  return (static_cast<uint64_t>(data[1].effective) << 32) | data[0].effective;
}

std::vector<CapabilityNeed> missing_capabilities(const std::vector<CapabilityNeed>& needs,
                                                 uint64_t effective) {
  std::vector<CapabilityNeed> out;
  for (const auto& n : needs) {
    if ((effective >> capability_number(n.cap) & 1U) == 0) out.push_back(n);
  }
  return out;
}

std::vector<std::string> describe_missing(const std::vector<CapabilityNeed>& missing) {
  std::vector<std::string> out;
  out.reserve(missing.size());
  for (const auto& n : missing) {
    out.push_back(
        fmt::format("missing capability {}, needed by {}", capability_name(n.cap), n.feature));
  }
  return out;
}

std::string capability_list(const std::vector<CapabilityNeed>& needs) {
  std::set<int> nums;
  for (const auto& n : needs) nums.insert(capability_number(n.cap));
  std::string out;
  for (int num : nums) {
    for (Capability c : {Capability::kNetBindService, Capability::kNetAdmin, Capability::kSysAdmin,
                         Capability::kSysResource, Capability::kPerfmon, Capability::kBpf}) {
      if (capability_number(c) != num) continue;
      if (!out.empty()) out += ' ';
      out += capability_name(c);
    }
  }
  return out;
}

}  // namespace dimctl::config
