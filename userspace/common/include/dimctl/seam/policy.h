// DevicePolicy: what the operator's configuration says about one device. Produced by the config
// layer (PolicySource), consumed by the controller. The controller never looks at YAML.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "dim/cost_model.h"
#include "dim/objective.h"
#include "dim/profile.h"
#include "dimctl/common/result.h"

namespace dimctl::seam {

// observe: counters and current settings only. shadow: run DIM, export what it would apply,
// write nothing. enforce: apply (only devices named by a config rule, the allowlist).
enum class Mode : uint8_t { kObserve = 0, kShadow = 1, kEnforce = 2 };

enum class Algorithm : uint8_t {
  kNetEqe,  // net DIM, EQE tables (timer starts at the first event)
  kNetCqe,  // net DIM, CQE tables (timer restarts per completion)
  kRdma,    // RDMA DIM (9 profiles)
  kStatic,  // always profile `static_index`
  kOff,     // no DIM instance, no writes
  // dimctl's cost-model policy (dim/model_policy.h), once per period. Net devices: the table of
  // the CQE mode the device was found in, which it keeps (CQE: idle-gap semantics; EQE or none
  // reported: rate-limit), or rx_profiles; RDMA devices: the RDMA table.
  kModel,
  kModelCqe,  // the same on the net CQE table (or rx_profiles) under idle-gap semantics; net only
};

constexpr bool is_model(Algorithm a) {
  return a == Algorithm::kModel || a == Algorithm::kModelCqe;
}
constexpr bool is_net_dim(Algorithm a) {
  return a == Algorithm::kNetEqe || a == Algorithm::kNetCqe;
}

// The cost model's parameters for a device running `model` (or compared with it). Unset timer:
// the table's own semantics (rate-limit for the EQE and RDMA tables, idle-gap for CQE).
struct ModelSettings {
  int64_t completion_cost_ns = 1000;
  int64_t interrupt_cost_ns = 2000;
  uint32_t max_changes_per_s = 10;
  std::optional<dim::TimerMode> timer;
  // A queue's load is judged with the queues that share its core, not alone
  // (dim::CostParams::sharers): net queues polled on the same CPU, CQs of one device on the same
  // completion vector (one interrupt, one core).
  bool shared_load = true;
  // `costs: measured` (default): the two costs above are replaced, per core, by the controller's
  // estimate (dim::CostEstimator) once it is confident; `defaults`: the values above. A cost set
  // explicitly in the config (*_set) is used as given either way.
  bool measured_costs = true;
  bool completion_cost_set = false;
  bool interrupt_cost_set = false;
  // What the model optimises (dim/objective.h): the least predicted latency (default), or the
  // least CPU per completion whose predicted mean latency exceeds the latency profile's by at
  // most latency_budget_ns (> 0 with kEfficiency, 0 with kLatency: the config checks both).
  dim::Objective objective = dim::Objective::kLatency;
  int64_t latency_budget_ns = 0;
  // Software moderation (method napi): how late this host runs a NAPI's deferral timer past its
  // gro-flush-timeout (dim::CostParams::timer_latency_ns; config model.timer_latency). 0: the
  // timer is taken to run on time.
  int64_t timer_latency_ns = 0;
  bool operator==(const ModelSettings&) const = default;
};

// How per-queue decisions become one device-wide setting when the driver has no per-queue
// coalescing.
enum class CombinePolicy : uint8_t {
  kBusiestQueue,  // profile of the queue with the highest event rate (default)
  kMaxProfile,    // most moderation any queue asks for
  kMinProfile,    // least moderation any queue asks for
};

// How a net device's profile is written: hardware coalescing through ethtool (rx-usecs,
// rx-frames), software moderation per NAPI through netdev napi-set (gro-flush-timeout,
// defer-hard-irqs, Linux >= 6.13), or ethtool where the driver implements coalescing (its
// COALESCE_GET answers) and napi elsewhere. Default ethtool: a config written before napi
// existed must not start writing new knobs.
enum class Method : uint8_t { kEthtool, kNapi, kAuto };

// The software moderation one profile index becomes on a NAPI (napi-set): after a poll that did
// work the kernel keeps the interrupt masked and re-polls from a gro_flush_timeout timer, up to
// defer_hard_irqs times in a row without work (docs/CONFIG.md, "Software profiles").
struct SoftwareProfile {
  uint32_t defer_hard_irqs = 0;
  uint64_t gro_flush_timeout_ns = 0;
  bool operator==(const SoftwareProfile&) const = default;
};

// defer_hard_irqs of a default software profile with a non-zero timer. napi_complete_done()
// resets the count to defer_hard_irqs after every poll that found work, and each completion
// with a count above 0 decrements it and arms the timer instead of re-enabling the IRQ. With 1,
// the interrupt stays masked for one timer period after each poll with work: packets arriving
// within the profile's usec are batched into the timer's poll, as a NIC's rx-usecs batches them
// into one interrupt, and a burst ends with exactly one empty poll. More would add empty polls
// (CPU) and keep the IRQ masked longer after the traffic stops without lowering the worst added
// latency, which is one timer period whatever the count.
inline constexpr uint32_t kDefaultDeferHardIrqs = 1;

// The shortest timer the default software table uses. A hardware rx-usecs of 1-8 us batches on
// the NIC for free, but a software timer costs a timer interrupt and a softirq poll of its own,
// and one that fires before the next packet arrives polls nothing: measured on a veth NAPI
// (docs/benchmarks/host.md), 1 us and 8 us made 2 polls per message, 82-131 us of CPU per
// message against 25 us without moderation, and a quarter of the flood rate.
inline constexpr uint32_t kMinSoftwareTimerUs = 16;

// The software profiles method napi writes per profile index, whatever the device's hardware
// table: no moderation, then timers of 16, 64, 128 and 256 us with one deferral. Every index is a
// different setting, so DIM's steps and the model's choices all change something (DIM's EQE
// table, 1 and 8 us at indices 0 and 1, would be none twice); the upper three are the EQE
// table's timers. `software_profiles:` in the config replaces the table.
inline constexpr std::array<SoftwareProfile, 5> kDefaultSoftwareProfiles{{
    {0, 0},
    {kDefaultDeferHardIrqs, uint64_t{kMinSoftwareTimerUs} * 1000},
    {kDefaultDeferHardIrqs, 64'000},
    {kDefaultDeferHardIrqs, 128'000},
    {kDefaultDeferHardIrqs, 256'000},
}};

constexpr SoftwareProfile default_software_profile(uint8_t ix) {
  return kDefaultSoftwareProfiles[ix < kDefaultSoftwareProfiles.size()
                                      ? ix
                                      : kDefaultSoftwareProfiles.size() - 1];
}

enum class DeviceKind : uint8_t { kNet, kRdma };

// What the controller knows about a device when it asks for its policy.
struct DeviceInfo {
  DeviceKind kind = DeviceKind::kNet;
  std::string name;    // ifname or IB device name
  std::string driver;  // kernel driver ("" when unknown)
};

struct DevicePolicy {
  Mode mode = Mode::kShadow;
  Algorithm algorithm = Algorithm::kNetEqe;
  uint8_t static_index = 0;
  // Bounds on the profile index that may be applied. DIM itself runs unmodified (so it stays
  // comparable to the kernel); the applied index is clamped into [min, max].
  uint8_t min_profile = 0;
  uint8_t max_profile = 255;  // clamped to the algorithm's last index
  // Custom net profile tables (what ethtool rx-profile / tx-profile would set).
  std::optional<std::array<dim::Profile, 5>> rx_profiles;
  std::optional<std::array<dim::Profile, 5>> tx_profiles;
  int64_t rate_limit_ns = 100'000'000;  // minimum time between two writes to the device
  CombinePolicy combine = CombinePolicy::kBusiestQueue;
  // Enforce on a device whose driver runs adaptive-rx/tx: turn it off first (recorded and
  // restored). When false, such a device is left alone and reported.
  bool take_over_adaptive = true;
  // RDMA devices: the kernel RDMA DIM switch to set in enforce mode (nullopt = leave as is).
  std::optional<bool> rdma_kernel_dim;
  // Shadow comparison: also run the other policy (kernel-identical DIM beside `model`, `model`
  // beside a DIM algorithm) on the same counters and export its picks; it is never written.
  bool compare = false;
  ModelSettings model;
  Method method = Method::kEthtool;  // net devices
  // Per profile index, the software moderation method napi writes; unset: default_software_profile
  // of the device's profile table.
  std::optional<std::array<SoftwareProfile, 5>> software_profiles;
  std::string rule;  // name of the config rule that matched ("" = global default)
  // Non-empty when two rules match this device with conflicting settings: the device is then
  // refused (observed only, never written) and this text says which rules and why.
  std::string conflict;
};

// What method napi writes for profile index ix under `policy` (the config's software_profiles,
// else the default table).
inline SoftwareProfile software_profile(const DevicePolicy& policy, uint8_t ix) {
  if (!policy.software_profiles) return default_software_profile(ix);
  return (*policy.software_profiles)[std::min<size_t>(ix, policy.software_profiles->size() - 1)];
}

// The software profiles as the cost model reads them (dim::TimerMode::kDeferral): usec the
// gro-flush-timeout (rounded down, at most 65535), pkts the defer count (at most 65535). A timer
// without deferral never holds the interrupt, so the model sees it as no moderation (usec 0).
inline dim::NetProfiles software_table(const DevicePolicy& policy) {
  dim::NetProfiles t{};
  for (uint8_t i = 0; i < t.size(); ++i) {
    const SoftwareProfile s = software_profile(policy, i);
    const uint64_t us = std::min<uint64_t>(s.gro_flush_timeout_ns / 1000, UINT16_MAX);
    const uint32_t defer = std::min<uint32_t>(s.defer_hard_irqs, UINT16_MAX);
    t[i].usec = defer == 0 ? 0 : static_cast<uint16_t>(us);
    t[i].pkts = us == 0 ? 0 : static_cast<uint16_t>(defer);
  }
  return t;
}

class PolicySource {
 public:
  virtual ~PolicySource() = default;
  // The policy for a device. Devices matched by no rule get the global default mode, capped
  // at shadow: only devices named by a rule are ever written.
  virtual DevicePolicy policy_for(const DeviceInfo& dev) const = 0;
};

}  // namespace dimctl::seam
