// Frame payload encoding (docs/TRACE.md, "Frame payload").
#include "frame_codec.h"

#include <algorithm>
#include <array>
#include <limits>

#include "dimctl/trace/trace_writer.h"
#include "varint.h"

namespace dimctl::trace::detail {
namespace {

using model::CqCounters;
using model::QueueCounters;
using model::Snapshot;

// Baselines of a key absent from the previous frame: the defaults of a fresh entry, so that a
// new queue costs its non-default fields only.
const QueueCounters kNewQueue{};
const CqCounters kNewCq{};

std::array<uint64_t, kQueueCounters> counters(const QueueCounters& q) {
  return {q.polls, q.packets, q.budget_exhausted, q.empty_polls, q.bytes};
}
void set_counters(QueueCounters& q, const std::array<uint64_t, kQueueCounters>& v) {
  q.polls = v[0];
  q.packets = v[1];
  q.budget_exhausted = v[2];
  q.empty_polls = v[3];
  q.bytes = v[4];
}
std::array<uint64_t, kCqCounters> counters(const CqCounters& c) {
  return {c.schedules,   c.reschedules, c.events,         c.polls,
          c.completions, c.poll_errors, c.kernel_modifies};
}
void set_counters(CqCounters& c, const std::array<uint64_t, kCqCounters>& v) {
  c.schedules = v[0];
  c.reschedules = v[1];
  c.events = v[2];
  c.polls = v[3];
  c.completions = v[4];
  c.poll_errors = v[5];
  c.kernel_modifies = v[6];
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

template <size_t N>
bool get_counters(ByteCursor& c, uint64_t mask, uint64_t abs_bit,
                  const std::array<uint64_t, N>& base, std::array<uint64_t, N>& cur) {
  const bool absolute = (mask & abs_bit) != 0;
  for (size_t i = 0; i < N; ++i) {
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
  put_varint(out, mask);
  if (meta) {
    put_varint(out, zigzag(q.queue));
    put_varint(out, zigzag(q.irq));
    put_varint(out, q.device_ix);
    out.push_back(q.has_bytes ? 1 : 0);
  }
  out += scratch;
}

void put_cq(std::string& out, const CqCounters& q, const CqCounters& b, std::string& scratch) {
  scratch.clear();
  uint64_t mask = put_counters(kCqAbs, counters(q), counters(b), scratch);
  const bool meta = q.ibdev != b.ibdev || q.poll_ctx != b.poll_ctx || q.nr_cqe != b.nr_cqe ||
                    q.comp_vector != b.comp_vector;
  const bool kernel = q.kernel_comps != b.kernel_comps || q.kernel_usec != b.kernel_usec;
  if (meta) mask |= kCqMeta;
  if (kernel) mask |= kCqKernel;
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
  out += scratch;
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
    const uint64_t k = model::packed(e.key);
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
  auto it = ix.find(model::packed(key));
  return it == ix.end() ? fresh : prev[it->second];
}

bool fits_i32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

}  // namespace
}  // namespace dimctl::trace::detail

namespace dimctl::trace {

Result<void> check_snapshot(const model::Snapshot& s) {
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

void FrameState::reset(int64_t time_base_ns) {
  prev = Snapshot{};
  prev.time_ns = time_base_ns;
  queue_ix.clear();
  cq_ix.clear();
}

void FrameState::advance(const Snapshot& s, bool queue_keys_changed, bool cq_keys_changed) {
  prev = s;
  if (queue_keys_changed) {
    queue_ix.clear();
    for (uint32_t i = 0; i < s.queues.size(); ++i)
      queue_ix.emplace(model::packed(s.queues[i].key), i);
  }
  if (cq_keys_changed) {
    cq_ix.clear();
    for (uint32_t i = 0; i < s.cqs.size(); ++i) cq_ix.emplace(model::packed(s.cqs[i].key), i);
  }
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
    const model::QueueKey key = queue_keys ? q.key : p.queues[i].key;
    const QueueCounters& b = baseline(key, i, !queue_keys, p.queues, state_.queue_ix, kNewQueue);
    uint64_t mask = 0;
    if (!c.varint(mask) || mask >= (kQueueMeta << 1))
      return bad(fmt::format("bad queue {} mask", i));
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
    const model::CqKey key = cq_keys ? q.key : p.cqs[i].key;
    const CqCounters& b = baseline(key, i, !cq_keys, p.cqs, state_.cq_ix, kNewCq);
    uint64_t mask = 0;
    if (!c.varint(mask) || mask >= (kCqKernel << 1)) return bad(fmt::format("bad CQ {} mask", i));
    q = b;
    q.key = key;
    if ((mask & kCqMeta) != 0) {
      uint8_t ctx = 0;
      uint64_t nr = 0, vec = 0;
      if (!c.string(q.ibdev) || !c.byte(ctx) || !c.varint(nr) || !c.varint(vec) ||
          nr > std::numeric_limits<uint32_t>::max() || !fits_i32(unzigzag(vec))) {
        return bad(fmt::format("bad CQ {} fields", i));
      }
      q.poll_ctx = static_cast<model::PollContext>(ctx);
      q.nr_cqe = static_cast<uint32_t>(nr);
      q.comp_vector = static_cast<int32_t>(unzigzag(vec));
    }
    if ((mask & kCqKernel) != 0) {
      uint64_t comps = 0, usec = 0;
      if (!c.varint(comps) || !c.varint(usec) || comps > 0xffff || usec > 0xffff) {
        return bad(fmt::format("bad CQ {} kernel moderation", i));
      }
      q.kernel_comps = static_cast<uint16_t>(comps);
      q.kernel_usec = static_cast<uint16_t>(usec);
    }
    std::array<uint64_t, kCqCounters> v{};
    if (!get_counters(c, mask, kCqAbs, counters(b), v)) {
      return bad(fmt::format("truncated CQ {} counters", i));
    }
    set_counters(q, v);
  }
  if (!c.at_end())
    return bad(fmt::format("{} unexpected trailing bytes", payload.size() - c.pos()));
  state_.advance(out, queue_keys, cq_keys);
  return ok();
}

}  // namespace dimctl::trace::detail
