// Stable text names for the model's enums, shared by the Prometheus labels, the JSON API and the
// CLI. Mode and algorithm are the config's names (dimctl/seam/names.h), one spelling everywhere.
// Changing a name changes a label value on the wire: treat it as an API change, and keep the old
// name readable (an alias) for the JSON of older daemons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dimctl/seam/controller_state.h"

namespace dimctl::exporters {

std::string_view mode_name(seam::Mode m);  // observe | shadow | enforce
// net-eqe | net-cqe | rdma | static | off | model | model-cqe
std::string_view algorithm_name(seam::Algorithm a);
std::string_view device_kind_name(seam::DeviceKind k);    // net | rdma
std::string_view method_name(seam::Method m);             // ethtool | napi | auto
std::string_view poll_context_name(seam::PollContext p);  // direct | softirq | workqueue | ...
// dim_tune_state (dim-spec section 1); "unknown" for values the kernel does not define.
std::string_view tune_state_name(uint8_t tune_state);
// Index into DimView::verdicts_total: 0 worse, 1 same, 2 better.
std::string_view verdict_name(int ix);

// Each reads the name a writer above gives, and parse_algorithm() the former net_eqe, net_cqe
// and model_cqe too (`dimctl status` against an older daemon).
std::optional<seam::Mode> parse_mode(std::string_view s);
std::optional<seam::Algorithm> parse_algorithm(std::string_view s);
std::optional<seam::DeviceKind> parse_device_kind(std::string_view s);
std::optional<seam::Method> parse_method(std::string_view s);
std::optional<seam::PollContext> parse_poll_context(std::string_view s);
// A core's cost estimate: defaults | direct | combined | measured (dim::CostConfidence).
std::string_view cost_confidence_name(dim::CostConfidence c);
std::optional<dim::CostConfidence> parse_cost_confidence(std::string_view s);
// The cost model's objective: latency | efficiency (config model.objective).
std::string_view objective_name(dim::Objective o);
std::optional<dim::Objective> parse_objective(std::string_view s);

// The `queue` label: the RX queue index, or "napi<ID>" when netdev netlink gave no index
// (docs/ARCHITECTURE.md, "Identities and labels").
std::string queue_label(const seam::QueueCounters& q);

}  // namespace dimctl::exporters
