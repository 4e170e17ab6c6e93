// The simulator's entry points: run one workload under one policy, or compare several
// policies on the same workload (same seed, so the same arrivals and service times: common
// random numbers, paired comparisons).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/sim/metrics.h"
#include "dimctl/sim/policy.h"
#include "dimctl/sim/workload.h"

namespace dimctl::sim {

struct RunOptions {
  // Called now and then with the fraction of simulated time done (progress bars).
  std::function<void(double)> progress;
  // Simulated time to stop at (0: the workload's end). The phases and windows after it stay
  // empty; the oracle stops a candidate at the end of the phase it is judged on.
  int64_t stop_ns = 0;
};

// Checks what the YAML schema cannot: positive durations, at least one phase/stage/source,
// queues >= 1, a static index inside the table, trace files readable. Errors name the field.
Result<void> validate(const Workload& w);

// One run. Fails on an invalid workload, or when the policy cannot run on it (e.g. a trace
// that does not open).
Result<RunResult> run(const Workload& w, const PolicySpec& policy, const RunOptions& opt = {});

// The oracle: the best static profile per phase, in hindsight, chosen phase by phase on one
// consistent run. For phase k it runs every static profile of the table in phase k after the
// profiles already chosen for phases 0..k-1, and keeps the one that did best there (throughput
// within 1 % of the best candidate's, or 100 completions over the phase, then the lowest p99,
// then the least CPU per completion). Its result is the run of the whole schedule: a phase never
// gets credit for a backlog another profile built in an earlier phase.
// With `lag_ns` > 0 ("oracle@LAG") the result is that schedule applied `lag_ns` after each phase
// start instead (PolicySpec::phase_lag_ns): what the best reactive controller with that reaction
// time could reach, a bound for any policy that decides once per control period.
Result<RunResult> run_oracle(const Workload& w, ProfileTable table, const RunOptions& opt = {},
                             int64_t lag_ns = 0);
// The schedule of an on-time oracle's result (its phases' oracle_choice) applied `lag_ns` late:
// one run instead of the oracle's search, for `dimctl sim` when both are asked for.
Result<RunResult> run_oracle_late(const Workload& w, const RunResult& oracle, int64_t lag_ns);

// Fills each phase's convergence_ns of `run` against the reference (the oracle): the time from
// the phase start until every later window of that phase has mean latency and CPU per
// completion within +-10 % of the reference's same window, with at least 10 windows left.
void fill_convergence(RunResult& run, const RunResult& reference);

// Runs every policy (the oracle included when named) on the workload and fills convergence
// against the oracle when it is among them (or always computes it when `with_convergence`).
Result<std::vector<RunResult>> compare(const Workload& w, const std::vector<PolicySpec>& policies,
                                       const RunOptions& opt = {});

}  // namespace dimctl::sim
