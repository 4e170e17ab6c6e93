// NetdevDirectory: names and queue topology of the net devices in the collector's network
// namespace. The real one uses if_indextoname + netdev generic netlink (libmnl); tests fake it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::collector {

struct NapiInfo {
  int32_t queue = -1;                // RX queue served by this NAPI (lowest index if several)
  int32_t irq = -1;                  // NETDEV_A_NAPI_IRQ
  std::optional<uint64_t> rx_bytes;  // NETDEV_CMD_QSTATS_GET per-queue rx-bytes (cumulative)
};

class NetdevDirectory {
 public:
  virtual ~NetdevDirectory() = default;
  // Brings the view up to date for one sample; called once per sample, before any lookup.
  virtual Result<void> refresh() = 0;
  // The counters show a device or NAPI this view does not have: re-read the kernel's view now,
  // so that nothing is retired on a stale answer. At most once between two refresh() calls;
  // false when nothing was re-read (the view is already fresh, or the re-read failed).
  virtual bool reread() { return false; }
  // Device name, nullopt when the ifindex no longer exists (the NAPI is gone).
  virtual std::optional<std::string> ifname(uint32_t ifindex) const = 0;
  // True when netlink listed the NAPIs of this device (absence of one then means it is gone).
  virtual bool lists_napis(uint32_t ifindex) const = 0;
  virtual std::optional<NapiInfo> napi(uint32_t ifindex, uint32_t napi_id) const = 0;
  // False when napi() answers nullopt for every NAPI of the device (the kernel's netdev family
  // has nothing on it, e.g. before v6.8), so the aggregator need not ask per NAPI.
  virtual bool knows_napis(uint32_t /*ifindex*/) const { return true; }
  // Every net device of the namespace, ifindex -> name (only the skb byte counter's device
  // filter needs it; called once per sample while that filter is on).
  virtual Result<std::map<uint32_t, std::string>> devices() = 0;
};

// What the netdev family offered on the last refresh (for logs and docs).
struct NetdevCapabilities {
  bool family = false;      // "netdev" genl family resolved (v6.3+ for dev-get)
  bool queue_get = false;   // NETDEV_CMD_QUEUE_GET (v6.8)
  bool napi_get = false;    // NETDEV_CMD_NAPI_GET (v6.8)
  bool qstats_get = false;  // NETDEV_CMD_QSTATS_GET (v6.9) answered
};

// The kernel's view, read on change rather than every sample: the NAPIs, their queues and IRQs
// (netdev queue-get and napi-get dumps) are re-read after a link notification (RTMGRP_LINK:
// devices added, removed, renamed, brought up or down, features such as GRO changed), when the
// counters show a NAPI or device this view does not have (reread()), and at least every
// kTopologyMaxAge as a safety net; qstats (the per-queue byte counters, which change every
// sample) are dumped every sample only while some device reports them. Names come from the same
// link-notified cache. Without the notification socket, everything is re-read every sample.
class NetlinkNetdevDirectory final : public NetdevDirectory {
 public:
  static constexpr int64_t kTopologyMaxAgeNs = 10'000'000'000;

  NetlinkNetdevDirectory();
  ~NetlinkNetdevDirectory() override;
  Result<void> refresh() override;
  bool reread() override;
  std::optional<std::string> ifname(uint32_t ifindex) const override;
  bool lists_napis(uint32_t ifindex) const override;
  std::optional<NapiInfo> napi(uint32_t ifindex, uint32_t napi_id) const override;
  bool knows_napis(uint32_t ifindex) const override;
  // if_nameindex(3), cached: re-read only after a link notification (RTMGRP_LINK: device added,
  // removed, renamed ...), since a full RTM_GETLINK dump costs ~50 us with 4 devices and over
  // 1 ms with 100. Without the notification socket, re-read on every call.
  Result<std::map<uint32_t, std::string>> devices() override;
  const NetdevCapabilities& capabilities() const { return caps_; }

 private:
  Result<void> read_topology();
  Result<void> read_qstats();

  struct Impl;
  std::unique_ptr<Impl> impl_;
  NetdevCapabilities caps_;
  int64_t topology_read_ns_ = 0;  // CLOCK_MONOTONIC of the last topology read
  bool reread_used_ = false;      // reread() since the last refresh()
  // RX queues of each NAPI (a NAPI may serve several), for the qstats sums.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> napi_rxqs_;
  bool qstats_reported_ = false;  // the last qstats dump had an RX queue
  std::map<std::pair<uint32_t, uint32_t>, NapiInfo> napis_;
  std::map<uint32_t, bool> listed_;
};

}  // namespace dimctl::collector
