// Device identity helpers for policy selectors and device lists.
//
// net_driver(): the kernel driver of a net device in the caller's network namespace, for
// policy selectors (`match.driver`). Physical devices name it through the sysfs
// device/driver link; virtual ones (tun, veth, bridge) only through ethtool's GDRVINFO, which
// therefore comes first. "" when neither works (device gone, no ethtool ops).
#pragma once

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dimctl/common/fd.h"
#include "dimctl/common/result.h"

namespace dimctl {

// The driver named by a sysfs class entry's device/driver link ("" when there is none).
inline std::string sysfs_driver(const std::filesystem::path& class_dev) {
  std::error_code ec;
  auto target = std::filesystem::read_symlink(class_dev / "device" / "driver", ec);
  return ec ? std::string() : target.filename().string();
}

inline std::string net_driver(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) return "";
  Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (sock.valid()) {
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
    ifr.ifr_data = reinterpret_cast<char*>(&info);
    if (::ioctl(sock.get(), SIOCETHTOOL, &ifr) == 0 && info.driver[0] != '\0') {
      return std::string(info.driver, strnlen(info.driver, sizeof(info.driver)));
    }
  }
  return sysfs_driver(std::filesystem::path("/sys/class/net") / ifname);
}

// The kernel driver of an IB device (sysfs device/driver link); "" for soft devices without a
// parent device (rxe, siw) or when unknown.
inline std::string rdma_driver(const std::string& ibdev) {
  return sysfs_driver(std::filesystem::path("/sys/class/infiniband") / ibdev);
}

// Every net device of the caller's network namespace, ifindex -> name.
inline Result<std::map<uint32_t, std::string>> net_devices() {
  struct if_nameindex* list = ::if_nameindex();
  if (list == nullptr) return DIMCTL_FAIL(errno, "if_nameindex");
  std::map<uint32_t, std::string> out;
  for (const struct if_nameindex* i = list; i->if_index != 0 && i->if_name != nullptr; ++i) {
    out.emplace(i->if_index, i->if_name);
  }
  ::if_freenameindex(list);
  return out;
}

// A device's identity across renames, in the caller's network namespace: the ifindex a name has
// now, the name an ifindex has now (0 / "" when there is no such device).
inline uint32_t net_ifindex(const std::string& ifname) {
  return ::if_nametoindex(ifname.c_str());
}
inline std::string net_name(uint32_t ifindex) {
  char buf[IF_NAMESIZE] = {};
  return ::if_indextoname(ifindex, buf) != nullptr ? std::string(buf) : std::string();
}

// Names of every net device of the caller's network namespace except loopback ({} when the
// list cannot be read).
inline std::vector<std::string> net_device_names() {
  std::vector<std::string> out;
  if (auto devices = net_devices()) {
    for (auto& [ifindex, name] : *devices) {
      if (name != "lo") out.push_back(std::move(name));
    }
  }
  return out;
}

}  // namespace dimctl
