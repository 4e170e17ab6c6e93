#include "dimctl/exporters/names.h"

#include "dimctl/common/name_table.h"
#include "dimctl/seam/names.h"

namespace dimctl::exporters {
namespace {

// Enums only the exporters name; the policy vocabulary's tables are dimctl/seam/names.h's.
constexpr NameTable<seam::DeviceKind, 2> kKinds{{{
    {seam::DeviceKind::kNet, "net"},
    {seam::DeviceKind::kRdma, "rdma"},
}}};
constexpr NameTable<seam::PollContext, 4> kPollContexts{{{
    {seam::PollContext::kDirect, "direct"},
    {seam::PollContext::kSoftirq, "softirq"},
    {seam::PollContext::kWorkqueue, "workqueue"},
    {seam::PollContext::kUnboundWorkqueue, "unbound_workqueue"},
}}};
constexpr NameTable<dim::CostConfidence, 4> kCostConfidences{{{
    {dim::CostConfidence::kDefaults, "defaults"},
    {dim::CostConfidence::kDirect, "direct"},
    {dim::CostConfidence::kCombined, "combined"},
    {dim::CostConfidence::kMeasured, "measured"},
}}};
// The config's spelling (model.objective).
constexpr NameTable<dim::Objective, 2> kObjectives{{{
    {dim::Objective::kLatency, "latency"},
    {dim::Objective::kEfficiency, "efficiency"},
}}};

}  // namespace

std::string_view cost_confidence_name(dim::CostConfidence c) {
  return kCostConfidences.name(c);
}
std::optional<dim::CostConfidence> parse_cost_confidence(std::string_view s) {
  return kCostConfidences.parse(s);
}

std::string_view objective_name(dim::Objective o) {
  return kObjectives.name(o);
}
std::optional<dim::Objective> parse_objective(std::string_view s) {
  return kObjectives.parse(s);
}

std::string_view mode_name(seam::Mode m) {
  return seam::kModeNames.name(m);
}
std::string_view algorithm_name(seam::Algorithm a) {
  return seam::kAlgorithmNames.name(a);
}
std::string_view method_name(seam::Method m) {
  return seam::kMethodNames.name(m);
}
std::optional<seam::Method> parse_method(std::string_view s) {
  return seam::kMethodNames.parse(s);
}
std::string_view device_kind_name(seam::DeviceKind k) {
  return kKinds.name(k);
}
std::string_view poll_context_name(seam::PollContext p) {
  return kPollContexts.name(p);
}

std::string_view tune_state_name(uint8_t tune_state) {
  switch (tune_state) {
    case 0:
      return "parking_on_top";
    case 1:
      return "parking_tired";
    case 2:
      return "going_right";
    case 3:
      return "going_left";
    default:
      return "unknown";
  }
}

std::string_view verdict_name(int ix) {
  switch (ix) {
    case 0:
      return "worse";
    case 1:
      return "same";
    case 2:
      return "better";
    default:
      return "unknown";
  }
}

std::optional<seam::Mode> parse_mode(std::string_view s) {
  return seam::kModeNames.parse(s);
}
std::optional<seam::Algorithm> parse_algorithm(std::string_view s) {
  return seam::kAlgorithmNames.parse(s);
}
std::optional<seam::DeviceKind> parse_device_kind(std::string_view s) {
  return kKinds.parse(s);
}
std::optional<seam::PollContext> parse_poll_context(std::string_view s) {
  return kPollContexts.parse(s);
}

std::string queue_label(const seam::QueueCounters& q) {
  if (q.queue >= 0) return std::to_string(q.queue);
  return "napi" + std::to_string(q.key.napi_id);
}

}  // namespace dimctl::exporters
