#include "dimctl/trace_costs/host_costs.h"

#include <map>
#include <unordered_map>

#include "dimctl/trace/trace_reader.h"
#include "dimctl/trace_costs/shadow_replay.h"

namespace dimctl::trace_costs {

Result<HostCosts> host_costs(const std::string& path, const std::string& device) {
  auto reader = trace::TraceReader::open(path);
  if (!reader) return fail(std::move(reader).error());
  ShadowReplay replay;
  // Per replayed queue / CQ its last cumulative count; per CPU the completions polled there.
  std::unordered_map<uint64_t, uint64_t> last_queue, last_cq;
  std::map<uint32_t, uint64_t> per_cpu;
  bool cpu_times = false;
  auto account = [&](std::unordered_map<uint64_t, uint64_t>& last, uint64_t key, uint64_t value,
                     uint16_t cpu) {
    auto [it, fresh] = last.try_emplace(key, value);
    // The first sight is the baseline; a counter that went back counts what it holds now.
    const uint64_t delta = fresh ? 0 : value >= it->second ? value - it->second : value;
    it->second = value;
    if (delta > 0 && cpu != seam::QueueCounters::kNoCpu) per_cpu[cpu] += delta;
  };
  for (;;) {
    auto frame = reader->next();
    if (!frame) return fail(std::move(frame).error());
    if (!*frame) break;
    const seam::Snapshot& s = **frame;
    cpu_times |= !s.cpus.empty();
    // A frame the controller refuses is skipped, as the daemon skips a failed sample.
    (void)replay.feed(s);
    for (const seam::QueueCounters& q : s.queues) {
      if (!device.empty() && (q.device_ix >= s.devices.size() || s.device_of(q) != device)) {
        continue;
      }
      account(last_queue, seam::packed(q.key), q.packets, q.cpu);
    }
    for (const seam::CqCounters& c : s.cqs) {
      if (!device.empty() && c.ibdev != device) continue;
      account(last_cq, seam::packed(c.key), c.completions, c.cpu);
    }
  }
  if (!cpu_times) {
    return DIMCTL_FAIL(0,
                       "trace {}: no CPU times (format 1, or recorded with --no-cpu-times): the "
                       "host's costs cannot be measured from it",
                       path);
  }
  const auto state = replay.state();
  HostCosts out;
  double irq = 0, comp = 0;
  for (const auto& [cpu, n] : per_cpu) {
    const seam::CoreView* core = nullptr;
    for (const auto& c : state->cores) {
      if (c.cpu == cpu) core = &c;
    }
    if (core == nullptr || core->confidence == dim::CostConfidence::kDefaults) continue;
    out.cpus.push_back({cpu, n, core->estimate});
    out.completions += n;
    irq += core->estimate.interrupt_ns * static_cast<double>(n);
    comp += core->estimate.completion_ns * static_cast<double>(n);
  }
  if (out.completions == 0) {
    return DIMCTL_FAIL(0,
                       "trace {}: no completion of {} was polled on a CPU whose costs could be "
                       "measured",
                       path, device.empty() ? "its queues" : "device '" + device + "'");
  }
  out.interrupt_ns = irq / static_cast<double>(out.completions);
  out.completion_ns = comp / static_cast<double>(out.completions);
  return out;
}

}  // namespace dimctl::trace_costs
