// ArrivalSchedule::open and inspect_trace: a `dimctl record` trace turned into per-queue arrival
// intervals (sim/include/dimctl/sim/trace_source.h).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "arrival_schedule.h"
#include "dimctl/sim/trace_source.h"
#include "dimctl/trace/trace_reader.h"

namespace dimctl::sim {

namespace {

struct Intervals {
  std::vector<std::vector<ArrivalSchedule::Interval>> per_queue;
  TraceInfo info;
};

Result<Intervals> read_intervals(const std::string& path, const std::string& device) {
  auto reader = trace::TraceReader::open(path);
  if (!reader) return fail(std::move(reader).error());
  // Per key: the trace queue index, and the last counter value and time seen.
  struct Track {
    size_t index;
    uint64_t last;
    int64_t last_ns;
  };
  std::map<uint64_t, Track> net, cq;
  std::vector<std::pair<bool, uint64_t>> order;  // (is_cq, key) in the order queues are numbered
  std::vector<std::vector<ArrivalSchedule::Interval>> raw;
  std::set<std::string> seen;
  std::optional<int64_t> t0;
  int64_t t_last = 0, prev_frame_ns = 0;
  uint64_t frames = 0, arrivals = 0;
  Intervals out;
  out.info.interval_ns = reader->header().interval_ns;
  auto account = [&](std::map<uint64_t, Track>& tracks, uint64_t key, uint64_t value, int64_t now,
                     bool is_cq, std::string name) {
    auto it = tracks.find(key);
    if (it == tracks.end()) {
      // The first frame is the baseline. A queue that appears later was first seen by the
      // collector in the meantime (the BPF side counts a NAPI from its first poll): what it
      // holds arrived since the previous frame, as `dimctl trace show` counts it.
      it = tracks.emplace(key, Track{raw.size(), 0, prev_frame_ns}).first;
      order.emplace_back(is_cq, key);
      raw.emplace_back();
      out.info.names.push_back(std::move(name));
      if (frames == 1) {
        it->second.last = value;
        it->second.last_ns = now;
        return;
      }
    }
    Track& tr = it->second;
    // A counter that went backwards was reset: what it holds now happened since.
    const uint64_t delta = value >= tr.last ? value - tr.last : value;
    if (delta > 0 && now > tr.last_ns) {
      raw[tr.index].push_back({tr.last_ns - *t0, now - *t0, delta});
      arrivals += delta;
    }
    tr.last = value;
    tr.last_ns = now;
  };
  for (;;) {
    auto frame = reader->next();
    if (!frame) return fail(std::move(frame).error());
    if (!*frame) break;
    const seam::Snapshot& s = **frame;
    if (!t0) t0 = s.time_ns;
    prev_frame_ns = frames == 0 ? s.time_ns : t_last;
    t_last = s.time_ns;
    ++frames;
    for (const seam::QueueCounters& q : s.queues) {
      const std::string& dev = q.device_ix < s.devices.size() ? s.device_of(q) : std::string();
      seen.insert(dev);
      if (!device.empty() && dev != device) continue;
      account(net, seam::packed(q.key), q.packets, s.time_ns, false,
              fmt::format("{} queue {} (napi {})", dev, q.queue, q.key.napi_id));
    }
    for (const seam::CqCounters& c : s.cqs) {
      seen.insert(c.ibdev);
      if (!device.empty() && c.ibdev != device) continue;
      account(cq, seam::packed(c.key), c.completions, s.time_ns, true,
              fmt::format("{} cq {}", c.ibdev, c.key.cq_id));
    }
  }
  if (frames < 2) {
    return DIMCTL_FAIL(0, "trace {}: {} frame(s); a replay needs at least two", path, frames);
  }
  if (raw.empty()) {
    std::string names;
    for (const std::string& n : seen) names += (names.empty() ? "" : ", ") + n;
    return DIMCTL_FAIL(0, "trace {}: no queue of device '{}' (devices in the trace: {})", path,
                       device, names.empty() ? "none" : names);
  }
  // Net queues first, then CQs, each in key order: a stable numbering whatever came first.
  std::vector<size_t> perm(order.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return order[a] < order[b]; });
  for (size_t i : perm) {
    out.per_queue.push_back(std::move(raw[i]));
  }
  std::vector<std::string> names;
  for (size_t i : perm) names.push_back(out.info.names[i]);
  out.info.names = std::move(names);
  out.info.queues = static_cast<uint32_t>(out.per_queue.size());
  out.info.duration_ns = t_last - *t0;
  out.info.arrivals = arrivals;
  out.info.warning = reader->warning();
  return out;
}

}  // namespace

Result<TraceInfo> inspect_trace(const std::string& path, const std::string& device) {
  auto r = read_intervals(path, device);
  if (!r) return fail(std::move(r).error());
  return std::move(r->info);
}

Result<std::unique_ptr<ArrivalSchedule>> ArrivalSchedule::open(const SourceSpec& spec,
                                                               uint32_t queues, uint64_t seed) {
  auto r = read_intervals(spec.trace_path, spec.trace_device);
  if (!r) return fail(std::move(r).error());
  if (r->per_queue.size() > queues) r->per_queue.resize(queues);
  return std::make_unique<ArrivalSchedule>(std::move(r->per_queue), seed);
}

}  // namespace dimctl::sim
