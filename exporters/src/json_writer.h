// The writing side of the state JSON's field tables (dimctl/exporters/state_fields.h): each entry
// becomes a key of the object being written.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dimctl/exporters/state_fields.h"

namespace dimctl::exporters {

class JsonWriter {
 public:
  // Writes into `object` (a JSON object).
  explicit JsonWriter(nlohmann::json& object) : o_(object) {}

  template <typename T>
  void field(const char* key, const T& value) {
    o_[key] = value;
  }
  template <typename E>
  void enumeration(const char* key, E value, std::string_view (*name)(E),
                   std::optional<E> (*)(std::string_view)) {
    o_[key] = name(value);
  }
  template <typename T>
  void nullable(const char* key, const T& value, bool known) {
    if (known) {
      o_[key] = value;
    } else {
      o_[key] = nullptr;
    }
  }
  template <typename T>
  void optional(const char* key, const std::optional<T>& value, Absent absent) {
    if (value) {
      o_[key] = *value;
    } else if (absent == Absent::kNull) {
      o_[key] = nullptr;
    }
  }
  template <typename F>
  void derived(const char* key, const F& compute) {
    o_[key] = compute();
  }
  template <typename Body>
  void object(const char* key, const Body& body) {
    nlohmann::json& sub = o_[key];
    sub = nlohmann::json::object();
    JsonWriter w(sub);
    body(w);
  }
  template <typename T>
  void optional_object(const char* key, const std::optional<T>& value) {
    object_or_null(key, value ? &*value : nullptr);
  }
  void comparison(const char* key, const std::vector<seam::Comparison>& comparisons,
                  std::size_t index) {
    object_or_null(key, seam::comparison_at(comparisons, index));
  }
  template <typename T, typename Body>
  void array(const char* key, const std::vector<T>& items, const Body& body) {
    nlohmann::json& a = o_[key];
    a = nlohmann::json::array();
    a.get_ref<nlohmann::json::array_t&>().reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      a.push_back(nlohmann::json::object());
      JsonWriter w(a.back());
      body(w, items[i], i);
    }
  }

 private:
  template <typename T>
  void object_or_null(const char* key, const T* value) {
    if (value == nullptr) {
      o_[key] = nullptr;
      return;
    }
    nlohmann::json& sub = o_[key];
    sub = nlohmann::json::object();
    JsonWriter w(sub);
    fields(w, *value);
  }

  nlohmann::json& o_;
};

}  // namespace dimctl::exporters
