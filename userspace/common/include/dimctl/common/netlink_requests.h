// How many netlink requests this process sent, per family: what the daemon asks of the kernel
// every period is part of what it costs a busy host (rtnl and netdev locks, the dump's work), so
// it is counted where requests are sent and exported as dimctl_netlink_requests_total.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dimctl {

enum class NetlinkFamily : uint8_t { kEthtool, kNetdev, kRdma, kCount };

inline constexpr size_t kNetlinkFamilyCount = static_cast<size_t>(NetlinkFamily::kCount);
inline constexpr std::array<std::string_view, kNetlinkFamilyCount> kNetlinkFamilyNames = {
    "ethtool", "netdev", "rdma"};

namespace detail {
inline std::array<std::atomic<uint64_t>, kNetlinkFamilyCount> netlink_requests{};
}  // namespace detail

// One request sent (a dump counts once, however many replies it brings).
inline void count_netlink_request(NetlinkFamily f) noexcept {
  detail::netlink_requests[static_cast<size_t>(f)].fetch_add(1, std::memory_order_relaxed);
}

inline std::array<uint64_t, kNetlinkFamilyCount> netlink_requests() noexcept {
  std::array<uint64_t, kNetlinkFamilyCount> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = detail::netlink_requests[i].load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace dimctl
