// Method napi: a device's NAPIs written one by one with netdev napi-set (software moderation:
// gro-flush-timeout, defer-hard-irqs). The same contract as the ethtool path (net_write.cc):
// gate, rate limit, original recorded durably before the first write, read-back. The device's
// side is here; each NAPI's record, write and read-back are NapiWrites' (napi_writes.h), which
// also finds drift and NAPIs that are gone (veth GRO off, link down, netns deleted) by reading
// back: the netdev family sends no notifications.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dimctl/controller/controller.h"
#include "policy_predicates.h"
#include "slots.h"

namespace dimctl::controller {

void Controller::resolve_method(NetDevice& dev) {
  const bool was_napi = dev.napi;
  switch (dev.policy.method) {
    case seam::Method::kEthtool:
      dev.napi = false;
      break;
    case seam::Method::kNapi:
      dev.napi = true;
      if (!napis_.available() && may_write(dev)) set_error(dev, napis_.unavailable_reason());
      break;
    case seam::Method::kAuto:
      dev.napi = !dev.ethtool_coalescing && napis_.available();
      break;
  }
  dev.per_queue = dev.napi || dev.ethtool_per_queue;
  // The model weighs the table the method writes (device_table()): a new method is a new table,
  // and the queues' policies start again from it.
  if (dev.napi != was_napi && runs_net_model(dev.policy)) {
    dev.binding = ++next_binding_;
    dev.shared_tables = {};
    dev.model_table = shared_table(dev, 0);
  }
  // A device with nothing to write it with is an error only where it is to be written; the
  // message goes when the config stops asking (reload) or the method changes.
  const std::string why = no_coalescing_error(dev);
  if (!dev.napi && !dev.ethtool_coalescing && may_write(dev)) {
    set_error(dev, why);
  } else if (dev.last_error == why) {
    set_error(dev, "");
  }
}

std::string Controller::no_coalescing_error(const NetDevice& dev) const {
  return fmt::format(
      "driver '{}' has no interrupt coalescing ({}): not written; {}", dev.driver,
      dev.no_coalescing,
      dev.policy.method == seam::Method::kAuto
          ? "method auto found no per-NAPI software moderation here (netdev napi-set, Linux >= "
            "6.13)"
          : "a rule with method napi or auto moderates its NAPIs in software (Linux >= 6.13)");
}

Controller::WriteResult Controller::write_napi(const seam::QueueKey& key, NetDevice& dev,
                                               uint8_t ix, int64_t now_ns) {
  NapiRecord& rec = napis_.record(key, dev.name);
  const uint32_t id = key.napi_id;
  if (!may_write(dev) || !napis_.available()) return WriteResult::kRefused;
  // Gone (link down, GRO off): not written until a read-back finds it again, at most once per
  // inventory interval, so a NAPI that never comes back costs no failed write per period.
  if (rec.gone_since_ns && (now_ns - rec.checked_ns < options_.inventory_interval_ns ||
                            !napis_.check(id, rec, now_ns))) {
    return WriteResult::kRefused;
  }
  const seam::SoftwareProfile want = seam::software_profile(dev.policy, ix);
  // Before a write after a quiet period: someone may have changed the NAPI since.
  if (rec.target && rec.target != want &&
      now_ns - rec.checked_ns >= options_.inventory_interval_ns) {
    if (!napis_.check(id, rec, now_ns) || !may_write(dev)) return WriteResult::kRefused;
  }
  if (rec.target == want) return WriteResult::kUnchanged;
  if (dev.last_attempt_ns && dev.policy.rate_limit_ns > 0 &&
      now_ns - *dev.last_attempt_ns < dev.policy.rate_limit_ns) {
    ++dev.applies_rate_limited;
    return WriteResult::kRateLimited;
  }
  dev.attempted_this_step = true;
  const std::string where = fmt::format("{} napi {}", dev.name, id);

  // The original, durably, before the first write; a failure to record means no write.
  if (!rec.original) {
    if (auto r = napis_.record_original(dev.name, id, rec, where); !r) {
      ++dev.applies_failed;
      set_error(dev, r.error().message());
      return WriteResult::kFailed;
    }
  }
  if (auto r = napis_.write(id, rec, want, now_ns, where); !r) {
    ++dev.applies_failed;
    set_error(dev, r.error().message());
    return WriteResult::kFailed;
  }
  ++dev.applies_ok;
  if (!dev.drifted) set_error(dev, "");
  return WriteResult::kWritten;
}

void Controller::napi_drift(NetDevice& dev, uint32_t id) {
  ++dev.drift_total;
  if (dev.drifted) return;
  dev.drifted = true;
  records_.mark_drifted(dev.name);
  spdlog::warn(
      "{}: napi {}: software moderation changed by someone else; dimctl stops writing this "
      "device (DIM keeps running in shadow)",
      dev.name, id);
  set_error(dev,
            fmt::format("drift: napi {} settings changed by another writer; writes stopped", id));
}

void Controller::fill_napi_view(seam::QueueView& v, const QueueSlot& slot) const {
  const NetDevice& dev = *slot.dev;
  if (slot.wanted_ix()) {
    v.wanted_software = seam::software_profile(dev.policy, slot.applied_ix);
  } else {
    v.wanted_software.reset();
  }
  v.napi_config = napis_.current(slot.key.napi_id);
}

}  // namespace dimctl::controller
