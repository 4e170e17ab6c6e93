// Test fixture for the Controller: fakes wired together, helpers to declare devices, queues and
// CQs, drive traffic and read the published state.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "dimctl/controller/controller.h"
#include "fakes/controller_fakes.h"
#include "fakes/fake_napi_actuator.h"

namespace dimctl::controller::testing {

inline constexpr int64_t kPeriod = 50'000'000;  // 20 Hz

// The fakes of one controller, for tests that build their own (several, or with options).
struct FakeRig {
  fakes::FakeCounterSource source;
  fakes::RecordingNetActuator net;
  fakes::FakeOriginalsStore store;
  fakes::FakePolicySource policy;
  fakes::FakeClock clock;
  std::unique_ptr<Controller> ctl;
};

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { source.current.time_ns = clock.now; }

  Controller& ctl() {
    if (!controller_) {
      controller_ = std::make_unique<Controller>(source, net, with_rdma ? &rdma : nullptr,
                                                 with_napi ? &napi : nullptr, store, policy, clock);
    }
    return *controller_;
  }

  // A net device with `nqueues` queues (queue index i, napi id 100*ifindex + i).
  void add_device(const std::string& name, uint32_t ifindex, int nqueues,
                  seam::Coalesce state = fakes::RecordingNetActuator::full_coalesce(),
                  bool per_queue = false) {
    auto& d = net.devices[name];
    d.state = state;
    d.per_queue = per_queue;
    for (int i = 0; i < nqueues; ++i) {
      seam::QueueCounters q;
      q.key = {ifindex, 100 * ifindex + static_cast<uint32_t>(i)};
      q.device_ix = fakes::device_ix(source.current, name);
      q.queue = i;
      q.irq = 30 + i;
      q.has_bytes = true;
      source.current.queues.push_back(q);
    }
  }
  // A device without hardware coalescing (veth: its COALESCE_GET fails with EOPNOTSUPP) whose
  // queues are NAPIs the napi actuator knows, with `config` as their settings.
  void add_napi_device(const std::string& name, uint32_t ifindex, int nqueues,
                       const seam::NapiConfig& config = fakes::FakeNapiActuator::defaults()) {
    add_device(name, ifindex, nqueues, seam::Coalesce{});
    net.devices[name].get_errno = EOPNOTSUPP;
    napi.add_device(ifindex);
    for (int i = 0; i < nqueues; ++i) napi.add_napi(ifindex, key(ifindex, i).napi_id, config);
  }
  void remove_device(const std::string& name) {
    // The name stays in the table, referred to by no queue (seam::Snapshot allows it).
    std::erase_if(source.current.queues, [&](const seam::QueueCounters& q) {
      return source.current.device_of(q) == name;
    });
  }

  static seam::QueueKey key(uint32_t ifindex, int queue) {
    return {ifindex, 100 * ifindex + static_cast<uint32_t>(queue)};
  }

  static seam::DevicePolicy enforce(std::string rule = "rule-1") {
    seam::DevicePolicy p;
    p.mode = seam::Mode::kEnforce;
    p.rule = std::move(rule);
    p.rate_limit_ns = 0;
    return p;
  }
  static seam::DevicePolicy shadow(std::string rule = "rule-1") {
    seam::DevicePolicy p = enforce(std::move(rule));
    p.mode = seam::Mode::kShadow;
    return p;
  }

  // Traffic on one queue in this period (events = polls that re-armed interrupts).
  void traffic(const seam::QueueKey& k, uint64_t events, uint64_t packets, uint64_t bytes) {
    auto* q = source.queue(k);
    ASSERT_NE(q, nullptr);
    q->polls += events;
    q->packets += packets;
    q->bytes += bytes;
  }

  // Next period: time moves on for the clock and the snapshot.
  Result<void> step(int64_t dt_ns = kPeriod) {
    clock.advance(dt_ns);
    source.current.time_ns = clock.now;
    return ctl().step();
  }

  // Period k of a ramp: 100 events and 20 % more traffic every period, which makes net DIM
  // climb one index every second period (decide, then the next window starts).
  void ramp_step(const seam::QueueKey& k, int period) {
    uint64_t packets = 1000;
    for (int i = 0; i < period; ++i) packets = packets * 6 / 5;
    traffic(k, 100, packets, packets * 1000);
    ASSERT_TRUE(step().ok());
  }

  std::shared_ptr<const seam::ControllerState> st() { return ctl().state(); }

  const seam::DeviceView* device(const std::string& name) {
    state_hold_ = st();
    for (const auto& d : state_hold_->devices) {
      if (d.name == name) return &d;
    }
    return nullptr;
  }
  const seam::QueueView* queue(const seam::QueueKey& k) {
    state_hold_ = st();
    for (const auto& q : state_hold_->queues) {
      if (q.counters.key == k) return &q;
    }
    return nullptr;
  }
  // The queue's comparison (rules with compare), or null.
  const seam::PolicyComparison* comparison(const seam::QueueKey& k) {
    state_hold_ = st();
    for (size_t i = 0; i < state_hold_->queues.size(); ++i) {
      if (state_hold_->queues[i].counters.key == k) {
        return seam::comparison_at(state_hold_->queue_comparisons, i);
      }
    }
    return nullptr;
  }

  fakes::FakeCounterSource source;
  fakes::RecordingNetActuator net;
  fakes::RecordingRdmaDimSwitch rdma;
  fakes::FakeOriginalsStore store;
  fakes::FakePolicySource policy;
  fakes::FakeClock clock;
  fakes::FakeNapiActuator napi;
  bool with_rdma = true;
  bool with_napi = true;

 private:
  std::unique_ptr<Controller> controller_;
  std::shared_ptr<const seam::ControllerState> state_hold_;
};

}  // namespace dimctl::controller::testing
