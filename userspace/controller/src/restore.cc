// restore(): every original this controller recorded put back, at exit or on request; after it
// nothing more is written.
#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dimctl/controller/controller.h"
#include "slots.h"

namespace dimctl::controller {

namespace {

// What the kernel answers for a device that no longer exists (netlink by name: ENODEV; the
// per-queue ioctl: ENODEV or ENXIO).
bool is_gone(const Error& e) {
  return e.code() == ENODEV || e.code() == ENXIO;
}

}  // namespace

Result<void> Controller::restore() {
  writes_disabled_ = true;
  size_t failures = 0;
  std::optional<Error> first;
  auto failed = [&](Error e) {
    ++failures;
    spdlog::warn("restore: {}", e.message());
    if (!first) first = std::move(e);
  };
  follow_devices(io_.clock.now_ns());  // a device renamed since the last inventory: its new name
  for (const std::string& name : net_names_with_originals()) {
    if (records_.drifted(name)) {
      spdlog::warn("restore: {} changed by another writer since; left as it is", name);
      if (auto f = io_.originals.forget_net(name); !f) failed(std::move(f).error());
      if (auto f = napis_.forget(name); !f) failed(std::move(f).error());
      continue;
    }
    if (auto r = release_net(name); !r) {
      // A device that no longer exists holds nothing to put back. Its records stay: the daemon's
      // exit pass over the OriginalsStore reports it as gone and drops it.
      if (is_gone(r.error())) {
        spdlog::info("restore: {} no longer exists; nothing to put back", name);
        continue;
      }
      failed(std::move(r).error());
    }
  }
  for (const std::string& name : rdma_names_with_originals()) {
    if (records_.drifted("rdma:" + name) || io_.rdma == nullptr) continue;
    if (auto r = release_rdma(name); !r) failed(std::move(r).error());
  }
  if (first) {
    return fail(std::move(*first).wrap(fmt::format("{} restore(s) failed", failures)));
  }
  return ok();
}

}  // namespace dimctl::controller
