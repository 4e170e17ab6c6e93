// DeviceInventory: the net devices of the controller's network namespace, with or without NAPI
// traffic (ControllerOptions::list_net_devices), listed again once per interval: a netlink dump
// is too costly for every period.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dimctl::controller {

class DeviceInventory {
 public:
  using ListFn = std::function<std::vector<std::string>()>;

  // An empty `list`: no inventory (devices are known only through their queues).
  DeviceInventory(ListFn list, int64_t interval_ns);

  bool enabled() const { return static_cast<bool>(list_); }
  // Lists the devices again when the interval has passed since the last listing (or none was
  // made); true when it did.
  bool refresh(int64_t now_ns);
  // The devices of the last listing.
  const std::vector<std::string>& names() const { return names_; }

 private:
  ListFn list_;
  int64_t interval_ns_;
  std::vector<std::string> names_;
  std::optional<int64_t> last_ns_;
};

}  // namespace dimctl::controller
