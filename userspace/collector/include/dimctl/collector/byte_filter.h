// Device filter of the optional per-skb byte counter (collectors.skb_bytes).
// The BPF program counts only the ifindexes in skb_bytes_ifidx (when loaded with
// targ_bytes_filter). match_devices() resolves the configured globs against the devices of the
// collector's network namespace; SkbBytesFilter keeps the map equal to that set, writing only
// the differences, as devices appear, vanish or are renamed. Pure logic over an IfindexSet
// (unit-tested with a fake; the real one is the BPF hash map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::collector {

// ifindexes of the devices whose name matches at least one glob (matches_any_glob(), as the
// config's selectors). `devices`: ifindex -> name.
std::set<uint32_t> match_devices(const std::map<uint32_t, std::string>& devices,
                                 const std::vector<std::string>& globs);

// A set of ifindexes held elsewhere (the BPF map).
class IfindexSet {
 public:
  virtual ~IfindexSet() = default;
  virtual Result<void> add(uint32_t ifindex) = 0;
  virtual Result<void> remove(uint32_t ifindex) = 0;  // absent is not an error
};

// What one sync() changed (for logs).
struct FilterChange {
  std::vector<std::string> added;    // "name (ifindex N)"
  std::vector<std::string> removed;  // "name (ifindex N)", name as last seen (may be gone)
  size_t over_capacity = 0;          // matching devices left out (capacity reached)
  bool changed() const { return !added.empty() || !removed.empty(); }
};

class SkbBytesFilter {
 public:
  // capacity: most ifindexes the map holds (DIMCTL_SKB_BYTES_MAX_DEVICES); beyond it the
  // lowest ifindexes win, the others get no byte counter (over_capacity says how many).
  SkbBytesFilter(std::vector<std::string> globs, IfindexSet& set, size_t capacity)
      : globs_(std::move(globs)), set_(set), capacity_(capacity) {}

  // Re-resolves the globs against `devices` and writes only the differences to the set.
  // On a write error the selection holds what was written before it (a later sync retries).
  Result<FilterChange> sync(const std::map<uint32_t, std::string>& devices);

  bool selected(uint32_t ifindex) const { return selected_.count(ifindex) != 0; }
  const std::set<uint32_t>& selection() const { return selected_; }
  // Names of the selected devices at the last sync, in ifindex order.
  std::vector<std::string> names() const;
  const std::vector<std::string>& globs() const { return globs_; }

 private:
  std::vector<std::string> globs_;
  IfindexSet& set_;
  size_t capacity_;
  std::set<uint32_t> selected_;
  std::map<uint32_t, std::string> names_;
};

}  // namespace dimctl::collector
