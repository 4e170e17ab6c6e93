// Seeded random counter streams for the property and differential tests. They are meant to be
// hostile rather than realistic: bursts below and far above 64 events, u16/u32 wraps, counters
// going backwards, zero and sub-microsecond time deltas, long gaps, load regime changes.
#pragma once

#include <cstdint>
#include <random>

namespace dim::testing {

struct RawNetSample {
  int64_t time_ns = 0;
  uint64_t events = 0;
  uint64_t packets = 0;
  uint64_t bytes = 0;
};

class NetStream {
 public:
  explicit NetStream(uint64_t seed) : rng_(seed) {
    s_.events = pick(0, 1 << 20);
    s_.packets = pick(0, uint64_t{1} << 33);
    s_.bytes = pick(0, uint64_t{1} << 40);
    s_.time_ns = static_cast<int64_t>(pick(0, uint64_t{1} << 40));
  }

  RawNetSample next() {
    if (pick(0, 99) < 5) {
      pkts_per_event_ = pick(0, 64);
      bytes_per_pkt_ = pick(64, 9000);
    }
    const uint64_t r = pick(0, 99);
    uint64_t dev = 0;
    if (r < 60) {
      dev = pick(64, 200);
    } else if (r < 75) {
      dev = pick(0, 63);
    } else if (r < 85) {
      dev = pick(64, 70'000);
    } else if (r < 95) {
      dev = 0;
    }
    const bool backwards = r >= 97;
    const uint64_t dpkts = dev * pkts_per_event_ + pick(0, 2 * pkts_per_event_ + 1);
    if (backwards) {
      s_.events -= pick(0, s_.events);
      s_.packets -= pick(0, s_.packets);
      s_.bytes -= pick(0, s_.bytes);
    } else {
      s_.events += dev;
      s_.packets += dpkts;
      s_.bytes += dpkts * bytes_per_pkt_;
    }
    const uint64_t t = pick(0, 99);
    if (t < 80) {
      s_.time_ns += static_cast<int64_t>(dev * pick(1'000, 30'000) + pick(0, 5'000));
    } else if (t < 86) {
      // zero delta
    } else if (t < 92) {
      s_.time_ns += static_cast<int64_t>(pick(1, 999));
    } else if (t < 98) {
      s_.time_ns += static_cast<int64_t>(pick(1, 10'000'000'000ULL));
    } else {
      s_.time_ns -= static_cast<int64_t>(pick(0, 1'000'000));
    }
    return s_;
  }

  uint64_t pick(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937_64 rng_;
  RawNetSample s_;
  uint64_t pkts_per_event_ = 16;
  uint64_t bytes_per_pkt_ = 1500;
};

struct RawRdmaEvent {
  int64_t time_ns = 0;
  uint32_t completions = 0;
};

class RdmaStream {
 public:
  explicit RdmaStream(uint64_t seed) : rng_(seed) {}

  RawRdmaEvent next() {
    if (pick(0, 999) < 8) {
      mean_comps_ = pick(0, 3) == 0 ? 0 : pick(1, 600);
      mean_gap_ns_ = pick(0, 50'000);
    }
    const uint64_t r = pick(0, 999);
    uint32_t comps = static_cast<uint32_t>(pick(0, 2 * mean_comps_));
    if (r < 2) comps = static_cast<uint32_t>(pick(0, 0xffffffffULL));  // huge: u32 wrap
    const uint64_t t = pick(0, 999);
    if (t < 900) {
      time_ns_ += static_cast<int64_t>(pick(0, 2 * mean_gap_ns_));
    } else if (t < 995) {
      // zero delta
    } else {
      time_ns_ += static_cast<int64_t>(pick(1, 5'000'000'000ULL));
    }
    return {time_ns_, comps};
  }

  uint64_t pick(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937_64 rng_;
  int64_t time_ns_ = 0;
  uint64_t mean_comps_ = 4;
  uint64_t mean_gap_ns_ = 10'000;
};

}  // namespace dim::testing
