#include "http_routes.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <string>

#include "basic_auth.h"
#include "dimctl/exporters/state_json.h"
#include "dimctl/seam/clock.h"

namespace dimctl::exporters {
namespace {

constexpr const char* kLanding = R"(<!doctype html>
<html><head><title>dimctl</title></head>
<body>
<h1>dimctl</h1>
<p>Interrupt moderation (net DIM, RDMA DIM) per queue and per CQ.</p>
<ul>
<li><a href="/metrics">/metrics</a> Prometheus metrics</li>
<li><a href="/healthz">/healthz</a> liveness (control loop running)</li>
<li><a href="/readyz">/readyz</a> readiness (collector attached, first snapshot taken)</li>
<li><a href="/api/v1/state">/api/v1/state</a> controller state as JSON (dimctl status, dimctl top)</li>
</ul>
</body></html>
)";

// The paths a kubelet probe asks; health_without_auth leaves them open.
bool health_path(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/-/healthy" || path == "/-/ready";
}

}  // namespace

void add_routes(httplib::Server& server, const HttpServerOptions& options, BasicAuth* auth) {
  const HttpServerOptions* o = &options;
  if (options.web && !options.web->headers.empty()) {
    // On every response, the refusals below included.
    httplib::Headers headers;
    for (const auto& [name, value] : options.web->headers) headers.emplace(name, value);
    server.set_default_headers(std::move(headers));
  }
  if (auth) {
    server.set_pre_routing_handler([o, auth](const httplib::Request& req, httplib::Response& res) {
      using R = httplib::Server::HandlerResponse;
      if (o->health_without_auth && health_path(req.path)) return R::Unhandled;
      switch (auth->check(req.get_header_value("Authorization"), req.remote_addr)) {
        case BasicAuth::Verdict::kOk:
          return R::Unhandled;
        case BasicAuth::Verdict::kRateLimited:
          res.status = 429;
          res.set_header("Retry-After", "1");
          res.set_content("too many failed attempts, try again later\n", "text/plain");
          return R::Handled;
        case BasicAuth::Verdict::kDenied:
          break;
      }
      res.status = 401;
      res.set_header("WWW-Authenticate", "Basic");
      res.set_content("Unauthorized\n", "text/plain");
      return R::Handled;
    });
  }
  auto state = [o]() -> std::shared_ptr<const seam::ControllerState> {
    return o->state ? o->state() : nullptr;
  };
  auto alive = [o, state] { return o->alive ? o->alive() : state() != nullptr; };

  server.Get("/metrics", [o](const httplib::Request&, httplib::Response& res) {
    try {
      res.set_content(render_text(o->collectables), std::string(kMetricsContentType));
    } catch (const std::exception& e) {
      // A throwing collectable must not take the server down; Prometheus records the failure.
      res.status = 500;
      res.set_content(std::string("metrics rendering failed: ") + e.what() + "\n", "text/plain");
    }
  });
  auto healthz = [alive](const httplib::Request&, httplib::Response& res) {
    bool ok = alive();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "control loop has not published a state recently\n",
                    "text/plain");
  };
  server.Get("/healthz", healthz);
  server.Get("/-/healthy", healthz);
  auto readyz = [state](const httplib::Request&, httplib::Response& res) {
    auto s = state();
    bool ok = s && s->ready;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ready\n" : "not ready\n", "text/plain");
  };
  server.Get("/readyz", readyz);
  server.Get("/-/ready", readyz);
  server.Get("/api/v1/state", [state](const httplib::Request&, httplib::Response& res) {
    auto s = state();
    if (!s) {
      res.status = 503;
      res.set_content(R"({"error":"no state published yet"})", "application/json");
      return;
    }
    res.set_content(state_to_json(*s).dump() + "\n", "application/json");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kLanding, "text/html; charset=utf-8");
  });
}

std::function<bool()> liveness_from_state(StateGetter state, std::chrono::nanoseconds period,
                                          int periods, std::function<int64_t()> now_ns) {
  if (!now_ns) now_ns = [] { return seam::MonotonicClock().now_ns(); };
  const int64_t started = now_ns();
  const int64_t limit = period.count() * std::max(1, periods);
  return [state = std::move(state), now_ns = std::move(now_ns), started, limit] {
    auto s = state ? state() : nullptr;
    int64_t last = s ? std::max(s->time_ns, started) : started;
    return now_ns() - last <= limit;
  };
}

}  // namespace dimctl::exporters
