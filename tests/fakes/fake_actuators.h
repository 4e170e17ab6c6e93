// In-memory fakes of seam::NetActuator and seam::RdmaDimSwitch for tests of the controller,
// the state store and anything else that drives actuators. Header-only.
//
// FakeNetActuator models what the real EthtoolNetlink does:
//  - per device, the fields present in its Coalesce are the supported ones (get() reports only
//    those); set() of any other field is refused with EOPNOTSUPP and changes nothing;
//  - optional per-field maxima clamp written values (like tun clamps rx-frames to 64);
//  - per-queue coalescing only on devices added with queues (else EOPNOTSUPP);
//  - every successful write, and every external_change(), queues a CoalesceChange for
//    drain_changes();
//  - failures can be injected (fail_next_set / fail_sets) and devices removed (ENODEV).
#pragma once

#include <cerrno>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/net_actuator.h"
#include "dimctl/seam/rdma_actuator.h"

namespace dimctl::fakes {

class FakeNetActuator : public seam::NetActuator {
 public:
  struct Device {
    seam::Coalesce values;  // present fields = supported fields, with their values
    seam::Coalesce limits;  // present fields = maximum accepted (clamped), optional
    std::map<uint32_t, seam::Coalesce> queues;  // empty = no per-queue support
  };

  // A device; `values` lists the supported fields and their current values. With nqueues > 0
  // the device supports per-queue coalescing and every queue starts with `values`.
  void add_device(const std::string& dev, const seam::Coalesce& values, uint32_t nqueues = 0) {
    Device d;
    d.values = values;
    for (uint32_t q = 0; q < nqueues; ++q) d.queues[q] = values;
    devices_[dev] = d;
  }
  void remove_device(const std::string& dev) { devices_.erase(dev); }
  bool has_device(const std::string& dev) const { return devices_.count(dev) != 0; }
  // Clamp written values of `dev` to the present fields of `limits`.
  void set_limits(const std::string& dev, const seam::Coalesce& limits) {
    devices_.at(dev).limits = limits;
  }
  // The next set()/set_queue() on dev fails with `err` (no change).
  void fail_next_set(const std::string& dev, Error err) { fail_next_[dev] = std::move(err); }
  // Every set()/set_queue() on dev fails with errno `code` until cleared with 0.
  void fail_sets(const std::string& dev, int code) {
    if (code == 0) {
      fail_always_.erase(dev);
    } else {
      fail_always_[dev] = code;
    }
  }
  // Someone else changed the device (e.g. `ethtool -C`): apply and notify.
  void external_change(const std::string& dev, const seam::Coalesce& c) {
    auto& d = devices_.at(dev);
    merge(d.values, c, d.limits);
    changes_.push_back({dev, d.values});
  }

  // Direct state access for assertions.
  const seam::Coalesce& values(const std::string& dev) const { return devices_.at(dev).values; }
  const seam::Coalesce& queue_values(const std::string& dev, uint32_t q) const {
    return devices_.at(dev).queues.at(q);
  }

  // Counters and history.
  int get_calls = 0;
  int set_calls = 0;        // attempts, including refused and failed ones
  int queue_set_calls = 0;  // attempts
  std::vector<std::pair<std::string, seam::Coalesce>> set_history;  // successful device writes

  Result<seam::Coalesce> get(const std::string& dev) override {
    ++get_calls;
    auto it = devices_.find(dev);
    if (it == devices_.end()) return DIMCTL_FAIL(ENODEV, "fake: no device {}", dev);
    return it->second.values;
  }

  Result<seam::Coalesce> set(const std::string& dev, const seam::Coalesce& req) override {
    ++set_calls;
    auto it = devices_.find(dev);
    if (it == devices_.end()) return DIMCTL_FAIL(ENODEV, "fake: no device {}", dev);
    if (auto f = injected_failure(dev)) return fail(std::move(*f));
    if (!supported(req, it->second.values)) {
      return DIMCTL_FAIL(EOPNOTSUPP, "fake: {}: unsupported field in request", dev);
    }
    merge(it->second.values, req, it->second.limits);
    // Like drivers whose device-wide setting applies to every queue.
    for (auto& [q, qc] : it->second.queues) merge(qc, req, it->second.limits);
    if (!req.empty()) {
      set_history.emplace_back(dev, req);
      changes_.push_back({dev, it->second.values});
    }
    return it->second.values;
  }

  bool supports_per_queue(const std::string& dev) override {
    auto it = devices_.find(dev);
    return it != devices_.end() && !it->second.queues.empty();
  }

  Result<seam::Coalesce> get_queue(const std::string& dev, uint32_t queue) override {
    auto it = devices_.find(dev);
    if (it == devices_.end()) return DIMCTL_FAIL(ENODEV, "fake: no device {}", dev);
    if (it->second.queues.empty()) {
      return DIMCTL_FAIL(EOPNOTSUPP, "fake: {}: no per-queue coalescing", dev);
    }
    auto q = it->second.queues.find(queue);
    if (q == it->second.queues.end())
      return DIMCTL_FAIL(EINVAL, "fake: {}: no queue {}", dev, queue);
    return q->second;
  }

  Result<seam::Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                   const seam::Coalesce& req) override {
    ++queue_set_calls;
    auto it = devices_.find(dev);
    if (it == devices_.end()) return DIMCTL_FAIL(ENODEV, "fake: no device {}", dev);
    if (auto f = injected_failure(dev)) return fail(std::move(*f));
    if (it->second.queues.empty()) {
      return DIMCTL_FAIL(EOPNOTSUPP, "fake: {}: no per-queue coalescing", dev);
    }
    auto q = it->second.queues.find(queue);
    if (q == it->second.queues.end())
      return DIMCTL_FAIL(EINVAL, "fake: {}: no queue {}", dev, queue);
    if (!supported(req, it->second.values)) {
      return DIMCTL_FAIL(EOPNOTSUPP, "fake: {}: unsupported field in request", dev);
    }
    merge(q->second, req, it->second.limits);
    return q->second;
  }

  std::vector<seam::CoalesceChange> drain_changes() override {
    std::vector<seam::CoalesceChange> out(changes_.begin(), changes_.end());
    changes_.clear();
    return out;
  }

 private:
  template <typename T>
  static bool field_ok(const std::optional<T>& want, const std::optional<T>& have) {
    return !want || have;
  }
  static bool supported(const seam::Coalesce& req, const seam::Coalesce& have) {
    return field_ok(req.rx_usecs, have.rx_usecs) &&
           field_ok(req.rx_max_frames, have.rx_max_frames) &&
           field_ok(req.tx_usecs, have.tx_usecs) &&
           field_ok(req.tx_max_frames, have.tx_max_frames) &&
           field_ok(req.use_adaptive_rx, have.use_adaptive_rx) &&
           field_ok(req.use_adaptive_tx, have.use_adaptive_tx) &&
           field_ok(req.use_cqe_mode_rx, have.use_cqe_mode_rx) &&
           field_ok(req.use_cqe_mode_tx, have.use_cqe_mode_tx);
  }
  static void put(std::optional<uint32_t>& dst, const std::optional<uint32_t>& v,
                  const std::optional<uint32_t>& limit) {
    if (v) dst = (limit && *v > *limit) ? *limit : *v;
  }
  static void put(std::optional<bool>& dst, const std::optional<bool>& v) {
    if (v) dst = *v;
  }
  static void merge(seam::Coalesce& dst, const seam::Coalesce& req, const seam::Coalesce& limits) {
    put(dst.rx_usecs, req.rx_usecs, limits.rx_usecs);
    put(dst.rx_max_frames, req.rx_max_frames, limits.rx_max_frames);
    put(dst.tx_usecs, req.tx_usecs, limits.tx_usecs);
    put(dst.tx_max_frames, req.tx_max_frames, limits.tx_max_frames);
    put(dst.use_adaptive_rx, req.use_adaptive_rx);
    put(dst.use_adaptive_tx, req.use_adaptive_tx);
    put(dst.use_cqe_mode_rx, req.use_cqe_mode_rx);
    put(dst.use_cqe_mode_tx, req.use_cqe_mode_tx);
  }
  std::optional<Error> injected_failure(const std::string& dev) {
    if (auto n = fail_next_.find(dev); n != fail_next_.end()) {
      Error e = std::move(n->second);
      fail_next_.erase(n);
      return e;
    }
    if (auto a = fail_always_.find(dev); a != fail_always_.end()) {
      return DIMCTL_ERR(a->second, "fake: {}: injected failure", dev);
    }
    return std::nullopt;
  }

  std::map<std::string, Device> devices_;
  std::map<std::string, Error> fail_next_;
  std::map<std::string, int> fail_always_;
  std::deque<seam::CoalesceChange> changes_;
};

class FakeRdmaDimSwitch : public seam::RdmaDimSwitch {
 public:
  void add_device(const std::string& name, bool dim_enabled) {
    devices_[name] = {next_index_++, name, dim_enabled};
  }
  void remove_device(const std::string& name) { devices_.erase(name); }
  // Every set_dim on `name` fails with errno `code` until cleared with 0.
  void fail_sets(const std::string& name, int code) {
    if (code == 0) {
      fail_.erase(name);
    } else {
      fail_[name] = code;
    }
  }
  // The switch ignores writes (reads back the old value), like a kernel that refuses silently.
  void stuck(const std::string& name, bool s) { stuck_[name] = s; }
  bool dim(const std::string& name) const { return devices_.at(name).dim_enabled; }
  int set_calls = 0;

  Result<std::vector<seam::RdmaDevice>> list() override {
    std::vector<seam::RdmaDevice> out;
    for (const auto& [n, d] : devices_) out.push_back(d);
    return out;
  }
  Result<bool> get_dim(const std::string& ibdev) override {
    auto it = devices_.find(ibdev);
    if (it == devices_.end()) return DIMCTL_FAIL(ENODEV, "fake: no RDMA device {}", ibdev);
    return it->second.dim_enabled;
  }
  Result<bool> set_dim(const std::string& ibdev, bool enabled) override {
    ++set_calls;
    auto it = devices_.find(ibdev);
    if (it == devices_.end()) return DIMCTL_FAIL(ENODEV, "fake: no RDMA device {}", ibdev);
    if (auto f = fail_.find(ibdev); f != fail_.end()) {
      return DIMCTL_FAIL(f->second, "fake: {}: injected failure", ibdev);
    }
    if (!stuck_[ibdev]) it->second.dim_enabled = enabled;
    return it->second.dim_enabled;
  }

 private:
  std::map<std::string, seam::RdmaDevice> devices_;
  std::map<std::string, int> fail_;
  std::map<std::string, bool> stuck_;
  uint32_t next_index_ = 1;
};

}  // namespace dimctl::fakes
