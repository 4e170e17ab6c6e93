// A minimal HTTP GET for the CLI (`dimctl status`, `dimctl top`) so that commands do not include
// cpp-httplib themselves.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "dimctl/common/result.h"

namespace dimctl::exporters {

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// How to reach a secured endpoint (a daemon with --web.config.file): the client half of the
// exporter-toolkit web config.
struct HttpClientOptions {
  bool tls = false;
  std::string ca_file;  // verify the server against it; "" = the system store
  bool insecure_skip_verify = false;
  std::string cert_file;  // client certificate and its key ("" = none)
  std::string key_file;
  // The name the server certificate must carry when it differs from the address's host (a
  // certificate for "dimctl" served on a node's IP); the connection still goes to the address.
  std::string server_name;
  std::string user;  // basic auth when not empty
  std::string password;
};

// GET http://<address><path>. `address` as for parse_listen_address; a wildcard host means this
// host (":port" and "0.0.0.0:port": 127.0.0.1, "[::]:port": ::1).
// Transport failures (refused, timeout) are errors naming the address; any HTTP status is a
// response.
Result<HttpResponse> http_get(std::string_view address, std::string_view path,
                              std::chrono::milliseconds timeout = std::chrono::seconds(3));

// The same over https:// when `opts.tls`, with basic auth when `opts.user` is set. TLS failures
// say which (the server certificate's verification, the client certificate files).
Result<HttpResponse> http_get(std::string_view address, std::string_view path,
                              const HttpClientOptions& opts,
                              std::chrono::milliseconds timeout = std::chrono::seconds(3));

}  // namespace dimctl::exporters
