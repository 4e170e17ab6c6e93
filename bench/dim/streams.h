// Pre-generated, realistic input streams shared by the DIM benchmarks: the same bytes go to the
// C++ library and to the C reference, so the comparison measures the code, not the input.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "dim/model_policy.h"
#include "dim/sample.h"

namespace dim::bench {

// Net: one sample per controller period, 64..200 events apart, load regimes that change every
// few hundred samples (so DIM keeps deciding and applying), +-2 % jitter inside a regime.
inline std::vector<Sample> make_net_stream(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  std::vector<Sample> out;
  out.reserve(n);
  uint64_t events = 0, packets = 0, bytes = 0;
  int64_t t = 1'000'000'000;
  uint64_t pkts_per_event = 8, bytes_per_pkt = 1500, ns_per_event = 20'000, events_per = 64;
  uint64_t left = 0;
  for (size_t i = 0; i < n; ++i) {
    if (left-- == 0) {
      left = uni(100, 400);
      pkts_per_event = uni(1, 64);
      bytes_per_pkt = uni(64, 1500);
      ns_per_event = uni(5'000, 100'000);
      events_per = uni(66, 196);
    }
    // Events per sample vary per regime, not per sample: epms is computed from the constant 64,
    // so a window holding 64 vs 200 events reads as a 3x event-rate change (dim-spec N9).
    const uint64_t dev = events_per * uni(98, 102) / 100;
    const uint64_t dpkts = dev * pkts_per_event * uni(98, 102) / 100;
    events += dev;
    packets += dpkts;
    bytes += dpkts * bytes_per_pkt;
    t += static_cast<int64_t>(dev * ns_per_event * uni(98, 102) / 100);
    out.push_back(Sample::from_counters(t, events, packets, bytes));
  }
  return out;
}

struct RdmaEvent {
  int64_t time_ns = 0;
  uint32_t completions = 0;
};

// RDMA: one poll pass per event, completions per pass and spacing in regimes of a few
// thousand events, per-event jitter.
inline std::vector<RdmaEvent> make_rdma_stream(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  std::vector<RdmaEvent> out;
  out.reserve(n);
  int64_t t = 1'000'000'000;
  uint64_t comps = 4, spacing = 10'000, left = 0;
  for (size_t i = 0; i < n; ++i) {
    if (left-- == 0) {
      left = uni(2'000, 8'000);
      comps = uni(1, 32);
      spacing = uni(2'000, 50'000);
    }
    t += static_cast<int64_t>(spacing * uni(80, 120) / 100);
    out.push_back({t, static_cast<uint32_t>(uni(comps / 2, comps + comps / 2))});
  }
  return out;
}

// ModelPolicy: one input per 20 ms period, load regimes of 20..400 periods (rates 100/s to
// 5M/s log-uniform, 1..32 completions per event, now and then a QD=1 regime) with ±10 % jitter
// per period, so the policy moves up and down, and the bounce guard and the budget come into play.
inline std::vector<ModelInput> make_model_stream(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  std::vector<ModelInput> out;
  out.reserve(n);
  double rate = 1000, cpe = 4;
  uint64_t left = 0;
  for (size_t i = 0; i < n; ++i) {
    if (left-- == 0) {
      left = uni(20, 400);
      rate = 100 * std::pow(10.0, static_cast<double>(uni(0, 470)) / 100);
      cpe = uni(0, 4) == 0 ? 1.0 : static_cast<double>(uni(100, 3200)) / 100;
    }
    ModelInput in;
    in.dt_ns = 20'000'000;
    in.completions = static_cast<uint64_t>(rate * 0.02 * static_cast<double>(uni(90, 110)) / 100);
    in.events = static_cast<uint64_t>(static_cast<double>(in.completions) / cpe);
    out.push_back(in);
  }
  return out;
}

}  // namespace dim::bench
