// Test-only demo exporter: serves a synthetic ControllerState through the real StateCollector
// and HttpServer so the e2e test can point a real Prometheus at it without BPF or a NIC.
// The state moves: each second loops and eth0 queue 0's counters advance, so rate() works.
//
//   state_server [--address 127.0.0.1:0] [--port-file FILE] [--web.config.file WEB]
//                [--web.health-without-auth]
// Prints "listening on HOST:PORT" and writes PORT to FILE once bound; exits on SIGTERM/SIGINT.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/state_collector.h"
#include "dimctl/exporters/web_config.h"
#include "dimctl/seam/clock.h"
#include "unit/exporters/fake_state.h"

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace dimctl;
  std::string address = "127.0.0.1:0";
  std::string port_file;
  std::string web_config;
  bool health_without_auth = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--address" && i + 1 < argc) {
      address = argv[++i];
    } else if (a == "--port-file" && i + 1 < argc) {
      port_file = argv[++i];
    } else if (a == "--web.config.file" && i + 1 < argc) {
      web_config = argv[++i];
    } else if (a == "--web.health-without-auth") {
      health_without_auth = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--address HOST:PORT] [--port-file FILE] [--web.config.file WEB] "
                   "[--web.health-without-auth]\n",
                   argv[0]);
      return 2;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  std::mutex mu;
  std::shared_ptr<const seam::ControllerState> state;
  seam::MonotonicClock clock;
  auto publish = [&](uint64_t tick) {
    auto s = std::make_shared<seam::ControllerState>(testing::full_fake_state());
    s->time_ns = clock.now_ns();
    s->loops_total += tick;
    // Queue 0 keeps its fake-state values at tick 0 (packets 50000, the value the e2e test
    // expects first) and then grows by 1000 packets / 20 events per tick.
    s->queues[0].counters.packets += 1000 * tick;
    s->queues[0].counters.polls += 20 * tick;
    std::lock_guard<std::mutex> l(mu);
    state = std::move(s);
  };
  publish(0);
  exporters::StateGetter getter = [&] {
    std::lock_guard<std::mutex> l(mu);
    return state;
  };
  auto collector = exporters::StateCollector::create(getter);
  if (!collector) {
    std::fprintf(stderr, "state_server: %s\n", collector.error().message().c_str());
    return 1;
  }
  exporters::HttpServerOptions o;
  auto parsed = dimctl::parse_listen_address(address, dimctl::PortZero::kKernelPicks);
  if (!parsed) {
    std::fprintf(stderr, "state_server: %s\n", parsed.error().message().c_str());
    return 2;
  }
  o.address = *parsed;
  o.collectables = {*collector};
  o.state = getter;
  o.alive = exporters::liveness_from_state(getter, std::chrono::seconds(1));
  if (!web_config.empty()) {
    auto web = exporters::load_web_config(web_config);
    if (!web) {
      std::fprintf(stderr, "state_server: %s\n", web.error().message().c_str());
      return 2;
    }
    o.web = std::make_shared<const exporters::WebConfig>(std::move(*web));
    o.health_without_auth = health_without_auth;
  }
  auto server = exporters::HttpServer::start(std::move(o));
  if (!server) {
    std::fprintf(stderr, "state_server: %s\n", server.error().message().c_str());
    return 1;
  }
  std::printf("listening on %s\n", (*server)->bound_address().c_str());
  std::fflush(stdout);
  if (!port_file.empty()) {
    // Write then rename so a reader never sees a half-written file.
    std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << (*server)->port() << "\n";
    std::rename(tmp.c_str(), port_file.c_str());
  }
  // Republish each second; the stop flag is checked every 100 ms so SIGTERM is prompt.
  uint64_t tick = 0;
  for (int i = 1; !g_stop; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (i % 10 == 0) publish(++tick);
  }
  return 0;
}
