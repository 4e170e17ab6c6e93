// Random snapshot sequences for the trace tests: queues and CQs appearing, disappearing,
// re-appearing and renamed, counters rising, resetting and wrapping, keys out of order, times
// going backwards. Deterministic by seed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dimctl/seam/snapshot.h"

namespace dimctl::trace::testing {

// Field-by-field equality with a message naming the first difference.
inline ::testing::AssertionResult same_snapshot(const seam::Snapshot& a, const seam::Snapshot& b) {
  auto bad = [](auto&&... parts) {
    auto r = ::testing::AssertionFailure();
    ((r << parts), ...);
    return r;
  };
  if (a.time_ns != b.time_ns) return bad("time_ns ", a.time_ns, " vs ", b.time_ns);
  if (a.devices != b.devices) return bad("device tables differ");
  if (a.queues.size() != b.queues.size()) return bad("queue counts differ");
  for (size_t i = 0; i < a.queues.size(); ++i) {
    const auto &x = a.queues[i], &y = b.queues[i];
    if (x.key != y.key || x.queue != y.queue || x.irq != y.irq || x.polls != y.polls ||
        x.packets != y.packets || x.budget_exhausted != y.budget_exhausted ||
        x.empty_polls != y.empty_polls || x.bytes != y.bytes || x.device_ix != y.device_ix ||
        x.has_bytes != y.has_bytes || x.cpu != y.cpu) {
      return bad("queue ", i, " differs (ifindex ", x.key.ifindex, " napi ", x.key.napi_id,
                 ": packets ", x.packets, " vs ", y.packets, ", polls ", x.polls, " vs ", y.polls,
                 ", device_ix ", x.device_ix, " vs ", y.device_ix, ")");
    }
  }
  if (a.cqs.size() != b.cqs.size()) return bad("CQ counts differ");
  for (size_t i = 0; i < a.cqs.size(); ++i) {
    const auto &x = a.cqs[i], &y = b.cqs[i];
    if (x.key != y.key || x.ibdev != y.ibdev || x.poll_ctx != y.poll_ctx || x.nr_cqe != y.nr_cqe ||
        x.comp_vector != y.comp_vector || x.schedules != y.schedules ||
        x.reschedules != y.reschedules || x.events != y.events || x.polls != y.polls ||
        x.completions != y.completions || x.poll_errors != y.poll_errors ||
        x.kernel_modifies != y.kernel_modifies || x.kernel_comps != y.kernel_comps ||
        x.kernel_usec != y.kernel_usec || x.budget_exhausted != y.budget_exhausted ||
        x.cpu != y.cpu) {
      return bad("CQ ", i, " differs (dev ", x.key.dev_index, " cq ", x.key.cq_id, ")");
    }
  }
  if (a.cpus.size() != b.cpus.size()) return bad("CPU counts differ");
  for (size_t i = 0; i < a.cpus.size(); ++i) {
    if (a.cpus[i] != b.cpus[i]) return bad("CPU ", i, " times differ");
  }
  if (a.irqs != b.irqs) return bad("IRQ times differ");
  return ::testing::AssertionSuccess();
}

class SnapshotGen {
 public:
  explicit SnapshotGen(uint64_t seed) : rng_(seed) {}

  seam::Snapshot next() {
    seam::Snapshot s = last_;
    s.time_ns = next_time(s.time_ns);
    // Device table: sometimes a rename, an extra unused name, a duplicate, or a fresh table.
    if (s.devices.empty() || chance(0.05)) {
      s.devices.clear();
      const int n = pick(1, 5);
      for (int i = 0; i < n; ++i) s.devices.push_back(name("eth", pick(0, 9)));
    } else if (chance(0.1)) {
      s.devices[pick_ix(s.devices.size())] = name("ren", pick(0, 99));
    } else if (chance(0.03)) {
      s.devices.push_back(s.devices.front());
    }
    // Queues leave, arrive (new or returning keys), and change.
    std::vector<seam::QueueCounters> qs;
    for (auto q : s.queues) {
      if (chance(0.03)) {
        gone_queues_.push_back(q.key);
        continue;
      }
      bump(q);
      qs.push_back(q);
    }
    if (chance(0.2) || qs.empty()) {
      const int n = pick(1, 4);
      for (int i = 0; i < n; ++i) {
        seam::QueueCounters q;
        if (!gone_queues_.empty() && chance(0.4)) {
          q.key = gone_queues_[pick_ix(gone_queues_.size())];
        } else {
          q.key = {static_cast<uint32_t>(pick(0, 40)),
                   chance(0.05) ? std::numeric_limits<uint32_t>::max()
                                : static_cast<uint32_t>(pick(8192, 8300))};
        }
        q.queue = chance(0.2) ? -1 : pick(0, 63);
        q.irq = chance(0.2)    ? -1
                : chance(0.05) ? std::numeric_limits<int32_t>::min()
                               : pick(20, 200);
        q.has_bytes = chance(0.3);
        if (chance(0.5)) {  // arrives with history
          q.polls = big();
          q.packets = big();
          q.budget_exhausted = small();
          q.empty_polls = small();
          q.bytes = q.has_bytes ? big() : 0;
        }
        qs.push_back(q);
      }
    }
    for (auto& q : qs) {
      if (q.device_ix >= s.devices.size() || chance(0.05)) q.device_ix = pick_ix(s.devices.size());
    }
    // Mostly key order, as the collector writes; sometimes not; rarely a repeated key.
    if (chance(0.8)) {
      std::sort(qs.begin(), qs.end(), [](auto& a, auto& b) { return a.key < b.key; });
    } else {
      std::shuffle(qs.begin(), qs.end(), rng_);
    }
    if (!qs.empty() && chance(0.02)) qs.push_back(qs[pick_ix(qs.size())]);
    s.queues = std::move(qs);

    std::vector<seam::CqCounters> cqs;
    for (auto c : s.cqs) {
      if (chance(0.05)) continue;
      bump(c);
      cqs.push_back(c);
    }
    if (chance(0.1)) {
      seam::CqCounters c;
      c.key = {static_cast<uint32_t>(pick(0, 3)), static_cast<uint32_t>(pick(0, 500))};
      c.ibdev = chance(0.1) ? "" : name("rxe", pick(0, 3));
      c.poll_ctx = static_cast<seam::PollContext>(pick(0, 3));
      c.nr_cqe = static_cast<uint32_t>(pick(0, 4096));
      c.comp_vector = chance(0.3) ? -1 : pick(0, 16);
      cqs.push_back(c);
    }
    std::sort(cqs.begin(), cqs.end(), [](auto& a, auto& b) { return a.key < b.key; });
    s.cqs = std::move(cqs);

    // CPU times: usually every possible CPU, all rising; sometimes the source stops or starts
    // measuring (none), or the CPU count changes.
    if (chance(0.03)) {
      s.cpus.clear();
    } else if (s.cpus.empty() || chance(0.03)) {
      s.cpus.resize(static_cast<size_t>(pick(1, 9)));
    }
    for (auto& t : s.cpus) bump(t);
    // IRQs: appear (in IRQ order, as the collector lists them, rarely not), rise, sometimes go.
    std::vector<seam::IrqTimes> irqs;
    for (auto t : s.irqs) {
      if (chance(0.03)) continue;
      t.ns = step(t.ns);
      t.count = step(t.count);
      t.timed = step(t.timed);
      irqs.push_back(t);
    }
    if (chance(0.1)) {
      seam::IrqTimes t;
      t.irq =
          chance(0.05) ? std::numeric_limits<uint32_t>::max() : static_cast<uint32_t>(pick(0, 300));
      t.count = small();
      irqs.push_back(t);
    }
    if (chance(0.9)) {
      std::sort(irqs.begin(), irqs.end(), [](auto& a, auto& b) { return a.irq < b.irq; });
    }
    s.irqs = std::move(irqs);
    last_ = s;
    return s;
  }

  std::vector<seam::Snapshot> sequence(int n) {
    std::vector<seam::Snapshot> v;
    for (int i = 0; i < n; ++i) v.push_back(next());
    return v;
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  uint32_t pick_ix(size_t n) { return static_cast<uint32_t>(pick(0, static_cast<int>(n) - 1)); }
  uint16_t pick_u16(int lo, int hi) { return static_cast<uint16_t>(pick(lo, hi)); }
  uint64_t small() { return static_cast<uint64_t>(pick(0, 100)); }
  uint64_t big() { return std::uniform_int_distribution<uint64_t>()(rng_); }
  std::string name(const char* prefix, int n) { return prefix + std::to_string(n); }

  int64_t next_time(int64_t t) {
    if (chance(0.02)) return std::uniform_int_distribution<int64_t>()(rng_);  // any value
    if (chance(0.02)) return t - pick(0, 1'000'000);                          // backwards
    return t + 20'000'000 + pick(-100'000, 100'000);
  }

  // Counters mostly rise by small amounts; sometimes stay, jump, reset or wrap past 2^64.
  uint64_t step(uint64_t v) {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < 0.3) return v;
    if (r < 0.85) return v + static_cast<uint64_t>(pick(1, 3000));
    if (r < 0.9) return v + big() / 1024;
    if (r < 0.95) return v / 2;  // backwards
    if (r < 0.97) return 0;
    return v + big();  // wraps half the time
  }
  void bump(seam::QueueCounters& q) {
    q.polls = step(q.polls);
    q.packets = step(q.packets);
    q.budget_exhausted = step(q.budget_exhausted);
    q.empty_polls = step(q.empty_polls);
    if (q.has_bytes) q.bytes = step(q.bytes);
    if (chance(0.02)) q.has_bytes = !q.has_bytes;
    if (chance(0.02)) q.queue = pick(-1, 63);
    if (chance(0.02)) q.irq = pick(-1, 300);
    if (chance(0.05)) q.cpu = chance(0.1) ? seam::QueueCounters::kNoCpu : pick_u16(0, 511);
  }
  void bump(seam::CpuTimes& t) {
    for (uint64_t* v : {&t.hardirq_ns, &t.hardirq_count, &t.hardirq_timed, &t.softirq_net_rx_ns,
                        &t.softirq_net_rx_count, &t.softirq_net_rx_timed, &t.softirq_block_ns,
                        &t.softirq_block_count, &t.softirq_block_timed, &t.softirq_irq_poll_ns,
                        &t.softirq_irq_poll_count, &t.softirq_irq_poll_timed, &t.idle_ns}) {
      *v = step(*v);
    }
    if (chance(0.05)) t.idle_known = !t.idle_known;
  }
  void bump(seam::CqCounters& c) {
    c.schedules = step(c.schedules);
    c.reschedules = step(c.reschedules);
    c.events = step(c.events);
    c.polls = step(c.polls);
    c.completions = step(c.completions);
    c.poll_errors = step(c.poll_errors);
    c.kernel_modifies = step(c.kernel_modifies);
    if (chance(0.1)) {
      c.kernel_comps = static_cast<uint16_t>(pick(0, 65535));
      c.kernel_usec = static_cast<uint16_t>(pick(0, 65535));
    }
    if (chance(0.02)) c.ibdev = name("rxe", pick(0, 3));
    if (chance(0.02)) c.poll_ctx = static_cast<seam::PollContext>(pick(0, 3));
    if (chance(0.02)) c.comp_vector = pick(-1, 16);
    if (chance(0.02)) c.nr_cqe = static_cast<uint32_t>(pick(0, 1 << 20));
    c.budget_exhausted = step(c.budget_exhausted);
    if (chance(0.05)) c.cpu = chance(0.1) ? seam::QueueCounters::kNoCpu : pick_u16(0, 511);
  }

  std::mt19937_64 rng_;
  seam::Snapshot last_;
  std::vector<seam::QueueKey> gone_queues_;
};

}  // namespace dimctl::trace::testing
