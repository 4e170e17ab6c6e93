// libFuzzer harness: the `dimctl replay` input parser (run_replay over an in-memory stream).
// The options come from the first byte, so that every algorithm, table and apply delay is
// reached without changing the text the seed files hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "dimctl/common/exit_codes.h"
#include "dimctl/replay/replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t b = size > 0 ? data[0] : 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const auto algo : {dimctl::replay::Algo::kNet, dimctl::replay::Algo::kRdma}) {
    dimctl::replay::ReplayOptions opts;
    opts.algo = algo;
    opts.mode = (b & 1) != 0 ? dim::CqPeriodMode::kCqe : dim::CqPeriodMode::kEqe;
    opts.dir = (b & 2) != 0 ? dim::Direction::kTx : dim::Direction::kRx;
    opts.start_profile = static_cast<uint8_t>((b >> 2) % 5);
    opts.apply_delay = (b >> 5) & 3U;
    opts.source_name = "fuzz.txt";
    std::istringstream in(text);
    std::ostringstream out, err;
    const int rc = dimctl::replay::run_replay(in, out, err, opts);
    // An in-memory stream cannot fail to read: the input is good (0) or bad (2, with a reason).
    if (rc == dimctl::kExitOk && !err.str().empty()) std::abort();
    if (rc == dimctl::kExitUsage && err.str().empty()) std::abort();
    if (rc != dimctl::kExitOk && rc != dimctl::kExitUsage) std::abort();
  }
  return 0;
}
