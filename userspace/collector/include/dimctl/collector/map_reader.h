// Map readers: how the collector sees BPF maps. The libbpf implementation lives in src/; unit
// tests use in-memory fakes. Values come per possible CPU, unsummed.
#pragma once

#include <utility>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::collector {

template <typename K, typename V>
struct PerCpuEntry {
  K key{};
  std::vector<V> per_cpu;  // one value per possible CPU
};

template <typename K, typename V>
class PerCpuMapReader {
 public:
  virtual ~PerCpuMapReader() = default;
  virtual Result<std::vector<PerCpuEntry<K, V>>> read_all() = 0;
  virtual Result<void> erase(const K& key) = 0;
};

template <typename K, typename V>
class MapReader {
 public:
  virtual ~MapReader() = default;
  virtual Result<std::vector<std::pair<K, V>>> read_all() = 0;
  virtual Result<void> erase(const K& key) = 0;
};

}  // namespace dimctl::collector
