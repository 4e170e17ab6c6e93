// In-memory fakes of the seam:: interfaces the Controller is built on, for unit tests and
// benchmarks: scripted counter snapshots, a settable clock, an originals store and a policy
// source with failure injection, and recording actuators that behave like the kernel where it
// matters to the controller (reject unsupported fields, read back, notify every change).
//
// Header-only, no shared state between instances; not thread-safe (tests drive one thread).
#pragma once

#include <cerrno>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/clock.h"
#include "dimctl/seam/coalesce.h"
#include "dimctl/seam/counter_source.h"
#include "dimctl/seam/net_actuator.h"
#include "dimctl/seam/originals_store.h"
#include "dimctl/seam/policy.h"
#include "dimctl/seam/rdma_actuator.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::fakes {

// The position of `name` in the snapshot's name table (seam::Snapshot::devices), appended
// when missing: what a hand-built queue's device_ix should be.
inline uint32_t device_ix(seam::Snapshot& snap, const std::string& name) {
  for (size_t i = 0; i < snap.devices.size(); ++i) {
    if (snap.devices[i] == name) return static_cast<uint32_t>(i);
  }
  snap.devices.push_back(name);
  return static_cast<uint32_t>(snap.devices.size() - 1);
}

// Returns `current` (which the test edits between steps), or the next scripted result first.
class FakeCounterSource final : public seam::CounterSource {
 public:
  Result<seam::Snapshot> sample() override {
    ++calls;
    if (!script.empty()) {
      auto r = std::move(script.front());
      script.pop_front();
      return r;
    }
    if (fail_next) {
      fail_next = false;
      return DIMCTL_FAIL(EIO, "fake counter source: injected failure");
    }
    return current;
  }

  // The queue with `key`, or null.
  seam::QueueCounters* queue(const seam::QueueKey& key) {
    for (auto& q : current.queues) {
      if (q.key == key) return &q;
    }
    return nullptr;
  }
  seam::CqCounters* cq(const seam::CqKey& key) {
    for (auto& c : current.cqs) {
      if (c.key == key) return &c;
    }
    return nullptr;
  }

  seam::Snapshot current;
  std::deque<Result<seam::Snapshot>> script;
  bool fail_next = false;
  int calls = 0;
};

class FakeClock final : public seam::Clock {
 public:
  int64_t now_ns() const override { return now; }
  void advance(int64_t ns) { now += ns; }
  int64_t now = 1'000'000'000;
};

// Records like a persistent store: first value per key wins (the true original).
class FakeOriginalsStore final : public seam::OriginalsStore {
 public:
  Result<void> record_net(const std::string& dev, const seam::Coalesce& original) override {
    ++net_calls;
    if (on_record) on_record(dev);
    if (fail_net) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", dev);
    net.emplace(dev, original);
    return ok();
  }
  Result<void> record_net_queue(const std::string& dev, uint32_t queue,
                                const seam::Coalesce& original) override {
    ++queue_calls;
    if (on_record) on_record(dev);
    if (fail_queue) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", dev);
    queues.emplace(std::make_pair(dev, queue), original);
    return ok();
  }
  Result<void> record_rdma_dim(const std::string& ibdev, bool original) override {
    ++rdma_calls;
    if (on_record) on_record(ibdev);
    if (fail_rdma) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", ibdev);
    rdma.emplace(ibdev, original);
    return ok();
  }

  Result<void> record_napi(const std::string& dev, uint32_t napi_id,
                           const seam::NapiConfig& original) override {
    ++napi_calls;
    if (on_record) on_record(dev);
    if (fail_napi) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", dev);
    napis.emplace(std::make_pair(dev, napi_id), original);
    return ok();
  }
  Result<void> forget_napi(const std::string& dev, uint32_t napi_id) override {
    ++forget_calls;
    if (fail_forget) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", dev);
    napis.erase(std::make_pair(dev, napi_id));
    return ok();
  }

  Result<void> forget_net(const std::string& dev) override {
    ++forget_calls;
    if (fail_forget) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", dev);
    net.erase(dev);
    std::erase_if(queues, [&](const auto& kv) { return kv.first.first == dev; });
    return ok();
  }
  Result<void> forget_rdma(const std::string& ibdev) override {
    ++forget_calls;
    if (fail_forget) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist {}", ibdev);
    rdma.erase(ibdev);
    return ok();
  }

  Result<void> rename_net(
      const std::vector<std::pair<std::string, std::string>>& renames) override {
    ++rename_calls;
    if (fail_rename) return DIMCTL_FAIL(EIO, "fake originals store: cannot persist renames");
    std::map<std::string, seam::Coalesce> moved_net;
    std::map<std::pair<std::string, uint32_t>, seam::Coalesce> moved_queues;
    std::map<std::pair<std::string, uint32_t>, seam::NapiConfig> moved_napis;
    for (const auto& [from, to] : renames) {
      if (auto n = net.extract(from)) moved_net.emplace(to, n.mapped());
      std::erase_if(queues, [&, &to = to, &from = from](const auto& kv) {
        if (kv.first.first != from) return false;
        moved_queues.emplace(std::make_pair(to, kv.first.second), kv.second);
        return true;
      });
      std::erase_if(napis, [&, &to = to, &from = from](const auto& kv) {
        if (kv.first.first != from) return false;
        moved_napis.emplace(std::make_pair(to, kv.first.second), kv.second);
        return true;
      });
    }
    for (auto& [to, c] : moved_net) net.insert_or_assign(to, c);
    for (auto& [key, c] : moved_queues) queues.insert_or_assign(key, c);
    for (auto& [key, c] : moved_napis) napis.insert_or_assign(key, c);
    return ok();
  }

  std::map<std::string, seam::Coalesce> net;
  std::map<std::pair<std::string, uint32_t>, seam::Coalesce> queues;
  std::map<std::string, bool> rdma;
  std::map<std::pair<std::string, uint32_t>, seam::NapiConfig> napis;  // (dev, napi id)
  bool fail_net = false, fail_queue = false, fail_rdma = false, fail_forget = false;
  bool fail_rename = false, fail_napi = false;
  int forget_calls = 0, rename_calls = 0;
  std::function<void(const std::string& dev)> on_record;  // observes call order
  int net_calls = 0, queue_calls = 0, rdma_calls = 0, napi_calls = 0;
};

// Per-device policies by name; everything else gets `fallback`.
class FakePolicySource final : public seam::PolicySource {
 public:
  seam::DevicePolicy policy_for(const seam::DeviceInfo& dev) const override {
    asked.push_back(dev);
    auto it = by_name.find(dev.name);
    return it != by_name.end() ? it->second : fallback;
  }
  std::map<std::string, seam::DevicePolicy> by_name;
  seam::DevicePolicy fallback;  // shadow, net-eqe, no rule
  mutable std::vector<seam::DeviceInfo> asked;
};

// A NIC's coalescing as the kernel presents it: GET reports only supported fields, SET of an
// unreported field fails with EINVAL (and is counted as a contract violation), values may be
// quantized, every successful SET is notified (ETHTOOL_MSG_COALESCE_NTF), and someone else can
// change settings too.
class RecordingNetActuator final : public seam::NetActuator {
 public:
  struct Device {
    seam::Coalesce state;  // present fields = supported fields
    bool per_queue = false;
    std::map<uint32_t, seam::Coalesce> queues;
    std::optional<int> get_errno, set_errno;
    std::function<uint32_t(uint32_t)> quantize_usecs;  // driver rounding, e.g. ENA
  };
  struct SetCall {
    std::string dev;
    std::optional<uint32_t> queue;
    seam::Coalesce req;
  };

  // A typical mlx5-like device: rx/tx usecs and frames, adaptive rx/tx, CQE mode rx/tx.
  static seam::Coalesce full_coalesce(uint32_t rx_usecs = 8, uint32_t rx_frames = 128,
                                      bool adaptive_rx = false) {
    seam::Coalesce c;
    c.rx_usecs = rx_usecs;
    c.rx_max_frames = rx_frames;
    c.tx_usecs = 16;
    c.tx_max_frames = 32;
    c.use_adaptive_rx = adaptive_rx;
    c.use_adaptive_tx = false;
    c.use_cqe_mode_rx = false;
    c.use_cqe_mode_tx = false;
    return c;
  }

  Result<seam::Coalesce> get(const std::string& dev) override {
    ++gets;
    auto it = devices.find(dev);
    if (it == devices.end()) return DIMCTL_FAIL(ENODEV, "fake: no device {}", dev);
    if (it->second.get_errno) return DIMCTL_FAIL(*it->second.get_errno, "fake: get {}", dev);
    return it->second.state;
  }

  Result<seam::Coalesce> set(const std::string& dev, const seam::Coalesce& req) override {
    sets.push_back({dev, std::nullopt, req});
    auto it = devices.find(dev);
    if (it == devices.end()) return DIMCTL_FAIL(ENODEV, "fake: no device {}", dev);
    if (it->second.set_errno) return DIMCTL_FAIL(*it->second.set_errno, "fake: set {}", dev);
    auto r = apply(it->second, it->second.state, req);
    if (!r) return std::move(r).error();
    changes.push_back({dev, it->second.state});
    return it->second.state;
  }

  bool supports_per_queue(const std::string& dev) override {
    auto it = devices.find(dev);
    return it != devices.end() && it->second.per_queue;
  }

  Result<seam::Coalesce> get_queue(const std::string& dev, uint32_t queue) override {
    ++queue_gets;
    auto it = devices.find(dev);
    if (it == devices.end() || !it->second.per_queue) {
      return DIMCTL_FAIL(EOPNOTSUPP, "fake: no per-queue coalescing on {}", dev);
    }
    auto q = it->second.queues.find(queue);
    if (q == it->second.queues.end()) return it->second.state;  // queues start as the device
    return q->second;
  }

  Result<seam::Coalesce> set_queue(const std::string& dev, uint32_t queue,
                                   const seam::Coalesce& req) override {
    sets.push_back({dev, queue, req});
    auto it = devices.find(dev);
    if (it == devices.end() || !it->second.per_queue) {
      return DIMCTL_FAIL(EOPNOTSUPP, "fake: no per-queue coalescing on {}", dev);
    }
    if (it->second.set_errno) return DIMCTL_FAIL(*it->second.set_errno, "fake: set {}", dev);
    auto q = it->second.queues.try_emplace(queue, it->second.state).first;
    auto r = apply(it->second, q->second, req);
    if (!r) return std::move(r).error();
    return q->second;  // the per-queue ioctl sends no netlink notification
  }

  std::vector<seam::CoalesceChange> drain_changes() override { return std::exchange(changes, {}); }

  // Someone else (tuned, an operator's ethtool -C) changes the device: notified like ours.
  void external_set(const std::string& dev, const seam::Coalesce& req) {
    auto& d = devices.at(dev);
    (void)apply(d, d.state, req);
    changes.push_back({dev, d.state});
  }

  // Calls of set()/set_queue() for `dev` (queue = nullopt: device-wide only).
  std::vector<SetCall> sets_for(const std::string& dev) const {
    std::vector<SetCall> out;
    for (const auto& s : sets) {
      if (s.dev == dev) out.push_back(s);
    }
    return out;
  }

  std::map<std::string, Device> devices;
  std::vector<SetCall> sets;
  std::vector<seam::CoalesceChange> changes;
  int gets = 0, queue_gets = 0;
  int unsupported_sends = 0;  // SET requests naming a field the device does not report

 private:
  Result<void> apply(Device& d, seam::Coalesce& target, const seam::Coalesce& req) {
    bool bad = false;
    auto set_field = [&](auto field) {
      if (!(req.*field).has_value()) return;
      if (!(d.state.*field).has_value()) {
        bad = true;
        return;
      }
      target.*field = req.*field;
    };
    // Validate everything first: the kernel rejects the whole request.
    seam::Coalesce before = target;
    set_field(&seam::Coalesce::rx_usecs);
    set_field(&seam::Coalesce::rx_max_frames);
    set_field(&seam::Coalesce::tx_usecs);
    set_field(&seam::Coalesce::tx_max_frames);
    set_field(&seam::Coalesce::use_adaptive_rx);
    set_field(&seam::Coalesce::use_adaptive_tx);
    set_field(&seam::Coalesce::use_cqe_mode_rx);
    set_field(&seam::Coalesce::use_cqe_mode_tx);
    if (bad) {
      target = before;
      ++unsupported_sends;
      return DIMCTL_FAIL(EINVAL, "fake: cannot modify an unsupported parameter");
    }
    if (d.quantize_usecs && target.rx_usecs) target.rx_usecs = d.quantize_usecs(*target.rx_usecs);
    return ok();
  }
};

class RecordingRdmaDimSwitch final : public seam::RdmaDimSwitch {
 public:
  Result<std::vector<seam::RdmaDevice>> list() override {
    if (list_errno) return DIMCTL_FAIL(*list_errno, "fake: rdma dev list");
    return devices;
  }
  Result<bool> get_dim(const std::string& ibdev) override {
    for (const auto& d : devices) {
      if (d.name == ibdev) return d.dim_enabled;
    }
    return DIMCTL_FAIL(ENODEV, "fake: no IB device {}", ibdev);
  }
  Result<bool> set_dim(const std::string& ibdev, bool enabled) override {
    set_calls.emplace_back(ibdev, enabled);
    if (set_errno) return DIMCTL_FAIL(*set_errno, "fake: rdma dev set {}", ibdev);
    for (auto& d : devices) {
      if (d.name == ibdev) {
        d.dim_enabled = enabled;
        return d.dim_enabled;
      }
    }
    return DIMCTL_FAIL(ENODEV, "fake: no IB device {}", ibdev);
  }

  std::vector<seam::RdmaDevice> devices;
  std::vector<std::pair<std::string, bool>> set_calls;
  std::optional<int> list_errno, set_errno;
};

}  // namespace dimctl::fakes
