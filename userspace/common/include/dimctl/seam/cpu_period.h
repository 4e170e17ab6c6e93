// CpuPeriod: one CPU's interrupt and softirq work between two samples of its seam::CpuTimes,
// and its busy share: what the controller's per-core costs and saturation rule read
// (core_costs.cc) and what `dimctl trace show` prints, computed by this one piece.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dimctl/seam/snapshot.h"

namespace dimctl::seam {

// Idle time can step back by a few ns (dimctl_bpf.h: a stretch ending between the reader's
// loads); more is a re-attach.
inline constexpr uint64_t kIdleSlackNs = 1'000'000;

// A cumulative counter went backwards (the collector re-attached): `prev` is no baseline.
inline bool went_backwards(const CpuTimes& now, const CpuTimes& prev) {
  return now.hardirq_count < prev.hardirq_count || now.hardirq_timed < prev.hardirq_timed ||
         now.hardirq_ns < prev.hardirq_ns || now.softirq_net_rx_count < prev.softirq_net_rx_count ||
         now.softirq_net_rx_timed < prev.softirq_net_rx_timed ||
         now.softirq_net_rx_ns < prev.softirq_net_rx_ns ||
         now.softirq_block_count < prev.softirq_block_count ||
         now.softirq_block_timed < prev.softirq_block_timed ||
         now.softirq_block_ns < prev.softirq_block_ns ||
         now.softirq_irq_poll_count < prev.softirq_irq_poll_count ||
         now.softirq_irq_poll_timed < prev.softirq_irq_poll_timed ||
         now.softirq_irq_poll_ns < prev.softirq_irq_poll_ns ||
         (now.idle_known && prev.idle_known && now.idle_ns + kIdleSlackNs < prev.idle_ns);
}

struct CpuPeriod {
  uint64_t hardirqs = 0;  // handler runs
  uint64_t softirqs = 0;  // NET_RX + BLOCK + IRQ_POLL runs
  double hardirq_ns = 0;  // estimated from the timed runs (estimated_ns)
  double softirq_ns = 0;
};

// REQUIRES: !went_backwards(now, prev) (a CPU seen for the first time: prev = CpuTimes{}).
inline CpuPeriod cpu_period(const CpuTimes& now, const CpuTimes& prev) {
  CpuPeriod p;
  p.hardirqs = now.hardirq_count - prev.hardirq_count;
  p.hardirq_ns = estimated_ns(now.hardirq_ns - prev.hardirq_ns,
                              now.hardirq_timed - prev.hardirq_timed, p.hardirqs);
  const uint64_t rx = now.softirq_net_rx_count - prev.softirq_net_rx_count;
  const uint64_t blk = now.softirq_block_count - prev.softirq_block_count;
  const uint64_t ip = now.softirq_irq_poll_count - prev.softirq_irq_poll_count;
  p.softirqs = rx + blk + ip;
  p.softirq_ns = estimated_ns(now.softirq_net_rx_ns - prev.softirq_net_rx_ns,
                              now.softirq_net_rx_timed - prev.softirq_net_rx_timed, rx) +
                 estimated_ns(now.softirq_block_ns - prev.softirq_block_ns,
                              now.softirq_block_timed - prev.softirq_block_timed, blk) +
                 estimated_ns(now.softirq_irq_poll_ns - prev.softirq_irq_poll_ns,
                              now.softirq_irq_poll_timed - prev.softirq_irq_poll_timed, ip);
  return p;
}

// The CPU's busy fraction of a period of dt_ns: what was not idle, and at least the interrupt
// time `irq_ns` (interrupts taken while idle count as idle for sched_switch). Without idle times
// at both ends, the interrupt time alone (application work unseen). In [0, 1].
inline double busy_fraction(const CpuTimes& now, const CpuTimes& prev, double irq_ns,
                            int64_t dt_ns) {
  const auto dt = static_cast<double>(dt_ns);
  double busy = irq_ns;
  if (now.idle_known && prev.idle_known) {
    const double idle =
        std::clamp(static_cast<double>(now.idle_ns) - static_cast<double>(prev.idle_ns), 0.0, dt);
    busy = std::max(busy, dt - idle);
  }
  return std::clamp(busy / dt, 0.0, 1.0);
}

}  // namespace dimctl::seam
