// HttpServer on 127.0.0.1:0: every endpoint, health transitions, bind errors; JSON round trip.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "dimctl/exporters/http_client.h"
#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/state_json.h"
#include "unit/exporters/fake_state.h"

namespace dimctl::exporters {
namespace {

// What the control loop would do: publish a new immutable state now and then.
class Publisher {
 public:
  void publish(std::shared_ptr<const model::ControllerState> s) {
    std::lock_guard<std::mutex> l(mu_);
    state_ = std::move(s);
  }
  StateGetter getter() {
    return [this] {
      std::lock_guard<std::mutex> l(mu_);
      return state_;
    };
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const model::ControllerState> state_;
};

struct Fixture : ::testing::Test {
  Publisher pub;
  std::atomic<int64_t> now{5'000'000'000};
  std::shared_ptr<StateCollector> collector;
  std::unique_ptr<HttpServer> server;

  void SetUp() override {
    CollectorOptions opts;
    opts.version = "1.2.3";
    auto c = StateCollector::create(pub.getter(), opts);
    ASSERT_TRUE(c.ok()) << c.error().message();
    collector = *c;
    HttpServerOptions o;
    o.address = "127.0.0.1:0";
    o.collectables = {collector};
    o.state = pub.getter();
    o.alive = liveness_from_state(pub.getter(), std::chrono::milliseconds(100), 3,
                                  [this] { return now.load(); });
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message();
    server = std::move(*s);
    ASSERT_NE(server->port(), 0);
  }

  HttpResponse get(const std::string& path) {
    auto r = http_get(server->bound_address(), path);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    return r.ok() ? *r : HttpResponse{};
  }
};

TEST_F(Fixture, MetricsEndpoint) {
  pub.publish(std::make_shared<const model::ControllerState>(testing::full_fake_state()));
  auto r = get("/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("dimctl_build_info{version=\"1.2.3\"} 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("dimctl_napi_packets_total{device=\"eth0\",queue=\"0\",direction=\"rx\"} "
                        "50000\n"),
            std::string::npos)
      << r.body;
}

// Scrapes from several clients while the "control loop" keeps publishing: every response is a
// complete exposition (the HTTP threads only ever see whole immutable states).
TEST_F(Fixture, ConcurrentScrapesWhilePublishing) {
  std::atomic<bool> done{false};
  std::thread loop([&] {
    for (uint64_t i = 0; !done; ++i) {
      auto s = std::make_shared<model::ControllerState>(testing::full_fake_state());
      s->loops_total = i;
      pub.publish(s);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::atomic<int> bad{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 30; ++i) {
        auto r = http_get(server->bound_address(), "/metrics");
        if (!r.ok() || r->status != 200 ||
            r->body.find("dimctl_series_dropped_total{kind=\"cq\"} 0\n") == std::string::npos) {
          ++bad;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  done = true;
  loop.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(Fixture, HealthzFollowsThePublishedStateAge) {
  // No state yet, but within the start-up grace (3 periods of 100 ms): alive.
  EXPECT_EQ(get("/healthz").status, 200);
  now += 400'000'000;  // 400 ms after start, still nothing published: dead
  EXPECT_EQ(get("/healthz").status, 503);
  EXPECT_EQ(get("/-/healthy").status, 503);
  auto s = std::make_shared<model::ControllerState>(testing::full_fake_state());
  s->time_ns = now.load();
  pub.publish(s);
  EXPECT_EQ(get("/healthz").status, 200);
  now += 300'000'000;  // exactly 3 periods old: still alive
  EXPECT_EQ(get("/healthz").status, 200);
  now += 1;
  auto r = get("/healthz");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("not published"), std::string::npos) << r.body;
}

TEST_F(Fixture, ReadyzFollowsStateReady) {
  EXPECT_EQ(get("/readyz").status, 503);  // nothing published
  auto s = std::make_shared<model::ControllerState>(testing::full_fake_state());
  s->ready = false;
  pub.publish(s);
  EXPECT_EQ(get("/readyz").status, 503);
  EXPECT_EQ(get("/-/ready").status, 503);
  auto t = std::make_shared<model::ControllerState>(*s);
  t->ready = true;
  pub.publish(t);
  EXPECT_EQ(get("/readyz").status, 200);
  EXPECT_EQ(get("/-/ready").status, 200);
}

TEST_F(Fixture, StateApiServesTheWholeStateAsJson) {
  EXPECT_EQ(get("/api/v1/state").status, 503);
  auto fake = testing::full_fake_state();
  pub.publish(std::make_shared<const model::ControllerState>(fake));
  auto r = get("/api/v1/state");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j, state_to_json(fake));
  EXPECT_EQ(j["devices"][0]["applied"]["rx_usecs"], 62);
  EXPECT_EQ(j["queues"][2]["queue_label"], "napi9001");
}

TEST_F(Fixture, LandingPageAndUnknownPaths) {
  auto r = get("/");
  EXPECT_EQ(r.status, 200);
  for (const char* link : {"/metrics", "/healthz", "/readyz", "/api/v1/state"}) {
    EXPECT_NE(r.body.find(std::string("href=\"") + link + "\""), std::string::npos) << link;
  }
  EXPECT_EQ(get("/nope").status, 404);
}

TEST_F(Fixture, BindFailureNamesTheAddress) {
  HttpServerOptions o;
  o.address = server->bound_address();  // already in use by the fixture's server
  auto second = HttpServer::start(std::move(o));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message().find(server->bound_address()), std::string::npos)
      << second.error().message();
}

TEST_F(Fixture, StopIsIdempotentAndReleasesThePort) {
  const std::string addr = server->bound_address();
  server->stop();
  server->stop();
  EXPECT_FALSE(http_get(addr, "/healthz", std::chrono::milliseconds(500)).ok());
  server.reset();
}

TEST(HttpServer, Ipv6Loopback) {
  HttpServerOptions o;
  o.address = "[::1]:0";
  auto s = HttpServer::start(std::move(o));
  if (!s.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << s.error().message();
  EXPECT_EQ((*s)->bound_address().rfind("[::1]:", 0), 0u);
  auto r = http_get((*s)->bound_address(), "/");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->status, 200);
}

TEST(HttpServer, BadAddress) {
  HttpServerOptions o;
  o.address = "127.0.0.1";
  auto s = HttpServer::start(std::move(o));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("127.0.0.1"), std::string::npos);
}

TEST(ListenAddress, Parse) {
  auto a = parse_listen_address("127.0.0.1:9977");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9977);
  a = parse_listen_address("[::1]:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 0);
  EXPECT_EQ(a->to_string(), "[::1]:0");
  a = parse_listen_address(":9977");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->to_string(), "0.0.0.0:9977");
  for (const char* bad :
       {"", "host", "host:", "host:x", "host:65536", "::1:80", "[::1]", "[::1]80", "h:-1"}) {
    EXPECT_FALSE(parse_listen_address(bad).ok()) << bad;
  }
}

TEST(HttpClient, UnreachableIsAnErrorNamingTheAddress) {
  // Bind-and-close to find a port that nobody listens on.
  HttpServerOptions o;
  o.address = "127.0.0.1:0";
  auto s = HttpServer::start(std::move(o));
  ASSERT_TRUE(s.ok());
  std::string addr = (*s)->bound_address();
  s->reset();
  auto r = http_get(addr, "/api/v1/state", std::chrono::milliseconds(500));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(addr), std::string::npos) << r.error().message();
}

TEST(StateJson, RoundTrip) {
  auto fake = testing::full_fake_state();
  auto j = state_to_json(fake);
  auto back = state_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(state_to_json(*back), j);
  EXPECT_EQ(back->devices[0].applied->rx_usecs, 62u);
  EXPECT_FALSE(back->devices[0].requested->use_adaptive_tx.has_value());
  EXPECT_FALSE(back->devices[0].rdma_dim_enabled.has_value());
  EXPECT_EQ(back->devices[1].rdma_dim_enabled, true);
  EXPECT_EQ(back->cqs[0].counters.poll_ctx, model::PollContext::kSoftirq);
  EXPECT_EQ(back->queues[0].dim.verdicts_total[2], 7u);
  EXPECT_EQ(back->queues[0].counters.events(), 900u);
}

TEST(StateJson, ErrorsNameTheField) {
  auto j = state_to_json(testing::full_fake_state());
  j["devices"][1]["mode"] = "turbo";
  auto r = state_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("$.devices[1].mode"), std::string::npos)
      << r.error().message();
  j = state_to_json(testing::full_fake_state());
  j["queues"][0]["polls"] = "many";
  r = state_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("$.queues[0].polls"), std::string::npos);
  EXPECT_FALSE(state_from_json_text("{not json").ok());
  EXPECT_FALSE(state_from_json_text("[]").ok());
  // Unknown fields are ignored, missing ones keep defaults (additive API evolution).
  auto minimal = state_from_json_text(R"({"loops_total": 3, "future_field": {}})");
  ASSERT_TRUE(minimal.ok());
  EXPECT_EQ(minimal->loops_total, 3u);
  EXPECT_TRUE(minimal->queues.empty());
}

}  // namespace
}  // namespace dimctl::exporters
