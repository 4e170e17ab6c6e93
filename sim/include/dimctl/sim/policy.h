// PolicySpec: which moderation policy a simulation run uses. Every adaptive policy is real
// dimctl code: the kernel ones call dim:: exactly where the kernel calls lib/dim (per NAPI
// completion / per ib_core poll pass, 64-event windows); the dimctl ones run the daemon's
// controller::Controller every period through the seam:: interfaces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dim/objective.h"
#include "dimctl/common/control_period.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/policy.h"
#include "dimctl/sim/workload.h"

namespace dimctl::sim {

struct PolicySpec {
  enum class Kind : uint8_t {
    kNone,        // N = 1, T = 0
    kStatic,      // profile `static_index` of the workload's table
    kKernelNet,   // net_dim per NAPI completion (EQE or CQE table and timer semantics)
    kKernelRdma,  // rdma_dim per poll pass (9 RDMA profiles)
    kController,  // dimctl's Controller every `period_ns`, algorithm `algorithm`
    kOracle,      // best static profile per phase, in hindsight
  };
  Kind kind = Kind::kNone;
  std::string name = "none";  // as written: "none", "static:3", "kernel-net-eqe", ...
  uint8_t static_index = 0;
  // kStatic only: a profile per phase, applied at each phase's start (the oracle's schedule; the
  // phases past its end keep the last). Empty: `static_index` throughout.
  std::vector<uint8_t> phase_static;
  // kStatic with phase_static, and kOracle ("oracle@LAG"): each phase's profile takes effect LAG
  // after the phase starts (the previous one held until then; the table's profile 0 before the
  // first), as a controller that knew the right profile but needed LAG to react would apply it.
  int64_t phase_lag_ns = 0;
  bool cqe = false;  // kKernelNet / kController net: the CQE table and idle-gap timer
  seam::Algorithm algorithm = seam::Algorithm::kNetEqe;
  int64_t period_ns = kDefaultControlPeriodNs;
  // dimctl-model-host: the model's cost parameters and timer semantics set from the moderated
  // stage's cost model and timer (what a deployer writes under `model:` for a host whose costs
  // are known), instead of the defaults.
  bool host_costs = false;
  // dimctl-model*-eff:BUDGET: the model under `model.objective: efficiency` with
  // `model.latency_budget: BUDGET` (dim/objective.h); kLatency (the default config) otherwise.
  dim::Objective objective = dim::Objective::kLatency;
  int64_t latency_budget_ns = 0;
  // The timer semantics this policy implies for moderated CQs (net EQE/CQE); nullopt = the
  // stage's own.
  std::optional<TimerMode> timer() const;
  // The profile table the policy indexes (the workload's unless the policy names one).
  ProfileTable table(ProfileTable workload_table) const;
};

// Parses one policy name: none | static:IX | kernel-<table> (net-eqe, net-cqe, rdma) |
// dimctl-<algorithm> (net-eqe, net-cqe, rdma, model, model-cqe; the config's names) |
// dimctl-model-host | oracle, each dimctl-* with an optional "@PERIOD", a duration (e.g.
// dimctl-net-eqe@1ms, dimctl-rdma@1.5ms), and oracle with an optional "@LAG" (the oracle's
// schedule applied LAG after each phase start). The model policies (dimctl-model,
// dimctl-model-cqe, dimctl-model-host) take "-eff:BUDGET" before any "@PERIOD": the efficiency
// objective with that latency budget, a duration above 0 and at most 1s as in the config
// (dimctl-model-eff:50us, dimctl-model-host-eff:25us@5ms). Errors name the bad part.
Result<PolicySpec> parse_policy(std::string_view text);

// The policy names `dimctl sim` lists in its help.
std::string_view policy_help();

}  // namespace dimctl::sim
