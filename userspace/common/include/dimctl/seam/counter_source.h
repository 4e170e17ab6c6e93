// CounterSource: where the controller gets its counters from (BPF collector in the daemon,
// the simulator in bench/, fakes in tests).
#pragma once

#include <utility>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/controller_state.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::seam {

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  // A snapshot of every live queue and CQ. A queue or CQ absent from the snapshot is gone.
  virtual Result<Snapshot> sample() = 0;

  // The same snapshot, written into `out`. The controller calls this every period with the one
  // Snapshot it keeps, and does not modify it between calls, so `out` holds what this source
  // wrote last time (or is empty): a source may update it in place instead of rebuilding 10k
  // entries with their device names every period. On failure `out` may be left half-written;
  // the caller must not use it. The default rebuilds through sample().
  virtual Result<void> sample_into(Snapshot& out) {
    auto r = sample();
    if (!r) return fail(std::move(r).error());
    out = std::move(r).value();
    return ok();
  }

  // The source's own programs (attach status, run time) and event drops, for the published
  // view: the controller asks when it publishes, not every period, since each answer costs the
  // BPF collector a few system calls. Sources without programs have none.
  virtual std::vector<ProgramView> programs() const { return {}; }
  virtual std::vector<BpfDropView> drops_by_reason() const { return {}; }
};

}  // namespace dimctl::seam
