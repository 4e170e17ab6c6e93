// YAML -> Config. Two passes: a structural pass that walks the document with a strict reader
// (dimctl/common/yaml_reader.h, shared with the simulator's workload loader: unknown and
// duplicate keys, YAML 1.2 core scalar types, ranges), then a semantic pass over the
// resulting rules (check.cc: kinds, cross-field constraints, duplicates). Every problem is
// recorded with its position instead of stopping at the first, so an operator fixes a file in
// one go.
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <regex>
#include <string_view>

#include "check.h"
#include "config_internal.h"
#include "dimctl/common/yaml_reader.h"
#include "dimctl/config/config.h"
#include "dimctl/seam/names.h"

namespace dimctl::config {

using seam::Algorithm;
using seam::Mode;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMinInterval = 1 * kMs;
constexpr int64_t kMaxInterval = 10 * kS;
constexpr int64_t kMaxPublishInterval = 60 * kS;
constexpr int64_t kMaxRateLimit = 600 * kS;
constexpr uint32_t kMaxSeries = 1'000'000;
constexpr size_t kMaxRuleName = 64;
constexpr size_t kIfNameMax = 15;               // IFNAMSIZ - 1
constexpr size_t kIbDevNameMax = 63;            // IB_DEVICE_NAME_MAX - 1
constexpr int64_t kMaxModelCost = 1 * kMs;      // model.completion_cost / interrupt_cost
constexpr int64_t kMaxModelChanges = 1000;      // model.max_changes (per second)
constexpr int64_t kMaxLatencyBudget = 1 * kS;   // model.latency_budget
constexpr int64_t kMaxTimerLatency = 10 * kMs;  // model.timer_latency
// software_profiles: the kernel takes any u64 timer and a defer count up to S32_MAX; a timer
// beyond a second would hold an interrupt masked for seconds, which no profile means.
constexpr int64_t kMaxGroFlushTimeout = 1 * kS;
constexpr int64_t kMaxDeferHardIrqs = 2147483647;

using yaml::Ctx;
using yaml::describe;
using yaml::Entry;
using yaml::MapReader;
using yaml::mark_of;
using yaml::read_bool;
using yaml::read_enum;
using yaml::read_int;
using yaml::read_name;
using yaml::read_string;
using yaml::scalar_kind;
using yaml::ScalarKind;

// The config's periods are milliseconds, mostly: "interval: 20" gets "write e.g. 20ms".
std::optional<int64_t> read_duration(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi) {
  return yaml::read_duration(ctx, e, lo, hi, "ms");
}

// A file the daemon reads at start-up: an absolute path (it runs from anywhere), not a folder.
std::optional<std::string> read_absolute_file(Ctx& ctx, const Entry& e) {
  auto s = read_string(ctx, e);
  if (!s) return std::nullopt;
  if ((*s)[0] != '/' || s->back() == '/') {
    ctx.error(e.at(), e.path,
              fmt::format("'{}' must be an absolute file path (it is read at start-up from "
                          "wherever the daemon runs)",
                          *s));
    return std::nullopt;
  }
  return s;
}

std::optional<Mode> read_mode(Ctx& ctx, const Entry& e) {
  return read_name(ctx, e, seam::kModeNames);
}

enum class GlobKind { kInterface, kDriver, kRdmaDevice };

// A string or a non-empty list of strings, each a valid glob for `kind`.
std::optional<std::vector<std::string>> read_globs(Ctx& ctx, const Entry& e, GlobKind kind,
                                                   bool allow_empty) {
  std::vector<std::pair<YAML::Node, std::string>> items;
  if (e.value.IsSequence()) {
    if (e.value.size() == 0 && !allow_empty) {
      ctx.error(e.at(), e.path, "empty list; give at least one pattern or drop the key");
      return std::nullopt;
    }
    size_t i = 0;
    for (const auto& item : e.value) {
      items.emplace_back(item, fmt::format("{}[{}]", e.path, i++));
    }
  } else if (e.value.IsNull() && allow_empty) {
    return std::vector<std::string>{};
  } else {
    items.emplace_back(e.value, e.path);
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& [node, path] : items) {
    Entry item{e.key, node, path};
    auto s = read_string(ctx, item);
    if (!s) {
      ok = false;
      continue;
    }
    std::string why;
    size_t max_len = kind == GlobKind::kInterface    ? kIfNameMax
                     : kind == GlobKind::kRdmaDevice ? kIbDevNameMax
                                                     : 0;
    if (!validate_glob(*s, max_len, why)) {
      ctx.error(item.at(), path, fmt::format("invalid pattern '{}': {}", *s, why));
      ok = false;
      continue;
    }
    out.push_back(*s);
  }
  if (!ok) return std::nullopt;
  return out;
}

// ---- sections ----

void read_metrics(Ctx& ctx, const Entry& e, MetricsConfig& m) {
  MapReader r(ctx, e.value, e.at(), e.path,
              {"listen", "max_queue_series", "max_cq_series", "publish_interval", "web_config"});
  if (const Entry* x = r.get("listen")) {
    if (auto s = read_string(ctx, *x)) {
      if (auto a = parse_listen_address(*s))
        m.listen = std::move(*a);
      else
        ctx.error(x->at(), x->path, a.error().message());
    }
  }
  if (const Entry* x = r.get("max_queue_series"))
    if (auto v = read_int(ctx, *x, 1, kMaxSeries)) m.max_queue_series = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("max_cq_series"))
    if (auto v = read_int(ctx, *x, 1, kMaxSeries)) m.max_cq_series = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("publish_interval"))
    if (auto v = read_duration(ctx, *x, 0, kMaxPublishInterval)) m.publish_interval_ns = *v;
  if (const Entry* x = r.get("web_config"))
    if (auto s = read_absolute_file(ctx, *x)) m.web_config = std::move(*s);
}

void read_collectors(Ctx& ctx, const Entry& e, CollectorsConfig& c) {
  MapReader r(ctx, e.value, e.at(), e.path, {"napi", "rdma", "skb_bytes"});
  if (const Entry* x = r.get("napi"))
    if (auto v = read_bool(ctx, *x)) c.napi = *v;
  if (const Entry* x = r.get("rdma"))
    if (auto v = read_bool(ctx, *x)) c.rdma = *v;
  if (const Entry* x = r.get("skb_bytes"))
    if (auto v = read_globs(ctx, *x, GlobKind::kInterface, /*allow_empty=*/true))
      c.skb_bytes = std::move(*v);
}

// A list of exactly one mapping per net profile index (0..4), each with the keys `keys`, read by
// `read_entry(reader, item, path)` (nullopt: already reported). `entries` names an entry's shape
// and `count_rule` why there are five, for the messages. Every entry is checked, so one load
// reports all the bad ones.
template <typename T, typename ReadEntry>
std::optional<std::array<T, 5>> read_five(Ctx& ctx, const Entry& e, std::string_view entries,
                                          std::string_view count_rule,
                                          std::initializer_list<std::string_view> keys,
                                          ReadEntry read_entry) {
  if (!e.value.IsSequence()) {
    ctx.error(e.at(), e.path,
              fmt::format("expected a list of 5 {} entries, got {}", entries, describe(e.value)));
    return std::nullopt;
  }
  if (e.value.size() != 5) {
    ctx.error(e.at(), e.path, fmt::format("{}, got {}", count_rule, e.value.size()));
    return std::nullopt;
  }
  std::array<T, 5> table{};
  bool ok = true;
  for (size_t i = 0; i < 5; ++i) {
    YAML::Node item = e.value[i];
    std::string path = fmt::format("{}[{}]", e.path, i);
    MapReader r(ctx, item, mark_of(item), path, keys);
    std::optional<T> entry;
    if (item.IsMap()) entry = read_entry(r, item, path);
    if (entry) {
      table[i] = *entry;
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return table;
}

std::optional<std::array<dim::Profile, 5>> read_profile_table(Ctx& ctx, const Entry& e) {
  return read_five<dim::Profile>(
      ctx, e, "{usec, pkts}", "net DIM tables have exactly 5 entries (profile 0..4)",
      {"usec", "pkts", "comps"},
      [&](MapReader& r, const YAML::Node& item,
          const std::string& path) -> std::optional<dim::Profile> {
        const Entry* usec = r.get("usec");
        const Entry* pkts = r.get("pkts");
        if (!usec || !pkts) {
          ctx.error(mark_of(item), path, "each entry needs usec and pkts (comps is optional)");
          return std::nullopt;
        }
        auto u = read_int(ctx, *usec, 0, 65535);
        auto p = read_int(ctx, *pkts, 0, 65535);
        std::optional<int64_t> c = 0;
        if (const Entry* comps = r.get("comps")) c = read_int(ctx, *comps, 0, 65535);
        if (!u || !p || !c) return std::nullopt;
        return dim::Profile{static_cast<uint16_t>(*u), static_cast<uint16_t>(*p),
                            static_cast<uint16_t>(*c)};
      });
}

// `software_profiles:`: one {gro_flush_timeout, defer_hard_irqs} per net profile index.
std::optional<std::array<seam::SoftwareProfile, 5>> read_software_profiles(Ctx& ctx,
                                                                           const Entry& e) {
  return read_five<seam::SoftwareProfile>(
      ctx, e, "{gro_flush_timeout, defer_hard_irqs}",
      "one entry per net profile index (0..4): exactly 5 entries",
      {"gro_flush_timeout", "defer_hard_irqs"},
      [&](MapReader& r, const YAML::Node& item,
          const std::string& path) -> std::optional<seam::SoftwareProfile> {
        const Entry* timeout = r.get("gro_flush_timeout");
        const Entry* defer = r.get("defer_hard_irqs");
        if (!timeout || !defer) {
          ctx.error(mark_of(item), path, "each entry needs gro_flush_timeout and defer_hard_irqs");
          return std::nullopt;
        }
        auto t = yaml::read_duration(ctx, *timeout, 0, kMaxGroFlushTimeout, "us");
        auto d = read_int(ctx, *defer, 0, kMaxDeferHardIrqs);
        if (!t || !d) return std::nullopt;
        return seam::SoftwareProfile{static_cast<uint32_t>(*d), static_cast<uint64_t>(*t)};
      });
}

// An algorithm other than static (read with its index by read_rule), by its name or an alias
// (net_cqe, the former label value); the message offers the names.
std::optional<Algorithm> read_algorithm(Ctx& ctx, const Entry& e) {
  if (e.value.IsScalar() && scalar_kind(e.value) == ScalarKind::kString)
    if (auto a = seam::kAlgorithmNames.parse(e.value.Scalar()); a && a != Algorithm::kStatic)
      return a;
  std::vector<std::string> words = seam::kAlgorithmNames.words();
  std::erase(words, std::string(seam::kAlgorithmNames.name(Algorithm::kStatic)));
  if (auto i = read_enum(ctx, e, words)) return seam::kAlgorithmNames.parse_name(words[*i]);
  return std::nullopt;
}

void read_rule(Ctx& ctx, const YAML::Node& node, const std::string& path, Rule& rule,
               RuleMarks& marks) {
  rule.mark = mark_of(node);
  marks = RuleMarks{rule.mark, rule.mark, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, path};
  MapReader r(
      ctx, node, rule.mark, path,
      {"name", "match", "mode", "algorithm", "profiles", "rx_profile", "tx_profile", "rate_limit",
       "combine", "adaptive", "kernel_dim", "compare", "model", "method", "software_profiles"},
      {{"interface", "match.interface"},
       {"driver", "match.driver"},
       {"rdma_device", "match.rdma_device"},
       {"min", "profiles.min"},
       {"max", "profiles.max"}});
  if (!node.IsMap()) return;

  if (const Entry* x = r.get("name")) {
    marks.name = x->at();
    if (auto s = read_string(ctx, *x)) {
      static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.-]*");
      if (s->size() > kMaxRuleName || !std::regex_match(*s, kName))
        ctx.error(x->at(), x->path,
                  fmt::format("rule name '{}' must be 1..{} characters of A-Z a-z 0-9 _ . - "
                              "starting with a letter or digit (it becomes a metric label)",
                              *s, kMaxRuleName));
      else
        rule.name = *s;
    }
  } else {
    ctx.error(rule.mark, path, "missing required key 'name'");
  }

  if (const Entry* x = r.get("match")) {
    marks.match = x->at();
    MapReader m(ctx, x->value, x->at(), x->path, {"interface", "driver", "rdma_device"});
    bool any = false;
    if (const Entry* y = m.get("interface")) {
      any = true;
      if (auto v = read_globs(ctx, *y, GlobKind::kInterface, false)) rule.match.interface = *v;
    }
    if (const Entry* y = m.get("driver")) {
      any = true;
      if (auto v = read_globs(ctx, *y, GlobKind::kDriver, false)) rule.match.driver = *v;
    }
    if (const Entry* y = m.get("rdma_device")) {
      any = true;
      if (auto v = read_globs(ctx, *y, GlobKind::kRdmaDevice, false)) rule.match.rdma_device = *v;
    }
    if (!any && (x->value.IsMap() || x->value.IsNull()))
      ctx.error(x->at(), x->path,
                "needs at least one selector: interface, driver or rdma_device (a rule cannot "
                "match every device implicitly)");
  } else {
    ctx.error(rule.mark, path, "missing required key 'match'");
  }

  if (const Entry* x = r.get("mode")) {
    marks.mode = x->at();
    rule.mode = read_mode(ctx, *x);
  }

  if (const Entry* x = r.get("algorithm")) {
    marks.algorithm = x->at();
    if (x->value.IsScalar() && scalar_kind(x->value) == ScalarKind::kString &&
        x->value.Scalar().rfind("static:", 0) == 0) {
      std::string_view ix = std::string_view(x->value.Scalar()).substr(7);
      unsigned v = 0;
      auto [ptr, ec] = std::from_chars(ix.data(), ix.data() + ix.size(), v);
      if (ix.empty() || ec != std::errc() || ptr != ix.data() + ix.size() || v > 255) {
        ctx.error(
            x->at(), x->path,
            fmt::format("'{}': static needs a profile index, e.g. static:2", x->value.Scalar()));
      } else {
        rule.algorithm = Algorithm::kStatic;
        rule.static_index = static_cast<uint8_t>(v);
      }
    } else if (x->value.IsScalar() && x->value.Scalar() == "static") {
      ctx.error(x->at(), x->path, "static needs a profile index, e.g. static:2");
    } else if (auto a = read_algorithm(ctx, *x)) {
      rule.algorithm = *a;
    }
  }

  if (const Entry* x = r.get("profiles")) {
    MapReader p(ctx, x->value, x->at(), x->path, {"min", "max"});
    if (const Entry* y = p.get("min")) {
      marks.min = y->at();
      if (auto v = read_int(ctx, *y, 0, kRdmaLastIndex))
        rule.min_profile = static_cast<uint8_t>(*v);
    }
    if (const Entry* y = p.get("max")) {
      marks.max = y->at();
      if (auto v = read_int(ctx, *y, 0, kRdmaLastIndex))
        rule.max_profile = static_cast<uint8_t>(*v);
    }
    if (x->value.IsMap() && !p.get("min") && !p.get("max"))
      ctx.error(x->at(), x->path, "give min, max or both (or drop the key)");
  }

  if (const Entry* x = r.get("rx_profile")) {
    marks.rx_profile = x->at();
    rule.rx_profile = read_profile_table(ctx, *x);
  }
  if (const Entry* x = r.get("tx_profile")) {
    marks.tx_profile = x->at();
    rule.tx_profile = read_profile_table(ctx, *x);
  }
  if (const Entry* x = r.get("rate_limit"))
    if (auto v = read_duration(ctx, *x, 0, kMaxRateLimit)) rule.rate_limit_ns = *v;
  if (const Entry* x = r.get("combine"))
    if (auto c = read_name(ctx, *x, seam::kCombineNames)) rule.combine = *c;
  if (const Entry* x = r.get("adaptive"))
    if (auto i = read_enum(ctx, *x, {"take-over", "leave"})) rule.take_over_adaptive = *i == 0;
  if (const Entry* x = r.get("compare")) {
    marks.compare = x->at();
    rule.compare = read_name(ctx, *x, kCompareNames);
  }
  if (const Entry* x = r.get("model")) {
    marks.model = x->at();
    MapReader m(ctx, x->value, x->at(), x->path,
                {"completion_cost", "interrupt_cost", "max_changes", "timer", "shared_load",
                 "costs", "objective", "latency_budget", "timer_latency"});
    seam::ModelSettings settings;
    if (const Entry* y = m.get("completion_cost"))
      if (auto v = read_duration(ctx, *y, 0, kMaxModelCost)) {
        settings.completion_cost_ns = *v;
        settings.completion_cost_set = true;
      }
    if (const Entry* y = m.get("interrupt_cost"))
      if (auto v = read_duration(ctx, *y, 0, kMaxModelCost)) {
        settings.interrupt_cost_ns = *v;
        settings.interrupt_cost_set = true;
      }
    if (const Entry* y = m.get("costs"))
      if (auto i = read_enum(ctx, *y, {"measured", "defaults"})) settings.measured_costs = *i == 0;
    if (const Entry* y = m.get("max_changes"))
      if (auto v = read_int(ctx, *y, 1, kMaxModelChanges))
        settings.max_changes_per_s = static_cast<uint32_t>(*v);
    if (const Entry* y = m.get("timer"))
      if (auto t = read_name(ctx, *y, seam::kTimerModeNames)) settings.timer = *t;
    if (const Entry* y = m.get("shared_load"))
      if (auto v = read_bool(ctx, *y)) settings.shared_load = *v;
    if (const Entry* y = m.get("timer_latency"))
      if (auto v = read_duration(ctx, *y, 0, kMaxTimerLatency)) settings.timer_latency_ns = *v;
    // The budget is what efficiency trades latency for, so each needs the other: a budget alone
    // would be silently ignored by the latency objective.
    const Entry* objective = m.get("objective");
    const Entry* budget = m.get("latency_budget");
    bool objective_ok = true;
    if (objective) {
      if (auto i = read_enum(ctx, *objective, {"latency", "efficiency"})) {
        settings.objective = *i == 0 ? dim::Objective::kLatency : dim::Objective::kEfficiency;
      } else {
        objective_ok = false;
      }
    }
    const bool efficiency = settings.objective == dim::Objective::kEfficiency;
    if (budget && objective_ok) {
      if (!efficiency) {
        ctx.error(budget->at(), budget->path,
                  "latency_budget applies to objective: efficiency only (the latency objective "
                  "adds no latency to trade)");
      } else if (auto v = read_duration(ctx, *budget, 0, kMaxLatencyBudget)) {
        if (*v == 0) {
          ctx.error(budget->at(), budget->path,
                    "latency_budget must be above 0 with objective: efficiency");
        } else {
          settings.latency_budget_ns = *v;
        }
      }
    } else if (efficiency) {
      ctx.error(objective->at(), objective->path,
                "objective: efficiency needs latency_budget, the mean latency per completion it "
                "may add over no moderation (for example 50us)");
    }
    rule.model = settings;
  }
  if (const Entry* x = r.get("method")) {
    marks.method = x->at();
    rule.method = read_name(ctx, *x, seam::kMethodNames);
  }
  if (const Entry* x = r.get("software_profiles")) {
    marks.software_profiles = x->at();
    rule.software_profiles = read_software_profiles(ctx, *x);
  }
  if (const Entry* x = r.get("kernel_dim")) {
    marks.kernel_dim = x->at();
    // `on`/`off` are what `rdma dev set ... adaptive-moderation on|off` says; YAML 1.2 reads
    // them as strings, so both spellings are accepted.
    if (x->value.IsScalar() && scalar_kind(x->value) == ScalarKind::kBool) {
      rule.kernel_dim = read_bool(ctx, *x);
    } else if (auto i = read_enum(ctx, *x, {"on", "off"})) {
      rule.kernel_dim = *i == 0;
    }
  }
}

void read_document(Ctx& ctx, const YAML::Node& root, Config& cfg) {
  MapReader r(ctx, root, mark_of(root), "",
              {"version", "mode", "interval", "state_file", "metrics", "collectors", "devices"},
              {{"rules", "devices"},
               {"listen", "metrics.listen"},
               {"napi", "collectors.napi"},
               {"rdma", "collectors.rdma"},
               {"skb_bytes", "collectors.skb_bytes"}});
  if (const Entry* x = r.get("version")) yaml::read_version(ctx, *x, "config");
  if (const Entry* x = r.get("mode"))
    if (auto v = read_mode(ctx, *x)) cfg.mode = *v;
  if (const Entry* x = r.get("interval"))
    if (auto v = read_duration(ctx, *x, kMinInterval, kMaxInterval)) cfg.interval_ns = *v;
  if (const Entry* x = r.get("state_file"))
    if (auto s = read_absolute_file(ctx, *x)) cfg.state_file = std::move(*s);
  if (const Entry* x = r.get("metrics")) read_metrics(ctx, *x, cfg.metrics);
  if (const Entry* x = r.get("collectors")) read_collectors(ctx, *x, cfg.collectors);

  const Entry* devices = r.get("devices");
  if (!devices || devices->value.IsNull()) return;
  if (!devices->value.IsSequence()) {
    ctx.error(devices->at(), "devices",
              fmt::format("expected a list of rules, got {}", describe(devices->value)));
    return;
  }
  std::vector<RuleMarks> marks;
  size_t i = 0;
  for (const auto& node : devices->value) {
    Rule rule;
    RuleMarks m;
    size_t before = ctx.count();
    read_rule(ctx, node, fmt::format("devices[{}]", i++), rule, m);
    // Cross-field checks only on rules that parsed cleanly, so one typo yields one error.
    if (ctx.count() == before) check_rule(ctx, rule, m, cfg.mode);
    cfg.rules.push_back(std::move(rule));
    marks.push_back(std::move(m));
  }
  check_rules(ctx, cfg, marks);
}

}  // namespace

bool parse_config_diagnostics(std::string_view yaml, std::string_view source_name, Config& out,
                              std::vector<Diagnostic>& diags) {
  diags.clear();
  out = Config{};
  out.source = std::string(source_name);
  Ctx ctx(source_name, diags);
  auto doc = yaml::load_document(ctx, yaml, "config");
  if (!doc) return false;
  read_document(ctx, *doc, out);
  sort_by_position(diags);
  return diags.empty();
}

Result<Config> parse_config(std::string_view yaml, std::string_view source_name) {
  Config cfg;
  std::vector<Diagnostic> diags;
  if (parse_config_diagnostics(yaml, source_name, cfg, diags)) return cfg;
  return DIMCTL_FAIL(0, "{}", diagnostics_text(diags));
}

Result<Config> load_config(const std::string& path) {
  auto text = yaml::read_file(path, "config");
  if (!text) return std::move(text).error();
  return parse_config(*text, path);
}

}  // namespace dimctl::config
