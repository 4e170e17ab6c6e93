// The kernel side of the collector's maps.
//  - MappedArray, BpfSlotDirectory, BpfFreeSlots: what the slot tables (slot_table.h) stand on,
//    the collector's read path.
//  - The per-CPU readers: batched reads (bpf_map_lookup_batch, v5.6+) with a get_next_key/lookup
//    fallback for kernels or map types without batch support, each batch folded
//    (per_cpu_fold.h) straight from the reader's raw buffers, which are kept between reads (a
//    steady-state read allocates nothing). The collector's read path before the slot tables,
//    kept for the benchmark's same-run comparison (bench/collector).
#pragma once

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/byte_filter.h"
#include "dimctl/collector/map_reader.h"
#include "dimctl/collector/per_cpu_fold.h"
#include "dimctl/collector/slot_table.h"

namespace dimctl::collector {

// A BPF_F_MMAPABLE array map mapped into this process, read-write (userspace retires and frees
// slots in place). Unmapped on destruction; the map itself lives as long as its fd.
class MappedArray {
 public:
  // Checks that map `fd` is a mmapable array of `entries` values of `value_size` bytes (the
  // layout this build was compiled for), then maps all of it.
  static Result<MappedArray> map(int fd, const char* name, uint32_t value_size, uint32_t entries);
  MappedArray(MappedArray&& o) noexcept : addr_(o.addr_), len_(o.len_), bytes_(o.bytes_) {
    o.addr_ = nullptr;
  }
  MappedArray& operator=(MappedArray&&) = delete;
  MappedArray(const MappedArray&) = delete;
  ~MappedArray();
  // The values, as the 8-byte words the slot tables read (value_size is a multiple of 8).
  std::span<uint64_t> words() const { return {static_cast<uint64_t*>(addr_), bytes_ / 8}; }

 private:
  MappedArray(void* addr, size_t len, size_t bytes) : addr_(addr), len_(len), bytes_(bytes) {}
  void* addr_;
  size_t len_;    // mapped (whole pages)
  size_t bytes_;  // the values
};

// napi_stats / cq_index (HASH, key K, value __u32 slot index).
template <typename K>
class BpfSlotDirectory final : public SlotDirectory<K> {
 public:
  BpfSlotDirectory(int fd, const char* name) : fd_(fd), name_(name) {}
  Result<void> erase(const K& key) override {
    if (bpf_map_delete_elem(fd_, &key) != 0 && errno != ENOENT) {
      return DIMCTL_FAIL(errno, "map {}: delete", name_);
    }
    return ok();
  }

 private:
  int fd_;
  const char* name_;
};

// napi_free / cq_free (QUEUE of __u32).
class BpfFreeSlots final : public FreeSlots {
 public:
  BpfFreeSlots(int fd, const char* name) : fd_(fd), name_(name) {}
  Result<void> push(uint32_t index) override;

 private:
  int fd_;
  const char* name_;
};

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
