// What the cost-model policy optimises (config `model.objective`). ModelTable (model_policy.h)
// evaluates it once per table; this header only names it and states the rule.
//
// kLatency (the default): the profile with the least predicted mean latency
//   L = D + S / (1 − ρ) (cost_model.h); ties within 1 % + 1 ns go to the lower index; no feasible
//   profile: the one that batches most.
// kEfficiency: the least CPU within a latency budget. At each rate, with the table's latency
//   profile as the base (no moderation where the table has it, else the shortest timer, within
//   the bounds):
//   - the base infeasible (ρ >= max_utilisation): the kLatency table's choice. There is no
//     latency to hold a budget against when the unmoderated core is saturated, and the latency
//     choice is then the one that batches to keep the core serving; a core that does saturate is
//     the saturation rule's (saturation.h), as under kLatency.
//   - otherwise a profile is within budget when it is feasible and its predicted latency exceeds
//     the base's by at most the budget: L(p) − L(base) <= latency_budget. The reference is the
//     kLatency choice (the base when that choice, by its tie margin, is just out of budget). A
//     profile moves the choice only when it saves at least min_saving of the reference's CPU
//     per completion, S(p) <= S(ref)·(1 − min_saving): near-ties keep the latency choice. Of the
//     profiles that do, those within min_saving of the least S (S(p)·(1 − min_saving) <= S_min)
//     count as equally cheap, and of these the one with the least L is taken (ties as for
//     kLatency). None saves enough: the reference.
//   The choice is not monotone in the rate: a long timer's delay grows with the rate until it
//   leaves the budget, and the base saturating hands the choice back to kLatency. ModelTable
//   stores it as rate segments (model_policy.h).
#pragma once

#include <cstdint>

namespace dim {

enum class Objective : uint8_t { kLatency = 0, kEfficiency = 1 };

}  // namespace dim
