#include "bpf_maps.h"

#include <algorithm>

namespace dimctl::collector {
namespace {

constexpr int kEnotsupp = 524;  // kernel-internal ENOTSUPP leaks to userspace from BPF syscalls

Result<RawEntries> read_by_iteration(int fd, size_t key_size, size_t value_bytes,
                                     const char* what) {
  RawEntries out;
  std::vector<uint8_t> key(key_size), next(key_size), value(value_bytes);
  const void* prev = nullptr;
  for (;;) {
    if (bpf_map_get_next_key(fd, prev, next.data()) != 0) {
      if (errno == ENOENT) break;
      return DIMCTL_FAIL(errno, "map {}: get_next_key", what);
    }
    key = next;
    prev = key.data();
    if (bpf_map_lookup_elem(fd, key.data(), value.data()) != 0) {
      if (errno == ENOENT) continue;  // deleted meanwhile
      return DIMCTL_FAIL(errno, "map {}: lookup", what);
    }
    out.keys.insert(out.keys.end(), key.begin(), key.end());
    out.values.insert(out.values.end(), value.begin(), value.end());
    ++out.count;
  }
  return out;
}

}  // namespace

Result<RawEntries> read_map_raw(int fd, size_t key_size, size_t value_bytes, const char* what) {
  RawEntries out;
  uint32_t chunk = 256;
  // Batch tokens of hash maps are u32 bucket indexes; give them room anyway.
  alignas(8) uint8_t in_tok[64] = {};
  alignas(8) uint8_t out_tok[64] = {};
  bool first = true;
  std::vector<uint8_t> keys, values;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  for (;;) {
    keys.resize(chunk * key_size);
    values.resize(chunk * value_bytes);
    uint32_t count = chunk;
    int rc = bpf_map_lookup_batch(fd, first ? nullptr : in_tok, out_tok, keys.data(), values.data(),
                                  &count, &opts);
    const int err = rc < 0 ? -rc : 0;
    if (err != 0 && err != ENOENT) {
      if (err == ENOSPC && chunk < (1u << 20)) {  // a bucket larger than the chunk: grow
        chunk *= 4;
        continue;
      }
      if (first && (err == EINVAL || err == EOPNOTSUPP || err == kEnotsupp)) {
        return read_by_iteration(fd, key_size, value_bytes, what);
      }
      return DIMCTL_FAIL(err, "map {}: lookup_batch", what);
    }
    out.keys.insert(out.keys.end(), keys.begin(), keys.begin() + count * key_size);
    out.values.insert(out.values.end(), values.begin(), values.begin() + count * value_bytes);
    out.count += count;
    if (err == ENOENT) break;
    std::memcpy(in_tok, out_tok, sizeof(in_tok));
    first = false;
  }
  return out;
}

Result<void> BpfMapBase::erase_raw(const void* key) {
  if (bpf_map_delete_elem(fd_, key) != 0) return DIMCTL_FAIL(errno, "map {}: delete", name_);
  return ok();
}

Result<void> BpfNapiSlotArray::clear(uint32_t index, const dimctl_napi_key& key) {
  std::vector<dimctl_napi_slot> per_cpu(static_cast<size_t>(ncpus_));
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
