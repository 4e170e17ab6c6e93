// The originals this controller recorded before its first writes: they follow a renamed device
// (by ifindex), are forgotten with a device that is gone, and are handed back (written back and
// forgotten) when the config no longer lets dimctl write a device.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dimctl/controller/coalesce_mapping.h"
#include "dimctl/controller/controller.h"
#include "slots.h"

namespace dimctl::controller {

// Snapshots of the keys: release_*() erases from the maps these are taken from.
std::vector<std::string> Controller::net_names_with_originals() const {
  std::vector<std::string> names = records_.net_names();
  napis_.add_names_with_originals(names);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

uint32_t Controller::recorded_ifindex(const std::string& name) const {
  if (const uint32_t ifindex = records_.recorded_ifindex(name); ifindex != 0) return ifindex;
  return napis_.recorded_ifindex(name);
}

// Devices were renamed: what we recorded moves to their new names, the OriginalsStore first
// (durably, all at once: a swap of two names loses nothing), then our own copies. Drift goes with
// the device. A NetDevice left under an old name holds nothing of ours any more; it is retired
// once neither the inventory nor the snapshot names it.
Result<void> Controller::move_records(
    const std::vector<std::pair<std::string, std::string>>& renames) {
  if (auto r = io_.originals.rename_net(renames); !r) return r;
  for (const auto& [from, to] : renames) {
    if (auto it = net_devices_.find(from); it != net_devices_.end()) {
      NetDevice& old = *it->second;
      old.apply.target.reset();
      old.queue_applied.clear();
      old.touched = {};
      for (auto& slot : queues_.slots) {
        if (slot.dev == &old) slot.apply.reset();
      }
    }
  }
  const std::set<std::string> drifted = records_.move(renames);
  // NAPI records: all pairs at once, like the store (a swap of two names).
  const std::map<std::string, std::string> to_of(renames.begin(), renames.end());
  napis_.rename(to_of);
  for (const std::string& to : drifted) {
    if (auto it = net_devices_.find(to); it != net_devices_.end() && !it->second->drifted) {
      it->second->drifted = true;
      set_error(*it->second,
                "drift: coalesce settings changed by another writer (under an "
                "earlier name); writes stopped");
    }
  }
  return ok();
}

// Records follow their devices (by ifindex). A record whose name now names another device, or
// none, while its device lives on under another name, moves to that name; one renamed to a name
// dimctl may not write is handed back at once, as a reload hands back a device that lost its
// rule. The records of a device that is gone are forgotten at once when another device has taken
// the name, after forget_gone_ns otherwise (it may come back): a device re-created under the
// name is a new one, and is recorded afresh.
void Controller::follow_devices(int64_t now_ns) {
  if (!options_.net_ifindex || !options_.net_name) return;
  std::vector<std::pair<std::string, std::string>> renames;
  std::vector<std::string> gone;
  for (const std::string& name : net_names_with_originals()) {
    const uint32_t ifindex = recorded_ifindex(name);
    if (ifindex == 0) continue;
    const uint32_t named = options_.net_ifindex(name);
    if (named == ifindex) {
      records_.present(name);
      continue;
    }
    std::string now = options_.net_name(ifindex);
    if (!now.empty()) {
      records_.present(name);
      renames.emplace_back(name, std::move(now));
      continue;
    }
    const int64_t since = records_.gone_since(name, now_ns);
    if (named != 0 || now_ns - since >= options_.forget_gone_ns) gone.push_back(name);
  }
  for (const std::string& name : gone) drop_records(name);
  if (renames.empty()) return;
  if (auto r = move_records(renames); !r) {
    spdlog::warn("renamed devices: their recorded originals could not follow: {}",
                 r.error().message());
    return;
  }
  for (const auto& [from, to] : renames) {
    spdlog::info("{}: renamed to {}; its recorded originals follow it", from, to);
    if (writes_disabled_) continue;  // restore() puts it back right after
    NetDevice& dev = net_device_named(to);
    if (dev.drifted || may_write(dev)) continue;
    if (auto r = release_net(to); r) {
      spdlog::info(
          "{}: renamed to a name dimctl may not write: original coalesce settings "
          "restored",
          to);
    } else {
      set_error(
          dev, fmt::format("handing back after the rename from {}: {}", from, r.error().message()));
    }
  }
}

// The device these records were taken from is gone: nothing is left to restore. A device now of
// that name is not the one we wrote (it is recorded afresh before its first write).
void Controller::drop_records(const std::string& name) {
  if (auto f = io_.originals.forget_net(name); !f) {
    spdlog::warn("{}: gone, but its recorded originals could not be forgotten: {}", name,
                 f.error().message());
    return;
  }
  if (auto f = napis_.forget(name); !f) {
    spdlog::warn("{}: gone, but its recorded NAPI originals could not be forgotten: {}", name,
                 f.error().message());
    return;
  }
  spdlog::info("{}: gone; its recorded originals are forgotten", name);
  records_.forget_net(name);
  records_.present(name);
  if (auto it = net_devices_.find(name); it != net_devices_.end()) {
    NetDevice& stale = *it->second;
    stale.apply.target.reset();
    stale.queue_applied.clear();
    stale.touched = {};
    for (auto& slot : queues_.slots) {
      if (slot.dev == &stale) slot.apply.reset();
    }
  }
}

// Before the first write under dev's name: when its ifindex is one we recorded under another
// name, the device was renamed, and those records follow it here.
Result<bool> Controller::adopt_renamed(NetDevice& dev, uint32_t ifindex) {
  if (ifindex == 0) return false;
  for (const std::string& name : net_names_with_originals()) {
    if (name == dev.name || recorded_ifindex(name) != ifindex) continue;
    if (auto r = move_records({{name, dev.name}}); !r) {
      return fail(std::move(r).error().wrap(
          fmt::format("renamed from {}, whose recorded originals could not follow", name)));
    }
    spdlog::info("{}: renamed to {}; its recorded originals follow it", name, dev.name);
    return true;
  }
  return false;
}

std::vector<std::string> Controller::rdma_names_with_originals() const {
  return records_.rdma_names();
}

// Writes back what we touched (device-wide, then per queue), then drops the records, here and in
// the OriginalsStore. On any failure every record stays: exit and `dimctl restore` retry.
Result<void> Controller::release_net(const std::string& name) {
  std::optional<Error> first;
  size_t failures = 0;
  if (const Original* o = records_.find(name, std::nullopt); o != nullptr) {
    const seam::Coalesce req = only_fields(o->values, o->touched);
    if (!req.empty()) {
      auto r = io_.net.set(name, req);
      if (!r) {
        ++failures;
        first = std::move(r).error().wrap(fmt::format("restoring {}", name));
      } else if (auto dev = net_devices_.find(name); dev != net_devices_.end()) {
        dev->second->apply.current = *r;
        dev->second->recent.push_back(*r);  // our own write, not drift
      }
    }
  }
  records_.for_each_queue(name, [&](uint32_t queue, const Original& o) {
    const seam::Coalesce req = only_fields(o.values, o.touched);
    if (req.empty()) return;
    auto r = io_.net.set_queue(name, queue, req);
    if (!r) {
      ++failures;
      if (!first) {
        first = std::move(r).error().wrap(fmt::format("restoring {} queue {}", name, queue));
      }
    } else if (auto dev = net_devices_.find(name); dev != net_devices_.end()) {
      dev->second->recent.push_back(*r);
    }
  });
  if (auto r = napis_.release(name, failures); !r && !first) first = std::move(r).error();
  if (first) {
    return failures > 1 ? fail(std::move(*first).wrap(fmt::format("{} writes failed", failures)))
                        : fail(std::move(*first));
  }
  if (auto f = io_.originals.forget_net(name); !f) {
    return fail(std::move(f).error().wrap(fmt::format("restored {}, but", name)));
  }
  if (auto f = napis_.forget(name); !f) {
    return fail(std::move(f).error().wrap(fmt::format("restored {}, but", name)));
  }
  records_.forget_net(name);
  if (auto dev = net_devices_.find(name); dev != net_devices_.end()) {
    NetDevice& d = *dev->second;
    d.apply.target.reset();
    d.queue_applied.clear();
    d.touched = {};
    for (auto& slot : queues_.slots) {
      if (slot.dev == &d) slot.apply.reset();
    }
  }
  return ok();
}

Result<void> Controller::release_rdma(const std::string& name) {
  const std::optional<bool> original = records_.rdma(name);
  if (!original) return ok();
  if (io_.rdma == nullptr) return DIMCTL_FAIL(0, "restoring RDMA DIM of {}: no RDMA netlink", name);
  auto r = io_.rdma->set_dim(name, *original);
  if (!r) return fail(std::move(r).error().wrap(fmt::format("restoring RDMA DIM of {}", name)));
  if (auto f = io_.originals.forget_rdma(name); !f) {
    return fail(std::move(f).error().wrap(fmt::format("restored RDMA DIM of {}, but", name)));
  }
  records_.forget_rdma(name);
  if (auto dev = rdma_devices_.find(name); dev != rdma_devices_.end()) {
    dev->second->dim_enabled = *r;
    dev->second->last_set.reset();
  }
  return ok();
}

}  // namespace dimctl::controller
