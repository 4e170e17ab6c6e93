#include "dimctl/common/listen_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>

namespace dimctl {

std::string ListenAddress::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  // An empty host prints as ":port", which parses back to the same meaning.
  return fmt::format("{}:{}", host, port);
}

Result<ListenAddress> parse_listen_address(std::string_view text, PortZero zero) {
  auto bad = [&](std::string why) {
    return DIMCTL_FAIL(0, "bad listen address '{}': {}", text, why);
  };
  ListenAddress a;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("expected [IPv6]:port, e.g. [::1]:9977");
    }
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
    in6_addr a6{};
    if (inet_pton(AF_INET6, a.host.c_str(), &a6) != 1) {
      return bad(fmt::format("'{}' is not an IPv6 address", a.host));
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return bad("expected host:port, e.g. 127.0.0.1:9977 (or :9977 for every address)");
    }
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) {
      return bad("IPv6 addresses must be in brackets, e.g. [::1]:9977");
    }
    in_addr a4{};
    if (!a.host.empty() && a.host != "localhost" && inet_pton(AF_INET, a.host.c_str(), &a4) != 1) {
      return bad(fmt::format(
          "'{}' is not an IPv4 address (host names other than localhost are not resolved)",
          a.host));
    }
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  const unsigned lowest = zero == PortZero::kKernelPicks ? 0 : 1;
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535 ||
      value < lowest) {
    return bad(fmt::format("port '{}' is not a number in {}..65535", port, lowest));
  }
  a.port = static_cast<uint16_t>(value);
  return a;
}

ListenAddress default_listen_address() {
  return *parse_listen_address(kDefaultListenAddress);
}

}  // namespace dimctl
