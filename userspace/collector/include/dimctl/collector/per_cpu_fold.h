// Summing per-CPU BPF map values straight out of the kernel's batch buffers, into one flat
// vector of (key, summed value): no per-key or per-CPU containers. The read path of the former
// per-CPU maps, kept for the benchmark's comparison (bench/collector).
//
// Layout (bpf_map_lookup_batch and bpf_map_lookup_elem on per-CPU maps): keys back to back,
// then per key one value per possible CPU, each per_cpu_stride(value_size) bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dimctl/collector/map_reader.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {

// The kernel copies per-CPU values at 8-byte strides.
constexpr size_t per_cpu_stride(size_t value_size) {
  return (value_size + 7) / 8 * 8;
}

// Adds one CPU's value into a running sum that starts zeroed (wrap-free: every per-CPU counter
// is a u64 and so is the sum).
inline void add_cpu(dimctl_napi_value& to, const dimctl_napi_value& v) {
  to.polls += v.polls;
  to.packets += v.packets;
  to.budget_exhausted += v.budget_exhausted;
  to.empty_polls += v.empty_polls;
  to.bytes += v.bytes;
  to.skbs += v.skbs;
}

// Counters add; the last DIM decision comes from the CPU that modified most recently (on a tie,
// the later CPU).
inline void add_cpu(dimctl_cq_value& to, const dimctl_cq_value& v) {
  to.schedules += v.schedules;
  to.reschedules += v.reschedules;
  to.events += v.events;
  to.polls += v.polls;
  to.completions += v.completions;
  to.poll_errors += v.poll_errors;
  to.exhausted += v.exhausted;
  to.modifies += v.modifies;
  if (v.modifies > 0 && v.last_modify_ns >= to.last_modify_ns) {
    to.last_modify_ns = v.last_modify_ns;
    to.last_comps = v.last_comps;
    to.last_usec = v.last_usec;
  }
}

// Appends `count` entries of a per-CPU hash batch (keys: count x sizeof(K); values: count x
// ncpus x per_cpu_stride(sizeof(V))), each with its CPUs summed by add_cpu(V&, const V&).
template <typename K, typename V>
void fold_per_cpu(const uint8_t* keys, const uint8_t* values, size_t count, size_t ncpus,
                  std::vector<KeyValue<K, V>>& out) {
  constexpr size_t stride = per_cpu_stride(sizeof(V));
  for (size_t i = 0; i < count; ++i, keys += sizeof(K)) {
    KeyValue<K, V>& e = out.emplace_back();
    std::memcpy(&e.key, keys, sizeof(K));
    for (size_t c = 0; c < ncpus; ++c, values += stride) {
      V v;
      std::memcpy(&v, values, sizeof(V));
      add_cpu(e.value, v);
    }
  }
}

// Appends `count` indexes of the former napi_slots per-CPU array (values: count x ncpus x
// sizeof(dimctl_napi_slot)): per index, one entry per NAPI holding the slot on some CPU, summed
// over those CPUs; free copies (ifindex 0) are skipped. A NAPI only ever holds its own slot
// (napi_id & (DIMCTL_NAPI_SLOTS - 1)), so each index read once gives unique keys.
void fold_napi_slots(const uint8_t* values, size_t count, size_t ncpus,
                     std::vector<KeyValue<dimctl_napi_key, dimctl_napi_value>>& out);

}  // namespace dimctl::collector
