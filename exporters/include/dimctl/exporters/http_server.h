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
//
// Under abuse (idle or slowloris connections, endless or oversized heads, clients that never
// read) the server keeps answering: no handler thread ever waits on a client. One event-loop
// thread reads each request head with a deadline and a size cap and writes out what a response
// could not send at once; the handler threads only route and render a complete head. Limits in
// HttpLimits (docs/METRICS.md, "Limits").
#pragma once

#include <prometheus/collectable.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/listen_address.h"
#include "dimctl/common/result.h"
#include "dimctl/exporters/state_collector.h"
#include "dimctl/exporters/web_config.h"

namespace dimctl::exporters {

using ::dimctl::kDefaultListenAddress;

// The address grammar is dimctl's one (dimctl/common/listen_address.h). What the server binds
// for each form:
//   ":port"           all addresses, IPv4 and IPv6: the IPv6 wildcard, dual-stack; the IPv4
//                     wildcard (logged) when the kernel has no IPv6 at all
//   "0.0.0.0:port"    every IPv4 address only
//   "[::]:port"       every IPv6 address, and IPv4 too: httplib clears IPV6_V6ONLY whatever
//                     net.ipv6.bindv6only says; fails when the kernel has no IPv6
//   "127.0.0.1:port", "[::1]:port"   loopback only
using ::dimctl::default_listen_address;
using ::dimctl::ListenAddress;
using ::dimctl::parse_listen_address;
using ::dimctl::PortZero;

// What one client may hold. The defaults are the daemon's (documented in docs/METRICS.md); an
// operator has no reason to change them, tests shorten them.
struct HttpLimits {
  // Connections open at once. A new connection beyond it closes the one that has waited
  // longest for a request head (idle keep-alive, slowloris); when every connection is busy
  // being served, the new one is closed. 256 + the daemon's own descriptors fit the default
  // RLIMIT_NOFILE of 1024.
  std::size_t max_connections = 256;
  // Request line + headers + the blank line. Beyond it: 414 (no complete request line) or 431,
  // then close. Bytes past it are never read, so a head costs at most this much memory.
  std::size_t max_head_bytes = 8192;
  std::size_t max_header_lines = 100;  // beyond: 431 and close
  // From accept (or the end of the previous response on a keep-alive connection) to the end of
  // the request head, however the bytes trickle in: then 408 (if part of a head came) and close.
  std::chrono::milliseconds head_timeout{5000};
  // To hand a response to the kernel; a client that does not read is closed after it.
  std::chrono::milliseconds write_timeout{10000};
  // Response bytes waiting for slow readers, all connections together. A response that would
  // exceed it closes its connection, unless it is the only one waiting.
  std::size_t max_pending_output = 32u << 20;
  std::size_t max_requests_per_connection = 100;  // then "Connection: close"
};

struct HttpServerOptions {
  ListenAddress address = default_listen_address();
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables;  // rendered on /metrics
  StateGetter state;                                                 // /readyz, /api/v1/state
  std::function<bool()> alive;  // /healthz; unset = alive once a state was published
  int threads = 2;              // handler threads (scrapes are cheap, keep the footprint small)
  HttpLimits limits;
  // --web.config.file: TLS, basic auth and response headers (web_config.h). Unset: plain HTTP,
  // no authentication.
  std::shared_ptr<const WebConfig> web;
  // With basic_auth_users, /healthz, /readyz, /-/healthy and /-/ready still answer without
  // credentials (kubelet probes send none; they say only alive/ready). Off: every path needs them.
  bool health_without_auth = false;
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
  bool tls() const;  // serving https (the web config's tls_server_config)
  void stop();       // idempotent; the destructor calls it

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
