// Where an HTTP endpoint listens, the one grammar of the config's metrics.listen, the daemon's
// --web.listen-address, `dimctl status --address` and the exporter's bind, so that what one
// accepts the others accept, and what was parsed is what binds:
//
//   "host:port"      host an IPv4 literal or "localhost" (no name resolution: a metrics
//                    endpoint must not depend on DNS at start-up)
//   "[v6addr]:port"  an IPv6 literal in brackets
//   ":port"          the empty host: every IPv4 and IPv6 address (HttpServer::start says how)
//
// port 1..65535, or 0 where the caller lets the kernel pick a free port (tests, helpers that
// print where they listen): a daemon's endpoint on a port nobody knows is useless to a scraper,
// so the config and --web.listen-address refuse it. Library dimctl::vocab.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dimctl/common/result.h"

namespace dimctl {

// The daemon's metrics endpoint unless configured otherwise: loopback only.
inline constexpr std::string_view kDefaultListenAddress = "127.0.0.1:9977";

struct ListenAddress {
  std::string host;  // without brackets ("::1"); empty = all addresses, IPv4 and IPv6
  uint16_t port = 0;
  // "host:port", "[v6]:port", ":port": parses back to the same address.
  std::string to_string() const;
  bool operator==(const ListenAddress&) const = default;
};

// kDefaultListenAddress, parsed.
ListenAddress default_listen_address();

enum class PortZero : uint8_t {
  kRefused,      // the config, --web.listen-address, `dimctl status --address`
  kKernelPicks,  // bind a free port; HttpServer::bound_address() says which
};

// Errors name the text and what is wrong with it ("bad listen address 'x:1': 'x' is not an
// IPv4 address ...").
Result<ListenAddress> parse_listen_address(std::string_view text,
                                           PortZero zero = PortZero::kRefused);

}  // namespace dimctl
