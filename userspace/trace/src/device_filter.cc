#include "dimctl/trace/device_filter.h"

#include "dimctl/common/glob.h"

namespace dimctl::trace {

void keep_devices(const seam::Snapshot& in, const std::vector<std::string>& globs,
                  seam::Snapshot& out) {
  out.time_ns = in.time_ns;
  // New index of each device of `in`, or -1 when it is not kept.
  std::vector<int64_t> remap(in.devices.size(), -1);
  size_t kept = 0;
  for (size_t i = 0; i < in.devices.size(); ++i) {
    if (!matches_any_glob(globs, in.devices[i])) continue;
    if (kept < out.devices.size()) {
      out.devices[kept] = in.devices[i];
    } else {
      out.devices.push_back(in.devices[i]);
    }
    remap[i] = static_cast<int64_t>(kept++);
  }
  out.devices.resize(kept);
  out.queues.clear();
  for (const auto& q : in.queues) {
    if (q.device_ix >= remap.size() || remap[q.device_ix] < 0) continue;
    out.queues.push_back(q);
    out.queues.back().device_ix = static_cast<uint32_t>(remap[q.device_ix]);
  }
  out.cqs.clear();
  for (const auto& c : in.cqs) {
    if (matches_any_glob(globs, c.ibdev)) out.cqs.push_back(c);
  }
  // A CPU's times are the whole CPU's, whichever device made them: the cost estimate of a kept
  // queue's core needs all of it (its other work is the background), and the IRQ list is what
  // maps a kept queue's irq to its handler time.
  out.cpus = in.cpus;
  out.irqs = in.irqs;
}

}  // namespace dimctl::trace
