// The control period when nothing sets it: the daemon's `interval`, `dimctl record --interval`
// (a trace sampled as the daemon samples) and the simulator's dimctl-* policies without
// @PERIOD. Written here only; docs/CONFIG.md and the config schema quote it.
#pragma once

#include <cstdint>

namespace dimctl {

inline constexpr int64_t kDefaultControlPeriodNs = 20'000'000;  // 20 ms, 50 Hz

}  // namespace dimctl
