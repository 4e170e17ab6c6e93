// Stable text names for the model's enums, shared by the Prometheus labels, the JSON API and the
// CLI. Changing a name here changes a label value on the wire: treat it as an API change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dimctl/model/controller_state.h"

namespace dimctl::exporters {

std::string_view mode_name(model::Mode m);  // observe | shadow | enforce
// net_eqe | net_cqe | rdma | static | off | model | model_cqe
std::string_view algorithm_name(model::Algorithm a);
std::string_view device_kind_name(model::DeviceKind k);    // net | rdma
std::string_view poll_context_name(model::PollContext p);  // direct | softirq | workqueue | ...
// dim_tune_state (dim-spec section 1); "unknown" for values the kernel does not define.
std::string_view tune_state_name(uint8_t tune_state);
// Index into DimView::verdicts_total: 0 worse, 1 same, 2 better.
std::string_view verdict_name(int ix);

std::optional<model::Mode> parse_mode(std::string_view s);
std::optional<model::Algorithm> parse_algorithm(std::string_view s);
std::optional<model::DeviceKind> parse_device_kind(std::string_view s);
std::optional<model::PollContext> parse_poll_context(std::string_view s);

// The `queue` label: the RX queue index, or "napi<ID>" when netdev netlink gave no index
// (docs/ARCHITECTURE.md, "Identities and labels").
std::string queue_label(const model::QueueCounters& q);

}  // namespace dimctl::exporters
