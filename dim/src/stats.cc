#include "dim/stats.h"

#include "dim/profile.h"

namespace dim {
namespace {

// DIV_ROUND_UP on a non-negative 64-bit numerator, then the implicit conversion to int.
// Same results as the plain 64-bit expression, only cheaper: a zero count is 0 without a
// division ((delta_us - 1) / delta_us == 0 for delta_us >= 1), and a numerator that fits in 32
// bits takes the 32-bit divide (a third of the 64-bit one's latency on common x86 cores). The
// controller runs this once per queue and period, so it is the hottest division in dimctl.
int32_t rate(uint64_t count, uint32_t delta_us) {
  if (count == 0) return 0;
  const uint64_t num = count * 1000 + delta_us - 1;
  if (num <= UINT32_MAX) return static_cast<int32_t>(static_cast<uint32_t>(num) / delta_us);
  return static_cast<int32_t>(num / delta_us);
}

}  // namespace

bool calc_stats(const Sample& start, const Sample& end, Stats* out) {
  // ktime_us_delta(): signed ns difference divided toward zero, then stored in a u32.
  const auto delta_us = static_cast<uint32_t>((end.time_ns - start.time_ns) / 1000);
  const uint32_t npkts = bit_gap32(end.pkt_ctr, start.pkt_ctr);
  const uint32_t nbytes = bit_gap32(end.byte_ctr, start.byte_ctr);
  const uint32_t ncomps = bit_gap32(end.comp_ctr, start.comp_ctr);
  if (delta_us == 0) return false;

  out->ppms = rate(npkts, delta_us);
  out->bpms = rate(nbytes, delta_us);
  out->epms = rate(kNEvents, delta_us);
  out->cpms = rate(ncomps, delta_us);
  // The int cpms is widened with sign extension before the product, as (u64)cpms does in C.
  // (cpms 0, as in every net window, gives 0 without the division.)
  out->cpe_ratio =
      out->epms != 0 && out->cpms != 0
          ? static_cast<int32_t>(static_cast<uint64_t>(static_cast<int64_t>(out->cpms)) * 100 /
                                 static_cast<uint32_t>(out->epms))
          : 0;
  return true;
}

}  // namespace dim
