#include "dimctl/trace/trace_text.h"

#include <time.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dimctl/seam/cpu_period.h"

namespace dimctl::trace {
namespace {

std::string wall_clock(int64_t realtime_ns) {
  const time_t secs = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm t{};
  if (::gmtime_r(&secs, &t) == nullptr) return "?";
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                     (realtime_ns % 1'000'000'000) / 1'000'000);
}

std::string ms(int64_t ns) {
  return fmt::format("{:.3f}ms", static_cast<double>(ns) / 1e6);
}

double per_second(uint64_t n, int64_t span_ns) {
  return span_ns > 0 ? static_cast<double>(n) * 1e9 / static_cast<double>(span_ns) : 0.0;
}

// The counted part of cur against prev: all of cur when there is no prev or a counter went back.
struct QueueDelta {
  uint64_t polls, packets, events, budget_exhausted, empty_polls, bytes;
  bool fresh, reset;
  bool zero() const {
    return polls == 0 && packets == 0 && budget_exhausted == 0 && empty_polls == 0 && bytes == 0;
  }
};

QueueDelta delta(const seam::QueueCounters& c, const seam::QueueCounters* p) {
  const bool reset = p != nullptr && (c.polls < p->polls || c.packets < p->packets ||
                                      c.budget_exhausted < p->budget_exhausted ||
                                      c.empty_polls < p->empty_polls || c.bytes < p->bytes);
  if (p == nullptr || reset) {
    return {c.polls,       c.packets, c.events(),   c.budget_exhausted,
            c.empty_polls, c.bytes,   p == nullptr, reset};
  }
  // events() = polls - budget_exhausted can fall while both rise: take the difference as is
  // only when it does not.
  const uint64_t ev = c.events() >= p->events() ? c.events() - p->events() : 0;
  return {c.polls - p->polls,
          c.packets - p->packets,
          ev,
          c.budget_exhausted - p->budget_exhausted,
          c.empty_polls - p->empty_polls,
          c.bytes - p->bytes,
          false,
          false};
}

std::string cpu_text(uint16_t cpu) {
  return cpu == seam::QueueCounters::kNoCpu ? std::string() : fmt::format(" cpu {}", cpu);
}

}  // namespace

std::string TraceShow::header_text(const TraceHeader& h, const std::string& name, uint64_t size) {
  std::string s;
  s += fmt::format("file      {} ({} bytes, format version {})\n", name, size, h.version);
  s += fmt::format("host      {} (kernel {})\n", h.host, h.kernel_release);
  s += fmt::format("recorder  {}\n", h.recorder_version.empty() ? "?" : h.recorder_version);
  if (!h.note.empty()) s += fmt::format("note      {}\n", h.note);
  s += fmt::format("started   {} (CLOCK_MONOTONIC {:.6f} s)\n", wall_clock(h.start_realtime_ns),
                   static_cast<double>(h.start_monotonic_ns) / 1e9);
  s += fmt::format("interval  {}\n", h.interval_ns > 0 ? ms(h.interval_ns) : "unknown");
  return s;
}

void TraceShow::frame(const seam::Snapshot& s, std::string& out) {
  const bool baseline = frames_ == 0;
  if (baseline) first_ns_ = s.time_ns;
  const int64_t dt = s.time_ns - last_ns_;
  last_ns_ = s.time_ns;
  ++frames_;

  std::string lines;
  size_t quiet = 0;
  std::unordered_map<uint64_t, seam::QueueCounters> now;
  now.reserve(s.queues.size());
  for (const auto& q : s.queues) {
    const uint64_t k = seam::packed(q.key);
    if (!now.emplace(k, q).second) continue;  // a repeated key counts once
    auto it = prev_queues_.find(k);
    QueueTotals& t = queues_[k];
    t.key = q.key;
    t.device = s.device_of(q);
    t.queue = q.queue;
    t.irq = q.irq;
    t.has_bytes |= q.has_bytes;
    ++t.frames;
    if (baseline) continue;
    const QueueDelta d = delta(q, it == prev_queues_.end() ? nullptr : &it->second);
    t.polls += d.polls;
    t.packets += d.packets;
    t.events += d.events;
    t.budget_exhausted += d.budget_exhausted;
    t.empty_polls += d.empty_polls;
    t.bytes += d.bytes;
    t.resets += d.reset ? 1 : 0;
    if (!opts_.frames) continue;
    if (d.zero() && !d.fresh && !d.reset) {
      ++quiet;
      continue;
    }
    lines += fmt::format(
        "  {:<15} napi {:<6} q {:<3} irq {:<4} polls +{} packets +{} events +{} exhausted +{} "
        "empty +{}{}{}{}\n",
        s.device_of(q), q.key.napi_id, q.queue, q.irq, d.polls, d.packets, d.events,
        d.budget_exhausted, d.empty_polls, q.has_bytes ? fmt::format(" bytes +{}", d.bytes) : "",
        cpu_text(q.cpu),
        d.fresh   ? " (new)"
        : d.reset ? " (reset: counted from 0)"
                  : "");
  }
  if (opts_.frames && !baseline) {
    for (const auto& [k, q] : prev_queues_) {
      if (!now.count(k)) {
        lines += fmt::format("  {:<15} napi {:<6} gone\n", queues_[k].device, q.key.napi_id);
      }
    }
  }
  prev_queues_ = std::move(now);

  std::unordered_map<uint64_t, seam::CqCounters> cqs_now;
  for (const auto& c : s.cqs) {
    const uint64_t k = seam::packed(c.key);
    if (!cqs_now.emplace(k, c).second) continue;
    auto it = prev_cqs_.find(k);
    CqTotals& t = cqs_[k];
    t.key = c.key;
    t.ibdev = c.ibdev;
    ++t.frames;
    if (baseline) continue;
    const seam::CqCounters* p = it == prev_cqs_.end() ? nullptr : &it->second;
    const bool reset = p != nullptr && (c.events < p->events || c.completions < p->completions ||
                                        c.schedules < p->schedules || c.polls < p->polls ||
                                        c.budget_exhausted < p->budget_exhausted);
    const bool whole = p == nullptr || reset;
    const uint64_t ev = whole ? c.events : c.events - p->events;
    const uint64_t comp = whole ? c.completions : c.completions - p->completions;
    const uint64_t sched = whole ? c.schedules : c.schedules - p->schedules;
    const uint64_t polls = whole ? c.polls : c.polls - p->polls;
    const uint64_t exhausted =
        whole ? c.budget_exhausted : c.budget_exhausted - p->budget_exhausted;
    t.budget_exhausted += exhausted;
    t.events += ev;
    t.completions += comp;
    t.schedules += sched;
    t.polls += polls;
    t.resets += reset ? 1 : 0;
    if (!opts_.frames) continue;
    if (ev == 0 && comp == 0 && sched == 0 && polls == 0 && exhausted == 0 && !whole) {
      ++quiet;
      continue;
    }
    lines += fmt::format(
        "  cq {:<12} {:<6} events +{} completions +{} schedules +{} polls +{}{} moderation "
        "{}/{}us{}{}\n",
        c.ibdev.empty() ? fmt::format("dev{}", c.key.dev_index) : c.ibdev, c.key.cq_id, ev, comp,
        sched, polls, exhausted > 0 ? fmt::format(" exhausted +{}", exhausted) : "", c.kernel_comps,
        c.kernel_usec, cpu_text(c.cpu),
        p == nullptr ? " (new)"
        : reset      ? " (reset: counted from 0)"
                     : "");
  }
  if (opts_.frames && !baseline) {
    for (const auto& [k, c] : prev_cqs_) {
      if (!cqs_now.count(k)) lines += fmt::format("  cq {:<12} {:<6} gone\n", c.ibdev, c.key.cq_id);
    }
  }
  prev_cqs_ = std::move(cqs_now);

  for (size_t i = 0; i < s.cpus.size(); ++i) {
    const auto cpu = static_cast<uint32_t>(i);
    CpuTotals& t = cpus_[cpu];
    t.cpu = cpu;
    ++t.frames;
    if (baseline) continue;
    // Against the previous frame's entry, or from 0 for a CPU new to the trace or whose counters
    // went back (as queues are counted).
    const seam::CpuTimes& cur = s.cpus[i];
    const seam::CpuTimes* prev = i < prev_cpus_.size() ? &prev_cpus_[i] : nullptr;
    const bool reset = prev != nullptr && seam::went_backwards(cur, *prev);
    const bool whole = prev == nullptr || reset;
    const seam::CpuPeriod d = seam::cpu_period(cur, whole ? seam::CpuTimes{} : *prev);
    t.hardirqs += d.hardirqs;
    t.softirqs += d.softirqs;
    t.hardirq_ns += d.hardirq_ns;
    t.softirq_ns += d.softirq_ns;
    t.resets += reset ? 1 : 0;
    std::string busy;
    const bool idle_known = !whole && cur.idle_known && prev->idle_known;
    if (idle_known && dt > 0) {
      const double b = seam::busy_fraction(cur, *prev, d.hardirq_ns + d.softirq_ns, dt) *
                       static_cast<double>(dt);
      t.idle_span_ns += dt;
      t.busy_ns += b;
      busy = fmt::format(" busy {:.1f}%", 100.0 * b / static_cast<double>(dt));
    }
    if (!opts_.frames) continue;
    if (d.hardirqs == 0 && d.softirqs == 0 && (!idle_known || cur.idle_ns == prev->idle_ns) &&
        !reset) {
      ++quiet;
      continue;
    }
    lines += fmt::format("  cpu {:<4} hardirq +{} ({}) softirq +{} ({}){}{}\n", cpu, d.hardirqs,
                         ms(static_cast<int64_t>(d.hardirq_ns)), d.softirqs,
                         ms(static_cast<int64_t>(d.softirq_ns)), busy,
                         reset ? " (reset: counted from 0)" : "");
  }
  prev_cpus_ = s.cpus;

  if (!opts_.frames) return;
  if (baseline) {
    out += fmt::format("frame {} t={:.6f}s baseline: {} queues, {} CQs, {} CPUs, devices [{}]\n",
                       frames_ - 1, static_cast<double>(s.time_ns) / 1e9, s.queues.size(),
                       s.cqs.size(), s.cpus.size(), fmt::join(s.devices, ", "));
    return;
  }
  out += fmt::format("frame {} t=+{:.6f}s dt={} queues {} cqs {}{}\n", frames_ - 1,
                     static_cast<double>(s.time_ns - first_ns_) / 1e9, ms(dt), s.queues.size(),
                     s.cqs.size(), quiet > 0 ? fmt::format(" ({} quiet)", quiet) : "");
  out += lines;
}

std::string TraceShow::summary() const {
  const int64_t span = span_ns();
  std::string s = fmt::format("summary: {} frames, {:.6f} s from the first frame to the last\n",
                              frames_, static_cast<double>(span) / 1e9);
  if (!queues_.empty()) {
    s += fmt::format("{:<15} {:>7} {:>7} {:>5} {:>5} {:>7} {:>12} {:>14} {:>12} {:>12} {:>12}\n",
                     "DEVICE", "IFINDEX", "NAPI", "QUEUE", "IRQ", "FRAMES", "POLLS", "PACKETS",
                     "EVENTS", "PACKETS/s", "EVENTS/s");
    for (const auto& [k, t] : queues_) {
      s += fmt::format(
          "{:<15} {:>7} {:>7} {:>5} {:>5} {:>7} {:>12} {:>14} {:>12} {:>12.1f} {:>12.1f}{}\n",
          t.device, t.key.ifindex, t.key.napi_id, t.queue, t.irq, t.frames, t.polls, t.packets,
          t.events, per_second(t.packets, span), per_second(t.events, span),
          t.resets > 0 ? fmt::format(" ({} resets)", t.resets) : "");
    }
  }
  if (!cqs_.empty()) {
    s += fmt::format("{:<15} {:>7} {:>7} {:>12} {:>14} {:>10} {:>12} {:>14}\n", "IBDEV", "CQ",
                     "FRAMES", "EVENTS", "COMPLETIONS", "EXHAUSTED", "EVENTS/s", "COMPLETIONS/s");
    for (const auto& [k, t] : cqs_) {
      s += fmt::format("{:<15} {:>7} {:>7} {:>12} {:>14} {:>10} {:>12.1f} {:>14.1f}{}\n", t.ibdev,
                       t.key.cq_id, t.frames, t.events, t.completions, t.budget_exhausted,
                       per_second(t.events, span), per_second(t.completions, span),
                       t.resets > 0 ? fmt::format(" ({} resets)", t.resets) : "");
    }
  }
  if (queues_.empty() && cqs_.empty()) s += "(no queue or CQ in the trace)\n";
  if (!cpus_.empty()) {
    // Shares of the time from the first frame to the last; busy over the frames where it is known.
    s += fmt::format("{:<5} {:>7} {:>12} {:>10} {:>12} {:>10} {:>8} {:>8}\n", "CPU", "FRAMES",
                     "HARDIRQS/s", "HARDIRQ%", "SOFTIRQS/s", "SOFTIRQ%", "BUSY%", "MEASURED");
    for (const auto& [c, t] : cpus_) {
      const double share = span > 0 ? 100.0 / static_cast<double>(span) : 0.0;
      s += fmt::format(
          "{:<5} {:>7} {:>12.1f} {:>10.2f} {:>12.1f} {:>10.2f} {:>8} {:>8}{}\n", c, t.frames,
          per_second(t.hardirqs, span), t.hardirq_ns * share, per_second(t.softirqs, span),
          t.softirq_ns * share,
          t.idle_span_ns > 0
              ? fmt::format("{:.1f}", 100.0 * t.busy_ns / static_cast<double>(t.idle_span_ns))
              : "-",
          t.idle_span_ns > 0 ? ms(t.idle_span_ns) : "-",
          t.resets > 0 ? fmt::format(" ({} resets)", t.resets) : "");
    }
  }
  return s;
}

}  // namespace dimctl::trace
