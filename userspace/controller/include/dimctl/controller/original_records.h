// OriginalRecords: the controller's copy of what it recorded before its first writes (a net
// device's coalesce settings, a queue's, an RDMA device's DIM switch), which devices someone else
// changed after us (drift), and since when a recorded device has been gone. The OriginalsStore
// holds the same records durably; the controller writes there first and here after, so these
// say what this process must put back. NAPI records live in NapiWrites.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dimctl/seam/coalesce.h"

namespace dimctl::controller {

struct Original {
  seam::Coalesce values;   // as read right before our first write
  seam::Coalesce touched;  // fields we have sent since (a mask): what restore() puts back
  uint32_t ifindex = 0;    // the device's when recorded (0: unknown): it follows renames
};

class OriginalRecords {
 public:
  using Renames = std::vector<std::pair<std::string, std::string>>;

  // Net: a device-wide record (no queue) or a queue's; null when none.
  Original* find(const std::string& device, std::optional<uint32_t> queue);
  // Records `o` unless a record exists (then that one is kept); returns the record.
  Original& add(const std::string& device, std::optional<uint32_t> queue, const Original& o);
  // Whether `device` has a device-wide or queue record.
  bool has_net(const std::string& device) const;
  // Names with a device-wide or queue record, sorted, each once.
  std::vector<std::string> net_names() const;
  // The ifindex recorded with `device`'s first record that has one; 0 when none.
  uint32_t recorded_ifindex(const std::string& device) const;
  // `fn(queue, original)` for each queue record of `device`.
  template <typename Fn>
  void for_each_queue(const std::string& device, Fn fn) const {
    for (auto it = queues_.lower_bound({device, 0});
         it != queues_.end() && it->first.first == device; ++it) {
      fn(it->first.second, it->second);
    }
  }
  // Every record of `from` moves to `to`, all pairs at once (a swap of two names loses nothing);
  // drift moves with them. Names no longer gone either way. Returns the new names that drifted.
  std::set<std::string> move(const Renames& renames);
  // Drops every net record of `device` (device-wide and queues).
  void forget_net(const std::string& device);

  // RDMA: the DIM switch as it was before our first write.
  std::optional<bool> rdma(const std::string& device) const;
  void add_rdma(const std::string& device, bool dim_enabled);
  void forget_rdma(const std::string& device);
  std::vector<std::string> rdma_names() const;

  // Drift, by key: a net device's name, "rdma:" + an RDMA device's name.
  bool drifted(const std::string& key) const { return drifted_.count(key) != 0; }
  void mark_drifted(const std::string& key) { drifted_.insert(key); }

  // A recorded device's name names it again (or another device): no longer gone.
  void present(const std::string& device) { gone_since_.erase(device); }
  // Since when `device` has been gone: `now_ns` at the first call since it went.
  int64_t gone_since(const std::string& device, int64_t now_ns) {
    return gone_since_.try_emplace(device, now_ns).first->second;
  }

 private:
  std::map<std::string, Original> devices_;
  std::map<std::pair<std::string, uint32_t>, Original> queues_;
  std::map<std::string, bool> rdma_;
  std::set<std::string> drifted_;
  std::map<std::string, int64_t> gone_since_;
};

}  // namespace dimctl::controller
