// The HTTP server's routes: what each path answers (/metrics, /healthz, /readyz, /api/v1/state,
// the landing page; docs/METRICS.md, "HTTP endpoints"), whatever carries the bytes
// (http_transport.h).
#pragma once

#include <httplib.h>

#include "dimctl/exporters/http_server.h"

namespace dimctl::exporters {

// Registers every path on `server`. The handlers read `options` (collectables, state, alive),
// which must outlive the server, and only read the immutable state through its getter: no lock
// is shared with the control loop.
void add_routes(httplib::Server& server, const HttpServerOptions& options);

}  // namespace dimctl::exporters
