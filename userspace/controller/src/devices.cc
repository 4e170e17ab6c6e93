// Devices: created when a snapshot or the inventory first names them, their policy (re)read and
// the cost-model tables it needs, retired when nothing names them any more.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dim/model_policy.h"
#include "dim/profile.h"
#include "dimctl/controller/controller.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

void Controller::apply_inventory(int64_t now_ns) {
  if (!inventory_.enabled()) return;
  if (inventory_.refresh(now_ns)) follow_devices(now_ns);
  for (const auto& name : inventory_.names()) {
    NetDevice& dev = net_device_named(name);
    dev.listed = true;
    // No queue, no DIM decision; a static profile needs none. Per-queue devices are written
    // per queue index, which only queues give.
    if (!dev.seen && !dev.per_queue) {
      if (const auto ix = static_wish(dev.policy)) dev.combiner.add(seam::QueueKey{}, *ix, 0);
    }
  }
}

Controller::NetDevice& Controller::net_device_named(const std::string& name) {
  auto it = net_devices_.find(name);
  if (it != net_devices_.end()) return *it->second;
  auto dev = std::make_unique<NetDevice>();
  dev->name = name;
  if (options_.net_driver) dev->driver = options_.net_driver(name);
  dev->drifted = records_.drifted(name);
  dev->ethtool_per_queue = io_.net.supports_per_queue(name);
  // Read what the device holds now: observe mode exports it, writes need its field set, and the
  // policy's table follows its CQE mode (model).
  auto current = io_.net.get(name);
  if (current) {
    dev->apply.current = *current;
    dev->found_cqe_mode = current->use_cqe_mode_rx.value_or(false);
    dev->ethtool_coalescing = current->rx_usecs.has_value() || current->rx_max_frames.has_value();
    if (!dev->ethtool_coalescing)
      dev->no_coalescing = "ethtool reports neither rx-usecs nor rx-frames";
  } else if (current.error().code() == EOPNOTSUPP || current.error().code() == EINVAL) {
    // No coalescing in the driver (method auto then writes its NAPIs). Not an error: most
    // virtual devices have none, and a daemon that only watches them has nothing to report.
    dev->ethtool_coalescing = false;
    dev->no_coalescing = current.error().message();
  }
  refresh_policy(*dev);
  // Any other failure says nothing about the driver: auto stays with ethtool, and it is an
  // error (the device's settings are unknown).
  resolve_method(*dev);
  if (!current && dev->ethtool_coalescing && !dev->napi) {
    set_error(*dev, fmt::format("reading coalesce settings: {}", current.error().message()));
  }
  spdlog::info("{}: new net device (driver '{}', rule '{}', {}{}{})", dev->name, dev->driver,
               dev->policy.rule,
               dev->napi                  ? "software moderation per NAPI"
               : !dev->ethtool_coalescing ? "no interrupt coalescing"
               : dev->per_queue           ? "per-queue coalescing"
                                          : "device-wide",
               dev->found_cqe_mode ? ", in CQE mode" : "",
               dev->drifted ? ", drifted earlier: not written" : "");
  NetDevice& ref = *dev;
  net_devices_.emplace(name, std::move(dev));
  return ref;
}

Controller::RdmaDevice& Controller::rdma_device_for(const std::string& name) {
  auto it = rdma_devices_.find(name);
  if (it != rdma_devices_.end()) return *it->second;
  auto dev = std::make_unique<RdmaDevice>();
  dev->name = name;
  dev->drifted = records_.drifted("rdma:" + name);
  refresh_policy(*dev);
  RdmaDevice& ref = *dev;
  rdma_devices_.emplace(name, std::move(dev));
  return ref;
}

void Controller::refresh_policy(NetDevice& dev) {
  seam::DeviceInfo info;
  info.kind = seam::DeviceKind::kNet;
  info.name = dev.name;
  info.driver = dev.driver;
  seam::DevicePolicy p = io_.policy.policy_for(info);
  const seam::DevicePolicy& old = dev.policy;
  // The model's table holds the bounds (it picks within them), so they re-create it too.
  const bool model_changed =
      runs_net_model(p) != runs_net_model(old) || p.model != old.model ||
      (runs_net_model(p) && (p.min_profile != old.min_profile || p.max_profile != old.max_profile ||
                             p.software_profiles != old.software_profiles));
  if (dev.binding == 0 || runs_net_dim(p) != runs_net_dim(old) || p.algorithm != old.algorithm ||
      p.rx_profiles != old.rx_profiles || p.mode != old.mode || p.compare != old.compare ||
      model_changed) {
    dev.binding = ++next_binding_;
  }
  dev.policy = std::move(p);
  const bool cqe = cqe_table(dev.policy, dev.found_cqe_mode);
  dev.profiles = dev.policy.rx_profiles
                     ? *dev.policy.rx_profiles
                     : dim::net_profiles(cqe ? dim::CqPeriodMode::kCqe : dim::CqPeriodMode::kEqe,
                                         dim::Direction::kRx);
  dev.shared_tables = {};
  dev.model_table = runs_net_model(dev.policy) ? shared_table(dev, 0) : nullptr;
  if (!dev.policy.conflict.empty()) {
    set_error(dev, "refused, conflicting rules: " + dev.policy.conflict);
  } else if (dev.policy.algorithm == seam::Algorithm::kRdma) {
    set_error(dev, "algorithm rdma applies to RDMA devices only; no DIM on this net device");
  }
}

void Controller::refresh_policy(RdmaDevice& dev) {
  seam::DeviceInfo info;
  info.kind = seam::DeviceKind::kRdma;
  info.name = dev.name;
  if (options_.rdma_driver) info.driver = options_.rdma_driver(dev.name);
  seam::DevicePolicy p = io_.policy.policy_for(info);
  const seam::DevicePolicy& old = dev.policy;
  if (runs_rdma_dim(p) != runs_rdma_dim(old) || runs_rdma_model(p) != runs_rdma_model(old) ||
      p.algorithm != old.algorithm || p.mode != old.mode || p.compare != old.compare ||
      p.model != old.model ||
      (runs_rdma_model(p) &&
       (p.min_profile != old.min_profile || p.max_profile != old.max_profile))) {
    ++dev.generation;
  }
  dev.policy = std::move(p);
  dev.shared_tables = {};
  dev.model_table = runs_rdma_model(dev.policy) ? shared_table(dev, 0) : nullptr;
  if (!dev.policy.conflict.empty()) {
    set_error(dev, "refused, conflicting rules: " + dev.policy.conflict);
  }
}

void Controller::reload_policies() {
  model_tables_.clear();
  for (auto& [name, dev] : net_devices_) {
    refresh_policy(*dev);
    resolve_method(*dev);
  }
  for (auto& [name, dev] : rdma_devices_) refresh_policy(*dev);
  if (writes_disabled_) return;
  // A device the new config no longer lets us write (left enforce, lost its rule, conflicts, off)
  // is handed back now, not at exit. A device that is gone is restored at exit (restore_all).
  for (const std::string& name : net_names_with_originals()) {
    auto it = net_devices_.find(name);
    if (it == net_devices_.end() || it->second->drifted) continue;
    // A device whose method changed is handed back too: what the old method wrote is put back,
    // and the new one records afresh before its first write.
    const NetDevice& d = *it->second;
    const bool ethtool_records = records_.has_net(name);
    const bool method_changed = d.napi ? ethtool_records : napis_.has_originals(name);
    if (may_write(d) && !method_changed) continue;
    if (auto r = release_net(name); r) {
      spdlog::info("{}: no longer enforced by the config: original coalesce settings restored",
                   name);
    } else {
      set_error(*it->second, fmt::format("reload: {}", r.error().message()));
    }
  }
  for (const std::string& name : rdma_names_with_originals()) {
    auto it = rdma_devices_.find(name);
    if (it == rdma_devices_.end() || it->second->drifted || may_write(*it->second)) continue;
    if (auto r = release_rdma(name); r) {
      spdlog::info("{}: no longer enforced by the config: RDMA DIM switch restored", name);
    } else {
      set_error(*it->second, fmt::format("reload: {}", r.error().message()));
    }
  }
}

void Controller::set_error(NetDevice& dev, std::string msg) {
  if (msg == dev.last_error) return;
  if (!msg.empty()) spdlog::warn("{}: {}", dev.name, msg);
  dev.last_error = std::move(msg);
}

void Controller::set_error(RdmaDevice& dev, std::string msg) {
  if (msg == dev.last_error) return;
  if (!msg.empty()) spdlog::warn("{}: {}", dev.name, msg);
  dev.last_error = std::move(msg);
}

void Controller::retire_devices() {
  for (auto it = net_devices_.begin(); it != net_devices_.end();) {
    if (it->second->seen || it->second->listed) {
      ++it;
    } else {
      spdlog::info("{}: net device gone", it->first);
      it = net_devices_.erase(it);
    }
  }
  for (auto it = rdma_devices_.begin(); it != rdma_devices_.end();) {
    if (it->second->listed || it->second->has_cqs) {
      ++it;
    } else {
      it = rdma_devices_.erase(it);
    }
  }
}

}  // namespace dimctl::controller
