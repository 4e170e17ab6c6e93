// Frame payload encoding (docs/TRACE.md, "Frame payload").
#include "frame_codec.h"

#include <algorithm>
#include <array>
#include <limits>

#include "dimctl/trace/trace_writer.h"
#include "varint.h"

namespace dimctl::trace::detail {
namespace {

using seam::CqCounters;
using seam::QueueCounters;
using seam::Snapshot;

// Baselines of a key absent from the previous frame: the defaults of a fresh entry, so that a
// new queue costs its non-default fields only.
const QueueCounters kNewQueue{};
const CqCounters kNewCq{};
const seam::CpuTimes kNewCpu{};
const seam::IrqTimes kNewIrq{};

// Each entry kind's counters in wire order (the mask bits of frame_codec.h): one table serves
// both the encoder and the decoder, so the two cannot disagree on the order.
template <typename T, size_t N>
using Fields = std::array<uint64_t T::*, N>;
constexpr Fields<QueueCounters, kQueueCounters> kQueueFields{
    &QueueCounters::polls, &QueueCounters::packets, &QueueCounters::budget_exhausted,
    &QueueCounters::empty_polls, &QueueCounters::bytes};
constexpr Fields<CqCounters, kCqCountersMax> kCqFields{
    &CqCounters::schedules,       &CqCounters::reschedules,     &CqCounters::events,
    &CqCounters::polls,           &CqCounters::completions,     &CqCounters::poll_errors,
    &CqCounters::kernel_modifies, &CqCounters::budget_exhausted};
constexpr Fields<seam::CpuTimes, kCpuCounters> kCpuFields{&seam::CpuTimes::hardirq_ns,
                                                          &seam::CpuTimes::hardirq_count,
                                                          &seam::CpuTimes::hardirq_timed,
                                                          &seam::CpuTimes::softirq_net_rx_ns,
                                                          &seam::CpuTimes::softirq_net_rx_count,
                                                          &seam::CpuTimes::softirq_net_rx_timed,
                                                          &seam::CpuTimes::softirq_block_ns,
                                                          &seam::CpuTimes::softirq_block_count,
                                                          &seam::CpuTimes::softirq_block_timed,
                                                          &seam::CpuTimes::softirq_irq_poll_ns,
                                                          &seam::CpuTimes::softirq_irq_poll_count,
                                                          &seam::CpuTimes::softirq_irq_poll_timed,
                                                          &seam::CpuTimes::idle_ns};
constexpr Fields<seam::IrqTimes, kIrqCounters> kIrqFields{
    &seam::IrqTimes::ns, &seam::IrqTimes::count, &seam::IrqTimes::timed};

template <typename T, size_t N>
std::array<uint64_t, N> read_fields(const T& t, const Fields<T, N>& f) {
  std::array<uint64_t, N> v{};
  for (size_t i = 0; i < N; ++i) v[i] = t.*f[i];
  return v;
}
template <typename T, size_t N>
void write_fields(T& t, const Fields<T, N>& f, const std::array<uint64_t, N>& v) {
  for (size_t i = 0; i < N; ++i) t.*f[i] = v[i];
}

std::array<uint64_t, kQueueCounters> counters(const QueueCounters& q) {
  return read_fields(q, kQueueFields);
}
void set_counters(QueueCounters& q, const std::array<uint64_t, kQueueCounters>& v) {
  write_fields(q, kQueueFields, v);
}
std::array<uint64_t, kCqCountersMax> counters(const CqCounters& c) {
  return read_fields(c, kCqFields);
}
void set_counters(CqCounters& c, const std::array<uint64_t, kCqCountersMax>& v) {
  write_fields(c, kCqFields, v);
}
std::array<uint64_t, kCpuCounters> counters(const seam::CpuTimes& t) {
  return read_fields(t, kCpuFields);
}
void set_counters(seam::CpuTimes& t, const std::array<uint64_t, kCpuCounters>& v) {
  write_fields(t, kCpuFields, v);
}
std::array<uint64_t, kIrqCounters> counters(const seam::IrqTimes& t) {
  return read_fields(t, kIrqFields);
}
void set_counters(seam::IrqTimes& t, const std::array<uint64_t, kIrqCounters>& v) {
  write_fields(t, kIrqFields, v);
}

// Counters are deltas against the baseline while none went backwards; a counter that did (a
// reset, a reused key) switches the entry to absolute values, which are then small.
template <size_t N>
uint64_t put_counters(uint64_t abs_bit, const std::array<uint64_t, N>& cur,
                      const std::array<uint64_t, N>& base, std::string& values) {
  bool absolute = false;
  for (size_t i = 0; i < N; ++i) absolute |= cur[i] < base[i];
  uint64_t mask = absolute ? abs_bit : 0;
  for (size_t i = 0; i < N; ++i) {
    const uint64_t v = absolute ? cur[i] : cur[i] - base[i];
    if (v != 0) {
      mask |= uint64_t{1} << i;
      put_varint(values, v);
    }
  }
  return mask;
}

// Counters from n on (not in this version) keep their baseline's values.
template <size_t N>
bool get_counters(ByteCursor& c, uint64_t mask, uint64_t abs_bit,
                  const std::array<uint64_t, N>& base, std::array<uint64_t, N>& cur, size_t n = N) {
  const bool absolute = (mask & abs_bit) != 0;
  cur = base;
  for (size_t i = 0; i < std::min(n, N); ++i) {
    uint64_t v = 0;
    if ((mask & (uint64_t{1} << i)) != 0 && !c.varint(v)) return false;
    cur[i] = absolute ? v : base[i] + v;
  }
  return true;
}

void put_queue(std::string& out, const QueueCounters& q, const QueueCounters& b,
               std::string& scratch) {
  scratch.clear();
  uint64_t mask = put_counters(kQueueAbs, counters(q), counters(b), scratch);
  const bool meta = q.queue != b.queue || q.irq != b.irq || q.device_ix != b.device_ix ||
                    q.has_bytes != b.has_bytes;
  if (meta) mask |= kQueueMeta;
  const bool cpu = q.cpu != b.cpu;
  if (cpu) mask |= kQueueCpu;
  put_varint(out, mask);
  if (meta) {
    put_varint(out, zigzag(q.queue));
    put_varint(out, zigzag(q.irq));
    put_varint(out, q.device_ix);
    out.push_back(q.has_bytes ? 1 : 0);
  }
  if (cpu) put_varint(out, q.cpu);
  out += scratch;
}

void put_cq(std::string& out, const CqCounters& q, const CqCounters& b, std::string& scratch) {
  scratch.clear();
  constexpr CqMask m = kCqMaskV2;
  uint64_t mask = put_counters(m.abs, counters(q), counters(b), scratch);
  const bool meta = q.ibdev != b.ibdev || q.poll_ctx != b.poll_ctx || q.nr_cqe != b.nr_cqe ||
                    q.comp_vector != b.comp_vector;
  const bool kernel = q.kernel_comps != b.kernel_comps || q.kernel_usec != b.kernel_usec;
  const bool cpu = q.cpu != b.cpu;
  if (meta) mask |= m.meta;
  if (kernel) mask |= m.kernel;
  if (cpu) mask |= m.cpu;
  put_varint(out, mask);
  if (meta) {
    put_string(out, q.ibdev);
    out.push_back(static_cast<char>(q.poll_ctx));
    put_varint(out, q.nr_cqe);
    put_varint(out, zigzag(q.comp_vector));
  }
  if (kernel) {
    put_varint(out, q.kernel_comps);
    put_varint(out, q.kernel_usec);
  }
  if (cpu) put_varint(out, q.cpu);
  out += scratch;
}

// Version 2: every CPU against the previous frame's entry of the same CPU number (a fresh one
// past its end), then every IRQ keyed by its number (as a delta from the entry before it) and
// encoded against the previous frame's entry of that IRQ.
void put_cpu_times(std::string& out, const Snapshot& s, const Snapshot& p,
                   const std::unordered_map<uint32_t, uint32_t>& irq_ix, std::string& scratch) {
  put_varint(out, s.cpus.size());
  for (size_t i = 0; i < s.cpus.size(); ++i) {
    const seam::CpuTimes& t = s.cpus[i];
    scratch.clear();
    uint64_t mask = put_counters(kCpuAbs, counters(t),
                                 counters(i < p.cpus.size() ? p.cpus[i] : kNewCpu), scratch);
    if (t.idle_known) mask |= kCpuIdleKnown;
    put_varint(out, mask);
    out += scratch;
  }
  put_varint(out, s.irqs.size());
  uint32_t last = 0;
  for (const seam::IrqTimes& t : s.irqs) {
    put_varint(out, zigzag(int64_t{t.irq} - int64_t{last}));
    last = t.irq;
    auto it = irq_ix.find(t.irq);
    scratch.clear();
    put_varint(out,
               put_counters(kIrqAbs, counters(t),
                            counters(it == irq_ix.end() ? kNewIrq : p.irqs[it->second]), scratch));
    out += scratch;
  }
}

template <typename Entry>
bool same_keys(const std::vector<Entry>& a, const std::vector<Entry>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) { return x.key == y.key; });
}

// Keys as deltas of their packed value from the previous entry's (sorted keys: 1 byte each).
template <typename Entry>
void put_keys(std::string& out, const std::vector<Entry>& entries) {
  uint64_t last = 0;
  for (const auto& e : entries) {
    const uint64_t k = seam::packed(e.key);
    put_varint(out, zigzag(static_cast<int64_t>(k - last)));
    last = k;
  }
}

// What entry i (with key `key`) is encoded against: the entry at the same position when the
// key set is unchanged, else the previous frame's entry of that key, else a fresh entry.
template <typename Entry, typename Key>
const Entry& baseline(const Key& key, size_t i, bool positional, const std::vector<Entry>& prev,
                      const std::unordered_map<uint64_t, uint32_t>& ix, const Entry& fresh) {
  if (positional) return prev[i];
  auto it = ix.find(seam::packed(key));
  return it == ix.end() ? fresh : prev[it->second];
}

bool fits_i32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

}  // namespace
}  // namespace dimctl::trace::detail

namespace dimctl::trace {

Result<void> check_snapshot(const seam::Snapshot& s) {
  for (size_t i = 0; i < s.queues.size(); ++i) {
    const auto& q = s.queues[i];
    if (q.device_ix >= s.devices.size()) {
      return DIMCTL_FAIL(EINVAL,
                         "snapshot queue {} (ifindex {} napi {}): device_ix {} outside its device "
                         "table of {}",
                         i, q.key.ifindex, q.key.napi_id, q.device_ix, s.devices.size());
    }
  }
  return ok();
}

}  // namespace dimctl::trace

namespace dimctl::trace::detail {

void FrameState::reset(int64_t time_base_ns, uint16_t format_version) {
  prev = Snapshot{};
  prev.time_ns = time_base_ns;
  queue_ix.clear();
  cq_ix.clear();
  irq_ix.clear();
  version = format_version;
}

void FrameState::advance(const Snapshot& s, bool queue_keys_changed, bool cq_keys_changed) {
  prev = s;
  if (queue_keys_changed) {
    queue_ix.clear();
    for (uint32_t i = 0; i < s.queues.size(); ++i)
      queue_ix.emplace(seam::packed(s.queues[i].key), i);
  }
  if (cq_keys_changed) {
    cq_ix.clear();
    for (uint32_t i = 0; i < s.cqs.size(); ++i) cq_ix.emplace(seam::packed(s.cqs[i].key), i);
  }
  // A handful of entries per frame (the IRQs that ran): rebuilt every time.
  irq_ix.clear();
  for (uint32_t i = 0; i < s.irqs.size(); ++i) irq_ix.emplace(s.irqs[i].irq, i);
}

Result<void> FrameEncoder::encode(const Snapshot& s, std::string& out) {
  if (auto r = check_snapshot(s); !r) return r;
  const Snapshot& p = state_.prev;
  const bool devices = s.devices != p.devices;
  const bool queue_keys = !same_keys(s.queues, p.queues);
  const bool cq_keys = !same_keys(s.cqs, p.cqs);
  uint64_t flags = 0;
  if (devices) flags |= kFlagDevices;
  if (queue_keys) flags |= kFlagQueueKeys;
  if (cq_keys) flags |= kFlagCqKeys;

  put_varint(out, flags);
  put_varint(out, zigzag(static_cast<int64_t>(static_cast<uint64_t>(s.time_ns) -
                                              static_cast<uint64_t>(p.time_ns))));
  if (devices) {
    put_varint(out, s.devices.size());
    for (const auto& d : s.devices) put_string(out, d);
  }
  std::string scratch;
  put_varint(out, s.queues.size());
  if (queue_keys) put_keys(out, s.queues);
  for (size_t i = 0; i < s.queues.size(); ++i) {
    put_queue(out, s.queues[i],
              baseline(s.queues[i].key, i, !queue_keys, p.queues, state_.queue_ix, kNewQueue),
              scratch);
  }
  put_varint(out, s.cqs.size());
  if (cq_keys) put_keys(out, s.cqs);
  for (size_t i = 0; i < s.cqs.size(); ++i) {
    put_cq(out, s.cqs[i], baseline(s.cqs[i].key, i, !cq_keys, p.cqs, state_.cq_ix, kNewCq),
           scratch);
  }
  put_cpu_times(out, s, p, state_.irq_ix, scratch);
  state_.advance(s, queue_keys, cq_keys);
  return ok();
}

Result<void> FrameDecoder::decode(std::string_view payload, Snapshot& out) {
  ByteCursor c(payload);
  const Snapshot& p = state_.prev;
  auto bad = [&](std::string_view what) {
    return DIMCTL_FAIL(0, "{} at payload byte {}", what, c.pos());
  };
  uint64_t flags = 0, dt = 0;
  if (!c.varint(flags)) return bad("truncated flags");
  if ((flags & ~kKnownFlags) != 0) return bad(fmt::format("unknown frame flags {:#x}", flags));
  if (!c.varint(dt)) return bad("truncated time");
  out.time_ns =
      static_cast<int64_t>(static_cast<uint64_t>(p.time_ns) + static_cast<uint64_t>(unzigzag(dt)));
  if ((flags & kFlagDevices) != 0) {
    uint64_t n = 0;
    if (!c.varint(n) || n > payload.size()) return bad("bad device count");
    out.devices.resize(n);
    for (auto& d : out.devices) {
      if (!c.string(d)) return bad("truncated device name");
    }
  } else {
    out.devices = p.devices;
  }

  // Queues.
  const bool queue_keys = (flags & kFlagQueueKeys) != 0;
  uint64_t nq = 0;
  if (!c.varint(nq) || nq > payload.size()) return bad("bad queue count");
  if (!queue_keys && nq != p.queues.size()) {
    return bad(fmt::format("{} queues without keys after a frame of {}", nq, p.queues.size()));
  }
  out.queues.resize(nq);
  if (queue_keys) {
    uint64_t last = 0;
    for (auto& q : out.queues) {
      uint64_t d = 0;
      if (!c.varint(d)) return bad("truncated queue key");
      last += static_cast<uint64_t>(unzigzag(d));
      q.key = {static_cast<uint32_t>(last >> 32), static_cast<uint32_t>(last)};
    }
  }
  for (size_t i = 0; i < nq; ++i) {
    QueueCounters& q = out.queues[i];
    const seam::QueueKey key = queue_keys ? q.key : p.queues[i].key;
    const QueueCounters& b = baseline(key, i, !queue_keys, p.queues, state_.queue_ix, kNewQueue);
    uint64_t mask = 0;
    const uint64_t queue_limit = state_.version >= 2 ? kQueueCpu << 1 : kQueueMeta << 1;
    if (!c.varint(mask) || mask >= queue_limit) return bad(fmt::format("bad queue {} mask", i));
    q = b;
    q.key = key;
    if ((mask & kQueueMeta) != 0) {
      uint64_t qi = 0, irq = 0, dev = 0;
      uint8_t has_bytes = 0;
      if (!c.varint(qi) || !c.varint(irq) || !c.varint(dev) || !c.byte(has_bytes) ||
          !fits_i32(unzigzag(qi)) || !fits_i32(unzigzag(irq)) ||
          dev > std::numeric_limits<uint32_t>::max() || has_bytes > 1) {
        return bad(fmt::format("bad queue {} fields", i));
      }
      q.queue = static_cast<int32_t>(unzigzag(qi));
      q.irq = static_cast<int32_t>(unzigzag(irq));
      q.device_ix = static_cast<uint32_t>(dev);
      q.has_bytes = has_bytes != 0;
    }
    if ((mask & kQueueCpu) != 0) {
      uint64_t cpu = 0;
      if (!c.varint(cpu) || cpu > 0xffff) return bad(fmt::format("bad queue {} cpu", i));
      q.cpu = static_cast<uint16_t>(cpu);
    }
    std::array<uint64_t, kQueueCounters> v{};
    if (!get_counters(c, mask, kQueueAbs, counters(b), v)) {
      return bad(fmt::format("truncated queue {} counters", i));
    }
    set_counters(q, v);
    if (q.device_ix >= out.devices.size()) {
      return bad(fmt::format("queue {} device_ix {} outside the device table of {}", i, q.device_ix,
                             out.devices.size()));
    }
  }

  // CQs.
  const CqMask m = state_.version >= 2 ? kCqMaskV2 : kCqMaskV1;
  const bool cq_keys = (flags & kFlagCqKeys) != 0;
  uint64_t ncq = 0;
  if (!c.varint(ncq) || ncq > payload.size()) return bad("bad CQ count");
  if (!cq_keys && ncq != p.cqs.size()) {
    return bad(fmt::format("{} CQs without keys after a frame of {}", ncq, p.cqs.size()));
  }
  out.cqs.resize(ncq);
  if (cq_keys) {
    uint64_t last = 0;
    for (auto& q : out.cqs) {
      uint64_t d = 0;
      if (!c.varint(d)) return bad("truncated CQ key");
      last += static_cast<uint64_t>(unzigzag(d));
      q.key = {static_cast<uint32_t>(last >> 32), static_cast<uint32_t>(last)};
    }
  }
  for (size_t i = 0; i < ncq; ++i) {
    CqCounters& q = out.cqs[i];
    const seam::CqKey key = cq_keys ? q.key : p.cqs[i].key;
    const CqCounters& b = baseline(key, i, !cq_keys, p.cqs, state_.cq_ix, kNewCq);
    uint64_t mask = 0;
    const uint64_t cq_limit = (m.cpu != 0 ? m.cpu : m.kernel) << 1;
    if (!c.varint(mask) || mask >= cq_limit) return bad(fmt::format("bad CQ {} mask", i));
    q = b;
    q.key = key;
    if ((mask & m.meta) != 0) {
      uint8_t ctx = 0;
      uint64_t nr = 0, vec = 0;
      if (!c.string(q.ibdev) || !c.byte(ctx) || !c.varint(nr) || !c.varint(vec) ||
          nr > std::numeric_limits<uint32_t>::max() || !fits_i32(unzigzag(vec))) {
        return bad(fmt::format("bad CQ {} fields", i));
      }
      q.poll_ctx = static_cast<seam::PollContext>(ctx);
      q.nr_cqe = static_cast<uint32_t>(nr);
      q.comp_vector = static_cast<int32_t>(unzigzag(vec));
    }
    if ((mask & m.kernel) != 0) {
      uint64_t comps = 0, usec = 0;
      if (!c.varint(comps) || !c.varint(usec) || comps > 0xffff || usec > 0xffff) {
        return bad(fmt::format("bad CQ {} kernel moderation", i));
      }
      q.kernel_comps = static_cast<uint16_t>(comps);
      q.kernel_usec = static_cast<uint16_t>(usec);
    }
    if (m.cpu != 0 && (mask & m.cpu) != 0) {
      uint64_t cpu = 0;
      if (!c.varint(cpu) || cpu > 0xffff) return bad(fmt::format("bad CQ {} cpu", i));
      q.cpu = static_cast<uint16_t>(cpu);
    }
    std::array<uint64_t, kCqCountersMax> v{};
    if (!get_counters(c, mask, m.abs, counters(b), v, static_cast<size_t>(m.counters))) {
      return bad(fmt::format("truncated CQ {} counters", i));
    }
    set_counters(q, v);
  }

  // CPU and IRQ times (version 2).
  out.cpus.clear();
  out.irqs.clear();
  if (state_.version >= 2) {
    uint64_t ncpu = 0;
    if (!c.varint(ncpu) || ncpu > payload.size()) return bad("bad CPU count");
    out.cpus.resize(ncpu);
    for (size_t i = 0; i < ncpu; ++i) {
      uint64_t mask = 0;
      if (!c.varint(mask) || mask >= (kCpuIdleKnown << 1)) {
        return bad(fmt::format("bad CPU {} mask", i));
      }
      std::array<uint64_t, kCpuCounters> v{};
      if (!get_counters(c, mask, kCpuAbs, counters(i < p.cpus.size() ? p.cpus[i] : kNewCpu), v)) {
        return bad(fmt::format("truncated CPU {} times", i));
      }
      set_counters(out.cpus[i], v);
      out.cpus[i].idle_known = (mask & kCpuIdleKnown) != 0;
    }
    uint64_t nirq = 0;
    if (!c.varint(nirq) || nirq > payload.size()) return bad("bad IRQ count");
    out.irqs.resize(nirq);
    int64_t last = 0;
    for (size_t i = 0; i < nirq; ++i) {
      uint64_t d = 0, mask = 0;
      if (!c.varint(d)) return bad(fmt::format("truncated IRQ {} number", i));
      // Unsigned arithmetic: a corrupt delta wraps (and fails the range check) instead of
      // overflowing.
      const auto irq =
          static_cast<int64_t>(static_cast<uint64_t>(last) + static_cast<uint64_t>(unzigzag(d)));
      if (irq < 0 || irq > std::numeric_limits<uint32_t>::max()) {
        return bad(fmt::format("IRQ {} number {} out of range", i, irq));
      }
      last = irq;
      out.irqs[i].irq = static_cast<uint32_t>(irq);
      if (!c.varint(mask) || mask >= (kIrqAbs << 1)) return bad(fmt::format("bad IRQ {} mask", i));
      auto it = state_.irq_ix.find(out.irqs[i].irq);
      std::array<uint64_t, kIrqCounters> v{};
      if (!get_counters(c, mask, kIrqAbs,
                        counters(it == state_.irq_ix.end() ? kNewIrq : p.irqs[it->second]), v)) {
        return bad(fmt::format("truncated IRQ {} times", i));
      }
      set_counters(out.irqs[i], v);
    }
  }
  if (!c.at_end())
    return bad(fmt::format("{} unexpected trailing bytes", payload.size() - c.pos()));
  state_.advance(out, queue_keys, cq_keys);
  return ok();
}

}  // namespace dimctl::trace::detail
