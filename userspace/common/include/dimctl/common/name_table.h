// NameTable: the one list of an enum's text names, read and written from the same rows, so that
// a value is spelt alike in the config, check-config, status, the JSON API, metric labels and the
// simulator, and an input cannot accept a word no output uses.
//
// Each value has one name, the one every output writes. Aliases are spellings an older dimctl
// wrote (a label value someone copied into a config, the JSON of an older daemon): read, never
// written.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dimctl {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

template <typename E, size_t N, size_t A = 0>
struct NameTable {
  std::array<EnumName<E>, N> names;  // in the order they are offered ("one of ...", --help)
  std::array<EnumName<E>, A> aliases{};

  // "unknown" for a value outside the table (a number no enumerator has).
  constexpr std::string_view name(E v) const {
    for (const auto& n : names)
      if (n.value == v) return n.name;
    return "unknown";
  }
  // The name or an alias.
  constexpr std::optional<E> parse(std::string_view s) const {
    if (auto v = parse_name(s)) return v;
    for (const auto& a : aliases)
      if (a.name == s) return a.value;
    return std::nullopt;
  }
  // The name only, for inputs that never had another spelling.
  constexpr std::optional<E> parse_name(std::string_view s) const {
    for (const auto& n : names)
      if (n.name == s) return n.value;
    return std::nullopt;
  }
  // The names, for "is not one of ..." messages, suggestions and flag checks.
  std::vector<std::string> words() const {
    std::vector<std::string> out;
    for (const auto& n : names) out.emplace_back(n.name);
    return out;
  }
};

}  // namespace dimctl
