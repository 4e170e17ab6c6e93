// In-memory fake of seam::NapiActuator for tests of the state store, the CLI and (later) the
// controller. Header-only. It models what NapiNetlink does:
//  - NAPIs have ids and belong to an ifindex; list() of an unknown ifindex is ENODEV, get/set
//    of an unknown id ENOENT (a NAPI veth re-created under a new id);
//  - the fields present in a NAPI's config are the ones the kernel reports; set() writes the
//    present fields of the request (any of the three: napi-set accepts them all on >= 6.13) and
//    returns the read-back;
//  - recreate() gives a device's NAPI a new id with default settings (GRO off and on on veth);
//  - unavailable() makes every call fail like a kernel without napi-set; failures can be
//    injected per NAPI.
#pragma once

#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/napi_actuator.h"

namespace dimctl::fakes {

class FakeNapiActuator : public seam::NapiActuator {
 public:
  // The kernel's defaults for a NAPI of a device whose sysfs napi_defer_hard_irqs and
  // gro_flush_timeout are 0.
  static seam::NapiConfig defaults() { return {0, 0, 0}; }

  void add_device(uint32_t ifindex) { devices_.insert(ifindex); }
  void remove_device(uint32_t ifindex) {
    devices_.erase(ifindex);
    for (auto it = napis_.begin(); it != napis_.end();) {
      it = it->second.ifindex == ifindex ? napis_.erase(it) : std::next(it);
    }
  }
  // A NAPI of `ifindex` (the device is added too) with `config` as what the kernel reports.
  void add_napi(uint32_t ifindex, uint32_t id, const seam::NapiConfig& config = defaults()) {
    devices_.insert(ifindex);
    napis_[id] = seam::Napi{id, ifindex, std::nullopt, config};
  }
  void remove_napi(uint32_t id) { napis_.erase(id); }
  // The NAPI `id` goes away and its device gets `new_id` with default settings.
  void recreate(uint32_t id, uint32_t new_id) {
    const uint32_t ifindex = napis_.at(id).ifindex;
    napis_.erase(id);
    add_napi(ifindex, new_id);
  }
  // Another writer (an operator's ynl napi-set): changes without going through set().
  void external_set(uint32_t id, const seam::NapiConfig& c) { merge(napis_.at(id).config, c); }
  void unavailable(Error why) { unavailable_ = std::move(why); }
  // Every set() of `id` fails with errno `code` until cleared with 0.
  void fail_sets(uint32_t id, int code) {
    if (code == 0) {
      fail_.erase(id);
    } else {
      fail_[id] = code;
    }
  }
  // set() of `id` is acknowledged but changes nothing (read-back shows the old values).
  void stuck(uint32_t id, bool s) { stuck_[id] = s; }

  const seam::NapiConfig& config(uint32_t id) const { return napis_.at(id).config; }
  bool has_napi(uint32_t id) const { return napis_.count(id) != 0; }
  int set_calls = 0;  // attempts, including failed ones
  std::vector<std::pair<uint32_t, seam::NapiConfig>> set_history;  // successful writes

  Result<void> available() override {
    if (unavailable_) return fail(*unavailable_);
    return ok();
  }
  Result<std::vector<seam::Napi>> list(uint32_t ifindex) override {
    if (unavailable_) return fail(*unavailable_);
    if (devices_.count(ifindex) == 0) return DIMCTL_FAIL(ENODEV, "fake: no ifindex {}", ifindex);
    std::vector<seam::Napi> out;
    for (const auto& [id, n] : napis_) {
      if (n.ifindex == ifindex) out.push_back(n);
    }
    return out;
  }
  Result<seam::Napi> get(uint32_t napi_id) override {
    if (unavailable_) return fail(*unavailable_);
    auto it = napis_.find(napi_id);
    if (it == napis_.end()) return DIMCTL_FAIL(ENOENT, "fake: no NAPI {}", napi_id);
    return it->second;
  }
  Result<seam::Napi> set(uint32_t napi_id, const seam::NapiConfig& req) override {
    ++set_calls;
    if (unavailable_) return fail(*unavailable_);
    auto it = napis_.find(napi_id);
    if (it == napis_.end()) return DIMCTL_FAIL(ENOENT, "fake: no NAPI {}", napi_id);
    if (req.empty()) return DIMCTL_FAIL(EINVAL, "fake: napi {}: nothing to set", napi_id);
    if (auto f = fail_.find(napi_id); f != fail_.end()) {
      return DIMCTL_FAIL(f->second, "fake: napi {}: injected failure", napi_id);
    }
    if (!stuck_[napi_id]) {
      merge(it->second.config, req);
      set_history.emplace_back(napi_id, req);
    }
    return it->second;
  }

 private:
  static void merge(seam::NapiConfig& dst, const seam::NapiConfig& req) {
    if (req.defer_hard_irqs) dst.defer_hard_irqs = req.defer_hard_irqs;
    if (req.gro_flush_timeout_ns) dst.gro_flush_timeout_ns = req.gro_flush_timeout_ns;
    if (req.irq_suspend_timeout_ns) dst.irq_suspend_timeout_ns = req.irq_suspend_timeout_ns;
  }

  std::set<uint32_t> devices_;
  std::map<uint32_t, seam::Napi> napis_;
  std::map<uint32_t, int> fail_;
  std::map<uint32_t, bool> stuck_;
  std::optional<Error> unavailable_;
};

}  // namespace dimctl::fakes
