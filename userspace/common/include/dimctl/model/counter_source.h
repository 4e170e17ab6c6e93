// CounterSource: where the controller gets its counters from (BPF collector in the daemon,
// the simulator in bench/, fakes in tests).
#pragma once

#include "dimctl/common/result.h"
#include "dimctl/model/snapshot.h"

namespace dimctl::model {

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  // A snapshot of every live queue and CQ. A queue or CQ absent from the snapshot is gone.
  virtual Result<Snapshot> sample() = 0;
};

}  // namespace dimctl::model
