// PollCostProbe: what one poll of a software-moderated NAPI costs the whole host, measured by
// comparing periods at two moderation settings (the controller's cost probe).
//
// Why not the per-core estimator (cost_estimator.h): it fits the hard-IRQ and softirq time of
// the core that polls. Under software moderation most of what a poll costs is elsewhere: the
// wake-up of the receiving application (often on another core), the sender's softirq run at
// the end of its system call, the timer's interrupt. On this project's development VM the
// NET_RX time of a veth NAPI is per packet (a fitted per-poll cost of about 0), while a
// 64 us timer cut the host's CPU per message by a third (docs/benchmarks/host.md). So the probe
// measures the host: the busy time of every core, per packet, at the latency profile (base) and
// at the probed profile (probe), beside the polls per packet of the queue in each. With
//   busy per packet = c + w · polls per packet
// a pair of windows gives w = Δbusy / Δpolls, and c = base busy per packet − w · base polls per
// packet (the host's: it holds every core's other work, a spinning sender's for one, so the
// controller takes w from here and the packet's cost from the polling core's estimator). Each
// estimate is the median over the last kPairs pairs whose polls per packet differ by at least
// kMinPollGap, the probe polling less per packet (poll_cost.cc says why not more), each window
// holding at least kMinPackets packets; fewer pairs: none.
//
// Limits: other work on the host lands in the busy time as noise (the median of kPairs pairs
// bounds one disturbed pair, not a steady change); a closed loop whose rate falls under the
// probe is judged at two rates. Pure, deterministic, no allocation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace dim {

struct PollCostPeriod {
  double busy_ns = 0;    // busy time of all cores in the period
  uint64_t polls = 0;    // polls of the probed queue
  uint64_t packets = 0;  // its packets
};

struct PollCosts {
  double poll_ns = 0;        // w: host CPU per poll
  double completion_ns = 0;  // c: host CPU per packet besides its polls
};

class PollCostProbe {
 public:
  static constexpr int kPairs = 3;
  static constexpr double kMinPollGap = 0.1;
  static constexpr uint64_t kMinPackets = 200;
  static constexpr double kMinCompletionNs = 20;

  // A period at the latency profile, or at the probed one.
  void base(const PollCostPeriod& p) { add(base_, p); }
  void probe(const PollCostPeriod& p) { add(probe_, p); }
  // A probe ended: its windows make a pair (judged when both are large enough and their polls
  // per packet differ), and both windows start again. Returns whether the pair counted.
  bool close_pair();
  // The medians once kPairs pairs counted.
  std::optional<PollCosts> costs() const;
  int pairs() const { return n_; }

 private:
  struct Window {
    double busy_ns = 0;
    uint64_t polls = 0, packets = 0;
  };
  static void add(Window& w, const PollCostPeriod& p) {
    w.busy_ns += p.busy_ns;
    w.polls += p.polls;
    w.packets += p.packets;
  }
  Window base_, probe_;
  std::array<PollCosts, kPairs> last_{};
  int n_ = 0;     // pairs counted (saturates at 2^31)
  int next_ = 0;  // ring position in last_
};

}  // namespace dim
