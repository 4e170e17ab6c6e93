#include "dimctl/exporters/names.h"

#include <array>
#include <utility>

namespace dimctl::exporters {
namespace {

constexpr std::array<std::pair<model::Mode, std::string_view>, 3> kModes{{
    {model::Mode::kObserve, "observe"},
    {model::Mode::kShadow, "shadow"},
    {model::Mode::kEnforce, "enforce"},
}};
constexpr std::array<std::pair<model::Algorithm, std::string_view>, 7> kAlgorithms{{
    {model::Algorithm::kNetEqe, "net_eqe"},
    {model::Algorithm::kNetCqe, "net_cqe"},
    {model::Algorithm::kRdma, "rdma"},
    {model::Algorithm::kStatic, "static"},
    {model::Algorithm::kOff, "off"},
    {model::Algorithm::kModel, "model"},
    {model::Algorithm::kModelCqe, "model_cqe"},
}};
constexpr std::array<std::pair<model::DeviceKind, std::string_view>, 2> kKinds{{
    {model::DeviceKind::kNet, "net"},
    {model::DeviceKind::kRdma, "rdma"},
}};
constexpr std::array<std::pair<model::PollContext, std::string_view>, 4> kPollContexts{{
    {model::PollContext::kDirect, "direct"},
    {model::PollContext::kSoftirq, "softirq"},
    {model::PollContext::kWorkqueue, "workqueue"},
    {model::PollContext::kUnboundWorkqueue, "unbound_workqueue"},
}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E v) {
  for (const auto& [e, n] : table) {
    if (e == v) return n;
  }
  return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> parse_of(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view s) {
  for (const auto& [e, n] : table) {
    if (n == s) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view mode_name(model::Mode m) {
  return name_of(kModes, m);
}
std::string_view algorithm_name(model::Algorithm a) {
  return name_of(kAlgorithms, a);
}
std::string_view device_kind_name(model::DeviceKind k) {
  return name_of(kKinds, k);
}
std::string_view poll_context_name(model::PollContext p) {
  return name_of(kPollContexts, p);
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

std::optional<model::Mode> parse_mode(std::string_view s) {
  return parse_of(kModes, s);
}
std::optional<model::Algorithm> parse_algorithm(std::string_view s) {
  return parse_of(kAlgorithms, s);
}
std::optional<model::DeviceKind> parse_device_kind(std::string_view s) {
  return parse_of(kKinds, s);
}
std::optional<model::PollContext> parse_poll_context(std::string_view s) {
  return parse_of(kPollContexts, s);
}

std::string queue_label(const model::QueueCounters& q) {
  if (q.queue >= 0) return std::to_string(q.queue);
  return "napi" + std::to_string(q.key.napi_id);
}

}  // namespace dimctl::exporters
