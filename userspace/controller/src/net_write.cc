// The write path of a net device or queue (gate, original recorded, write, read-back), and the
// drift check on the coalesce notifications against what it wrote.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dimctl/controller/coalesce_mapping.h"
#include "dimctl/controller/controller.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

// Coalesce notifications: keep `current` true to the device, and notice other writers.
void Controller::drain_changes() {
  for (auto& change : io_.net.drain_changes()) {
    auto it = net_devices_.find(change.device);
    if (it == net_devices_.end()) continue;
    NetDevice& dev = *it->second;
    const bool managed = dev.apply.target.has_value() || !dev.queue_applied.empty();
    if (managed) {
      // Ours when it matches a read-back of one of our writes (the NTF carries what a GET
      // after the SET returns) on the fields we manage.
      bool ours = false;
      auto check = [&](const seam::Coalesce& c) {
        ours = ours || agrees(change.values, c, dev.touched);
      };
      if (dev.apply.current) check(*dev.apply.current);
      for (const auto& c : dev.recent) check(c);
      for (const auto& [q, c] : dev.queue_applied) check(c);
      if (!ours) {
        ++dev.drift_total;
        if (!dev.drifted) {
          dev.drifted = true;
          records_.mark_drifted(dev.name);
          spdlog::warn(
              "{}: coalesce settings changed by someone else; dimctl stops writing this device "
              "(DIM keeps running in shadow)",
              dev.name);
          set_error(dev, "drift: coalesce settings changed by another writer; writes stopped");
        }
      }
    }
    if (!dev.per_queue) {
      seam::Coalesce merged = dev.apply.current.value_or(seam::Coalesce{});
      overlay(merged, change.values);
      dev.apply.current = merged;
    }
  }
  for (auto& [name, dev] : net_devices_) dev->recent.clear();
}

bool Controller::may_write(const NetDevice& dev) const {
  return !writes_disabled_ && dev.policy.mode == seam::Mode::kEnforce && allowlisted(dev.policy) &&
         dev.policy.conflict.empty() && !dev.drifted &&
         dev.policy.algorithm != seam::Algorithm::kOff &&
         dev.policy.algorithm != seam::Algorithm::kRdma;
}

// The write path of one target. Order matters: gate, read fields, adaptive check, unchanged
// check, rate limit, record the original (durably) and only then write, then read back.
Controller::WriteResult Controller::write_net(NetDevice& dev, Apply& apply,
                                              std::optional<uint32_t> queue,
                                              const dim::Profile& profile, int64_t now_ns) {
  const bool cqe = cqe_table(dev.policy, dev.found_cqe_mode);
  const seam::Coalesce* reported_ptr = apply.current                  ? &*apply.current
                                       : (queue && dev.apply.current) ? &*dev.apply.current
                                                                      : nullptr;
  const seam::Coalesce assumed = assumed_reported();
  apply.wanted = net_target(profile, cqe, reported_ptr ? *reported_ptr : assumed, dev.driver);
  if (!may_write(dev)) return WriteResult::kRefused;

  const std::string where = queue ? fmt::format("{} queue {}", dev.name, *queue) : dev.name;
  auto read = [&]() { return queue ? io_.net.get_queue(dev.name, *queue) : io_.net.get(dev.name); };
  // Nothing to write with ethtool (resolve_method said why); asking the driver every period
  // would only count failures.
  if (!dev.ethtool_coalescing) return WriteResult::kRefused;
  if (!apply.current) {
    dev.attempted_this_step = true;
    auto cur = read();
    if (!cur) {
      ++dev.applies_failed;
      set_error(dev, fmt::format("reading {}: {}", where, cur.error().message()));
      return WriteResult::kFailed;
    }
    apply.current = *cur;
    apply.wanted = net_target(profile, cqe, *apply.current, dev.driver);
  }
  if (apply.wanted->empty()) {
    set_error(dev, fmt::format("{} reports neither rx-usecs nor rx-frames: nothing to set", where));
    return WriteResult::kRefused;
  }
  if (apply.current->use_adaptive_rx.value_or(false) && !dev.policy.take_over_adaptive) {
    set_error(dev, fmt::format("{}: the driver's adaptive-rx is on and take_over_adaptive is "
                               "false: left alone",
                               where));
    return WriteResult::kRefused;
  }
  if (cqe && !apply.current->use_cqe_mode_rx && apply.target != apply.wanted) {
    spdlog::debug("{}: no CQE mode reported; CQE-table values applied in the device's mode", where);
  }
  if (apply.target == apply.wanted) return WriteResult::kUnchanged;
  if (dev.last_attempt_ns && dev.policy.rate_limit_ns > 0 &&
      now_ns - *dev.last_attempt_ns < dev.policy.rate_limit_ns) {
    ++dev.applies_rate_limited;
    return WriteResult::kRateLimited;
  }
  dev.attempted_this_step = true;

  // The original, durably, before the first write; a failure to record means no write.
  auto find_original = [&]() { return records_.find(dev.name, queue); };
  Original* original = find_original();
  // Taken from another device that had this name (another ifindex), not yet seen by the last
  // inventory: it follows its device or is forgotten before this one is written.
  if (original != nullptr && original->ifindex != 0 && options_.net_ifindex &&
      options_.net_ifindex(dev.name) != original->ifindex) {
    follow_devices(now_ns);
    original = find_original();
  }
  // Nothing recorded under this name. A device dimctl changed and that was renamed since is not
  // new: its records follow it here, and our own values are never recorded as its original.
  const uint32_t ifindex =
      original == nullptr && options_.net_ifindex ? options_.net_ifindex(dev.name) : 0;
  auto adopted = original == nullptr ? adopt_renamed(dev, ifindex) : Result<bool>(false);
  if (!adopted) {
    ++dev.applies_failed;
    set_error(dev, fmt::format("not writing {}: {}", where, adopted.error().message()));
    return WriteResult::kFailed;
  }
  if (*adopted) {
    if (!may_write(dev)) return WriteResult::kRefused;  // drifted under its old name
    original = find_original();
  }
  if (original == nullptr) {
    auto fresh = read();
    if (!fresh) {
      ++dev.applies_failed;
      set_error(dev, fmt::format("reading {} before the first write: {}", where,
                                 fresh.error().message()));
      return WriteResult::kFailed;
    }
    auto recorded = queue ? io_.originals.record_net_queue(dev.name, *queue, *fresh)
                          : io_.originals.record_net(dev.name, *fresh);
    if (!recorded) {
      ++dev.applies_failed;
      set_error(dev, fmt::format("not writing {}: recording its original settings failed: {}",
                                 where, recorded.error().message()));
      return WriteResult::kFailed;
    }
    Original o;
    o.values = *fresh;
    o.ifindex = ifindex;
    original = &records_.add(dev.name, queue, o);
    apply.current = *fresh;
    apply.wanted = net_target(profile, cqe, *apply.current, dev.driver);
    if (apply.current->use_adaptive_rx.value_or(false) && !dev.policy.take_over_adaptive) {
      return WriteResult::kRefused;  // changed since we last looked; reported next period
    }
  }

  const seam::Coalesce req =
      net_request(*apply.wanted, *apply.current, dev.policy.take_over_adaptive);
  // Marked before the write: a partly applied failed write is still restored.
  mark_fields(original->touched, req);
  mark_fields(dev.touched, req);
  auto readback = queue ? io_.net.set_queue(dev.name, *queue, req) : io_.net.set(dev.name, req);
  if (!readback) {
    ++dev.applies_failed;
    set_error(dev, fmt::format("writing {}: {}", where, readback.error().message()));
    return WriteResult::kFailed;
  }
  ++dev.applies_ok;
  apply.current = *readback;
  apply.target = apply.wanted;
  dev.recent.push_back(*readback);
  if (queue) dev.queue_applied[*queue] = *readback;
  if (!dev.drifted) set_error(dev, "");
  return WriteResult::kWritten;
}

}  // namespace dimctl::controller
