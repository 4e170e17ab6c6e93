// Replay: feed a recorded sample stream through net DIM or RDMA DIM and print, per sample, the
// decision state right after that DIM call. The offline twin of the controller's DIM step,
// used to check traces against the kernel (dim-spec section 10) and to explain decisions.
//
// Input, one sample per line ('#' starts a comment, blank lines are ignored):
//   net <time_ns> <events> <packets> <bytes>   cumulative counters, one net_dim() call
//   rdma <time_ns> <completions>               one event, one rdma_dim() call
// Numbers are unsigned decimal; time_ns must fit an int64 and never decrease, completions a u32.
// Counters are 64-bit in the file and truncated to the kernel's widths by the library.
//
// Output, one line per sample, n counting samples from 1:
//   <n> ix=<index> usec=<usec> count=<pkts|comps> tune=<TUNE_STATE> state=<DIM_STATE>
// state=APPLY_NEW_PROFILE marks the sample whose DIM call changed the profile; the change is
// applied (state back to START_MEASURE) before the next sample, or after `apply_delay` further
// samples, which then show APPLY_NEW_PROFILE and are ignored by DIM, as in the kernel while its
// work is pending.
//
// Errors: the first bad line stops the replay with "<source>:<line>: <reason>" on `err` and
// kExitUsage; lines after it produce no output.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "dim/profile.h"

namespace dimctl::replay {

enum class Algo : uint8_t { kNet, kRdma };

struct ReplayOptions {
  Algo algo = Algo::kNet;
  dim::CqPeriodMode mode = dim::CqPeriodMode::kEqe;  // net only
  dim::Direction dir = dim::Direction::kRx;          // net only
  uint8_t start_profile = 0;                         // net only, 0..4; RDMA always starts at 0
  uint32_t apply_delay = 0;             // samples a decided change stays pending before it applies
  std::string source_name = "<stdin>";  // names the input in error messages
};

// Returns a process exit code (dimctl/common/exit_codes.h).
int run_replay(std::istream& in, std::ostream& out, std::ostream& err, const ReplayOptions& opts);

}  // namespace dimctl::replay
