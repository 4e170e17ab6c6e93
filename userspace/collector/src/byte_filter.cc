#include "dimctl/collector/byte_filter.h"

#include <fmt/format.h>

#include <iterator>

#include "dimctl/common/glob.h"

namespace dimctl::collector {

std::set<uint32_t> match_devices(const std::map<uint32_t, std::string>& devices,
                                 const std::vector<std::string>& globs) {
  std::set<uint32_t> out;
  for (const auto& [ifindex, name] : devices) {
    if (matches_any_glob(globs, name)) out.insert(ifindex);
  }
  return out;
}

Result<FilterChange> SkbBytesFilter::sync(const std::map<uint32_t, std::string>& devices) {
  FilterChange change;
  std::set<uint32_t> want = match_devices(devices, globs_);
  if (want.size() > capacity_) {
    change.over_capacity = want.size() - capacity_;
    want.erase(std::next(want.begin(), static_cast<std::ptrdiff_t>(capacity_)), want.end());
  }
  // Removals first: a full map makes room before additions.
  for (auto it = selected_.begin(); it != selected_.end();) {
    const uint32_t ifindex = *it;
    if (want.count(ifindex) != 0) {
      ++it;
      continue;
    }
    if (auto r = set_.remove(ifindex); !r) {
      return std::move(r).error().wrap(fmt::format("skb_bytes_ifidx: remove {}", ifindex));
    }
    it = selected_.erase(it);
    change.removed.push_back(fmt::format("{} (ifindex {})", names_[ifindex], ifindex));
    names_.erase(ifindex);
  }
  for (uint32_t ifindex : want) {
    const std::string& name = devices.at(ifindex);
    if (selected_.count(ifindex) != 0) {
      names_[ifindex] = name;  // renamed to another matching name: same device, same entry
      continue;
    }
    if (auto r = set_.add(ifindex); !r) {
      return std::move(r).error().wrap(fmt::format("skb_bytes_ifidx: add {}", ifindex));
    }
    selected_.insert(ifindex);
    names_[ifindex] = name;
    change.added.push_back(fmt::format("{} (ifindex {})", name, ifindex));
  }
  return change;
}

std::vector<std::string> SkbBytesFilter::names() const {
  std::vector<std::string> out;
  out.reserve(names_.size());
  for (const auto& [ifindex, name] : names_) out.push_back(name);
  return out;
}

}  // namespace dimctl::collector
