// The HTTP server's routes: what each path answers (/metrics, /healthz, /readyz, /api/v1/state,
// the landing page; docs/METRICS.md, "HTTP endpoints"), whatever carries the bytes
// (http_transport.h).
#pragma once

#include <httplib.h>

#include "dimctl/exporters/http_server.h"

namespace dimctl::exporters {

class BasicAuth;

// Registers every path on `server`. The handlers read `options` (collectables, state, alive, the
// web config's headers), which must outlive the server, and only read the immutable state
// through its getter: no lock is shared with the control loop. With `auth`, which must outlive
// the server too, a request without valid credentials is answered 401 (429 after too many
// failures) before it reaches a route, except the health paths with
// options.health_without_auth.
void add_routes(httplib::Server& server, const HttpServerOptions& options, BasicAuth* auth);

}  // namespace dimctl::exporters
