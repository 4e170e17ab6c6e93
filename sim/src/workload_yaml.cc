// YAML -> Workload. One structural pass with the daemon config's strict reader
// (dimctl/common/yaml_reader.h: unknown and duplicate keys, YAML 1.2 core scalar types, ranges),
// collecting every problem with its position instead of stopping at the first.
#include "dimctl/sim/workload_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <utility>

#include "dimctl/common/duration.h"
#include "dimctl/common/yaml_reader.h"

namespace dimctl::sim {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kUs = 1'000;
constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMaxDelay = 10 * kS;    // service, think, cost, moderation timers
constexpr int64_t kMaxSpan = 3'600 * kS;  // phases, warm-up, on/off periods
constexpr uint32_t kMaxQueues = 65'536;
constexpr uint32_t kMaxDepth = 1'000'000;
constexpr double kMaxRate = 1e10;  // 10 G requests/s per queue: far beyond any device
constexpr double kMaxLoad = 1e6;

using yaml::Ctx;
using yaml::describe;
using yaml::Entry;
using yaml::join;
using yaml::MapReader;
using yaml::mark_of;
using yaml::read_bool;
using yaml::read_enum;
using yaml::read_int;
using yaml::read_name;
using yaml::read_string;
using yaml::scalar_kind;
using yaml::ScalarKind;

// "1.5" -> 1.5 with nothing left over; no sign, no exponent (rates and a lognormal's cv are
// written by people, and "1e3k" is more likely a typo than intent).
std::optional<double> parse_decimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (digits == 0 || i != s.size()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// ---- value readers of workloads only (the shared ones: dimctl/common/yaml_reader.h) ----

std::optional<uint64_t> read_u64(Ctx& ctx, const Entry& e) {
  if (!e.value.IsScalar() || scalar_kind(e.value) != ScalarKind::kInt ||
      e.value.Scalar()[0] == '-') {
    ctx.error(e.at(), e.path,
              fmt::format("expected a non-negative integer, got {}", describe(e.value)));
    return std::nullopt;
  }
  const std::string& s = e.value.Scalar();
  uint64_t v = 0;
  const char* b = s.data() + (s[0] == '+' ? 1 : 0);
  auto [ptr, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    ctx.error(e.at(), e.path, fmt::format("'{}' is not a decimal integer below 2^64", s));
    return std::nullopt;
  }
  return v;
}

std::optional<double> read_number(Ctx& ctx, const Entry& e, double lo, double hi) {
  ScalarKind k = e.value.IsScalar() ? scalar_kind(e.value) : ScalarKind::kNull;
  if (k != ScalarKind::kInt && k != ScalarKind::kFloat) {
    ctx.error(e.at(), e.path, fmt::format("expected a number, got {}", describe(e.value)));
    return std::nullopt;
  }
  double v = 0;
  const std::string& s = e.value.Scalar();
  const char* b = s.data() + (s[0] == '+' ? 1 : 0);
  auto [ptr, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
    ctx.error(e.at(), e.path, fmt::format("'{}' is not a finite decimal number", s));
    return std::nullopt;
  }
  if (v < lo || v > hi) {
    ctx.error(e.at(), e.path, fmt::format("{} is out of range {}..{}", s, lo, hi));
    return std::nullopt;
  }
  return v;
}

// Workloads time service and host costs in microseconds, mostly: "service: 20" gets "write e.g.
// 20us".
std::optional<int64_t> read_duration(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi) {
  return yaml::read_duration(ctx, e, lo, hi, "us");
}

std::optional<double> read_rate(Ctx& ctx, const Entry& e) {
  std::optional<double> v;
  if (e.value.IsScalar() && scalar_kind(e.value) != ScalarKind::kNull &&
      scalar_kind(e.value) != ScalarKind::kBool)
    v = parse_rate(e.value.Scalar());
  if (!v) {
    std::string got = describe(e.value);
    if (e.value.IsScalar() && !e.value.Scalar().empty() && e.value.Scalar()[0] == '-')
      got = fmt::format("'{}': rates cannot be negative", e.value.Scalar());
    ctx.error(e.at(), e.path,
              fmt::format("expected a rate per second such as 250000, 250k or 1.5M, got {}", got));
    return std::nullopt;
  }
  if (*v <= 0 || *v > kMaxRate) {
    ctx.error(e.at(), e.path,
              fmt::format("{} is out of range: a rate must be above 0 and at most 10G per second",
                          e.value.Scalar()));
    return std::nullopt;
  }
  return v;
}

std::vector<std::string> builtin_cost_names() {
  std::vector<std::string> names;
  for (const CostModel& c : builtin_cost_models()) names.push_back(c.name);
  return names;
}

// A duration (constant) or {dist: constant|exponential|lognormal, mean: D, cv: X}.
std::optional<Dist> read_dist(Ctx& ctx, const Entry& e) {
  if (!e.value.IsMap()) {
    if (e.value.IsSequence()) {
      ctx.error(e.at(), e.path,
                fmt::format("expected a duration or a mapping {{dist, mean, cv}}, got {}",
                            describe(e.value)));
      return std::nullopt;
    }
    auto v = read_duration(ctx, e, 0, kMaxDelay);
    if (!v) return std::nullopt;
    return Dist::constant(static_cast<double>(*v));
  }
  MapReader r(ctx, e.value, e.at(), e.path, {"dist", "mean", "cv"});
  using K = Dist::Kind;
  std::optional<K> kind;
  if (const Entry* x = r.get("dist")) {
    kind =
        read_name(ctx, *x, kDistKindNames, {{"exp", "exponential"}, {"log-normal", "lognormal"}});
    if (!kind) return std::nullopt;
  } else {
    ctx.error(e.at(), e.path, "missing required key 'dist' (constant, exponential or lognormal)");
    return std::nullopt;
  }
  const Entry* mean = r.get("mean");
  if (!mean) {
    ctx.error(e.at(), e.path, "missing required key 'mean'");
    return std::nullopt;
  }
  auto m = read_duration(ctx, *mean, 0, kMaxDelay);
  const Entry* cv = r.get("cv");
  std::optional<double> c = 0.0;
  if (*kind == K::kLogNormal) {
    if (!cv) {
      ctx.error(e.at(), e.path, "a lognormal needs 'cv' (standard deviation / mean, e.g. 0.5)");
      return std::nullopt;
    }
    c = read_number(ctx, *cv, 0, 100);
  } else if (cv) {
    ctx.error(cv->key, cv->path,
              fmt::format("cv applies to lognormal only ({} has cv {})", kDistKindNames.name(*kind),
                          *kind == K::kConstant ? "0" : "1"));
    return std::nullopt;
  }
  if (!m || !c) return std::nullopt;
  if (*kind != K::kConstant && *m == 0) {
    ctx.error(mean->at(), mean->path,
              fmt::format("a {} needs a mean above 0", kDistKindNames.name(*kind)));
    return std::nullopt;
  }
  const double mn = static_cast<double>(*m);
  switch (*kind) {
    case K::kConstant:
      return Dist::constant(mn);
    case K::kExponential:
      return Dist::exponential(mn);
    case K::kLogNormal:
      break;
  }
  return Dist::lognormal(mn, *c);
}

// A built-in name or {base, name, irq, completion, poll}.
std::optional<CostModel> read_cost(Ctx& ctx, const Entry& e) {
  if (!e.value.IsMap()) {
    auto i = read_enum(ctx, e, builtin_cost_names());
    if (!i) return std::nullopt;
    return builtin_cost_models()[*i];
  }
  MapReader r(ctx, e.value, e.at(), e.path, {"base", "name", "irq", "completion", "poll", "app"});
  CostModel c;
  bool ok = true;
  bool changed = false;
  if (const Entry* x = r.get("base")) {
    if (auto i = read_enum(ctx, *x, builtin_cost_names()))
      c = builtin_cost_models()[*i];
    else
      ok = false;
  }
  for (auto [key, field] :
       {std::pair{"irq", &CostModel::irq_ns}, std::pair{"completion", &CostModel::completion_ns},
        std::pair{"poll", &CostModel::poll_ns}, std::pair{"app", &CostModel::app_ns}}) {
    if (const Entry* x = r.get(key)) {
      if (auto v = read_duration(ctx, *x, 0, kMaxDelay)) {
        changed = changed || c.*field != *v;
        c.*field = *v;
      } else {
        ok = false;
      }
    }
  }
  if (const Entry* x = r.get("name")) {
    if (auto s = read_string(ctx, *x))
      c.name = *s;
    else
      ok = false;
  } else if (!r.get("base") || changed) {
    // Reports name the cost model: an unnamed one is named by its values.
    c.name = fmt::format("irq={},completion={},poll={},app={}", format_duration(c.irq_ns),
                         format_duration(c.completion_ns), format_duration(c.poll_ns),
                         format_duration(c.app_ns));
  }
  if (!ok) return std::nullopt;
  return c;
}

void read_stage(Ctx& ctx, const YAML::Node& node, const std::string& path, StageSpec& s) {
  MapReader r(ctx, node, mark_of(node), path,
              {"name", "service", "servers", "shared_servers", "timer", "poll_budget", "cost",
               "cores", "moderated", "fixed", "software"},
              {{"cost_model", "cost"}, {"budget", "poll_budget"}, {"mode", "timer"}});
  if (const Entry* x = r.get("name"))
    if (auto v = read_string(ctx, *x)) s.name = *v;
  if (const Entry* x = r.get("service"))
    if (auto v = read_dist(ctx, *x)) s.service = *v;
  if (const Entry* x = r.get("servers"))
    if (auto v = read_int(ctx, *x, 0, kMaxDepth)) s.servers = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("shared_servers"))
    if (auto v = read_bool(ctx, *x)) s.shared_servers = *v;
  if (const Entry* x = r.get("timer")) {
    if (auto t = read_name(ctx, *x, seam::kTimerModeNames,
                           {{"eqe", "rate-limit"},
                            {"EQE", "rate-limit"},
                            {"cqe", "idle-gap"},
                            {"CQE", "idle-gap"}}))
      s.timer = *t;
  }
  if (const Entry* x = r.get("poll_budget"))
    if (auto v = read_int(ctx, *x, 1, 65'536)) s.poll_budget = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("cost"))
    if (auto v = read_cost(ctx, *x)) s.cpu = *v;
  if (const Entry* x = r.get("cores"))
    if (auto v = read_int(ctx, *x, 1, kMaxQueues)) s.cores = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("moderated"))
    if (auto v = read_bool(ctx, *x)) s.moderated = *v;
  if (const Entry* x = r.get("fixed")) {
    MapReader f(ctx, x->value, x->at(), x->path, {"count", "timer"});
    if (const Entry* y = f.get("count"))
      if (auto v = read_int(ctx, *y, 1, 65'535)) s.fixed.count = static_cast<uint32_t>(*v);
    if (const Entry* y = f.get("timer"))
      if (auto v = read_duration(ctx, *y, 0, kMaxDelay)) s.fixed.timer_ns = *v;
  }
  if (const Entry* x = r.get("software")) {
    MapReader f(ctx, x->value, x->at(), x->path, {"defer_hard_irqs", "timer_latency", "timer_cost"},
                {{"defer", "defer_hard_irqs"}, {"napi_defer_hard_irqs", "defer_hard_irqs"}});
    SoftwareModeration sw;
    // The kernel's bound (napi-set refuses more than S32_MAX).
    if (const Entry* y = f.get("defer_hard_irqs"))
      if (auto v = read_int(ctx, *y, 0, 2'147'483'647))
        sw.defer_hard_irqs = static_cast<uint32_t>(*v);
    if (const Entry* y = f.get("timer_latency"))
      if (auto v = read_duration(ctx, *y, 0, kMaxDelay)) sw.timer_latency_ns = *v;
    if (const Entry* y = f.get("timer_cost"))
      if (auto v = read_duration(ctx, *y, 0, kMaxDelay)) sw.timer_cost_ns = *v;
    s.software = sw;
  }
}

void read_source(Ctx& ctx, const YAML::Node& node, const std::string& path, const fs::path& dir,
                 SourceSpec& s) {
  MapReader r(ctx, node, mark_of(node), path,
              {"kind", "flow", "depth", "think", "rate", "on_time", "off_time", "periodic", "trace",
               "trace_device", "bytes"},
              {{"type", "kind"},
               {"qd", "depth"},
               {"file", "trace"},
               {"device", "trace_device"},
               {"on", "on_time"},
               {"off", "off_time"}});
  if (!r.is_map() || !node.IsDefined() || node.IsNull()) {
    if (r.is_map()) ctx.error(mark_of(node), path, "missing required key 'kind'");
    return;
  }
  using K = SourceSpec::Kind;
  const Entry* kind = r.get("kind");
  if (!kind) {
    if (!r.suggested("kind"))
      ctx.error(mark_of(node), path,
                "missing required key 'kind' (closed, poisson, onoff or trace)");
    return;
  }
  auto k = read_name(ctx, *kind, kSourceKindNames, {{"open", "poisson"}, {"on-off", "onoff"}});
  if (!k) return;
  s.kind = *k;
  const std::string_view kn = kSourceKindNames.name(*k);

  // Which keys each kind reads; a key another kind reads is a mistake worth naming.
  struct KeyUse {
    std::string_view key;
    std::vector<K> kinds;
  };
  static const std::vector<KeyUse> kUse = {{"depth", {K::kClosed}},
                                           {"think", {K::kClosed}},
                                           {"rate", {K::kPoisson, K::kOnOff}},
                                           {"on_time", {K::kOnOff}},
                                           {"off_time", {K::kOnOff}},
                                           {"periodic", {K::kOnOff, K::kPoisson}},
                                           {"trace", {K::kTrace}},
                                           {"trace_device", {K::kTrace}}};
  for (const KeyUse& u : kUse) {
    const Entry* x = r.get(u.key);
    if (!x || std::find(u.kinds.begin(), u.kinds.end(), s.kind) != u.kinds.end()) continue;
    std::vector<std::string> users;
    for (K uk : u.kinds) users.emplace_back(kSourceKindNames.name(uk));
    ctx.error(
        x->key, x->path,
        fmt::format("'{}' applies to {} sources, not to kind {}", u.key, join(users, " and "), kn));
  }
  auto require = [&](std::string_view key) -> const Entry* {
    const Entry* x = r.get(key);
    if (!x && !r.suggested(key))
      ctx.error(kind->at(), path, fmt::format("kind {} needs '{}'", kn, key));
    return x;
  };

  if (const Entry* x = r.get("flow"))
    if (auto v = read_string(ctx, *x)) s.flow = *v;
  if (const Entry* x = r.get("bytes"))
    if (auto v = read_int(ctx, *x, 1, 1 << 30)) s.bytes = static_cast<uint32_t>(*v);
  switch (s.kind) {
    case K::kClosed:
      if (const Entry* x = r.get("depth"))
        if (auto v = read_int(ctx, *x, 1, kMaxDepth)) s.depth = static_cast<uint32_t>(*v);
      if (const Entry* x = r.get("think"))
        if (auto v = read_dist(ctx, *x)) s.think = *v;
      break;
    case K::kPoisson:
    case K::kOnOff:
      if (const Entry* x = require("rate"))
        if (auto v = read_rate(ctx, *x)) s.rate = *v;
      if (s.kind == K::kPoisson) {
        if (const Entry* x = r.get("periodic"))
          if (auto v = read_bool(ctx, *x)) s.periodic = *v;
        break;
      }
      if (const Entry* x = require("on_time"))
        if (auto v = read_duration(ctx, *x, 1, kMaxSpan)) s.on_ns = *v;
      if (const Entry* x = require("off_time"))
        if (auto v = read_duration(ctx, *x, 1, kMaxSpan)) s.off_ns = *v;
      if (const Entry* x = r.get("periodic"))
        if (auto v = read_bool(ctx, *x)) s.periodic = *v;
      break;
    case K::kTrace:
      if (const Entry* x = require("trace")) {
        if (auto v = read_string(ctx, *x)) {
          fs::path p(*v);
          s.trace_path = (p.is_relative() && !dir.empty() ? dir / p : p).string();
        }
      }
      if (const Entry* x = r.get("trace_device"))
        if (auto v = read_string(ctx, *x)) s.trace_device = *v;
      break;
  }
}

void read_phase(Ctx& ctx, const YAML::Node& node, const std::string& path, Phase& p) {
  MapReader r(ctx, node, mark_of(node), path, {"name", "duration", "load", "ramp", "depth"},
              {{"qd", "depth"}, {"rate", "load"}, {"length", "duration"}});
  if (!r.is_map()) return;
  if (const Entry* x = r.get("name"))
    if (auto v = read_string(ctx, *x)) p.name = *v;
  if (const Entry* x = r.get("duration")) {
    if (auto v = read_duration(ctx, *x, 1, kMaxSpan)) p.duration_ns = *v;
  } else if (!r.suggested("duration")) {
    ctx.error(mark_of(node), path, "missing required key 'duration'");
  }
  if (const Entry* x = r.get("load"))
    if (auto v = read_number(ctx, *x, 0, kMaxLoad)) p.load = *v;
  if (const Entry* x = r.get("ramp"))
    if (auto v = read_bool(ctx, *x)) p.ramp = *v;
  if (const Entry* x = r.get("depth"))
    if (auto v = read_int(ctx, *x, 1, kMaxDepth)) p.depth = static_cast<uint32_t>(*v);
}

// Reads a non-empty list (of `what`s), one item at a time.
template <typename T, typename F>
void read_list(Ctx& ctx, const Entry& e, std::string_view what, std::vector<T>& out, F read_one) {
  if (!e.value.IsSequence()) {
    ctx.error(e.at(), e.path,
              fmt::format("expected a list of {}s, got {}", what, describe(e.value)));
    return;
  }
  if (e.value.size() == 0) {
    ctx.error(e.at(), e.path, fmt::format("empty list; give at least one {}", what));
    return;
  }
  out.clear();
  size_t i = 0;
  for (const auto& item : e.value) {
    T t;
    read_one(item, fmt::format("{}[{}]", e.path, i++), t);
    out.push_back(std::move(t));
  }
}

void check_names(Ctx& ctx, const YAML::Node& list, std::string_view path,
                 const std::vector<std::string>& names, std::string_view what) {
  for (size_t b = 0; b < names.size(); ++b) {
    for (size_t a = 0; a < b; ++a) {
      if (names[a] != names[b]) continue;
      const YAML::Node item = list[b];
      ctx.error(item.IsMap() && item["name"] ? mark_of(item["name"]) : mark_of(item),
                fmt::format("{}[{}].name", path, b),
                fmt::format("duplicate {} name '{}' (also {}[{}]); reports tell them apart by "
                            "name",
                            what, names[b], path, a));
      break;
    }
  }
}

void read_document(Ctx& ctx, const YAML::Node& root, const fs::path& dir, Workload& w) {
  MapReader r(ctx, root, mark_of(root), "",
              {"version", "name", "description", "seed", "queues", "table", "apply_delay", "warmup",
               "window", "stages", "sources", "phases"},
              {{"stage", "stages"},
               {"source", "sources"},
               {"phase", "phases"},
               {"service", "stages[].service"},
               {"cost", "stages[].cost"},
               {"timer", "stages[].timer"},
               {"duration", "phases[].duration"},
               {"rate", "sources[].rate"},
               {"depth", "sources[].depth"}});
  if (!r.is_map()) return;
  if (const Entry* x = r.get("version")) yaml::read_version(ctx, *x, "workload");
  if (const Entry* x = r.get("name"))
    if (auto v = read_string(ctx, *x)) w.name = *v;
  if (const Entry* x = r.get("description"))
    if (auto v = read_string(ctx, *x, /*allow_empty=*/true)) w.description = *v;
  if (const Entry* x = r.get("seed"))
    if (auto v = read_u64(ctx, *x)) w.seed = *v;
  if (const Entry* x = r.get("queues"))
    if (auto v = read_int(ctx, *x, 1, kMaxQueues)) w.queues = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("table")) {
    if (auto t = read_name(ctx, *x, kProfileTableNames, {{"net", "net-eqe"}})) w.table = *t;
  }
  if (const Entry* x = r.get("apply_delay"))
    if (auto v = read_duration(ctx, *x, 0, kMaxDelay)) w.apply_delay_ns = *v;
  if (const Entry* x = r.get("warmup"))
    if (auto v = read_duration(ctx, *x, 0, kMaxSpan)) w.warmup_ns = *v;
  if (const Entry* x = r.get("window"))
    if (auto v = read_duration(ctx, *x, 1 * kUs, 10 * kS)) w.window_ns = *v;

  if (const Entry* x = r.get("stages")) {
    read_list(
        ctx, *x, "stage", w.stages,
        [&](const YAML::Node& n, const std::string& p, StageSpec& s) { read_stage(ctx, n, p, s); });
    std::vector<std::string> names;
    for (const StageSpec& s : w.stages) names.push_back(s.name);
    if (x->value.IsSequence() && x->value.size() == w.stages.size())
      check_names(ctx, x->value, "stages", names, "stage");
  }
  if (const Entry* x = r.get("sources")) {
    read_list(ctx, *x, "source", w.sources,
              [&](const YAML::Node& n, const std::string& p, SourceSpec& s) {
                read_source(ctx, n, p, dir, s);
              });
  }
  if (const Entry* x = r.get("phases")) {
    read_list(
        ctx, *x, "phase", w.phases,
        [&](const YAML::Node& n, const std::string& p, Phase& ph) { read_phase(ctx, n, p, ph); });
    // Only a list that was read names its phases (else w.phases is still the default).
    const bool read = x->value.IsSequence() && x->value.size() == w.phases.size();
    std::vector<std::string> names;
    for (size_t i = 0; read && i < w.phases.size(); ++i) {
      // Unnamed phases get their index so that every phase is told apart in reports.
      const YAML::Node item = x->value[i];
      if (!(item.IsMap() && item["name"])) w.phases[i].name = fmt::format("phase{}", i);
      names.push_back(w.phases[i].name);
    }
    if (read) check_names(ctx, x->value, "phases", names, "phase");
    if (read && w.phases.front().ramp) {
      const YAML::Node item = x->value[0];
      ctx.error(mark_of(item["ramp"]), "phases[0].ramp",
                "the first phase has no previous load to ramp from");
    }
  }
  if (const Entry* x = r.get("warmup")) {
    if (w.warmup_ns >= w.duration_ns())
      ctx.error(x->at(), x->path,
                fmt::format("warm-up {} leaves nothing to measure (the phases last {})",
                            format_duration(w.warmup_ns), format_duration(w.duration_ns())));
  }
}

}  // namespace

const std::vector<CostModel>& builtin_cost_models() {
  // Research section 4: C_irq (direct + indirect) 1-2 us plus cache effects, C_c 0.5-7 us per
  // completion, at most ~6.8 us of core time per I/O in all (anchor A1). docs/SIMULATOR.md gives
  // the reasoning for each value. Fields: name, irq, completion, poll, app.
  static const std::vector<CostModel> kModels = {
      {"free", 0, 0, 0, 0},
      {"net", 1'500, 500, 200, 1'000},
      {"512B", 2'000, 1'000, 300, 2'000},
      {"4k", 2'000, 1'500, 300, 2'000},
      {"64k", 2'000, 3'000, 300, 2'000},
  };
  return kModels;
}

std::optional<CostModel> builtin_cost_model(std::string_view name) {
  for (const CostModel& c : builtin_cost_models())
    if (c.name == name) return c;
  return std::nullopt;
}

std::optional<double> parse_rate(std::string_view text) {
  if (text.ends_with("/s")) text.remove_suffix(2);
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        scale = 1e3;
        break;
      case 'M':
        scale = 1e6;
        break;
      case 'G':
        scale = 1e9;
        break;
      default:
        break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  if (scale == 1) {
    // A plain number may use YAML's exponent form (1e6), as the schema's "number" allows.
    double v = 0;
    const char* b = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(b, text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
        !std::isfinite(v) || v < 0)
      return std::nullopt;
    return v;
  }
  auto v = parse_decimal(text);
  if (!v) return std::nullopt;
  return *v * scale;
}

std::optional<Dist> parse_dist(std::string_view text) {
  auto mean_of = [](std::string_view s) -> std::optional<double> {
    auto v = parse_duration(s);
    if (!v || *v <= 0) return std::nullopt;
    return static_cast<double>(*v);
  };
  if (text.starts_with("exp:")) {
    auto m = mean_of(text.substr(4));
    if (!m) return std::nullopt;
    return Dist::exponential(*m);
  }
  if (text.starts_with("lognormal:")) {
    std::string_view rest = text.substr(10);
    size_t colon = rest.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    auto m = mean_of(rest.substr(0, colon));
    auto cv = parse_decimal(rest.substr(colon + 1));
    if (!m || !cv || *cv > 100) return std::nullopt;
    return Dist::lognormal(*m, *cv);
  }
  auto v = parse_duration(text);
  if (!v || *v > kMaxDelay) return std::nullopt;
  return Dist::constant(static_cast<double>(*v));
}

std::string format_dist(const Dist& d) {
  const std::string mean = format_duration(static_cast<int64_t>(std::llround(d.mean_ns)));
  switch (d.kind) {
    case Dist::Kind::kConstant:
      return mean;
    case Dist::Kind::kExponential:
      return "exp:" + mean;
    case Dist::Kind::kLogNormal:
      return fmt::format("lognormal:{}:{}", mean, d.cv);
  }
  return mean;
}

std::string_view timer_mode_name(TimerMode m) {
  return seam::kTimerModeNames.name(m);
}

std::optional<TimerMode> parse_timer_mode(std::string_view text) {
  return seam::kTimerModeNames.parse(text);
}

std::string_view table_name(ProfileTable t) {
  return kProfileTableNames.name(t);
}

std::optional<ProfileTable> parse_table(std::string_view text) {
  return kProfileTableNames.parse(text);
}

std::string_view source_kind_name(SourceSpec::Kind k) {
  return kSourceKindNames.name(k);
}

Result<Workload> load_workload_from_string(std::string_view text, std::string_view name) {
  std::vector<Diagnostic> diags;
  Ctx ctx(name, diags);
  auto fail = [&] {
    sort_by_position(diags);
    return DIMCTL_FAIL(0, "{}", diagnostics_text(diags));
  };
  Workload w;
  const fs::path source(name);
  w.name = source.stem().string();
  if (w.name.empty()) w.name = "workload";
  auto doc = yaml::load_document(ctx, text, "workload");
  if (!doc) return fail();
  try {
    read_document(ctx, *doc, source.parent_path(), w);
  } catch (const YAML::Exception& e) {
    // A shape the reader did not expect: still an error with a position, never a crash.
    ctx.error(mark_of(e.mark), "", fmt::format("unexpected document structure: {}", e.msg));
  }
  if (ctx.count() > 0) return fail();
  return w;
}

Result<Workload> load_workload(const std::string& path) {
  auto text = yaml::read_file(path, "workload");
  if (!text) return std::move(text).error();
  return load_workload_from_string(*text, path);
}

}  // namespace dimctl::sim
