// Counts every operator new of the process, for tests and benchmarks that assert or report
// "no allocation per sample". Link count_allocations.cc into the binary (it replaces the global
// operator new/delete, so once per binary).
#pragma once

#include <cstdint>

namespace dimctl::testing {

// operator new calls since the process started.
uint64_t allocations_so_far();

}  // namespace dimctl::testing
