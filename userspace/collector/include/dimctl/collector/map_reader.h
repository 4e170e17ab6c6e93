// Map readers: how the collector sees BPF maps. The libbpf implementation lives in src/; unit
// tests use in-memory fakes.
//
// Reads append to a vector the caller owns and clears: the caller keeps it between samples, so
// once it has held the largest map a read allocates nothing. A PerCpuMapReader returns each key's
// total: per-CPU maps summed over the possible CPUs (per_cpu_fold.h), the slot tables
// (slot_table.h) their one shared copy; one entry per key, in no particular order.
#pragma once

#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::collector {

template <typename K, typename V>
struct KeyValue {
  K key{};
  V value{};
};

template <typename K, typename V>
class PerCpuMapReader {
 public:
  virtual ~PerCpuMapReader() = default;
  // Appends one entry per key, its value summed over the CPUs (add_cpu()). On error `out` may
  // hold part of the map.
  virtual Result<void> read(std::vector<KeyValue<K, V>>& out) = 0;
  virtual Result<void> erase(const K& key) = 0;
};

template <typename K, typename V>
class MapReader {
 public:
  virtual ~MapReader() = default;
  // Appends one entry per key. On error `out` may hold part of the map.
  virtual Result<void> read(std::vector<KeyValue<K, V>>& out) = 0;
  virtual Result<void> erase(const K& key) = 0;
};

}  // namespace dimctl::collector
