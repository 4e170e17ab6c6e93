// Clock: time is an input. The daemon uses CLOCK_MONOTONIC; tests and the simulator drive time.
#pragma once

#include <time.h>

#include <cstdint>

namespace dimctl::seam {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ns() const = 0;
};

// CLOCK_MONOTONIC, the same clock as bpf_ktime_get_ns().
class MonotonicClock final : public Clock {
 public:
  int64_t now_ns() const override {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
};

}  // namespace dimctl::seam
