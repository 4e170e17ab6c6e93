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

#include <cstring>
#include <filesystem>
#include <string>

#include "dimctl/common/fd.h"

namespace dimctl {

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
  std::error_code ec;
  auto target = std::filesystem::read_symlink(
      std::filesystem::path("/sys/class/net") / ifname / "device" / "driver", ec);
  if (!ec) return target.filename().string();
  return "";
}

}  // namespace dimctl
