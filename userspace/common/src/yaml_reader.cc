#include "dimctl/common/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <regex>
#include <sstream>

#include "dimctl/common/duration.h"
#include "dimctl/common/suggest.h"

namespace dimctl::yaml {

ScalarKind scalar_kind(const YAML::Node& n) {
  if (n.IsNull()) return ScalarKind::kNull;
  const std::string& tag = n.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return ScalarKind::kString;  // quoted
  static const std::regex kBool("true|True|TRUE|false|False|FALSE");
  static const std::regex kNullRe("~|null|Null|NULL|");
  static const std::regex kInt("[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+");
  static const std::regex kFloat(
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|"
      "NAN)");
  const std::string& s = n.Scalar();
  if (std::regex_match(s, kNullRe)) return ScalarKind::kNull;
  if (std::regex_match(s, kBool)) return ScalarKind::kBool;
  if (std::regex_match(s, kInt)) return ScalarKind::kInt;
  if (std::regex_match(s, kFloat)) return ScalarKind::kFloat;
  return ScalarKind::kString;
}

std::string_view kind_name(ScalarKind k) {
  switch (k) {
    case ScalarKind::kNull:
      return "null";
    case ScalarKind::kBool:
      return "boolean";
    case ScalarKind::kInt:
      return "integer";
    case ScalarKind::kFloat:
      return "number";
    case ScalarKind::kString:
      return "string";
  }
  return "?";
}

std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing (null)";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  ScalarKind k = scalar_kind(n);
  if (k == ScalarKind::kNull) return "nothing (null)";
  return fmt::format("{} '{}'", kind_name(k), n.Scalar());
}

SourceMark mark_of(const YAML::Node& n) {
  if (!n.IsDefined()) return {};
  return mark_of(n.Mark());
}

SourceMark mark_of(const YAML::Mark& m) {
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

std::string child_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

void Ctx::error(SourceMark at, std::string path, std::string reason) {
  if (diags_.size() > kMaxDiagnostics) return;
  if (diags_.size() == kMaxDiagnostics) {
    diags_.push_back(
        {std::string(source_), at.line, at.column, "", "too many errors, stopping here"});
    return;
  }
  diags_.push_back({std::string(source_), at.line, at.column, std::move(path), std::move(reason)});
}

SourceMark Entry::at() const {
  bool block = (value.IsMap() || value.IsSequence()) && value.Style() != YAML::EmitterStyle::Flow;
  SourceMark m = block ? SourceMark{} : mark_of(value);
  return m.line > 0 ? m : mark_of(key);
}

MapReader::MapReader(Ctx& ctx, const YAML::Node& node, SourceMark at, std::string path,
                     std::initializer_list<std::string_view> allowed, Hints hints)
    : path_(std::move(path)) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    ctx.error(at, path_, fmt::format("expected a mapping, got {}", describe(node)));
    ok_ = false;
    return;
  }
  std::vector<std::string> known(allowed.begin(), allowed.end());
  for (auto it = node.begin(); it != node.end(); ++it) {
    // Copies: yaml-cpp's iterator hands out a temporary pair, so references would dangle.
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (!key.IsScalar()) {
      ctx.error(key, path_, "keys must be plain strings");
      continue;
    }
    const std::string& k = key.Scalar();
    std::string kp = child_path(path_, k);
    if (auto dup = entries_.find(k); dup != entries_.end()) {
      ctx.error(
          key, kp,
          fmt::format("duplicate key (first given at line {})", mark_of(dup->second.key).line));
      continue;
    }
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string reason = fmt::format("unknown key '{}'", k);
      bool hinted = false;
      for (const auto& [from, to] : hints) {
        if (from == k) {
          reason += fmt::format("; did you mean '{}'?", to);
          meant_.emplace_back(to);
          hinted = true;
        }
      }
      if (!hinted) {
        if (auto s = suggest(k, known)) {
          reason += fmt::format("; did you mean '{}'?", *s);
          meant_.push_back(*s);
        }
      }
      reason += fmt::format(" (allowed here: {})", join(known, ", "));
      ctx.error(key, kp, reason);
      continue;
    }
    entries_.emplace(k, Entry{key, value, kp});
  }
}

const Entry* MapReader::get(std::string_view key) const {
  auto it = entries_.find(std::string(key));
  return it == entries_.end() ? nullptr : &it->second;
}

bool MapReader::suggested(std::string_view key) const {
  return std::find(meant_.begin(), meant_.end(), key) != meant_.end();
}

std::optional<std::string> read_string(Ctx& ctx, const Entry& e, bool allow_empty) {
  if (!e.value.IsScalar() || scalar_kind(e.value) != ScalarKind::kString) {
    if (allow_empty && (e.value.IsNull() || (e.value.IsScalar() && e.value.Scalar().empty())))
      return std::string();
    std::string hint;
    if (e.value.IsScalar() && scalar_kind(e.value) != ScalarKind::kNull)
      hint = fmt::format(" (quote it: \"{}\")", e.value.Scalar());
    ctx.error(e.at(), e.path, fmt::format("expected a string, got {}{}", describe(e.value), hint));
    return std::nullopt;
  }
  if (e.value.Scalar().empty() && !allow_empty) {
    ctx.error(e.at(), e.path, "must not be empty");
    return std::nullopt;
  }
  return e.value.Scalar();
}

std::optional<bool> read_bool(Ctx& ctx, const Entry& e) {
  if (e.value.IsScalar() && scalar_kind(e.value) == ScalarKind::kBool) {
    char c = e.value.Scalar()[0];
    return c == 't' || c == 'T';
  }
  ctx.error(e.at(), e.path, fmt::format("expected true or false, got {}", describe(e.value)));
  return std::nullopt;
}

std::optional<int64_t> read_int(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi) {
  if (!e.value.IsScalar() || scalar_kind(e.value) != ScalarKind::kInt) {
    ctx.error(e.at(), e.path, fmt::format("expected an integer, got {}", describe(e.value)));
    return std::nullopt;
  }
  const std::string& s = e.value.Scalar();
  int64_t v = 0;
  const char* b = s.data() + (s[0] == '+' ? 1 : 0);
  auto [ptr, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    ctx.error(e.at(), e.path,
              fmt::format("'{}' is not a decimal integer in range {}..{}", s, lo, hi));
    return std::nullopt;
  }
  if (v < lo || v > hi) {
    ctx.error(e.at(), e.path, fmt::format("{} is out of range {}..{}", v, lo, hi));
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> read_duration(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi,
                                     std::string_view unit) {
  if (!e.value.IsScalar() || scalar_kind(e.value) == ScalarKind::kNull) {
    ctx.error(e.at(), e.path,
              fmt::format("expected a duration such as 20ms, got {}", describe(e.value)));
    return std::nullopt;
  }
  const std::string& s = e.value.Scalar();
  DurationError why = DurationError::kSyntax;
  auto v = parse_duration(s, &why);
  if (!v) {
    ctx.error(e.at(), e.path, duration_error(s, why, unit));
    return std::nullopt;
  }
  if (*v < lo || *v > hi) {
    ctx.error(
        e.at(), e.path,
        fmt::format("{} is out of range {}..{}", s, format_duration(lo), format_duration(hi)));
    return std::nullopt;
  }
  return v;
}

std::optional<size_t> read_enum(Ctx& ctx, const Entry& e, const std::vector<std::string>& words,
                                MapReader::Hints hints) {
  if (e.value.IsScalar() && scalar_kind(e.value) == ScalarKind::kString) {
    const std::string& s = e.value.Scalar();
    for (size_t i = 0; i < words.size(); ++i)
      if (words[i] == s) return i;
    std::string reason = fmt::format("'{}' is not one of {}", s, join(words, ", "));
    bool hinted = false;
    for (const auto& [from, to] : hints) {
      if (from == s) {
        reason += fmt::format("; did you mean '{}'?", to);
        hinted = true;
      }
    }
    if (!hinted) {
      if (auto sug = suggest(s, words)) reason += fmt::format("; did you mean '{}'?", *sug);
    }
    ctx.error(e.at(), e.path, reason);
    return std::nullopt;
  }
  ctx.error(e.at(), e.path,
            fmt::format("expected one of {}, got {}", join(words, ", "), describe(e.value)));
  return std::nullopt;
}

void read_version(Ctx& ctx, const Entry& e, std::string_view what) {
  // Only one format exists; the key lets a future format be refused cleanly by old binaries.
  if (e.value.IsScalar() && scalar_kind(e.value) == ScalarKind::kInt && e.value.Scalar() != "1")
    ctx.error(e.at(), e.path,
              fmt::format("unsupported {} version {} (this dimctl reads version 1)", what,
                          e.value.Scalar()));
  else
    (void)read_int(ctx, e, 1, 1);
}

namespace {

// Records where each document starts; everything else is ignored.
struct DocumentCounter final : YAML::EventHandler {
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::optional<YAML::Node> load_document(Ctx& ctx, std::string_view text, std::string_view what) {
  // yaml-cpp 0.7's LoadAll() never returns on some malformed input (e.g. a line starting with
  // ','): its document loop makes no progress. So documents are counted with a bounded event
  // pass first, and only the first one is loaded.
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    DocumentCounter counter;
    for (int i = 0; i < 2 && parser.HandleNextDocument(counter); ++i) {
    }
    if (counter.starts.size() > 1) {
      const YAML::Mark& m = counter.starts[1];
      bool progressed = m.pos > counter.starts[0].pos;
      ctx.error(SourceMark{m.line + 1, m.column + 1}, "",
                progressed
                    ? fmt::format("more than one YAML document ('---'); a {} is one document", what)
                    : "YAML syntax error: unexpected content outside any mapping or list");
      return std::nullopt;
    }
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    ctx.error(mark_of(e.mark), "", fmt::format("YAML syntax error: {}", e.msg));
    return std::nullopt;
  }
}

Result<std::string> read_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return DIMCTL_FAIL(errno ? errno : ENOENT, "{}: cannot open {}", path, what);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return DIMCTL_FAIL(errno ? errno : EIO, "{}: cannot read {}", path, what);
  return buf.str();
}

}  // namespace dimctl::yaml
