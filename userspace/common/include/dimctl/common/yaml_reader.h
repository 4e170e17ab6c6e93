// The strict YAML reader behind the config and the simulator's workload loaders, so that both
// read and refuse files alike: YAML 1.2 core-schema scalar types (yaml-cpp itself is type-less),
// unknown and duplicate keys with a suggestion, typed values with ranges, and every problem
// collected with its position rather than stopping at the first. Library dimctl::yaml.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dimctl/common/diagnostic.h"
#include "dimctl/common/name_table.h"
#include "dimctl/common/result.h"

namespace dimctl::yaml {

// The type a YAML 1.2 core-schema loader (and so a JSON schema) sees for a scalar. yaml-cpp
// would accept `yes` as a bool or `123` as a string; we do not, so that a loader and its
// published schema agree on what a file means.
enum class ScalarKind { kNull, kBool, kInt, kFloat, kString };

ScalarKind scalar_kind(const YAML::Node& n);
std::string_view kind_name(ScalarKind k);  // "null", "boolean", "integer", "number", "string"
// What a node is, for "expected X, got Y" messages: "a mapping", "integer '3'", ...
std::string describe(const YAML::Node& n);

SourceMark mark_of(const YAML::Node& n);
SourceMark mark_of(const YAML::Mark& m);

std::string join(const std::vector<std::string>& v, std::string_view sep);
std::string child_path(std::string_view parent, std::string_view key);  // "a" + "b" -> "a.b"

// Collects the problems of one file into `diags`, at most kMaxDiagnostics and a last one that
// says so.
class Ctx {
 public:
  static constexpr size_t kMaxDiagnostics = 50;

  Ctx(std::string_view source, std::vector<Diagnostic>& diags) : source_(source), diags_(diags) {}

  void error(SourceMark at, std::string path, std::string reason);
  void error(const YAML::Node& at, std::string path, std::string reason) {
    error(mark_of(at), std::move(path), std::move(reason));
  }
  size_t count() const { return diags_.size(); }

 private:
  std::string_view source_;
  std::vector<Diagnostic>& diags_;
};

// One key of a mapping and its value; `path` is the key's full path ("devices[0].name").
struct Entry {
  YAML::Node key;
  YAML::Node value;
  std::string path;
  // The position to blame for a bad value: the value itself, or its key when the value has no
  // useful position (empty values; block collections, which start on the next line).
  SourceMark at() const;
};

// A strict view of one mapping: rejects non-mappings, non-scalar keys, duplicate and unknown
// keys (with a suggestion, or the hint given for that key, e.g. where it belongs), then hands
// out the known entries. An absent or empty node is an empty mapping: every key defaulted.
class MapReader {
 public:
  using Hints = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  MapReader(Ctx& ctx, const YAML::Node& node, SourceMark at, std::string path,
            std::initializer_list<std::string_view> allowed, Hints hints = {});

  const Entry* get(std::string_view key) const;
  // False when the node was neither a mapping nor empty (already reported).
  bool is_map() const { return ok_; }
  // Whether an unknown key was reported with `key` as its suggestion: a "missing key" error
  // for it would only repeat that one mistake.
  bool suggested(std::string_view key) const;

 private:
  std::string path_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> meant_;
  bool ok_ = true;
};

// ---- value readers: each reports its own error and returns nullopt on failure ----

// A string (not a number or a bool written bare); empty only with `allow_empty`, which also
// takes an empty value as "".
std::optional<std::string> read_string(Ctx& ctx, const Entry& e, bool allow_empty = false);
std::optional<bool> read_bool(Ctx& ctx, const Entry& e);
std::optional<int64_t> read_int(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi);

// A duration (dimctl/common/duration.h, the grammar of every format) in lo..hi. `unit` is the
// unit the format's values are usually in ("ms" for the config, "us" for workloads): it
// completes a bare number in the message ("'20' has no unit; write e.g. 20ms").
std::optional<int64_t> read_duration(Ctx& ctx, const Entry& e, int64_t lo, int64_t hi,
                                     std::string_view unit);

// One of a fixed set of words (its index), with a suggestion for near misses, or the hint
// given for a known wrong word.
std::optional<size_t> read_enum(Ctx& ctx, const Entry& e, const std::vector<std::string>& words,
                                MapReader::Hints hints = {});

// A value of an enum by its name or one of its aliases (dimctl/common/name_table.h); the
// message of a wrong word offers the names only.
template <typename E, size_t N, size_t A>
std::optional<E> read_name(Ctx& ctx, const Entry& e, const NameTable<E, N, A>& table,
                           MapReader::Hints hints = {}) {
  if (e.value.IsScalar() && scalar_kind(e.value) == ScalarKind::kString)
    if (auto v = table.parse(e.value.Scalar())) return v;
  if (auto i = read_enum(ctx, e, table.words(), hints)) return table.names[*i].value;
  return std::nullopt;
}

// `version:` of a format that has only version 1 (`what`: "config", "workload").
void read_version(Ctx& ctx, const Entry& e, std::string_view what);

// The one YAML document of `text`; a syntax error or a second document ("a `what` is one
// document") is reported and gives nullopt.
std::optional<YAML::Node> load_document(Ctx& ctx, std::string_view text, std::string_view what);

// The whole file a loader parses: "PATH: cannot open WHAT" / "PATH: cannot read WHAT" with errno
// (`what`: "config", "workload").
Result<std::string> read_file(const std::string& path, std::string_view what);

}  // namespace dimctl::yaml
