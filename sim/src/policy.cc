#include "dimctl/sim/policy.h"

#include <charconv>
#include <string>
#include <vector>

#include "dimctl/common/duration.h"
#include "dimctl/seam/names.h"
#include "dimctl/sim/workload_yaml.h"

namespace dimctl::sim {

namespace {

constexpr std::string_view kKernel = "kernel-";
constexpr std::string_view kDimctl = "dimctl-";
// dimctl-model with the model's costs and timer set from the host's (PolicySpec::host_costs).
constexpr std::string_view kHostSuffix = "-host";
// dimctl-model*-eff:BUDGET: the efficiency objective with that latency budget.
constexpr std::string_view kEfficiencySuffix = "-eff";
// model.latency_budget's range in the config (userspace/config/src/read.cc).
constexpr int64_t kMaxLatencyBudgetNs = 1'000'000'000;

// The controller algorithms a dimctl-* policy can name: every one but static and off, which the
// simulator has as static:IX and none.
constexpr seam::Algorithm kControllerAlgorithms[] = {
    seam::Algorithm::kNetEqe, seam::Algorithm::kNetCqe, seam::Algorithm::kRdma,
    seam::Algorithm::kModel, seam::Algorithm::kModelCqe};

std::optional<seam::Algorithm> controller_algorithm(std::string_view name) {
  auto a = seam::kAlgorithmNames.parse_name(name);
  for (seam::Algorithm c : kControllerAlgorithms)
    if (a == c) return a;
  return std::nullopt;
}

Result<int64_t> parse_period(std::string_view s, std::string_view whole) {
  DurationError why = DurationError::kSyntax;
  auto v = parse_duration(s, &why);
  if (!v) return DIMCTL_FAIL(0, "policy '{}': bad period: {}", whole, duration_error(s, why));
  if (*v <= 0) return DIMCTL_FAIL(0, "policy '{}': the period must be above 0", whole);
  return *v;
}

Result<int64_t> parse_budget(std::string_view s, std::string_view whole) {
  if (s.empty())
    return DIMCTL_FAIL(0, "policy '{}': -eff needs a latency budget, e.g. dimctl-model-eff:50us",
                       whole);
  DurationError why = DurationError::kSyntax;
  auto v = parse_duration(s, &why);
  if (!v)
    return DIMCTL_FAIL(0, "policy '{}': bad latency budget: {}", whole,
                       duration_error(s, why, "us"));
  if (*v <= 0 || *v > kMaxLatencyBudgetNs)
    return DIMCTL_FAIL(0, "policy '{}': the latency budget must be above 0 and at most 1s", whole);
  return *v;
}

}  // namespace

std::optional<TimerMode> PolicySpec::timer() const {
  const bool net = kind == Kind::kKernelNet ||
                   (kind == Kind::kController && (algorithm == seam::Algorithm::kNetEqe ||
                                                  algorithm == seam::Algorithm::kNetCqe ||
                                                  algorithm == seam::Algorithm::kModelCqe));
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
      if (algorithm == seam::Algorithm::kNetEqe) return ProfileTable::kNetEqe;
      if (algorithm == seam::Algorithm::kNetCqe) return ProfileTable::kNetCqe;
      if (algorithm == seam::Algorithm::kRdma) return ProfileTable::kRdma;
      if (algorithm == seam::Algorithm::kModelCqe) return ProfileTable::kNetCqe;
      // model: the table of the NIC's CQE mode, which it keeps (the simulated NIC is in CQE mode
      // on a net-cqe workload: ControllerBridge), the RDMA table on a storage one.
      return workload_table;
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
  } else if (base == "oracle") {
    p.kind = K::kOracle;
  } else if (auto t = base.starts_with(kKernel)
                          ? kProfileTableNames.parse_name(base.substr(kKernel.size()))
                          : std::nullopt) {
    p.kind = *t == ProfileTable::kRdma ? K::kKernelRdma : K::kKernelNet;
    p.cqe = *t == ProfileTable::kNetCqe;
  } else if (base.starts_with(kDimctl)) {
    std::string_view algo = base.substr(kDimctl.size());
    // -eff[:BUDGET] last (before @PERIOD): the model under the efficiency objective.
    std::optional<std::string_view> budget;
    if (auto colon = algo.find(':'); colon != std::string_view::npos) {
      if (!algo.substr(0, colon).ends_with(kEfficiencySuffix))
        return DIMCTL_FAIL(0, "unknown policy '{}' (known: {})", text, policy_help());
      budget = algo.substr(colon + 1);
      algo = algo.substr(0, colon - kEfficiencySuffix.size());
    } else if (algo.ends_with(kEfficiencySuffix)) {
      budget = std::string_view();
      algo.remove_suffix(kEfficiencySuffix.size());
    }
    p.host_costs = algo.ends_with(kHostSuffix);
    if (p.host_costs) algo.remove_suffix(kHostSuffix.size());
    auto a = controller_algorithm(algo);
    if (!a || (p.host_costs && *a != seam::Algorithm::kModel))
      return DIMCTL_FAIL(0, "unknown policy '{}' (known: {})", text, policy_help());
    if (budget) {
      if (!seam::is_model(*a))
        return DIMCTL_FAIL(0,
                           "policy '{}': only the model policies (dimctl-model, "
                           "dimctl-model-cqe, dimctl-model-host) take -eff:BUDGET",
                           text);
      auto v = parse_budget(*budget, text);
      if (!v) return fail(std::move(v).error());
      p.objective = dim::Objective::kEfficiency;
      p.latency_budget_ns = *v;
    }
    p.kind = K::kController;
    p.algorithm = *a;
    p.cqe = *a == seam::Algorithm::kNetCqe || *a == seam::Algorithm::kModelCqe;
  } else {
    return DIMCTL_FAIL(0, "unknown policy '{}' (known: {})", text, policy_help());
  }
  if (period) {
    if (p.kind != K::kController && p.kind != K::kOracle) {
      return DIMCTL_FAIL(0, "policy '{}': only dimctl-* (@PERIOD) and oracle (@LAG) take @", text);
    }
    auto v = parse_period(*period, text);
    if (!v) return fail(std::move(v).error());
    (p.kind == K::kOracle ? p.phase_lag_ns : p.period_ns) = *v;
  }
  return p;
}

std::string_view policy_help() {
  static const std::string kHelp = [] {
    std::vector<std::string> names = {"none", "static:IX"};
    for (const auto& t : kProfileTableNames.names)
      names.push_back(fmt::format("{}{}", kKernel, t.name));
    for (seam::Algorithm a : kControllerAlgorithms)
      names.push_back(fmt::format("{}{}", kDimctl, seam::kAlgorithmNames.name(a)));
    names.push_back(fmt::format("{}{}{}", kDimctl,
                                seam::kAlgorithmNames.name(seam::Algorithm::kModel), kHostSuffix));
    return fmt::format(
        "{} ({}* take @PERIOD, default @{}; the dimctl-model* take -eff:BUDGET before it, the "
        "efficiency objective with that latency budget, e.g. dimctl-model-eff:50us), oracle "
        "(oracle@LAG: its schedule applied LAG after each phase start)",
        fmt::join(names, ", "), kDimctl, format_duration(kDefaultControlPeriodNs));
  }();
  return kHelp;
}

}  // namespace dimctl::sim
