// Sample: one snapshot of a queue's / CQ's cumulative counters (struct dim_sample).
//
// The field widths are the kernel's and define where counters wrap: events are u16, packets,
// bytes and completions u32. Callers hand in 64-bit cumulative counters through
// from_counters(), which truncates exactly like dim_update_sample(); differences are then
// taken modulo 2^bits (bit_gap), so a wrap inside a window is harmless. A counter that goes
// backwards is not detectable here (it looks like a jump of almost 2^bits, dim-spec N12): the
// caller must notice resets and call restart_window() on the DIM instance.
#pragma once

#include <cstdint>

namespace dim {

struct Sample {
  int64_t time_ns = 0;  // CLOCK_MONOTONIC ns, supplied by the caller (the kernel reads ktime)
  uint32_t pkt_ctr = 0;
  uint32_t byte_ctr = 0;
  uint16_t event_ctr = 0;
  uint32_t comp_ctr = 0;

  static constexpr Sample from_counters(int64_t time_ns, uint64_t events, uint64_t packets,
                                        uint64_t bytes, uint64_t completions = 0) {
    Sample s;
    s.time_ns = time_ns;
    s.pkt_ctr = static_cast<uint32_t>(packets);
    s.byte_ctr = static_cast<uint32_t>(bytes);
    s.event_ctr = static_cast<uint16_t>(events);
    s.comp_ctr = static_cast<uint32_t>(completions);
    return s;
  }

  bool operator==(const Sample&) const = default;
};

// BIT_GAP(bits, end, start): forward distance from start to end modulo 2^bits, bits <= 63.
constexpr uint64_t bit_gap(unsigned bits, uint64_t end, uint64_t start) {
  const uint64_t modulus = uint64_t{1} << bits;
  return ((end - start) + modulus) & (modulus - 1);
}
constexpr uint16_t bit_gap16(uint16_t end, uint16_t start) {
  return static_cast<uint16_t>(bit_gap(16, end, start));
}
constexpr uint32_t bit_gap32(uint32_t end, uint32_t start) {
  return static_cast<uint32_t>(bit_gap(32, end, start));
}

}  // namespace dim
