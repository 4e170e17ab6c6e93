#include "dimctl/sim/policy.h"

#include <charconv>
#include <string>

#include "dimctl/common/duration.h"

namespace dimctl::sim {

namespace {

Result<int64_t> parse_period(std::string_view s, std::string_view whole) {
  DurationError why = DurationError::kSyntax;
  auto v = parse_duration(s, &why);
  if (!v) return DIMCTL_FAIL(0, "policy '{}': bad period: {}", whole, duration_error(s, why));
  if (*v <= 0) return DIMCTL_FAIL(0, "policy '{}': the period must be above 0", whole);
  return *v;
}

}  // namespace

std::optional<TimerMode> PolicySpec::timer() const {
  const bool net = kind == Kind::kKernelNet ||
                   (kind == Kind::kController && (algorithm == model::Algorithm::kNetEqe ||
                                                  algorithm == model::Algorithm::kNetCqe ||
                                                  algorithm == model::Algorithm::kModelCqe));
  if (!net) return std::nullopt;
  return cqe ? TimerMode::kIdleGap : TimerMode::kRateLimit;
}

ProfileTable PolicySpec::table(ProfileTable workload_table) const {
  switch (kind) {
    case Kind::kKernelNet:
      return cqe ? ProfileTable::kNetCqe : ProfileTable::kNetEqe;
    case Kind::kKernelRdma:
      return ProfileTable::kRdma;
    case Kind::kController:
      if (algorithm == model::Algorithm::kNetEqe) return ProfileTable::kNetEqe;
      if (algorithm == model::Algorithm::kNetCqe) return ProfileTable::kNetCqe;
      if (algorithm == model::Algorithm::kRdma) return ProfileTable::kRdma;
      if (algorithm == model::Algorithm::kModelCqe) return ProfileTable::kNetCqe;
      // model: the net EQE table on a NIC workload, the RDMA table on a storage one.
      return workload_table == ProfileTable::kNetCqe ? ProfileTable::kNetEqe : workload_table;
    default:
      return workload_table;
  }
}

Result<PolicySpec> parse_policy(std::string_view text) {
  PolicySpec p;
  p.name = std::string(text);
  std::string_view base = text;
  std::optional<std::string_view> period;
  if (auto at = text.find('@'); at != std::string_view::npos) {
    base = text.substr(0, at);
    period = text.substr(at + 1);
  }
  using K = PolicySpec::Kind;
  if (base == "none") {
    p.kind = K::kNone;
  } else if (base.starts_with("static:")) {
    p.kind = K::kStatic;
    std::string_view ix = base.substr(7);
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(ix.data(), ix.data() + ix.size(), v);
    if (ix.empty() || ec != std::errc() || ptr != ix.data() + ix.size() || v > 255) {
      return DIMCTL_FAIL(0, "policy '{}': static wants a profile index, e.g. static:3", text);
    }
    p.static_index = static_cast<uint8_t>(v);
  } else if (base == "kernel-net-eqe" || base == "kernel-net-cqe") {
    p.kind = K::kKernelNet;
    p.cqe = base.ends_with("cqe");
  } else if (base == "kernel-rdma") {
    p.kind = K::kKernelRdma;
  } else if (base == "dimctl-net-eqe") {
    p.kind = K::kController;
    p.algorithm = model::Algorithm::kNetEqe;
  } else if (base == "dimctl-net-cqe") {
    p.kind = K::kController;
    p.algorithm = model::Algorithm::kNetCqe;
    p.cqe = true;
  } else if (base == "dimctl-rdma") {
    p.kind = K::kController;
    p.algorithm = model::Algorithm::kRdma;
  } else if (base == "dimctl-model") {
    p.kind = K::kController;
    p.algorithm = model::Algorithm::kModel;
  } else if (base == "dimctl-model-host") {
    p.kind = K::kController;
    p.algorithm = model::Algorithm::kModel;
    p.host_costs = true;
  } else if (base == "dimctl-model-cqe") {
    p.kind = K::kController;
    p.algorithm = model::Algorithm::kModelCqe;
    p.cqe = true;
  } else if (base == "oracle") {
    p.kind = K::kOracle;
  } else {
    return DIMCTL_FAIL(0, "unknown policy '{}' (known: {})", text, policy_help());
  }
  if (period) {
    if (p.kind != K::kController) {
      return DIMCTL_FAIL(0, "policy '{}': only dimctl-* policies take @PERIOD", text);
    }
    auto v = parse_period(*period, text);
    if (!v) return fail(std::move(v).error());
    p.period_ns = *v;
  }
  return p;
}

std::string_view policy_help() {
  return "none, static:IX, kernel-net-eqe, kernel-net-cqe, kernel-rdma, dimctl-net-eqe, "
         "dimctl-net-cqe, dimctl-rdma, dimctl-model, dimctl-model-cqe, dimctl-model-host "
         "(dimctl-* take @PERIOD, e.g. @20ms), oracle";
}

}  // namespace dimctl::sim
