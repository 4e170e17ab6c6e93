// Workload files: YAML -> Workload (workload.h), the format `dimctl sim --workload` reads and
// bench/sim/workloads/ ships. docs/SIMULATOR.md documents the format, sim/workload.schema.json
// describes it; keep the three in step.
//
// Strict like the daemon's config loader: unknown and duplicate keys, keys that do not apply
// to a source's kind, YAML 1.2 core-schema types and ranges are errors, each reported as
// "file:line:column: key.path: reason", every problem in one go (in file order, capped).
// What needs the engine (a static index inside the table, a trace that opens) is validate()'s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/name_table.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/names.h"
#include "dimctl/sim/workload.h"

namespace dimctl::sim {

// Reads and checks a workload file. Relative trace paths are taken from the file's directory.
// The workload's name defaults to the file name without its extension.
Result<Workload> load_workload(const std::string& path);

// The same from text; `name` stands for the file in messages, names the workload by default
// and anchors relative trace paths.
Result<Workload> load_workload_from_string(std::string_view text, std::string_view name);

// The host cost models a workload may name (`cost: 4k`); each documented in docs/SIMULATOR.md.
const std::vector<CostModel>& builtin_cost_models();
std::optional<CostModel> builtin_cost_model(std::string_view name);

// The scalar syntax of workload files, shared with `dimctl sim`'s flags. Durations are
// dimctl/common/duration.h's, as everywhere (250ns, 5us, 1.5ms; a bare 0).
// Rates per second: a number, optionally with k, M or G (10^3, 10^6, 10^9) and "/s": 100k, 1.5M.
std::optional<double> parse_rate(std::string_view text);
// A service or think time: a duration (constant) or "exp:MEAN" / "lognormal:MEAN:CV"
// (`dimctl sim --service`).
std::optional<Dist> parse_dist(std::string_view text);
std::string format_dist(const Dist& d);

// The names of a workload's enums, one table each (dimctl/common/name_table.h). Timer
// semantics are the daemon's (seam::kTimerModeNames: rate-limit, idle-gap, absolute); a profile
// table is named as the algorithm that indexes it (net-eqe, net-cqe, rdma), and `kernel-<table>`
// and `dimctl-<algorithm>` policies are built from those names (policy.h).
inline constexpr NameTable<ProfileTable, 3> kProfileTableNames{{{
    {ProfileTable::kNetEqe, seam::kAlgorithmNames.name(seam::Algorithm::kNetEqe)},
    {ProfileTable::kNetCqe, seam::kAlgorithmNames.name(seam::Algorithm::kNetCqe)},
    {ProfileTable::kRdma, seam::kAlgorithmNames.name(seam::Algorithm::kRdma)},
}}};
inline constexpr NameTable<SourceSpec::Kind, 4> kSourceKindNames{{{
    {SourceSpec::Kind::kClosed, "closed"},
    {SourceSpec::Kind::kPoisson, "poisson"},
    {SourceSpec::Kind::kOnOff, "onoff"},
    {SourceSpec::Kind::kTrace, "trace"},
}}};
inline constexpr NameTable<Dist::Kind, 3> kDistKindNames{{{
    {Dist::Kind::kConstant, "constant"},
    {Dist::Kind::kExponential, "exponential"},
    {Dist::Kind::kLogNormal, "lognormal"},
}}};

std::string_view timer_mode_name(TimerMode m);  // rate-limit, idle-gap, absolute
std::optional<TimerMode> parse_timer_mode(std::string_view text);
std::string_view table_name(ProfileTable t);  // net-eqe, net-cqe, rdma
std::optional<ProfileTable> parse_table(std::string_view text);
std::string_view source_kind_name(SourceSpec::Kind k);  // closed, poisson, onoff, trace

}  // namespace dimctl::sim
