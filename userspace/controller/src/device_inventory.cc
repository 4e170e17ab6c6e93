#include "dimctl/controller/device_inventory.h"

#include <utility>

namespace dimctl::controller {

DeviceInventory::DeviceInventory(ListFn list, int64_t interval_ns)
    : list_(std::move(list)), interval_ns_(interval_ns) {}

bool DeviceInventory::refresh(int64_t now_ns) {
  if (last_ns_ && now_ns - *last_ns_ < interval_ns_) return false;
  names_ = list_();
  last_ns_ = now_ns;
  return true;
}

}  // namespace dimctl::controller
