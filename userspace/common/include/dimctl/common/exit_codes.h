// Process exit codes shared by every dimctl command.
#pragma once

namespace dimctl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // runtime failure (kernel refused, device vanished ...)
inline constexpr int kExitUsage = 2;    // bad command line, bad config or bad input file

}  // namespace dimctl
