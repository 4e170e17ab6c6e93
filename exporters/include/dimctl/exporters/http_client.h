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

// GET http://<address><path>. `address` as for parse_listen_address; a wildcard host means this
// host (":port" and "0.0.0.0:port": 127.0.0.1, "[::]:port": ::1).
// Transport failures (refused, timeout) are errors naming the address; any HTTP status is a
// response.
Result<HttpResponse> http_get(std::string_view address, std::string_view path,
                              std::chrono::milliseconds timeout = std::chrono::seconds(3));

}  // namespace dimctl::exporters
