// One JSON rendering of a queue's and a CQ's identity and counters, shared by GET /api/v1/state
// (state_json.cc) and `dimctl list --json` (the CLI's interval report), so that the same
// counter has the same key in both documents. Identities use the Prometheus label names
// (`device`, `queue`, `cq`; docs/METRICS.md); counters keep the model's names, which are the
// kernel's (napi_poll budget/work, rdma_core:cq_* tracepoints: `schedules`, `reschedules`,
// `events`, `polls`, `completions`, `poll_errors`, `budget_exhausted`, `kernel_modifies`,
// `kernel_comps`, `kernel_usec`). Callers add their own fields (rates, DIM state) to the returned
// object. The keys are those of the queue and CQ counters' field tables (state_fields.h), which
// state_from_json reads back.
//
// Lives in dimctl::counters_json (model + nlohmann only, with names.h and state_fields.h) so that
// the CLI's list report links it without the HTTP and Prometheus side of dimctl::exporters.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "dimctl/seam/snapshot.h"

namespace dimctl::exporters {

// device, queue, queue_label, ifindex, napi_id, irq, polls, events, packets, budget_exhausted,
// empty_polls, has_bytes, bytes (null unless has_bytes: unknown is not 0). `device` is the
// queue's name (the counters hold only an index into their snapshot's name table).
nlohmann::json queue_counters_to_json(const seam::QueueCounters& c, const std::string& device);

// device (IB device), dev_index, cq, poll_ctx, nr_cqe, comp_vector, schedules, reschedules,
// events, polls, completions, poll_errors, budget_exhausted, kernel_modifies, kernel_comps,
// kernel_usec.
nlohmann::json cq_counters_to_json(const seam::CqCounters& c);

}  // namespace dimctl::exporters
