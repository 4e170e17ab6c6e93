// Stats: the rates of one measurement window (struct dim_stats), dim_calc_stats() and the
// kernel's significance test. Integer semantics are the kernel's on a 64-bit host and are the
// contract (dim-spec 3.3, 3.4): microseconds truncated then taken as u32, ceil for the rates,
// floor for cpe_ratio, epms from the constant 64 (not the real event count), and rates that do
// not fit an int wrap modulo 2^32 as GCC does.
#pragma once

#include <cstdint>

#include "dim/sample.h"

namespace dim {

struct Stats {
  int32_t ppms = 0;       // packets per ms
  int32_t bpms = 0;       // bytes per ms
  int32_t epms = 0;       // events per ms, always ceil(64000 / delta_us)
  int32_t cpms = 0;       // completions per ms
  int32_t cpe_ratio = 0;  // 100 * cpms / epms (completions per event, percent)
  bool operator==(const Stats&) const = default;
};

// dim_calc_stats(): false (and *out untouched) when the window is shorter than 1 us.
bool calc_stats(const Sample& start, const Sample& end, Stats* out);

// IS_SIGNIFICANT_DIFF(val, ref): ref != 0 and floor(100*|val-ref| / ref) > 10, evaluated in
// unsigned long exactly as the macro does (so a negative ref is never significant). Inline: it
// runs up to three times per decision.
constexpr bool is_significant(int val, int ref) {
  if (ref == 0) return false;
  // The kernel is built with -fno-strict-overflow: val - ref and abs() wrap in 32 bits.
  const auto diff = static_cast<int32_t>(static_cast<int64_t>(val) - ref);
  const auto mag = static_cast<int32_t>(diff < 0 ? -static_cast<int64_t>(diff) : diff);
  const uint64_t num = 100 * static_cast<uint64_t>(static_cast<int64_t>(mag));
  const auto den = static_cast<uint64_t>(static_cast<int64_t>(ref));
  // num / den > 10 without a 64-bit division by a variable (up to three per window, once per
  // queue and period): floor(num / den) >= 11 <=> num >= 11 * den <=> floor(num / 11) >= den,
  // and the division by a constant compiles to a multiply. No overflow for any input.
  return num / 11 >= den;
}

}  // namespace dim
