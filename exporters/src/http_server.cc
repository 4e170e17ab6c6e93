#include "dimctl/exporters/http_server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "basic_auth.h"
#include "http_routes.h"
#include "http_transport.h"
#include "tls_context.h"

namespace dimctl::exporters {

struct HttpServer::Impl {
  Impl(HttpServerOptions o, std::unique_ptr<TlsContext> t, std::unique_ptr<BasicAuth> a)
      : options(std::move(o)),
        tls(std::move(t)),
        auth(std::move(a)),
        server(options.limits, options.threads, tls.get()) {}

  HttpServerOptions options;        // read by the routes: outlives the server
  std::unique_ptr<TlsContext> tls;  // nullptr: plain HTTP
  std::unique_ptr<BasicAuth> auth;  // nullptr: no basic_auth_users
  ListenAddress address;
  GatedServer server;
  std::thread thread;
};

namespace {

// errno of a failed IPv6 wildcard bind that means "this host has no IPv6", not "port taken".
bool ipv6_unavailable(int err) {
  return err == EAFNOSUPPORT || err == EPFNOSUPPORT || err == EPROTONOSUPPORT ||
         err == EADDRNOTAVAIL;
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(HttpServerOptions options) {
  // Parsed before it came here (parse_listen_address): what was checked is what binds.
  const ListenAddress addr = options.address;
  std::unique_ptr<TlsContext> tls;
  std::unique_ptr<BasicAuth> auth;
  if (options.web) {
    const WebConfig& web = *options.web;
    if (web.tls.enabled()) {
      auto t = TlsContext::create(web.tls);
      if (!t) return fail(std::move(t).error().wrap(fmt::format("http server: {}", web.source)));
      tls = std::move(*t);
    }
    if (!web.users.empty()) auth = std::make_unique<BasicAuth>(web.users);
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(tls), std::move(auth));
  impl->address = addr;
  // httplib's default sets SO_REUSEPORT, which lets a second daemon bind the same port and the
  // kernel split scrapes between the two. SO_REUSEADDR alone still allows a quick restart.
  impl->server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  add_routes(impl->server, impl->options, impl->auth.get());

  // An empty host ("all addresses") binds the IPv6 wildcard: httplib clears IPV6_V6ONLY on every
  // IPv6 socket it creates (after our socket options, whatever net.ipv6.bindv6only says), so
  // that one socket also accepts IPv4 (as v4-mapped addresses). It still works with
  // net.ipv6.conf.*.disable_ipv6=1. Only when the kernel has no IPv6 at all (ipv6.disable=1:
  // no AF_INET6 sockets) do we fall back to the IPv4 wildcard.
  const bool all_addresses = addr.host.empty();
  auto try_bind = [&impl](const std::string& host, uint16_t port) -> int {
    errno = 0;
    if (port == 0) return impl->server.bind_to_any_port(host);
    return impl->server.bind_to_port(host, port) ? port : -1;
  };
  int port = try_bind(all_addresses ? "::" : addr.host, addr.port);
  if (port <= 0 && all_addresses && ipv6_unavailable(errno)) {
    const int v6_errno = errno;
    port = try_bind("0.0.0.0", addr.port);
    if (port > 0) {
      spdlog::info("http server: no IPv6 on this host ({}); listening on IPv4 only, 0.0.0.0:{}",
                   std::strerror(v6_errno), port);
      impl->address.host = "0.0.0.0";
    }
  }
  if (port <= 0) {
    return DIMCTL_FAIL(errno, "http server: cannot listen on {}", addr.to_string());
  }
  impl->address.port = static_cast<uint16_t>(port);
  impl->server.widen_backlog();
  if (auto started = impl->server.start_loop(); !started) return fail(std::move(started).error());

  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop runs, so a stop() racing the thread start
  // would hang the join; wait (bounded) until it is running.
  for (int i = 0; i < 500 && !raw->server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!raw->server.is_running()) {
    raw->server.stop();
    if (raw->thread.joinable()) raw->thread.detach();  // cannot happen in practice; never hang
    return DIMCTL_FAIL(0, "http server: accept loop on {} did not start", raw->address.to_string());
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->server.stop_loop();  // after the accept thread: nothing adopts connections any more
}

uint16_t HttpServer::port() const {
  return impl_->address.port;
}
std::string HttpServer::bound_address() const {
  return impl_->address.to_string();
}
bool HttpServer::tls() const {
  return impl_->tls != nullptr;
}

}  // namespace dimctl::exporters
