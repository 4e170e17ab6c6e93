#include "dimctl/controller/napi_writes.h"

#include <cerrno>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace dimctl::controller {

namespace {

// The two fields method napi writes (irq-suspend-timeout is left to the operator).
seam::NapiConfig written_fields(const seam::NapiConfig& c) {
  return {c.defer_hard_irqs, c.gro_flush_timeout_ns, std::nullopt};
}

seam::NapiConfig request(const seam::SoftwareProfile& p) {
  return {p.defer_hard_irqs, p.gro_flush_timeout_ns, std::nullopt};
}

}  // namespace

NapiWrites::NapiWrites(seam::NapiActuator* napi, seam::OriginalsStore& originals,
                       int64_t forget_gone_ns, int64_t check_interval_ns, DriftFn on_drift)
    : napi_(napi),
      available_(napi != nullptr && napi->available().ok()),
      originals_(originals),
      forget_gone_ns_(forget_gone_ns),
      check_interval_ns_(check_interval_ns),
      on_drift_(std::move(on_drift)) {}

std::string NapiWrites::unavailable_reason() const {
  return napi_ == nullptr
             ? std::string("method napi: no netdev netlink; not written")
             : fmt::format("method napi: {}; not written", napi_->available().error().message());
}

NapiRecord& NapiWrites::record(const seam::QueueKey& key, const std::string& device) {
  auto [it, fresh] = records_.try_emplace(key.napi_id);
  NapiRecord& rec = it->second;
  // A recorded NAPI keeps the name its original is stored under until the rename is followed
  // (rename(), after the store's record moved): forgetting it under the new name would leave
  // the stored one behind.
  if (!rec.original && rec.device != device) rec.device = device;
  rec.ifindex = key.ifindex;
  if (fresh && available_) {
    // What it holds now, for the view (observe and shadow too); the periodic check refreshes it.
    if (auto cur = napi_->get(key.napi_id)) rec.current = cur->config;
  }
  return rec;
}

std::optional<seam::NapiConfig> NapiWrites::current(uint32_t napi_id) const {
  auto it = records_.find(napi_id);
  if (it != records_.end() && it->second.current) return it->second.current;
  return std::nullopt;
}

Result<void> NapiWrites::record_original(const std::string& device, uint32_t napi_id,
                                         NapiRecord& rec, const std::string& where) {
  auto cur = napi_->get(napi_id);
  if (!cur) {
    return DIMCTL_FAIL(0, "reading {} before the first write: {}", where, cur.error().message());
  }
  const seam::NapiConfig original = written_fields(cur->config);
  if (auto r = originals_.record_napi(device, napi_id, original); !r) {
    return DIMCTL_FAIL(0, "not writing {}: recording its original settings failed: {}", where,
                       r.error().message());
  }
  rec.original = original;
  rec.current = cur->config;
  return ok();
}

Result<void> NapiWrites::write(uint32_t napi_id, NapiRecord& rec, const seam::SoftwareProfile& want,
                               int64_t now_ns, const std::string& where) {
  auto readback = napi_->set(napi_id, request(want));
  if (!readback) {
    return DIMCTL_FAIL(0, "writing {}: {}", where, readback.error().message());
  }
  rec.current = readback->config;
  rec.applied = readback->config;
  rec.target = want;
  rec.checked_ns = now_ns;
  return ok();
}

bool NapiWrites::check(uint32_t napi_id, NapiRecord& rec, int64_t now_ns) {
  const uint32_t id = napi_id;
  rec.checked_ns = now_ns;
  auto cur = napi_->get(id);
  if (!cur) {
    if (cur.error().code() != ENOENT) return false;
    const std::string name = rec.device;
    if (!rec.original) {
      records_.erase(id);  // never written: nothing to keep
      return false;
    }
    if (!rec.gone_since_ns) {
      rec.gone_since_ns = now_ns;
      spdlog::info("{} napi {}: gone; its record is kept in case it comes back with its id", name,
                   id);
      return false;
    }
    if (now_ns - *rec.gone_since_ns < forget_gone_ns_) return false;
    if (auto f = originals_.forget_napi(name, id); !f) {
      spdlog::warn("{} napi {}: gone, but its recorded original could not be forgotten: {}", name,
                   id, f.error().message());
      return false;
    }
    spdlog::info("{} napi {}: gone for good; its recorded original is forgotten", name, id);
    records_.erase(id);
    return false;
  }
  rec.current = cur->config;
  const seam::NapiConfig now = written_fields(cur->config);
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
  on_drift_(rec.device, id);
  rec.applied = cur->config;  // the next check counts the next change, not this one again
  return true;
}

bool NapiWrites::check_due(int64_t now_ns) const {
  return !records_.empty() && (!last_check_ns_ || now_ns - *last_check_ns_ >= check_interval_ns_);
}

// At most once per check interval: the netdev family has no notifications.
void NapiWrites::check_all(int64_t now_ns) {
  last_check_ns_ = now_ns;
  if (!available_) return;
  for (auto it = records_.begin(); it != records_.end();) {
    const uint32_t id = it->first;
    NapiRecord& rec = it->second;
    ++it;  // check() may erase rec
    check(id, rec, now_ns);
  }
}

void NapiWrites::add_names_with_originals(std::vector<std::string>& names) const {
  for (const auto& [id, rec] : records_) {
    if (rec.original) names.push_back(rec.device);
  }
}

bool NapiWrites::has_originals(const std::string& device) const {
  for (const auto& [id, rec] : records_) {
    if (rec.original && rec.device == device) return true;
  }
  return false;
}

uint32_t NapiWrites::recorded_ifindex(const std::string& device) const {
  for (const auto& [id, rec] : records_) {
    if (rec.original && rec.device == device && rec.ifindex != 0) return rec.ifindex;
  }
  return 0;
}

void NapiWrites::rename(const std::map<std::string, std::string>& to_of) {
  for (auto& [id, rec] : records_) {
    if (auto t = to_of.find(rec.device); t != to_of.end()) rec.device = t->second;
  }
}

Result<void> NapiWrites::release(const std::string& device, size_t& failures) {
  const std::string& name = device;
  std::optional<Error> first;
  for (auto it = records_.begin(); it != records_.end();) {
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
      records_.erase(id);
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

Result<void> NapiWrites::forget(const std::string& device) {
  for (auto& [id, rec] : records_) {
    if (rec.device != device || !rec.original) continue;
    if (auto f = originals_.forget_napi(device, id); !f) {
      return fail(std::move(f).error().wrap(fmt::format("forgetting {} napi {}", device, id)));
    }
    rec.original.reset();
    rec.applied.reset();
    rec.target.reset();
  }
  return ok();
}

}  // namespace dimctl::controller
