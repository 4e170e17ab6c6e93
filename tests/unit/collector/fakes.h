// In-memory fakes of the collector's kernel-facing interfaces.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dimctl/collector/byte_filter.h"
#include "dimctl/collector/feature_probe.h"
#include "dimctl/collector/map_reader.h"
#include "dimctl/collector/netdev_directory.h"
#include "dimctl/collector/per_cpu_fold.h"

namespace dimctl::collector::fakes {

template <typename K>
struct KeyLess {
  bool operator()(const K& a, const K& b) const { return std::memcmp(&a, &b, sizeof(K)) < 0; }
};

// Bytes the kernel leaves between per-CPU values (value size rounded up to 8): never read.
constexpr uint8_t kPadding = 0xEE;

// Appends one per-CPU value row as the kernel lays it out in a batch: `ncpus` values at
// per_cpu_stride() steps (CPUs the row lacks are zero).
template <typename V>
void append_per_cpu_row(std::vector<uint8_t>& values, const std::vector<V>& per_cpu, size_t ncpus) {
  const size_t stride = per_cpu_stride(sizeof(V));
  const size_t at = values.size();
  values.resize(at + ncpus * stride, kPadding);
  for (size_t c = 0; c < ncpus; ++c) {
    const V v = c < per_cpu.size() ? per_cpu[c] : V{};
    std::memcpy(values.data() + at + c * stride, &v, sizeof(V));
  }
}

template <typename K, typename V>
size_t max_cpus(const std::map<K, std::vector<V>, KeyLess<K>>& entries) {
  size_t n = 1;
  for (const auto& [k, v] : entries) n = std::max(n, v.size());
  return n;
}

// Per-CPU rows per key; read() lays them out as kernel batches of `batch` keys and folds each
// with the collector's own fold_per_cpu(), as BpfPerCpuHash does. The batch buffers are kept
// between reads, so a read of no more CPUs than before allocates nothing (tests that count the
// aggregator's allocations rely on it).
template <typename K, typename V>
class FakePerCpuMap final : public PerCpuMapReader<K, V> {
 public:
  std::map<K, std::vector<V>, KeyLess<K>> entries;
  std::vector<K> erased;
  bool fail = false;
  size_t batch = 2;

  Result<void> read(std::vector<KeyValue<K, V>>& out) override {
    if (fail) return DIMCTL_FAIL(EPERM, "fake read");
    const size_t ncpus = max_cpus(entries);
    for (auto it = entries.begin(); it != entries.end();) {
      keys.clear();
      values.clear();
      size_t n = 0;
      for (; it != entries.end() && n < batch; ++it, ++n) {
        const auto* k = reinterpret_cast<const uint8_t*>(&it->first);
        keys.insert(keys.end(), k, k + sizeof(K));
        append_per_cpu_row(values, it->second, ncpus);
      }
      fold_per_cpu<K, V>(keys.data(), values.data(), n, ncpus, out);
    }
    return ok();
  }
  Result<void> erase(const K& key) override {
    if (entries.erase(key) == 0) return DIMCTL_FAIL(ENOENT, "fake erase");
    erased.push_back(key);
    return ok();
  }

 private:
  std::vector<uint8_t> keys, values;
};

template <typename K, typename V>
class FakeMap final : public MapReader<K, V> {
 public:
  std::map<K, V, KeyLess<K>> entries;
  std::vector<K> erased;

  Result<void> read(std::vector<KeyValue<K, V>>& out) override {
    for (const auto& [k, v] : entries) out.push_back({k, v});
    return ok();
  }
  Result<void> erase(const K& key) override {
    if (entries.erase(key) == 0) return DIMCTL_FAIL(ENOENT, "fake erase");
    erased.push_back(key);
    return ok();
  }
};

class FakeDirectory final : public NetdevDirectory {
 public:
  std::map<uint32_t, std::string> names;
  std::set<uint32_t> listed;  // devices whose NAPIs netlink lists
  std::map<std::pair<uint32_t, uint32_t>, NapiInfo> napis;
  mutable std::map<uint32_t, int> ifname_calls;
  // What the kernel would answer on a re-read (the view above is then stale); unset = the view
  // above is already the kernel's, and reread() re-reads nothing.
  struct View {
    std::map<uint32_t, std::string> names;
    std::set<uint32_t> listed;
    std::map<std::pair<uint32_t, uint32_t>, NapiInfo> napis;
  };
  std::optional<View> kernel;
  int rereads = 0;  // reread() calls that re-read
  bool reread_used = false;

  Result<void> refresh() override {
    reread_used = false;
    return ok();
  }
  bool reread() override {
    if (reread_used || !kernel) return false;
    reread_used = true;
    ++rereads;
    names = kernel->names;
    listed = kernel->listed;
    napis = kernel->napis;
    return true;
  }
  std::optional<std::string> ifname(uint32_t ifindex) const override {
    ++ifname_calls[ifindex];
    auto it = names.find(ifindex);
    if (it == names.end()) return std::nullopt;
    return it->second;
  }
  bool lists_napis(uint32_t ifindex) const override { return listed.count(ifindex) != 0; }
  std::optional<NapiInfo> napi(uint32_t ifindex, uint32_t napi_id) const override {
    auto it = napis.find({ifindex, napi_id});
    if (it == napis.end()) return std::nullopt;
    return it->second;
  }
  Result<std::map<uint32_t, std::string>> devices() override { return names; }
};

// The BPF filter map: what it holds, and every write made to it.
class FakeIfindexSet final : public IfindexSet {
 public:
  std::set<uint32_t> held;
  std::vector<std::string> writes;  // "+7", "-7"
  int fail_add = 0;                 // ifindex whose add fails (0 = none)

  Result<void> add(uint32_t ifindex) override {
    if (static_cast<int>(ifindex) == fail_add) return DIMCTL_FAIL(ENOMEM, "fake add");
    held.insert(ifindex);
    writes.push_back("+" + std::to_string(ifindex));
    return ok();
  }
  Result<void> remove(uint32_t ifindex) override {
    held.erase(ifindex);
    writes.push_back("-" + std::to_string(ifindex));
    return ok();
  }
};

// Every answer forced by the test.
class FakeProbe final : public FeatureProbe {
 public:
  bool vmlinux = true;
  std::set<std::string> modules;      // loaded
  std::set<std::string> modules_btf;  // with BTF
  std::set<std::string> btf_tps;      // "module/tp" ("" module = vmlinux)
  std::set<std::string> tracepoints;  // "system:tp"
  bool stats = false;

  bool vmlinux_btf() const override { return vmlinux; }
  bool module_loaded(std::string_view m) const override { return modules.count(std::string(m)); }
  bool module_btf(std::string_view m) const override { return modules_btf.count(std::string(m)); }
  bool btf_tracepoint(std::string_view m, std::string_view tp) const override {
    return btf_tps.count(std::string(m) + "/" + std::string(tp)) != 0;
  }
  bool tracepoint_exists(std::string_view s, std::string_view tp) const override {
    return tracepoints.count(std::string(s) + ":" + std::string(tp)) != 0;
  }
  bool bpf_stats_enabled() const override { return stats; }
};

}  // namespace dimctl::collector::fakes
