// libbpf-backed MapReader implementations: batched reads (bpf_map_lookup_batch, v5.6+) with a
// get_next_key/lookup fallback for kernels or map types without batch support. Each batch is
// folded (per_cpu_fold.h) straight from the reader's raw buffers, which are kept between reads:
// a steady-state read allocates nothing.
#pragma once

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/byte_filter.h"
#include "dimctl/collector/map_reader.h"
#include "dimctl/collector/per_cpu_fold.h"

namespace dimctl::collector {

// A reader's raw key/value buffers, reused from one read to the next. `chunk` = keys per batch
// call; it only grows (on ENOSPC, a hash bucket larger than the chunk).
struct RawBuffers {
  std::vector<uint8_t> keys;
  std::vector<uint8_t> values;
  uint32_t chunk = 256;
};

// Where read_map_raw() hands each batch: `count` keys back to back and their values (for
// per-CPU maps: possible CPUs x per_cpu_stride(value_size) bytes per key). A non-owning
// pointer to a callable (no allocation); copies call the same callable.
class BatchSink {
 public:
  template <typename F>
  explicit BatchSink(F* f)
      : obj_(f), call_([](void* o, const uint8_t* k, const uint8_t* v, size_t n) {
          (*static_cast<F*>(o))(k, v, n);
        }) {}
  void operator()(const uint8_t* keys, const uint8_t* values, size_t count) const {
    call_(obj_, keys, values, count);
  }

 private:
  void* obj_;
  void (*call_)(void*, const uint8_t*, const uint8_t*, size_t);
};

// Reads every entry of a map, batch by batch into `buf`, each batch handed to `sink` before the
// next is read. value_bytes = bytes per key as returned by the kernel. Errors name the map
// (`what`).
Result<void> read_map_raw(int fd, size_t key_size, size_t value_bytes, const char* what,
                          RawBuffers& buf, BatchSink sink);
// The fallback where batch lookups are unsupported (EINVAL/EOPNOTSUPP/ENOTSUPP on the first
// call): get_next_key + lookup, each entry handed to `sink` as a batch of one.
Result<void> read_map_by_iteration(int fd, size_t key_size, size_t value_bytes, const char* what,
                                   RawBuffers& buf, BatchSink sink);

class BpfMapBase {
 public:
  BpfMapBase(int fd, const char* name) : fd_(fd), name_(name) {}
  Result<void> erase_raw(const void* key);

 protected:
  int fd_;
  const char* name_;
  RawBuffers buf_;
};

template <typename K, typename V>
class BpfPerCpuHash final : public PerCpuMapReader<K, V>, private BpfMapBase {
 public:
  BpfPerCpuHash(int fd, const char* name, int ncpus)
      : BpfMapBase(fd, name), ncpus_(static_cast<size_t>(ncpus)) {}

  Result<void> read(std::vector<KeyValue<K, V>>& out) override {
    auto fold = [&](const uint8_t* keys, const uint8_t* values, size_t count) {
      fold_per_cpu<K, V>(keys, values, count, ncpus_, out);
    };
    return read_map_raw(fd_, sizeof(K), per_cpu_stride(sizeof(V)) * ncpus_, name_, buf_,
                        BatchSink(&fold));
  }
  Result<void> erase(const K& key) override { return erase_raw(&key); }

 private:
  size_t ncpus_;
};

template <typename K, typename V>
class BpfHash final : public MapReader<K, V>, private BpfMapBase {
 public:
  BpfHash(int fd, const char* name) : BpfMapBase(fd, name) {}

  Result<void> read(std::vector<KeyValue<K, V>>& out) override {
    auto copy = [&](const uint8_t* keys, const uint8_t* values, size_t count) {
      for (size_t i = 0; i < count; ++i) {
        KeyValue<K, V>& e = out.emplace_back();
        std::memcpy(&e.key, keys + i * sizeof(K), sizeof(K));
        std::memcpy(&e.value, values + i * sizeof(V), sizeof(V));
      }
    };
    return read_map_raw(fd_, sizeof(K), sizeof(V), name_, buf_, BatchSink(&copy));
  }
  Result<void> erase(const K& key) override { return erase_raw(&key); }
};

// napi_slots (PERCPU_ARRAY of dimctl_napi_slot).
class BpfNapiSlotArray final : public NapiSlotArray, private BpfMapBase {
 public:
  BpfNapiSlotArray(int fd, int ncpus)
      : BpfMapBase(fd, "napi_slots"), ncpus_(static_cast<size_t>(ncpus)) {}
  Result<void> read(std::vector<NapiEntry>& out) override {
    auto fold = [&](const uint8_t*, const uint8_t* values, size_t count) {
      fold_napi_slots(values, count, ncpus_, out);
    };
    return read_map_raw(fd_, sizeof(uint32_t), per_cpu_stride(sizeof(dimctl_napi_slot)) * ncpus_,
                        name_, buf_, BatchSink(&fold));
  }
  Result<void> clear(uint32_t index, const dimctl_napi_key& key) override;

 private:
  size_t ncpus_;
};

// skb_bytes_ifidx (HASH, key __u32 ifindex, value __u8 1): the byte counter's device filter.
class BpfIfindexSet final : public IfindexSet, private BpfMapBase {
 public:
  explicit BpfIfindexSet(int fd) : BpfMapBase(fd, "skb_bytes_ifidx") {}
  Result<void> add(uint32_t ifindex) override;
  Result<void> remove(uint32_t ifindex) override;
};

}  // namespace dimctl::collector
