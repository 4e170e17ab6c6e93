#include "bpf_maps.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace dimctl::collector {
namespace {

constexpr int kEnotsupp = 524;  // kernel-internal ENOTSUPP leaks to userspace from BPF syscalls

// Grows, never shrinks: once the buffers fit the largest read, reads allocate nothing.
void fit(std::vector<uint8_t>& v, size_t bytes) {
  if (v.size() < bytes) v.resize(bytes);
}

}  // namespace

Result<void> read_map_by_iteration(int fd, size_t key_size, size_t value_bytes, const char* what,
                                   RawBuffers& buf, BatchSink sink) {
  fit(buf.keys, 2 * key_size);  // the current key and the next one
  fit(buf.values, value_bytes);
  uint8_t* key = buf.keys.data();
  uint8_t* next = key + key_size;
  bool first = true;
  for (;;) {
    if (bpf_map_get_next_key(fd, first ? nullptr : key, next) != 0) {
      if (errno == ENOENT) break;
      return DIMCTL_FAIL(errno, "map {}: get_next_key", what);
    }
    std::swap(key, next);
    first = false;
    if (bpf_map_lookup_elem(fd, key, buf.values.data()) != 0) {
      if (errno == ENOENT) continue;  // deleted meanwhile
      return DIMCTL_FAIL(errno, "map {}: lookup", what);
    }
    sink(key, buf.values.data(), 1);
  }
  return ok();
}

Result<void> read_map_raw(int fd, size_t key_size, size_t value_bytes, const char* what,
                          RawBuffers& buf, BatchSink sink) {
  // Batch tokens of hash maps are u32 bucket indexes; give them room anyway.
  alignas(8) uint8_t in_tok[64] = {};
  alignas(8) uint8_t out_tok[64] = {};
  bool first = true;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  for (;;) {
    fit(buf.keys, buf.chunk * key_size);
    fit(buf.values, buf.chunk * value_bytes);
    uint32_t count = buf.chunk;
    int rc = bpf_map_lookup_batch(fd, first ? nullptr : in_tok, out_tok, buf.keys.data(),
                                  buf.values.data(), &count, &opts);
    const int err = rc < 0 ? -rc : 0;
    if (err != 0 && err != ENOENT) {
      if (err == ENOSPC && buf.chunk < (1u << 20)) {  // a bucket larger than the chunk: grow
        buf.chunk *= 4;
        continue;
      }
      if (first && (err == EINVAL || err == EOPNOTSUPP || err == kEnotsupp)) {
        return read_map_by_iteration(fd, key_size, value_bytes, what, buf, sink);
      }
      return DIMCTL_FAIL(err, "map {}: lookup_batch", what);
    }
    sink(buf.keys.data(), buf.values.data(), count);
    if (err == ENOENT) break;
    std::memcpy(in_tok, out_tok, sizeof(in_tok));
    first = false;
  }
  return ok();
}

Result<void> BpfMapBase::erase_raw(const void* key) {
  if (bpf_map_delete_elem(fd_, key) != 0) return DIMCTL_FAIL(errno, "map {}: delete", name_);
  return ok();
}

Result<void> BpfNapiSlotArray::clear(uint32_t index, const dimctl_napi_key& key) {
  std::vector<dimctl_napi_slot> per_cpu(ncpus_);
  if (bpf_map_lookup_elem(fd_, &index, per_cpu.data()) != 0) {
    return DIMCTL_FAIL(errno, "map {}: lookup slot {}", name_, index);
  }
  bool any = false;
  for (auto& s : per_cpu) {
    if (s.key.ifindex == key.ifindex && s.key.napi_id == key.napi_id) {
      s = dimctl_napi_slot{};
      any = true;
    }
  }
  if (!any) return ok();
  // Racy only against a NAPI claiming this slot on another CPU within this instant, which
  // needs DIMCTL_NAPI_SLOTS newer NAPI ids to have been allocated (ids are sequential).
  if (bpf_map_update_elem(fd_, &index, per_cpu.data(), BPF_EXIST) != 0) {
    return DIMCTL_FAIL(errno, "map {}: clear slot {}", name_, index);
  }
  return ok();
}

Result<MappedArray> MappedArray::map(int fd, const char* name, uint32_t value_size,
                                     uint32_t entries) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return DIMCTL_FAIL(errno, "map {}: info", name);
  if (info.type != BPF_MAP_TYPE_ARRAY || (info.map_flags & BPF_F_MMAPABLE) == 0 ||
      info.value_size != value_size || info.max_entries != entries || value_size % 8 != 0) {
    return DIMCTL_FAIL(EINVAL,
                       "map {}: type {} flags {:#x}, {} values of {} bytes; expected a mmapable "
                       "array of {} values of {} bytes",
                       name, info.type, info.map_flags, info.max_entries, info.value_size, entries,
                       value_size);
  }
  const size_t bytes = size_t{value_size} * entries;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t maplen = (bytes + page - 1) / page * page;
  void* addr = ::mmap(nullptr, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return DIMCTL_FAIL(errno, "map {}: mmap {} bytes", name, maplen);
  return MappedArray(addr, maplen, bytes);
}

MappedArray::~MappedArray() {
  if (addr_ != nullptr) ::munmap(addr_, len_);
}

Result<void> BpfFreeSlots::push(uint32_t index) {
  if (bpf_map_update_elem(fd_, nullptr, &index, BPF_ANY) != 0) {
    return DIMCTL_FAIL(errno, "map {}: push slot {}", name_, index);
  }
  return ok();
}

Result<void> BpfIfindexSet::add(uint32_t ifindex) {
  const uint8_t one = 1;
  if (bpf_map_update_elem(fd_, &ifindex, &one, BPF_ANY) != 0) {
    return DIMCTL_FAIL(errno, "map {}: add ifindex {}", name_, ifindex);
  }
  return ok();
}

Result<void> BpfIfindexSet::remove(uint32_t ifindex) {
  if (bpf_map_delete_elem(fd_, &ifindex) != 0 && errno != ENOENT) {
    return DIMCTL_FAIL(errno, "map {}: remove ifindex {}", name_, ifindex);
  }
  return ok();
}

}  // namespace dimctl::collector
