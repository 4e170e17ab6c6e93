// The names of the policy vocabulary (policy.h, and dim's timer semantics), one table per enum
// (dimctl/common/name_table.h) for every reader and writer: the config and check-config, the
// JSON API and metric labels, status and top, the simulator's policy names (dimctl-<algorithm>)
// and workload files. Changing a name changes the config format and a label value on the wire:
// keep an alias for the old one and list it under "Compatibility" in docs/CONFIG.md and
// docs/METRICS.md.
#pragma once

#include "dim/cost_model.h"
#include "dimctl/common/name_table.h"
#include "dimctl/seam/policy.h"

namespace dimctl::seam {

inline constexpr NameTable<Mode, 3> kModeNames{{{
    {Mode::kObserve, "observe"},
    {Mode::kShadow, "shadow"},
    {Mode::kEnforce, "enforce"},
}}};

// `static` takes its index in the config (static:2); labels and the JSON API name it alone.
// The aliases are the JSON API's and metric labels' former spellings: the state of an older
// daemon, a label value copied into a config.
inline constexpr NameTable<Algorithm, 7, 3> kAlgorithmNames{
    {{
        {Algorithm::kNetEqe, "net-eqe"},
        {Algorithm::kNetCqe, "net-cqe"},
        {Algorithm::kRdma, "rdma"},
        {Algorithm::kStatic, "static"},
        {Algorithm::kOff, "off"},
        {Algorithm::kModel, "model"},
        {Algorithm::kModelCqe, "model-cqe"},
    }},
    {{
        {Algorithm::kNetEqe, "net_eqe"},
        {Algorithm::kNetCqe, "net_cqe"},
        {Algorithm::kModelCqe, "model_cqe"},
    }},
};

inline constexpr NameTable<CombinePolicy, 3> kCombineNames{{{
    {CombinePolicy::kBusiestQueue, "busiest-queue"},
    {CombinePolicy::kMaxProfile, "max"},
    {CombinePolicy::kMinProfile, "min"},
}}};

inline constexpr NameTable<Method, 3> kMethodNames{{{
    {Method::kEthtool, "ethtool"},
    {Method::kNapi, "napi"},
    {Method::kAuto, "auto"},
}}};

// The config's model.timer, workload files' stage timer and `dimctl sim --timer`.
inline constexpr NameTable<dim::TimerMode, 3> kTimerModeNames{{{
    {dim::TimerMode::kRateLimit, "rate-limit"},
    {dim::TimerMode::kIdleGap, "idle-gap"},
    {dim::TimerMode::kAbsolute, "absolute"},
}}};

}  // namespace dimctl::seam
