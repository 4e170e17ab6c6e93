// The reading side of the state JSON's field tables (dimctl/exporters/state_fields.h): each
// entry reads its key, when present and not null, into its member; a missing key keeps the
// member's default and an unknown one is ignored, so documents from older and newer daemons
// read. A key of the wrong type throws JsonReadError naming the key's path.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dimctl/exporters/state_fields.h"

namespace dimctl::exporters {

// `where` is the JSON path ("$.queues[0].polls"), so a bad document is diagnosable from the
// message alone (nlohmann's own exceptions do not say which field).
struct JsonReadError {
  std::string where;
  std::string what;
};

class JsonReader {
 public:
  // Reads from `j` (any JSON value: a key of anything but an object is absent), found at path
  // `where`. `consulted`, when set, collects the path of every key looked up: the tests' proof
  // that nothing is read that is not written.
  JsonReader(const nlohmann::json& j, std::string where,
             std::vector<std::string>* consulted = nullptr)
      : j_(j), where_(std::move(where)), consulted_(consulted) {}

  template <typename T>
  void field(const char* key, T& out) {
    if (const nlohmann::json* v = find(key)) read(*v, key, out);
  }
  template <typename E>
  void enumeration(const char* key, E& out, std::string_view (*)(E),
                   std::optional<E> (*parse)(std::string_view)) {
    std::string s;
    field(key, s);
    if (s.empty()) return;
    auto v = parse(s);
    if (!v) throw JsonReadError{path(key), "unknown value \"" + s + "\""};
    out = *v;
  }
  template <typename T>
  void nullable(const char* key, T& out, bool /*known: written as null when false*/) {
    field(key, out);
  }
  template <typename T>
  void optional(const char* key, std::optional<T>& out, Absent) {
    const nlohmann::json* v = find(key);
    if (!v) return;
    T value{};
    read(*v, key, value);
    out = value;
  }
  template <typename F>
  void derived(const char*, const F&) {}
  template <typename Body>
  void object(const char* key, const Body& body) {
    const nlohmann::json* v = find_object(key);
    if (!v) return;
    JsonReader r(*v, path(key), consulted_);
    body(r);
  }
  template <typename T>
  void optional_object(const char* key, std::optional<T>& out) {
    const nlohmann::json* v = find_object(key);
    if (!v) return;
    JsonReader r(*v, path(key), consulted_);
    T value;
    fields(r, value);
    out = std::move(value);
  }
  // Appends entry `index`'s comparison, if any: the vector stays in index order.
  void comparison(const char* key, std::vector<seam::Comparison>& comparisons, std::size_t index) {
    const nlohmann::json* v = find_object(key);
    if (!v) return;
    JsonReader r(*v, path(key), consulted_);
    seam::PolicyComparison c;
    fields(r, c);
    comparisons.push_back({static_cast<uint32_t>(index), c});
  }
  template <typename T, typename Body>
  void array(const char* key, std::vector<T>& out, const Body& body) {
    const nlohmann::json* v = find(key);
    if (!v) return;
    if (!v->is_array()) throw JsonReadError{path(key), "not an array"};
    const std::string at = path(key);
    for (std::size_t i = 0; i < v->size(); ++i) {
      JsonReader r((*v)[i], at + "[" + std::to_string(i) + "]", consulted_);
      T item;
      body(r, item, i);
      out.push_back(std::move(item));
    }
  }

 private:
  // The value of `key`; null when absent or null.
  const nlohmann::json* find(const char* key) {
    if (consulted_) consulted_->push_back(path(key));
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  const nlohmann::json* find_object(const char* key) {
    const nlohmann::json* v = find(key);
    if (v && !v->is_object()) throw JsonReadError{path(key), "not an object"};
    return v;
  }
  template <typename T>
  void read(const nlohmann::json& v, const char* key, T& out) {
    try {
      out = v.get<T>();
    } catch (const nlohmann::json::exception& e) {
      throw JsonReadError{path(key), e.what()};
    }
  }
  std::string path(const char* key) const { return where_ + "." + key; }

  const nlohmann::json& j_;
  const std::string where_;
  std::vector<std::string>* consulted_;
};

}  // namespace dimctl::exporters
