// YAML -> Config. Two passes: a structural pass that walks the document with a strict reader
// (dimctl/common/yaml_reader.h, shared with the simulator's workload loader: unknown and
// duplicate keys, YAML 1.2 core scalar types, ranges), then a semantic pass over the
// resulting rules (kinds, cross-field constraints, duplicates). Every problem is recorded with
// its position instead of stopping at the first, so an operator fixes a file in one go.
#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "config_internal.h"
#include "dimctl/common/yaml_reader.h"
#include "dimctl/config/config.h"
#include "dimctl/config/config_policy.h"

namespace dimctl::config {

using model::Algorithm;
using model::CombinePolicy;
using model::Mode;

std::optional<int64_t> parse_duration(std::string_view text) {
  if (text == "0") return 0;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1'000;
  } else if (unit == "ms") {
    scale = 1'000'000;
  } else if (unit == "s") {
    scale = 1'000'000'000;
  } else {
    return std::nullopt;
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || ptr != text.data() + digits) return std::nullopt;
  if (value > INT64_MAX / scale) return std::nullopt;
  return value * scale;
}

std::string format_duration(int64_t ns) {
  if (ns == 0) return "0";
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  if (ns % 1'000 == 0) return fmt::format("{}us", ns / 1'000);
  return fmt::format("{}ns", ns);
}

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::kObserve:
      return "observe";
    case Mode::kShadow:
      return "shadow";
    case Mode::kEnforce:
      return "enforce";
  }
  return "?";
}

std::string algorithm_name(Algorithm a, uint8_t static_index) {
  switch (a) {
    case Algorithm::kNetEqe:
      return "net-eqe";
    case Algorithm::kNetCqe:
      return "net-cqe";
    case Algorithm::kRdma:
      return "rdma";
    case Algorithm::kStatic:
      return fmt::format("static:{}", static_index);
    case Algorithm::kOff:
      return "off";
    case Algorithm::kModel:
      return "model";
    case Algorithm::kModelCqe:
      return "model-cqe";
  }
  return "?";
}

std::string_view compare_name(CompareWith c) {
  return c == CompareWith::kDim ? "dim" : "model";
}

std::string_view timer_name(dim::TimerMode t) {
  switch (t) {
    case dim::TimerMode::kRateLimit:
      return "rate-limit";
    case dim::TimerMode::kIdleGap:
      return "idle-gap";
    case dim::TimerMode::kAbsolute:
      return "absolute";
  }
  return "?";
}

std::string_view combine_name(CombinePolicy c) {
  switch (c) {
    case CombinePolicy::kBusiestQueue:
      return "busiest-queue";
    case CombinePolicy::kMaxProfile:
      return "max";
    case CombinePolicy::kMinProfile:
      return "min";
  }
  return "?";
}

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMinInterval = 1 * kMs;
constexpr int64_t kMaxInterval = 10 * kS;
constexpr int64_t kMaxPublishInterval = 60 * kS;
constexpr int64_t kMaxRateLimit = 600 * kS;
constexpr uint32_t kMaxSeries = 1'000'000;
constexpr size_t kMaxRuleName = 64;
constexpr size_t kIfNameMax = 15;           // IFNAMSIZ - 1
constexpr size_t kIbDevNameMax = 63;        // IB_DEVICE_NAME_MAX - 1
constexpr int kNetLastIndex = 4;            // net DIM tables have 5 entries
constexpr int kRdmaLastIndex = 8;           // the RDMA DIM table has 9
constexpr int64_t kMaxModelCost = 1 * kMs;  // model.completion_cost / interrupt_cost
constexpr int64_t kMaxModelChanges = 1000;  // model.max_changes (per second)

using yaml::Ctx;
using yaml::describe;
using yaml::Entry;
using yaml::join;
using yaml::MapReader;
using yaml::mark_of;
using yaml::read_bool;
using yaml::read_enum;
using yaml::read_int;
using yaml::read_string;
using yaml::scalar_kind;
using yaml::ScalarKind;

// Durations are whole numbers of a unit (parse_duration).
constexpr yaml::DurationSyntax kDurations{
    parse_duration, format_duration, /*decimals=*/false, "ms", [](std::string_view s) {
      return fmt::format("'{}' is not a duration (an integer and one of ns, us, ms, s, e.g. 20ms)",
                         s);
    }};

std::optional<int64_t> read_duration(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi) {
  return yaml::read_duration(ctx, e, lo, hi, kDurations);
}

std::optional<Mode> read_mode(Ctx& ctx, const Entry& e) {
  auto i = read_enum(ctx, e, {"observe", "shadow", "enforce"});
  if (!i) return std::nullopt;
  return static_cast<Mode>(*i);
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

// "host:port" / "[v6]:port" / ":port" (empty host: every IPv4 and IPv6 address, as
// --web.listen-address and the exporter's parse_listen_address() take it).
bool parse_listen(const std::string& s, std::string& host, uint16_t& port, std::string& why) {
  std::string port_text;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      why = "expected [IPv6]:port, e.g. [::1]:9977";
      return false;
    }
    host = s.substr(1, close - 1);
    port_text = s.substr(close + 2);
    in6_addr a6{};
    if (inet_pton(AF_INET6, host.c_str(), &a6) != 1) {
      why = fmt::format("'{}' is not an IPv6 address", host);
      return false;
    }
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos) {
      why = "expected host:port, e.g. 127.0.0.1:9977 (or :9977 for every address)";
      return false;
    }
    host = s.substr(0, colon);
    port_text = s.substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      why = "IPv6 addresses must be in brackets, e.g. [::1]:9977";
      return false;
    }
    in_addr a4{};
    if (!host.empty() && host != "localhost" && inet_pton(AF_INET, host.c_str(), &a4) != 1) {
      // No name resolution at start-up: a metrics endpoint must not depend on DNS.
      why = fmt::format(
          "'{}' is not an IPv4 address (host names other than localhost are not "
          "resolved)",
          host);
      return false;
    }
  }
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      value < 1 || value > 65535) {
    why = fmt::format("port '{}' is not a number in 1..65535", port_text);
    return false;
  }
  port = static_cast<uint16_t>(value);
  return true;
}

// ---- sections ----

void read_metrics(Ctx& ctx, const Entry& e, MetricsConfig& m) {
  MapReader r(ctx, e.value, e.at(), e.path,
              {"listen", "max_queue_series", "max_cq_series", "publish_interval"});
  if (const Entry* x = r.get("listen")) {
    if (auto s = read_string(ctx, *x)) {
      std::string why;
      if (parse_listen(*s, m.listen_host, m.listen_port, why))
        m.listen = *s;
      else
        ctx.error(x->at(), x->path, fmt::format("bad listen address '{}': {}", *s, why));
    }
  }
  if (const Entry* x = r.get("max_queue_series"))
    if (auto v = read_int(ctx, *x, 1, kMaxSeries)) m.max_queue_series = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("max_cq_series"))
    if (auto v = read_int(ctx, *x, 1, kMaxSeries)) m.max_cq_series = static_cast<uint32_t>(*v);
  if (const Entry* x = r.get("publish_interval"))
    if (auto v = read_duration(ctx, *x, 0, kMaxPublishInterval)) m.publish_interval_ns = *v;
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

std::optional<std::array<dim::Profile, 5>> read_profile_table(Ctx& ctx, const Entry& e) {
  if (!e.value.IsSequence()) {
    ctx.error(
        e.at(), e.path,
        fmt::format("expected a list of 5 {{usec, pkts}} entries, got {}", describe(e.value)));
    return std::nullopt;
  }
  if (e.value.size() != 5) {
    ctx.error(e.at(), e.path,
              fmt::format("net DIM tables have exactly 5 entries (profile 0..4), got {}",
                          e.value.size()));
    return std::nullopt;
  }
  std::array<dim::Profile, 5> table{};
  bool ok = true;
  for (size_t i = 0; i < 5; ++i) {
    YAML::Node item = e.value[i];
    std::string path = fmt::format("{}[{}]", e.path, i);
    MapReader r(ctx, item, mark_of(item), path, {"usec", "pkts", "comps"});
    if (!item.IsMap()) {
      ok = false;
      continue;
    }
    const Entry* usec = r.get("usec");
    const Entry* pkts = r.get("pkts");
    if (!usec || !pkts) {
      ctx.error(mark_of(item), path, "each entry needs usec and pkts (comps is optional)");
      ok = false;
      continue;
    }
    auto u = read_int(ctx, *usec, 0, 65535);
    auto p = read_int(ctx, *pkts, 0, 65535);
    std::optional<int64_t> c = 0;
    if (const Entry* comps = r.get("comps")) c = read_int(ctx, *comps, 0, 65535);
    if (!u || !p || !c) {
      ok = false;
      continue;
    }
    table[i].usec = static_cast<uint16_t>(*u);
    table[i].pkts = static_cast<uint16_t>(*p);
    table[i].comps = static_cast<uint16_t>(*c);
  }
  if (!ok) return std::nullopt;
  return table;
}

// Positions of rule fields that the semantic pass may blame.
struct RuleMarks {
  SourceMark name, match, mode, algorithm, min, max, rx_profile, tx_profile, kernel_dim, compare,
      model;
  std::string path;
};

void read_rule(Ctx& ctx, const YAML::Node& node, const std::string& path, Rule& rule,
               RuleMarks& marks) {
  rule.mark = mark_of(node);
  marks = RuleMarks{rule.mark, rule.mark, {}, {}, {}, {}, {}, {}, {}, {}, {}, path};
  MapReader r(ctx, node, rule.mark, path,
              {"name", "match", "mode", "algorithm", "profiles", "rx_profile", "tx_profile",
               "rate_limit", "combine", "adaptive", "kernel_dim", "compare", "model"},
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
    } else if (auto i = read_enum(ctx, *x,
                                  {"net-eqe", "net-cqe", "rdma", "off", "model", "model-cqe"})) {
      static constexpr Algorithm kAlgos[] = {Algorithm::kNetEqe, Algorithm::kNetCqe,
                                             Algorithm::kRdma,   Algorithm::kOff,
                                             Algorithm::kModel,  Algorithm::kModelCqe};
      rule.algorithm = kAlgos[*i];
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
  if (const Entry* x = r.get("combine")) {
    static constexpr CombinePolicy kC[] = {CombinePolicy::kBusiestQueue, CombinePolicy::kMaxProfile,
                                           CombinePolicy::kMinProfile};
    if (auto i = read_enum(ctx, *x, {"busiest-queue", "max", "min"})) rule.combine = kC[*i];
  }
  if (const Entry* x = r.get("adaptive"))
    if (auto i = read_enum(ctx, *x, {"take-over", "leave"})) rule.take_over_adaptive = *i == 0;
  if (const Entry* x = r.get("compare")) {
    marks.compare = x->at();
    if (auto i = read_enum(ctx, *x, {"dim", "model"}))
      rule.compare = *i == 0 ? CompareWith::kDim : CompareWith::kModel;
  }
  if (const Entry* x = r.get("model")) {
    marks.model = x->at();
    MapReader m(ctx, x->value, x->at(), x->path,
                {"completion_cost", "interrupt_cost", "max_changes", "timer", "shared_load"});
    model::ModelSettings settings;
    if (const Entry* y = m.get("completion_cost"))
      if (auto v = read_duration(ctx, *y, 0, kMaxModelCost)) settings.completion_cost_ns = *v;
    if (const Entry* y = m.get("interrupt_cost"))
      if (auto v = read_duration(ctx, *y, 0, kMaxModelCost)) settings.interrupt_cost_ns = *v;
    if (const Entry* y = m.get("max_changes"))
      if (auto v = read_int(ctx, *y, 1, kMaxModelChanges))
        settings.max_changes_per_s = static_cast<uint32_t>(*v);
    if (const Entry* y = m.get("timer")) {
      static constexpr dim::TimerMode kTimers[] = {
          dim::TimerMode::kRateLimit, dim::TimerMode::kIdleGap, dim::TimerMode::kAbsolute};
      if (auto i = read_enum(ctx, *y, {"rate-limit", "idle-gap", "absolute"}))
        settings.timer = kTimers[*i];
    }
    if (const Entry* y = m.get("shared_load"))
      if (auto v = read_bool(ctx, *y)) settings.shared_load = *v;
    rule.model = settings;
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

std::string kinds_text(const Rule& r) {
  if (!r.match.interface.empty() && r.match.rdma_device.empty())
    return "only net devices (match.interface)";
  if (r.match.interface.empty() && !r.match.rdma_device.empty())
    return "only RDMA devices (match.rdma_device)";
  return "net and RDMA devices";
}

bool same_match(const Match& a, const Match& b) {
  auto canon = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  return canon(a.interface) == canon(b.interface) && canon(a.driver) == canon(b.driver) &&
         canon(a.rdma_device) == canon(b.rdma_device);
}

void check_rule(Ctx& ctx, const Rule& rule, const RuleMarks& m, Mode global) {
  const std::string& p = m.path;
  if (rule.algorithm) {
    Algorithm a = *rule.algorithm;
    bool net_algo = model::is_net_dim(a) || a == Algorithm::kModelCqe;
    if (net_algo && !rule.match.rdma_device.empty())
      ctx.error(m.algorithm, p + ".algorithm",
                fmt::format("algorithm {} is for net devices but the rule matches {}; split it "
                            "into a net rule and an RDMA rule",
                            algorithm_name(a), kinds_text(rule)));
    if (a == Algorithm::kRdma && !rule.match.interface.empty())
      ctx.error(m.algorithm, p + ".algorithm",
                fmt::format("algorithm rdma is for RDMA devices but the rule matches {}; split it "
                            "into a net rule and an RDMA rule",
                            kinds_text(rule)));
  }
  const bool net = rule.applies_to_net();
  const bool rdma = rule.applies_to_rdma();
  // The largest profile index every device the rule can match understands.
  const int last = net ? kNetLastIndex : kRdmaLastIndex;
  const char* last_why = net ? "net DIM has profiles 0..4" : "RDMA DIM has profiles 0..8";
  if (rule.algorithm == Algorithm::kStatic && rule.static_index > last)
    ctx.error(m.algorithm, p + ".algorithm",
              fmt::format("static index {} is out of range 0..{} ({}{})", rule.static_index, last,
                          last_why, net && rdma ? "; the rule matches net devices too" : ""));
  if (rule.min_profile && *rule.min_profile > last)
    ctx.error(m.min, p + ".profiles.min",
              fmt::format("{} is out of range 0..{} ({})", *rule.min_profile, last, last_why));
  if (rule.max_profile && *rule.max_profile > last)
    ctx.error(m.max, p + ".profiles.max",
              fmt::format("{} is out of range 0..{} ({})", *rule.max_profile, last, last_why));
  if (rule.min_profile && rule.max_profile && *rule.min_profile > *rule.max_profile)
    ctx.error(m.max, p + ".profiles.max",
              fmt::format("max {} is below min {}", *rule.max_profile, *rule.min_profile));
  for (auto [table, mark, key] : {std::tuple{&rule.rx_profile, m.rx_profile, "rx_profile"},
                                  std::tuple{&rule.tx_profile, m.tx_profile, "tx_profile"}}) {
    if (!table->has_value() || net) continue;
    ctx.error(
        mark, fmt::format("{}.{}", p, key),
        rule.algorithm == Algorithm::kRdma
            ? fmt::format("{} is a net DIM table and cannot be used with algorithm rdma", key)
            : fmt::format("{} is a net DIM table but the rule matches {}", key, kinds_text(rule)));
  }
  if (rule.kernel_dim && !rdma)
    ctx.error(m.kernel_dim, p + ".kernel_dim",
              rule.algorithm && (model::is_net_dim(*rule.algorithm) ||
                                 *rule.algorithm == Algorithm::kModelCqe)
                  ? fmt::format("kernel_dim switches the kernel's RDMA DIM and applies to RDMA "
                                "devices only, but algorithm {} limits the rule to net devices",
                                algorithm_name(*rule.algorithm))
                  : fmt::format("kernel_dim switches the kernel's RDMA DIM and applies to RDMA "
                                "devices only, but the rule matches {}",
                                kinds_text(rule)));
  // compare: the other policy. An unset algorithm is DIM (net-eqe or rdma by kind).
  const bool model_algo = rule.algorithm && model::is_model(*rule.algorithm);
  const bool dim_algo =
      !rule.algorithm || model::is_net_dim(*rule.algorithm) || *rule.algorithm == Algorithm::kRdma;
  if (rule.compare == CompareWith::kDim && !model_algo)
    ctx.error(m.compare, p + ".compare",
              dim_algo ? fmt::format("compare: dim needs algorithm model or model-cqe; algorithm "
                                     "{} is DIM already (compare it with: model)",
                                     rule.algorithm ? algorithm_name(*rule.algorithm) : "default")
                       : fmt::format("compare: dim needs algorithm model or model-cqe, not {}",
                                     algorithm_name(*rule.algorithm, rule.static_index)));
  if (rule.compare == CompareWith::kModel && !dim_algo)
    ctx.error(m.compare, p + ".compare",
              model_algo ? fmt::format("compare: model needs a DIM algorithm (net-eqe, net-cqe, "
                                       "rdma); algorithm {} is the model already (compare it "
                                       "with: dim)",
                                       algorithm_name(*rule.algorithm))
                         : fmt::format("compare: model needs a DIM algorithm (net-eqe, net-cqe, "
                                       "rdma), not {}: nothing would run to compare with",
                                       algorithm_name(*rule.algorithm, rule.static_index)));
  if (rule.model && !model_algo && rule.compare != CompareWith::kModel)
    ctx.error(m.model, p + ".model",
              "model settings apply to algorithm model or model-cqe, or with compare: model; "
              "here they would have no effect");
  const Mode mode = rule.mode.value_or(global);
  if (mode == Mode::kEnforce && rule.algorithm == Algorithm::kOff && !rule.kernel_dim)
    ctx.error(rule.mode ? m.mode : m.algorithm, p + (rule.mode ? ".mode" : ".algorithm"),
              "mode enforce with algorithm off would write nothing; use mode observe or shadow "
              "(or, for RDMA devices, set kernel_dim)");
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
  if (const Entry* x = r.get("state_file")) {
    if (auto s = read_string(ctx, *x)) {
      if ((*s)[0] != '/' || s->back() == '/')
        ctx.error(x->at(), x->path,
                  fmt::format("'{}' must be an absolute file path (it is read at start-up from "
                              "wherever the daemon runs)",
                              *s));
      else
        cfg.state_file = *s;
    }
  }
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

  for (size_t b = 0; b < cfg.rules.size(); ++b) {
    const Rule& rb = cfg.rules[b];
    if (rb.name.empty()) continue;
    for (size_t a = 0; a < b; ++a) {
      const Rule& ra = cfg.rules[a];
      if (ra.name == rb.name) {
        ctx.error(marks[b].name, marks[b].path + ".name",
                  fmt::format("duplicate rule name '{}' (first used by the rule at line {})",
                              rb.name, ra.mark.line));
        break;
      }
      if (ra.name.empty() || !same_match(ra.match, rb.match)) continue;
      // Same selectors: every device one names, the other names too. Different settings would
      // refuse all of them at run time, which is never what the author meant.
      for (auto kind : {model::DeviceKind::kNet, model::DeviceKind::kRdma}) {
        bool applies = kind == model::DeviceKind::kNet
                           ? ra.applies_to_net() && rb.applies_to_net()
                           : ra.applies_to_rdma() && rb.applies_to_rdma();
        if (!applies) continue;
        auto diffs = diff_policies(policy_from_rule(ra, kind, cfg.mode),
                                   policy_from_rule(rb, kind, cfg.mode));
        if (diffs.empty()) continue;
        std::vector<std::string> what;
        for (const auto& d : diffs) what.push_back(fmt::format("{} vs {}", d.left, d.right));
        ctx.error(marks[b].match, marks[b].path + ".match",
                  fmt::format("rule '{}' has the same match as rule '{}' (line {}) but different "
                              "settings ({}); every device it names would be refused",
                              rb.name, ra.name, ra.mark.line, join(what, ", ")));
        break;
      }
    }
  }
}

}  // namespace

bool validate_glob(std::string_view p, size_t max_name_len, std::string& why) {
  if (p.empty()) {
    why = "empty pattern";
    return false;
  }
  size_t min_len = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '/' || c == ' ' || c == '\t' || c == '\n') {
      why = "device names cannot contain '/' or whitespace, so it can never match";
      return false;
    }
    if (c == '\\') {
      if (i + 1 == p.size()) {
        why = "trailing backslash";
        return false;
      }
      ++i;
      ++min_len;
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
      if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is a member, not the end
      while (j < p.size() && p[j] != ']') ++j;
      if (j >= p.size()) {
        why = "unterminated '[' (write \\[ for a literal bracket)";
        return false;
      }
      i = j;
      ++min_len;
    } else if (c != '*') {
      ++min_len;
    }
  }
  if (max_name_len > 0 && min_len > max_name_len) {
    why = fmt::format("matches only names longer than {} characters, which cannot exist",
                      max_name_len);
    return false;
  }
  return true;
}

bool Rule::applies_to_net() const {
  bool sel = !match.interface.empty() || match.rdma_device.empty();
  return sel && algorithm != Algorithm::kRdma;
}

bool Rule::applies_to_rdma() const {
  bool sel = !match.rdma_device.empty() || match.interface.empty();
  return sel && algorithm != Algorithm::kNetEqe && algorithm != Algorithm::kNetCqe &&
         algorithm != Algorithm::kModelCqe;
}

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
  std::ifstream in(path, std::ios::binary);
  if (!in) return DIMCTL_FAIL(errno ? errno : ENOENT, "{}: cannot open config", path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return DIMCTL_FAIL(errno ? errno : EIO, "{}: cannot read config", path);
  return parse_config(buf.str(), path);
}

}  // namespace dimctl::config
