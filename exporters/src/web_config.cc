#include "dimctl/exporters/web_config.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "dimctl/common/yaml_reader.h"
#include "tls_context.h"

namespace dimctl::exporters {
namespace {

using yaml::Ctx;
using yaml::Entry;
using yaml::MapReader;

// The words Go's yaml.v2 (what `promtool check web-config` decodes with) reads as booleans:
// YAML 1.1's, unquoted. A quoted "true" is a string there, and so an error here.
std::optional<bool> yaml11_bool(const YAML::Node& n) {
  if (!n.IsScalar() || n.Tag() == "!") return std::nullopt;
  static const std::array<std::string_view, 12> kTrue = {
      "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
  static const std::array<std::string_view, 12> kFalse = {
      "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
  const std::string& s = n.Scalar();
  if (std::find(kTrue.begin(), kTrue.end(), s) != kTrue.end() && !s.empty()) return true;
  if (std::find(kFalse.begin(), kFalse.end(), s) != kFalse.end() && !s.empty()) return false;
  return std::nullopt;
}

// A string field as yaml.v2 fills it: any scalar's text (a bare number or word included), null
// leaves it empty; a list or mapping is an error.
std::optional<std::string> read_text(Ctx& ctx, const YAML::Node& value, SourceMark at,
                                     const std::string& path) {
  if (!value.IsDefined() || value.IsNull()) return std::string();
  if (!value.IsScalar()) {
    ctx.error(at, path, fmt::format("expected a string, got {}", yaml::describe(value)));
    return std::nullopt;
  }
  return value.Scalar();
}

std::optional<std::string> read_text(Ctx& ctx, const Entry& e) {
  return read_text(ctx, e.value, e.at(), e.path);
}

std::optional<bool> read_go_bool(Ctx& ctx, const Entry& e) {
  if (e.value.IsNull()) return false;  // yaml.v2 sets the zero value
  if (auto b = yaml11_bool(e.value)) return b;
  ctx.error(e.at(), e.path, fmt::format("expected true or false, got {}", yaml::describe(e.value)));
  return std::nullopt;
}

std::vector<std::string> read_text_list(Ctx& ctx, const Entry& e) {
  std::vector<std::string> out;
  if (e.value.IsNull()) return out;
  if (!e.value.IsSequence()) {
    ctx.error(e.at(), e.path, fmt::format("expected a list, got {}", yaml::describe(e.value)));
    return out;
  }
  for (std::size_t i = 0; i < e.value.size(); ++i) {
    const YAML::Node item = e.value[i];
    if (auto s = read_text(ctx, item, yaml::mark_of(item), fmt::format("{}[{}]", e.path, i))) {
      out.push_back(*s);
    }
  }
  return out;
}

struct TextItem {
  std::string key;
  std::string value;
  SourceMark at;  // the value's, or its key's when it has none
};

// A mapping of free keys (users, headers) to strings, duplicates refused.
std::vector<TextItem> read_text_map(Ctx& ctx, const Entry& e) {
  std::vector<TextItem> out;
  if (e.value.IsNull()) return out;
  if (!e.value.IsMap()) {
    ctx.error(e.at(), e.path, fmt::format("expected a mapping, got {}", yaml::describe(e.value)));
    return out;
  }
  std::set<std::string> seen;
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (!key.IsScalar()) {
      ctx.error(key, e.path, "keys must be plain strings");
      continue;
    }
    const std::string path = yaml::child_path(e.path, key.Scalar());
    if (!seen.insert(key.Scalar()).second) {
      ctx.error(key, path, "duplicate key");
      continue;
    }
    const auto at = value.IsNull() ? yaml::mark_of(key) : yaml::mark_of(value);
    if (auto s = read_text(ctx, value, at, path)) out.push_back({key.Scalar(), *s, at});
  }
  return out;
}

struct Named {
  std::string_view name;
  ClientAuth value;
};
constexpr std::array<Named, 6> kClientAuth = {{
    {"NoClientCert", ClientAuth::kNoClientCert},
    {"RequestClientCert", ClientAuth::kRequestClientCert},
    {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
    {"RequireClientCert", ClientAuth::kRequireAnyClientCert},  // exporter-toolkit's old name
    {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
    {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
}};

std::optional<TlsVersion> tls_version(std::string_view s) {
  if (s == "TLS10") return TlsVersion::kTls10;
  if (s == "TLS11") return TlsVersion::kTls11;
  if (s == "TLS12") return TlsVersion::kTls12;
  if (s == "TLS13") return TlsVersion::kTls13;
  return std::nullopt;
}

// exporter-toolkit's extraHTTPHeaders: the header names (exact case) and, for some, the only
// values allowed (exact case too).
struct HeaderRule {
  std::string_view name;
  std::vector<std::string_view> values;  // empty = any
};
const std::vector<HeaderRule>& header_rules() {
  static const std::vector<HeaderRule> kRules = {
      {"Strict-Transport-Security", {}},
      {"X-Content-Type-Options", {"nosniff"}},
      {"X-Frame-Options", {"deny", "sameorigin"}},
      {"X-XSS-Protection", {}},
      {"Content-Security-Policy", {}},
  };
  return kRules;
}

std::string join_dir(std::string_view dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  std::string out(dir);
  if (out.back() != '/') out += '/';
  return out + path;
}

void read_tls(Ctx& ctx, const Entry& e, std::string_view dir, TlsServerConfig& t) {
  MapReader r(ctx, e.value, e.at(), e.path,
              {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
               "max_version", "cipher_suites", "curve_preferences", "prefer_server_cipher_suites"});
  if (const Entry* x = r.get("cert_file"))
    t.cert_file = join_dir(dir, read_text(ctx, *x).value_or(""));
  if (const Entry* x = r.get("key_file"))
    t.key_file = join_dir(dir, read_text(ctx, *x).value_or(""));
  if (const Entry* x = r.get("client_ca_file")) {
    t.client_ca_file = join_dir(dir, read_text(ctx, *x).value_or(""));
  }
  if (const Entry* x = r.get("client_auth_type")) {
    auto s = read_text(ctx, *x);
    if (s && !s->empty()) {
      t.client_auth_given = true;
      auto it = std::find_if(kClientAuth.begin(), kClientAuth.end(),
                             [&](const Named& n) { return n.name == *s; });
      if (it == kClientAuth.end()) {
        ctx.error(x->at(), x->path,
                  fmt::format("invalid client_auth_type '{}' (one of NoClientCert, "
                              "RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
                              "RequireAndVerifyClientCert)",
                              *s));
      } else {
        t.client_auth = it->value;
      }
    }
  }
  for (auto [key, field] :
       {std::pair{"min_version", &t.min_version}, std::pair{"max_version", &t.max_version}}) {
    const Entry* x = r.get(key);
    if (!x) continue;
    auto s = read_text(ctx, *x);
    if (!s) continue;
    if (auto v = tls_version(*s)) {
      *field = *v;
    } else {
      ctx.error(x->at(), x->path,
                fmt::format("unknown TLS version '{}' (TLS10, TLS11, TLS12 or TLS13)", *s));
    }
  }
  if (const Entry* x = r.get("cipher_suites")) {
    auto names = read_text_list(ctx, *x);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!known_cipher_suite(names[i])) {
        ctx.error(x->at(), fmt::format("{}[{}]", x->path, i),
                  fmt::format("unknown cipher suite '{}' (Go's tls.CipherSuites() names, e.g. "
                              "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
                              names[i]));
      }
    }
    t.cipher_suites = std::move(names);
  }
  if (const Entry* x = r.get("curve_preferences")) {
    auto names = read_text_list(ctx, *x);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!known_curve(names[i])) {
        ctx.error(
            x->at(), fmt::format("{}[{}]", x->path, i),
            fmt::format("unknown curve '{}' (CurveP256, CurveP384, CurveP521, X25519)", names[i]));
      }
    }
    t.curve_preferences = std::move(names);
  }
  if (const Entry* x = r.get("prefer_server_cipher_suites")) {
    if (auto b = read_go_bool(ctx, *x)) t.prefer_server_cipher_suites = *b;
  }

  if (!t.enabled()) return;
  if (t.cert_file.empty()) ctx.error(e.at(), e.path, "missing cert_file (TLS is on)");
  if (t.key_file.empty()) ctx.error(e.at(), e.path, "missing key_file (TLS is on)");
  if (!t.client_ca_file.empty() && t.client_auth == ClientAuth::kNoClientCert) {
    ctx.error(e.at(), e.path,
              "client_ca_file is set but client_auth_type is NoClientCert (set "
              "client_auth_type, e.g. RequireAndVerifyClientCert)");
  }
}

}  // namespace

bool is_bcrypt_hash(std::string_view h) {
  if (h.size() != 60 || h.substr(0, 2) != "$2") return false;
  if (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') return false;
  if (h[3] != '$' || h[6] != '$') return false;
  if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9') return false;
  const int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(h.begin() + 7, h.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '/';
  });
}

bool parse_web_config(std::string_view text, std::string_view source, std::string_view dir,
                      WebConfig& out, std::vector<Diagnostic>& diags) {
  out = WebConfig{};
  out.source = std::string(source);
  Ctx ctx(source, diags);
  auto doc = yaml::load_document(ctx, text, "web config");
  if (!doc) return false;
  MapReader top(ctx, *doc, yaml::mark_of(*doc), "",
                {"tls_server_config", "http_server_config", "basic_auth_users"});
  if (const Entry* e = top.get("tls_server_config")) read_tls(ctx, *e, dir, out.tls);
  if (const Entry* e = top.get("http_server_config")) {
    MapReader r(ctx, e->value, e->at(), e->path, {"http2", "headers"});
    if (const Entry* x = r.get("http2")) {
      if (auto b = read_go_bool(ctx, *x)) out.http2 = *b;
    }
    if (const Entry* x = r.get("headers")) {
      for (const auto& [name, value, at] : read_text_map(ctx, *x)) {
        out.headers.emplace_back(name, value);
        const auto& rules = header_rules();
        // By hand, not find_if: a lambda cannot capture a structured binding before C++20's
        // P1091 reached clang (the fuzz tree).
        auto rule = rules.begin();
        while (rule != rules.end() && rule->name != name) ++rule;
        const std::string path = yaml::child_path(x->path, name);
        if (rule == rules.end()) {
          ctx.error(at, path,
                    fmt::format("header '{}' cannot be configured (Content-Security-Policy, "
                                "Strict-Transport-Security, X-Content-Type-Options, "
                                "X-Frame-Options, X-XSS-Protection; names as written here)",
                                name));
        } else if (!rule->values.empty() && std::find(rule->values.begin(), rule->values.end(),
                                                      value) == rule->values.end()) {
          ctx.error(
              at, path,
              fmt::format("invalid value '{}' (one of: {})", value, fmt::join(rule->values, ", ")));
        }
      }
    }
  }
  if (const Entry* e = top.get("basic_auth_users")) {
    for (const auto& [user, hash, at] : read_text_map(ctx, *e)) {
      out.users.emplace_back(user, hash);
      if (!is_bcrypt_hash(hash)) {
        ctx.error(at, yaml::child_path(e->path, user),
                  "not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost 04..31 and 53 "
                  "characters of salt and hash (60 in all; e.g. from `htpasswd -nbBC 10`)");
      }
    }
  }
  sort_by_position(diags);
  return diags.empty();
}

Result<WebConfig> load_web_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return DIMCTL_FAIL(errno, "web config {}: cannot read", path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string dir;
  if (auto slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash + 1);
  WebConfig cfg;
  std::vector<Diagnostic> diags;
  if (!parse_web_config(text.str(), path, dir, cfg, diags)) {
    return DIMCTL_FAIL(0, "{}", diagnostics_text(diags));
  }
  if (cfg.tls.enabled()) {
    if (auto ctx = build_tls_context(cfg.tls); !ctx) {
      return fail(std::move(ctx).error().wrap(fmt::format("{}: tls_server_config", path)));
    }
  }
  return cfg;
}

}  // namespace dimctl::exporters
