// Method napi: a device's NAPIs written one by one with netdev napi-set (software moderation:
// gro-flush-timeout, defer-hard-irqs). The same contract as the ethtool path (net_write.cc):
// gate, rate limit, original recorded durably before the first write, read-back. The netdev
// family sends no notifications, so drift is found by reading back (check_napis()), and NAPIs
// that are gone (veth GRO off, link down, netns deleted) are found the same way.
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

namespace {

model::SoftwareProfile software_profile(const model::DevicePolicy& policy,
                                        const dim::NetProfiles& profiles, uint8_t ix) {
  const size_t i = std::min<size_t>(ix, profiles.size() - 1);
  if (policy.software_profiles) return (*policy.software_profiles)[i];
  return model::default_software_profile(profiles[i]);
}

// The two fields method napi writes (irq-suspend-timeout is left to the operator).
model::NapiConfig written_fields(const model::NapiConfig& c) {
  return {c.defer_hard_irqs, c.gro_flush_timeout_ns, std::nullopt};
}

model::NapiConfig request(const model::SoftwareProfile& p) {
  return {p.defer_hard_irqs, p.gro_flush_timeout_ns, std::nullopt};
}

}  // namespace

void Controller::resolve_method(NetDevice& dev) {
  switch (dev.policy.method) {
    case model::Method::kEthtool:
      dev.napi = false;
      break;
    case model::Method::kNapi:
      dev.napi = true;
      if (!napi_available_ && may_write(dev)) {
        set_error(dev, napi_ == nullptr ? std::string("method napi: no netdev netlink; not written")
                                        : fmt::format("method napi: {}; not written",
                                                      napi_->available().error().message()));
      }
      break;
    case model::Method::kAuto:
      dev.napi = !dev.ethtool_coalescing && napi_available_;
      break;
  }
  dev.per_queue = dev.napi || dev.ethtool_per_queue;
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
      dev.policy.method == model::Method::kAuto
          ? "method auto found no per-NAPI software moderation here (netdev napi-set, Linux >= "
            "6.13)"
          : "a rule with method napi or auto moderates its NAPIs in software (Linux >= 6.13)");
}

Controller::NapiRecord& Controller::napi_record(const model::QueueKey& key, const NetDevice& dev) {
  auto [it, fresh] = napis_.try_emplace(key.napi_id);
  NapiRecord& rec = it->second;
  // A recorded NAPI keeps the name its original is stored under until the rename is followed
  // (move_records(), which moves the store's record too): forgetting it under the new name
  // would leave the stored one behind.
  if (!rec.original && rec.device != dev.name) rec.device = dev.name;
  rec.ifindex = key.ifindex;
  if (fresh && napi_available_) {
    // What it holds now, for the view (observe and shadow too); the periodic check refreshes it.
    if (auto cur = napi_->get(key.napi_id)) rec.current = cur->config;
  }
  return rec;
}

Controller::WriteResult Controller::write_napi(const model::QueueKey& key, NetDevice& dev,
                                               uint8_t ix, int64_t now_ns) {
  NapiRecord& rec = napi_record(key, dev);
  const uint32_t id = key.napi_id;
  if (!may_write(dev) || !napi_available_) return WriteResult::kRefused;
  // Gone (link down, GRO off): not written until a read-back finds it again, at most once per
  // inventory interval, so a NAPI that never comes back costs no failed write per period.
  if (rec.gone_since_ns &&
      (now_ns - rec.checked_ns < options_.inventory_interval_ns || !check_napi(id, rec, now_ns))) {
    return WriteResult::kRefused;
  }
  const model::SoftwareProfile want = software_profile(dev.policy, dev.profiles, ix);
  // Before a write after a quiet period: someone may have changed the NAPI since.
  if (rec.target && rec.target != want &&
      now_ns - rec.checked_ns >= options_.inventory_interval_ns) {
    if (!check_napi(id, rec, now_ns) || !may_write(dev)) return WriteResult::kRefused;
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
    auto cur = napi_->get(id);
    if (!cur) {
      ++dev.applies_failed;
      set_error(dev,
                fmt::format("reading {} before the first write: {}", where, cur.error().message()));
      return WriteResult::kFailed;
    }
    const model::NapiConfig original = written_fields(cur->config);
    if (auto r = originals_.record_napi(dev.name, id, original); !r) {
      ++dev.applies_failed;
      set_error(dev, fmt::format("not writing {}: recording its original settings failed: {}",
                                 where, r.error().message()));
      return WriteResult::kFailed;
    }
    rec.original = original;
    rec.current = cur->config;
  }
  auto readback = napi_->set(id, request(want));
  if (!readback) {
    ++dev.applies_failed;
    set_error(dev, fmt::format("writing {}: {}", where, readback.error().message()));
    return WriteResult::kFailed;
  }
  ++dev.applies_ok;
  rec.current = readback->config;
  rec.applied = readback->config;
  rec.target = want;
  rec.checked_ns = now_ns;
  if (!dev.drifted) set_error(dev, "");
  return WriteResult::kWritten;
}

// Reads one NAPI back. False when it is gone or unreadable; a value we did not write is drift on
// its device. A gone NAPI's record is kept for forget_gone_ns (it may come back with its id:
// link down/up on drivers with per-NAPI config), then forgotten here and in the OriginalsStore;
// one replaced by a NAPI with a new id (veth GRO off/on) is simply never seen again.
bool Controller::check_napi(uint32_t id, NapiRecord& rec, int64_t now_ns) {
  rec.checked_ns = now_ns;
  auto cur = napi_->get(id);
  if (!cur) {
    if (cur.error().code() != ENOENT) return false;
    const std::string name = rec.device;
    if (!rec.original) {
      napis_.erase(id);  // never written: nothing to keep
      return false;
    }
    if (!rec.gone_since_ns) {
      rec.gone_since_ns = now_ns;
      spdlog::info("{} napi {}: gone; its record is kept in case it comes back with its id", name,
                   id);
      return false;
    }
    if (now_ns - *rec.gone_since_ns < options_.forget_gone_ns) return false;
    if (auto f = originals_.forget_napi(name, id); !f) {
      spdlog::warn("{} napi {}: gone, but its recorded original could not be forgotten: {}", name,
                   id, f.error().message());
      return false;
    }
    spdlog::info("{} napi {}: gone for good; its recorded original is forgotten", name, id);
    napis_.erase(id);
    return false;
  }
  rec.current = cur->config;
  const model::NapiConfig now = written_fields(cur->config);
  if (rec.gone_since_ns) {
    rec.gone_since_ns.reset();
    if (rec.applied && now != written_fields(*rec.applied)) {
      // Back with its id but not with our settings: the driver re-created it from its defaults,
      // which is not another writer. Written again with the next wish; the original stays.
      spdlog::info("{} napi {}: back without dimctl's settings; written again", rec.device, id);
      rec.applied.reset();
      rec.target.reset();
      return true;
    }
    spdlog::info("{} napi {}: back with its settings", rec.device, id);
  }
  if (!rec.applied) return true;
  if (now == written_fields(*rec.applied)) return true;
  auto it = net_devices_.find(rec.device);
  if (it != net_devices_.end()) napi_drift(*it->second, id);
  rec.applied = cur->config;  // the next check counts the next change, not this one again
  return true;
}

void Controller::napi_drift(NetDevice& dev, uint32_t id) {
  ++dev.drift_total;
  if (dev.drifted) return;
  dev.drifted = true;
  drifted_.insert(dev.name);
  spdlog::warn(
      "{}: napi {}: software moderation changed by someone else; dimctl stops writing this "
      "device (DIM keeps running in shadow)",
      dev.name, id);
  set_error(dev,
            fmt::format("drift: napi {} settings changed by another writer; writes stopped", id));
}

// Every known NAPI read back, at most once per inventory interval: drift on what we wrote, and
// NAPIs that are gone. The only way to see either: the netdev family has no notifications.
void Controller::check_napis(int64_t now_ns) {
  last_napi_check_ns_ = now_ns;
  if (!napi_available_) return;
  for (auto it = napis_.begin(); it != napis_.end();) {
    const uint32_t id = it->first;
    NapiRecord& rec = it->second;
    ++it;  // check_napi() may erase rec
    check_napi(id, rec, now_ns);
  }
}

void Controller::fill_napi_view(model::QueueView& v, const QueueSlot& slot) const {
  const NetDevice& dev = *slot.dev;
  if (slot.wanted_ix()) {
    v.wanted_software = software_profile(dev.policy, dev.profiles, slot.applied_ix);
  } else {
    v.wanted_software.reset();
  }
  auto it = napis_.find(slot.key.napi_id);
  if (it != napis_.end() && it->second.current) {
    v.napi_config = it->second.current;
  } else {
    v.napi_config.reset();
  }
}

bool Controller::has_napi_originals(const std::string& name) const {
  for (const auto& [id, rec] : napis_) {
    if (rec.original && rec.device == name) return true;
  }
  return false;
}

// Part of release_net(): the device's NAPIs get their originals back. A NAPI that is gone is
// skipped with a note (nothing is left to put back) and its record forgotten. Records of the
// ones put back are forgotten by forget_napis() once the whole device is released.
Result<void> Controller::release_napis(const std::string& name, size_t& failures) {
  std::optional<Error> first;
  for (auto it = napis_.begin(); it != napis_.end();) {
    const uint32_t id = it->first;
    NapiRecord& rec = it->second;
    ++it;
    if (rec.device != name || !rec.original) continue;
    if (napi_ == nullptr) {
      ++failures;
      if (!first) {
        first = DIMCTL_ERR(0, "restoring {} napi {}: no netdev netlink", name, id);
      }
      continue;
    }
    auto r = napi_->set(id, *rec.original);
    if (!r && r.error().code() == ENOENT) {
      spdlog::info("{} napi {}: no longer exists; nothing to put back", name, id);
      if (auto f = originals_.forget_napi(name, id); !f) {
        ++failures;
        if (!first) first = std::move(f).error();
        continue;
      }
      napis_.erase(id);
      continue;
    }
    if (!r) {
      ++failures;
      if (!first) first = std::move(r).error().wrap(fmt::format("restoring {} napi {}", name, id));
      continue;
    }
    rec.current = r->config;
    rec.applied.reset();
    rec.target.reset();
  }
  if (first) return fail(std::move(*first));
  return ok();
}

// The device's NAPI records are dropped, here and in the OriginalsStore (after they were put
// back, or when the device is gone or someone else owns it now). The next write records afresh.
Result<void> Controller::forget_napis(const std::string& name) {
  for (auto& [id, rec] : napis_) {
    if (rec.device != name || !rec.original) continue;
    if (auto f = originals_.forget_napi(name, id); !f) {
      return fail(std::move(f).error().wrap(fmt::format("forgetting {} napi {}", name, id)));
    }
    rec.original.reset();
    rec.applied.reset();
    rec.target.reset();
  }
  return ok();
}

}  // namespace dimctl::controller
