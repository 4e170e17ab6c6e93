// keep_devices: the part of a snapshot that `dimctl record --devices GLOB,...` records.
#pragma once

#include <string>
#include <vector>

#include "dimctl/seam/snapshot.h"

namespace dimctl::trace {

// `out` becomes `in` restricted to the queues of net devices and the CQs of IB devices whose
// name matches a glob (fnmatch(3), anchored, as in config selectors). The device table keeps the
// matching names in their order and the queues' device_ix are renumbered into it; queue and CQ
// order are kept. The CPU and IRQ times are kept whole: they belong to CPUs, not devices. `out`'s
// storage is reused (one call per recorded frame).
void keep_devices(const seam::Snapshot& in, const std::vector<std::string>& globs,
                  seam::Snapshot& out);

}  // namespace dimctl::trace
