// What `dimctl sim` writes (cmd_sim.cc): the runs of one workload under each policy as one JSON
// document (what bench/sim/report.py reads) or as text: the workload's header, per phase the
// policies side by side, the timelines.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "dimctl/sim/simulator.h"
#include "dimctl/sim/trace_source.h"

namespace dimctl::cli::sim_report {

// A duration for people: exact when short ("1.5ms", "20us"), else four significant digits in
// the largest unit (a trace's 4001741174 ns is "4.002s", not "4001741.174us"). JSON and
// workload files keep the exact nanoseconds.
std::string human_duration(int64_t ns);

// The workload, its stages and sources, and the trace it replays (when it does).
void print_header(std::ostream& out, const sim::Workload& w, const std::string& source,
                  const sim::TraceInfo& trace);
// The header, then per phase (and the whole run) the policies' metrics side by side.
void print_text(std::ostream& out, const sim::Workload& w, const std::string& source,
                const sim::TraceInfo& trace, const std::vector<sim::RunResult>& runs);
// Per run, one line per window (--timeline).
void print_timeline(std::ostream& out, const sim::Workload& w,
                    const std::vector<sim::RunResult>& runs);
// The one JSON document of --json; runs[i] ran under specs[i]; `trace` null for a workload file.
std::string json_document(const sim::Workload& w, const std::string& source,
                          const sim::TraceInfo* trace, const std::vector<sim::RunResult>& runs,
                          const std::vector<sim::PolicySpec>& specs, bool timeline);

}  // namespace dimctl::cli::sim_report
