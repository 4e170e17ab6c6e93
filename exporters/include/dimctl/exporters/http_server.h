// HttpServer: the daemon's one HTTP endpoint (cpp-httplib on its own thread). prometheus-cpp's
// Exposer cannot serve health endpoints (jupp0r/prometheus-cpp#716), so we serve everything:
//
//   /metrics        text exposition 0.0.4 of the registered collectables
//   /healthz        200 while `alive()` holds (control loop published recently), else 503
//   /readyz         200 when the published state says ready, else 503
//   /-/healthy, /-/ready   the same, under the Prometheus-family paths
//   /api/v1/state   the whole ControllerState as JSON (dimctl status / dimctl top)
//   /               landing page with links
//
// RAII: start() binds and starts serving; the destructor stops and joins. Handlers only read
// the immutable state through the getter, so no lock is shared with the control loop.
#pragma once

#include <prometheus/collectable.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/exporters/state_collector.h"

namespace dimctl::exporters {

inline constexpr std::string_view kDefaultListenAddress = "127.0.0.1:9977";

struct ListenAddress {
  std::string host;  // without brackets ("::1"); empty = all addresses, IPv4 and IPv6
  uint16_t port = 0;
  std::string to_string() const;  // "host:port", "[v6]:port", ":port"
};

// "host:port", "[v6addr]:port" or ":port" (empty host). Port 0 = ephemeral. What the server
// binds for each form:
//   ":port"           all addresses, IPv4 and IPv6: the IPv6 wildcard, dual-stack; the IPv4
//                     wildcard (logged) when the kernel has no IPv6 at all
//   "0.0.0.0:port"    every IPv4 address only
//   "[::]:port"       every IPv6 address, and IPv4 too: httplib clears IPV6_V6ONLY whatever
//                     net.ipv6.bindv6only says; fails when the kernel has no IPv6
//   "127.0.0.1:port", "[::1]:port"   loopback only
Result<ListenAddress> parse_listen_address(std::string_view text);

struct HttpServerOptions {
  std::string address = std::string(kDefaultListenAddress);
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables;  // rendered on /metrics
  StateGetter state;                                                 // /readyz, /api/v1/state
  std::function<bool()> alive;  // /healthz; unset = alive once a state was published
  int threads = 2;              // handler threads (scrapes are cheap, keep the footprint small)
};

class HttpServer {
 public:
  // Binds (failure names the address) and starts the serving thread.
  static Result<std::unique_ptr<HttpServer>> start(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;  // the bound port (useful with port 0)
  // "host:port" with the bound port; ":port" for a dual-stack all-addresses listener, and
  // "0.0.0.0:port" when ":port" fell back to IPv4. A client can GET from it (http_get).
  std::string bound_address() const;
  void stop();  // idempotent; the destructor calls it

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Liveness from the published state's CLOCK_MONOTONIC time: alive while the newest state (or,
// before the first one, the moment this was created) is at most `periods` periods old.
std::function<bool()> liveness_from_state(StateGetter state, std::chrono::nanoseconds period,
                                          int periods = 3, std::function<int64_t()> now_ns = {});

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace dimctl::exporters
