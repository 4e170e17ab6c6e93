#include "dimctl/controller/original_records.h"

#include <algorithm>

namespace dimctl::controller {

Original* OriginalRecords::find(const std::string& device, std::optional<uint32_t> queue) {
  if (queue) {
    auto it = queues_.find({device, *queue});
    return it != queues_.end() ? &it->second : nullptr;
  }
  auto it = devices_.find(device);
  return it != devices_.end() ? &it->second : nullptr;
}

Original& OriginalRecords::add(const std::string& device, std::optional<uint32_t> queue,
                               const Original& o) {
  return queue ? queues_.emplace(std::make_pair(device, *queue), o).first->second
               : devices_.emplace(device, o).first->second;
}

bool OriginalRecords::has_net(const std::string& device) const {
  if (devices_.count(device) != 0) return true;
  auto it = queues_.lower_bound({device, 0});
  return it != queues_.end() && it->first.first == device;
}

std::vector<std::string> OriginalRecords::net_names() const {
  std::vector<std::string> names;
  for (const auto& [name, o] : devices_) names.push_back(name);
  for (const auto& [key, o] : queues_) names.push_back(key.first);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

uint32_t OriginalRecords::recorded_ifindex(const std::string& device) const {
  if (auto it = devices_.find(device); it != devices_.end() && it->second.ifindex != 0) {
    return it->second.ifindex;
  }
  for (auto it = queues_.lower_bound({device, 0}); it != queues_.end() && it->first.first == device;
       ++it) {
    if (it->second.ifindex != 0) return it->second.ifindex;
  }
  return 0;
}

std::set<std::string> OriginalRecords::move(const Renames& renames) {
  std::map<std::string, Original> devices;
  std::map<std::pair<std::string, uint32_t>, Original> queues;
  std::set<std::string> drifted;
  for (const auto& [from, to] : renames) {
    if (auto n = devices_.extract(from)) devices.emplace(to, std::move(n.mapped()));
    for (auto it = queues_.lower_bound({from, 0});
         it != queues_.end() && it->first.first == from;) {
      queues.emplace(std::make_pair(to, it->first.second), std::move(it->second));
      it = queues_.erase(it);
    }
    if (drifted_.count(from) != 0) drifted.insert(to);
  }
  for (const auto& [from, to] : renames) {
    gone_since_.erase(from);
    gone_since_.erase(to);
  }
  for (auto& [to, o] : devices) devices_.insert_or_assign(to, std::move(o));
  for (auto& [key, o] : queues) queues_.insert_or_assign(key, std::move(o));
  drifted_.insert(drifted.begin(), drifted.end());
  return drifted;
}

void OriginalRecords::forget_net(const std::string& device) {
  devices_.erase(device);
  std::erase_if(queues_, [&](const auto& kv) { return kv.first.first == device; });
}

std::optional<bool> OriginalRecords::rdma(const std::string& device) const {
  auto it = rdma_.find(device);
  return it != rdma_.end() ? std::optional<bool>(it->second) : std::nullopt;
}

void OriginalRecords::add_rdma(const std::string& device, bool dim_enabled) {
  rdma_.emplace(device, dim_enabled);
}

void OriginalRecords::forget_rdma(const std::string& device) {
  rdma_.erase(device);
}

std::vector<std::string> OriginalRecords::rdma_names() const {
  std::vector<std::string> names;
  for (const auto& [name, original] : rdma_) names.push_back(name);
  return names;
}

}  // namespace dimctl::controller
