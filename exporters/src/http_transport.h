// The HTTP server's transport: how bytes get to and from clients, whatever they ask for. An
// httplib::Server (GatedServer) whose accepted connections are owned by one event loop
// (ConnectionLoop, in http_transport.cc) instead of httplib's pool threads: the loop reads each
// request head with a deadline and a size cap, refuses what breaks an HttpLimits limit, and
// writes out what a response could not send at once; handler threads only route and render a
// complete head, never waiting on a client. Routes are registered on it as on any
// httplib::Server (http_routes.h).
#pragma once

#include <httplib.h>

#include <memory>

#include "dimctl/common/result.h"
#include "dimctl/exporters/http_server.h"

namespace dimctl::exporters {

class ConnectionLoop;
class TlsContext;

// httplib::Server whose accept loop hands every connection to a ConnectionLoop instead of a
// pool thread. httplib's own request parsing, routing and response writing stay.
class GatedServer final : public httplib::Server {
 public:
  // `tls`: every connection speaks TLS with its current context (nullptr: plain HTTP); it must
  // outlive the server.
  GatedServer(const HttpLimits& limits, int threads, TlsContext* tls = nullptr);
  ~GatedServer() override;
  GatedServer(const GatedServer&) = delete;
  GatedServer& operator=(const GatedServer&) = delete;

  // Starts the event loop and the handler threads: after the bind, before the accept loop.
  Result<void> start_loop();
  // Idempotent. After the accept loop has stopped, so that nothing adopts connections any more.
  void stop_loop();
  // httplib listens with a backlog of 5: a burst of connections (scrapers, or a flood we are
  // about to shed) would have SYNs dropped and retried a second later.
  void widen_backlog();

 private:
  // Called (through InlineTaskQueue) on httplib's accept thread for each accepted socket.
  bool process_and_close_socket(socket_t sock) override;

  std::unique_ptr<ConnectionLoop> loop_;
};

}  // namespace dimctl::exporters
