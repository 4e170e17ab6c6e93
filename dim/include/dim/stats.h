// Stats: the rates of one measurement window (struct dim_stats), dim_calc_stats() and the
// kernel's significance test. Integer semantics are the kernel's on a 64-bit host and are the
// contract (dim-spec 3.3, 3.4): microseconds truncated then taken as u32, ceil for the rates,
// floor for cpe_ratio, epms from the constant 64 (not the real event count), and rates that do
// not fit an int wrap modulo 2^32 as GCC does.
#pragma once

#include <cstdint>

#include "dim/profile.h"
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

namespace detail {
// DIV_ROUND_UP on a non-negative 64-bit numerator, then the implicit conversion to int.
// Same results as the plain 64-bit expression, only cheaper: a zero count is 0 without a
// division ((delta_us - 1) / delta_us == 0 for delta_us >= 1), and a numerator that fits in 32
// bits takes the 32-bit divide (a third of the 64-bit one's latency on common x86 cores). The
// controller runs this once per queue and period, so it is the hottest division in dimctl.
inline int32_t rate(uint64_t count, uint32_t delta_us) {
  if (count == 0) return 0;
  const uint64_t num = count * 1000 + delta_us - 1;
  if (num <= UINT32_MAX) return static_cast<int32_t>(static_cast<uint32_t>(num) / delta_us);
  return static_cast<int32_t>(num / delta_us);
}
}  // namespace detail

// The rates of windows that share one length, without a hardware division per rate: a
// controller evaluates thousands of windows per period, and most of them are exactly one period
// long. prepare() computes a 64-bit reciprocal and the window's epms once per length (one
// division); rate() is then a multiply, a multiply-back and one correction, exact for every
// 64-bit numerator (tests/unit/dim/stats_test.cc pins it to the division).
class RateDivider {
  __extension__ using U128 = unsigned __int128;  // GCC and Clang on 64-bit hosts

 public:
  // Rates for windows of delta_us >= 1 microseconds. Cheap when the length is the last one.
  void prepare(uint32_t delta_us) {
    if (delta_us == delta_us_) return;
    delta_us_ = delta_us;
    delta_ns_ = kNoNs;
    // m = floor((2^64 - 1) / d) >= 2^64 / d - 1, so for any 64-bit n, n * m / 2^64 lies in
    // (n / d - 1, n / d]: its floor is floor(n / d) or one less, and the remainder tells which.
    magic_ = UINT64_MAX / delta_us;
    epms_ = rate(kNEvents);
  }
  // The window's length in us as dim_calc_stats() takes it (ktime_us_delta(), then a u32) from
  // its length in ns, and prepare() for it; 0, with nothing prepared, for a window shorter than
  // 1 us. The same ns length as last time costs one compare.
  uint32_t prepare_ns(int64_t delta_ns) {
    if (delta_ns == delta_ns_) return delta_us_;
    const auto us = static_cast<uint32_t>(delta_ns / 1000);
    if (us == 0) return 0;
    prepare(us);
    delta_ns_ = delta_ns;
    return us;
  }
  uint32_t delta_us() const { return delta_us_; }
  int32_t epms() const { return epms_; }
  // floor(n / delta_us) for any n.
  uint64_t divide(uint64_t n) const {
    const auto q = static_cast<uint64_t>((static_cast<U128>(n) * magic_) >> 64);
    return q + (n - q * delta_us_ >= delta_us_ ? 1 : 0);
  }
  // detail::rate(count, delta_us): DIV_ROUND_UP(count * 1000, delta_us) as an int.
  int32_t rate(uint64_t count) const {
    return static_cast<int32_t>(divide(count * 1000 + delta_us_ - 1));
  }

 private:
  static constexpr int64_t kNoNs = INT64_MIN;  // no ns length maps to delta_us_
  int64_t delta_ns_ = kNoNs;
  uint32_t delta_us_ = 0;  // 0: nothing prepared yet (no window is 0 us long)
  int32_t epms_ = 0;
  uint64_t magic_ = 0;
};

namespace detail {
// The rest of dim_calc_stats() once the window's length is known, with `rate(count)` and
// `epms` from either way of dividing by it.
template <typename Rate>
inline void fill_stats(uint32_t npkts, uint32_t nbytes, uint32_t ncomps, int32_t epms, Rate rate,
                       Stats* out) {
  out->ppms = rate(npkts);
  out->bpms = rate(nbytes);
  out->epms = epms;
  out->cpms = ncomps != 0 ? rate(ncomps) : 0;  // 0 in every net window
  // The int cpms is widened with sign extension before the product, as (u64)cpms does in C.
  out->cpe_ratio =
      out->epms != 0 && out->cpms != 0
          ? static_cast<int32_t>(static_cast<uint64_t>(static_cast<int64_t>(out->cpms)) * 100 /
                                 static_cast<uint32_t>(out->epms))
          : 0;
}
}  // namespace detail

// dim_calc_stats(): false (and *out untouched) when the window is shorter than 1 us.
// Inline: NetDim and RdmaDim call it once per evaluated window, and a call's register saves
// and reloads of the samples were a third of its cost.
inline bool calc_stats(const Sample& start, const Sample& end, Stats* out) {
  // ktime_us_delta(): signed ns difference divided toward zero, then stored in a u32.
  const auto delta_us = static_cast<uint32_t>((end.time_ns - start.time_ns) / 1000);
  if (delta_us == 0) return false;
  detail::fill_stats(
      bit_gap32(end.pkt_ctr, start.pkt_ctr), bit_gap32(end.byte_ctr, start.byte_ctr),
      bit_gap32(end.comp_ctr, start.comp_ctr), detail::rate(kNEvents, delta_us),
      [delta_us](uint64_t count) { return detail::rate(count, delta_us); }, out);
  return true;
}

// calc_stats() with the divisions by the window length done by `div` (RateDivider): the same
// results for every input.
inline bool calc_stats(const Sample& start, const Sample& end, Stats* out, RateDivider& div) {
  const uint32_t delta_us = div.prepare_ns(end.time_ns - start.time_ns);
  if (delta_us == 0) return false;
  detail::fill_stats(
      bit_gap32(end.pkt_ctr, start.pkt_ctr), bit_gap32(end.byte_ctr, start.byte_ctr),
      bit_gap32(end.comp_ctr, start.comp_ctr), div.epms(),
      [&div](uint64_t count) { return div.rate(count); }, out);
  return true;
}

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
