// libbpf-backed MapReader implementations: batched reads (bpf_map_lookup_batch, v5.6+) with a
// get_next_key/lookup fallback for kernels or map types without batch support.
#pragma once

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/byte_filter.h"
#include "dimctl/collector/map_reader.h"

namespace dimctl::collector {

// Raw key/value bytes of every entry of a hash map. value_bytes = bytes per key as returned by
// the kernel (for per-CPU maps: possible CPUs x round_up(value_size, 8)).
struct RawEntries {
  std::vector<uint8_t> keys;
  std::vector<uint8_t> values;
  size_t count = 0;
};

Result<RawEntries> read_map_raw(int fd, size_t key_size, size_t value_bytes, const char* what);

class BpfMapBase {
 public:
  BpfMapBase(int fd, const char* name) : fd_(fd), name_(name) {}
  Result<void> erase_raw(const void* key);

 protected:
  int fd_;
  const char* name_;
};

template <typename K, typename V>
class BpfPerCpuHash final : public PerCpuMapReader<K, V>, private BpfMapBase {
 public:
  BpfPerCpuHash(int fd, const char* name, int ncpus) : BpfMapBase(fd, name), ncpus_(ncpus) {}

  Result<std::vector<PerCpuEntry<K, V>>> read_all() override {
    const size_t stride = (sizeof(V) + 7) / 8 * 8;
    auto raw = read_map_raw(fd_, sizeof(K), stride * static_cast<size_t>(ncpus_), name_);
    if (!raw) return std::move(raw).error();
    std::vector<PerCpuEntry<K, V>> out(raw->count);
    for (size_t i = 0; i < raw->count; ++i) {
      std::memcpy(&out[i].key, raw->keys.data() + i * sizeof(K), sizeof(K));
      out[i].per_cpu.resize(static_cast<size_t>(ncpus_));
      const uint8_t* base = raw->values.data() + i * stride * static_cast<size_t>(ncpus_);
      for (size_t c = 0; c < static_cast<size_t>(ncpus_); ++c) {
        std::memcpy(&out[i].per_cpu[c], base + c * stride, sizeof(V));
      }
    }
    return out;
  }
  Result<void> erase(const K& key) override { return erase_raw(&key); }

 private:
  int ncpus_;
};

template <typename K, typename V>
class BpfHash final : public MapReader<K, V>, private BpfMapBase {
 public:
  BpfHash(int fd, const char* name) : BpfMapBase(fd, name) {}

  Result<std::vector<std::pair<K, V>>> read_all() override {
    auto raw = read_map_raw(fd_, sizeof(K), sizeof(V), name_);
    if (!raw) return std::move(raw).error();
    std::vector<std::pair<K, V>> out(raw->count);
    for (size_t i = 0; i < raw->count; ++i) {
      std::memcpy(&out[i].first, raw->keys.data() + i * sizeof(K), sizeof(K));
      std::memcpy(&out[i].second, raw->values.data() + i * sizeof(V), sizeof(V));
    }
    return out;
  }
  Result<void> erase(const K& key) override { return erase_raw(&key); }
};

// napi_slots (PERCPU_ARRAY of dimctl_napi_slot).
class BpfNapiSlotArray final : public NapiSlotArray, private BpfMapBase {
 public:
  BpfNapiSlotArray(int fd, int ncpus) : BpfMapBase(fd, "napi_slots"), ncpus_(ncpus) {}
  Result<std::vector<PerCpuEntry<uint32_t, dimctl_napi_slot>>> read_all() override {
    BpfPerCpuHash<uint32_t, dimctl_napi_slot> reader(fd_, name_, ncpus_);  // same layout
    return reader.read_all();
  }
  Result<void> clear(uint32_t index, const dimctl_napi_key& key) override;

 private:
  int ncpus_;
};

// skb_bytes_ifidx (HASH, key __u32 ifindex, value __u8 1): the byte counter's device filter.
class BpfIfindexSet final : public IfindexSet, private BpfMapBase {
 public:
  explicit BpfIfindexSet(int fd) : BpfMapBase(fd, "skb_bytes_ifidx") {}
  Result<void> add(uint32_t ifindex) override;
  Result<void> remove(uint32_t ifindex) override;
};

}  // namespace dimctl::collector
