#include "dimctl/exporters/http_client.h"

#include <httplib.h>

#include "dimctl/exporters/http_server.h"

namespace dimctl::exporters {

Result<HttpResponse> http_get(std::string_view address, std::string_view path,
                              std::chrono::milliseconds timeout) {
  auto addr = parse_listen_address(address);
  if (!addr) return fail(std::move(addr).error());
  // A wildcard address (":port", "0.0.0.0:port", "[::]:port") means this host to a client. A
  // ":port" server listens on IPv4 in every case (dual-stack or IPv4 fallback): use 127.0.0.1.
  std::string host = addr->host;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  httplib::Client cli(host, addr->port);
  const auto sec = static_cast<time_t>(timeout.count() / 1000);
  const auto usec = static_cast<time_t>((timeout.count() % 1000) * 1000);
  cli.set_connection_timeout(sec, usec);
  cli.set_read_timeout(sec, usec);
  cli.set_write_timeout(sec, usec);
  auto res = cli.Get(std::string(path));
  if (!res) {
    // httplib's names are terse ("Connection"); say what kind of failure it was.
    return DIMCTL_FAIL(0, "GET http://{}{} failed: {} error", addr->to_string(), path,
                       httplib::to_string(res.error()));
  }
  HttpResponse out;
  out.status = res->status;
  out.content_type = res->get_header_value("Content-Type");
  out.body = std::move(res->body);
  return out;
}

}  // namespace dimctl::exporters
