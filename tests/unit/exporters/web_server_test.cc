// HttpServer with a web config, against a real OpenSSL client: TLS versions, client certificates
// for each client_auth_type that matters, basic auth (401, 200, the health exception), the
// configured headers, a rotated certificate served without a restart, and a client that stalls
// the handshake closed like any slowloris.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "dimctl/common/fd.h"
#include "dimctl/exporters/http_client.h"
#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/state_collector.h"
#include "unit/exporters/fake_state.h"
#include "unit/exporters/tls_test_support.h"

namespace dimctl::exporters {
namespace {

using tls_testing::basic;
using tls_testing::tls_get;
using tls_testing::TlsClient;

constexpr const char* kSecret = "$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC";

struct Fixture : ::testing::Test {
  tls_testing::TestPki pki;
  std::shared_ptr<StateCollector> collector;
  std::unique_ptr<HttpServer> server;

  void start(WebConfig web, bool health_without_auth = false, HttpLimits limits = {}) {
    ASSERT_TRUE(pki.ok());
    auto state = std::make_shared<const seam::ControllerState>(dimctl::testing::full_fake_state());
    StateGetter getter = [state] { return state; };
    auto c = StateCollector::create(getter, {});
    ASSERT_TRUE(c.ok());
    collector = *c;
    HttpServerOptions o;
    o.address = *parse_listen_address("127.0.0.1:0", PortZero::kKernelPicks);
    o.collectables = {collector};
    o.state = getter;
    o.web = std::make_shared<const WebConfig>(std::move(web));
    o.health_without_auth = health_without_auth;
    o.limits = limits;
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message();
    server = std::move(*s);
  }
  WebConfig tls_config(ClientAuth auth = ClientAuth::kNoClientCert) {
    WebConfig w;
    w.source = "test";
    w.tls.cert_file = pki.pem("server");
    w.tls.key_file = pki.key("server");
    w.tls.client_auth = auth;
    if (auth != ClientAuth::kNoClientCert) w.tls.client_ca_file = pki.pem("ca");
    return w;
  }
  TlsClient client() {
    TlsClient c;
    c.ca = pki.pem("ca");
    return c;
  }
};

TEST_F(Fixture, ServesTls12And13RefusesTls11AndPlainHttp) {
  start(tls_config());
  EXPECT_TRUE(server->tls());
  for (int v : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    TlsClient c = client();
    c.min_version = c.max_version = v;
    auto r = tls_get(server->port(), "/metrics", c);
    EXPECT_TRUE(r.handshake) << v;
    EXPECT_EQ(r.version, v);
    EXPECT_EQ(r.server_cn, "dimctl-server");
    EXPECT_EQ(r.status, 200);
    EXPECT_NE(r.body.find("dimctl_build_info"), std::string::npos);
  }
  for (int v : {TLS1_VERSION, TLS1_1_VERSION}) {
    TlsClient c = client();
    c.min_version = c.max_version = v;
    auto r = tls_get(server->port(), "/metrics", c);
    EXPECT_FALSE(r.handshake) << v;
    EXPECT_EQ(r.status, 0);
  }
  // Plain HTTP on the TLS port gets no HTTP answer.
  auto plain = http_get(server->bound_address(), "/metrics");
  EXPECT_TRUE(!plain.ok() || plain->status == 0) << (plain.ok() ? plain->body : "");
}

TEST_F(Fixture, MinVersion13RefusesTls12) {
  WebConfig w = tls_config();
  w.tls.min_version = TlsVersion::kTls13;
  start(std::move(w));
  TlsClient c = client();
  c.max_version = TLS1_2_VERSION;
  EXPECT_FALSE(tls_get(server->port(), "/metrics", c).handshake);
  EXPECT_EQ(tls_get(server->port(), "/metrics", client()).status, 200);
}

TEST_F(Fixture, RequireAndVerifyClientCert) {
  start(tls_config(ClientAuth::kRequireAndVerifyClientCert));
  TlsClient with = client();
  with.cert = pki.pem("client");
  with.key = pki.key("client");
  EXPECT_EQ(tls_get(server->port(), "/metrics", with).status, 200);
  for (int v : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    TlsClient without = client();
    without.max_version = v;
    EXPECT_EQ(tls_get(server->port(), "/metrics", without).status, 0) << v;
    TlsClient stranger = client();
    stranger.max_version = v;
    stranger.cert = pki.pem("stranger");
    stranger.key = pki.key("stranger");
    EXPECT_EQ(tls_get(server->port(), "/metrics", stranger).status, 0) << v;
  }
}

TEST_F(Fixture, OtherClientAuthTypes) {
  TlsClient stranger = client();
  stranger.cert = pki.pem("stranger");
  stranger.key = pki.key("stranger");
  {
    start(tls_config(ClientAuth::kRequireAnyClientCert));  // any certificate, not verified
    EXPECT_EQ(tls_get(server->port(), "/metrics", stranger).status, 200);
    EXPECT_EQ(tls_get(server->port(), "/metrics", client()).status, 0);
    server.reset();
  }
  {
    start(tls_config(ClientAuth::kVerifyClientCertIfGiven));
    EXPECT_EQ(tls_get(server->port(), "/metrics", client()).status, 200);
    EXPECT_EQ(tls_get(server->port(), "/metrics", stranger).status, 0);
    server.reset();
  }
  {
    start(tls_config(ClientAuth::kRequestClientCert));
    EXPECT_EQ(tls_get(server->port(), "/metrics", client()).status, 200);
    EXPECT_EQ(tls_get(server->port(), "/metrics", stranger).status, 200);
  }
}

TEST_F(Fixture, BasicAuthAndHeaders) {
  WebConfig w = tls_config();
  w.users = {{"prometheus", kSecret}};
  w.headers = {{"X-Frame-Options", "deny"}, {"X-Content-Type-Options", "nosniff"}};
  start(std::move(w));
  auto none = tls_get(server->port(), "/metrics", client());
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.head.find("WWW-Authenticate: Basic"), std::string::npos) << none.head;
  EXPECT_NE(none.head.find("X-Frame-Options: deny"), std::string::npos) << none.head;
  EXPECT_EQ(none.body.find("dimctl_"), std::string::npos);
  TlsClient wrong = client();
  wrong.authorization = basic("prometheus", "guess");
  EXPECT_EQ(tls_get(server->port(), "/metrics", wrong).status, 401);
  TlsClient right = client();
  right.authorization = basic("prometheus", "secret");
  auto ok = tls_get(server->port(), "/metrics", right);
  EXPECT_EQ(ok.status, 200);
  EXPECT_NE(ok.head.find("X-Content-Type-Options: nosniff"), std::string::npos) << ok.head;
  for (const char* path : {"/healthz", "/readyz", "/api/v1/state", "/", "/nothing"}) {
    EXPECT_EQ(tls_get(server->port(), path, client()).status, 401) << path;  // off by default
  }
  EXPECT_EQ(tls_get(server->port(), "/api/v1/state", right).status, 200);
}

TEST_F(Fixture, HealthWithoutAuthLeavesOnlyProbesOpen) {
  WebConfig w;  // plain HTTP with basic auth
  w.source = "test";
  w.users = {{"prometheus", kSecret}};
  start(std::move(w), /*health_without_auth=*/true);
  EXPECT_FALSE(server->tls());
  for (const char* path : {"/healthz", "/readyz", "/-/healthy", "/-/ready"}) {
    auto r = http_get(server->bound_address(), path);
    ASSERT_TRUE(r.ok());
    EXPECT_NE(r->status, 401) << path;
  }
  for (const char* path : {"/metrics", "/api/v1/state", "/"}) {
    auto r = http_get(server->bound_address(), path);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 401) << path;
  }
}

TEST_F(Fixture, RotatedCertificateIsServedWithoutRestart) {
  // The server reads copies, which the test then replaces as a deployment would.
  const std::string cert = pki.dir() + "/live.pem";
  const std::string key = pki.dir() + "/live.key";
  std::filesystem::copy_file(pki.pem("server"), cert);
  std::filesystem::copy_file(pki.key("server"), key);
  WebConfig w = tls_config();
  w.tls.cert_file = cert;
  w.tls.key_file = key;
  start(std::move(w));
  EXPECT_EQ(tls_get(server->port(), "/metrics", client()).server_cn, "dimctl-server");

  // A half-done rotation (new certificate, old key) keeps the old pair in service.
  std::filesystem::copy_file(pki.pem("server2"), cert + ".new");
  std::filesystem::rename(cert + ".new", cert);
  auto mid = tls_get(server->port(), "/metrics", client());
  EXPECT_EQ(mid.status, 200);
  EXPECT_EQ(mid.server_cn, "dimctl-server");

  std::filesystem::copy_file(pki.key("server2"), key + ".new");
  std::filesystem::rename(key + ".new", key);
  auto after = tls_get(server->port(), "/metrics", client());
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.server_cn, "dimctl-server-rotated");
}

TEST_F(Fixture, StalledHandshakeIsClosedAtTheHeadTimeout) {
  HttpLimits limits;
  limits.head_timeout = std::chrono::milliseconds(300);
  start(tls_config(), false, limits);
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(server->port());
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  const std::string partial("\x16\x03\x01\x02\x00", 5);  // a ClientHello's record header, no more
  ASSERT_EQ(send(fd.get(), partial.data(), partial.size(), MSG_NOSIGNAL), 5);
  timeval tv{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const auto t0 = std::chrono::steady_clock::now();
  char buf[64];
  EXPECT_LE(recv(fd.get(), buf, sizeof(buf), 0), 0);  // closed, not answered
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  // Meanwhile and after, others are served.
  EXPECT_EQ(tls_get(server->port(), "/healthz", client()).status, 200);
}

TEST(WebServer, BadTlsFilesFailTheStart) {
  WebConfig w;
  w.source = "web.yml";
  w.tls.cert_file = "/nonexistent/cert.pem";
  w.tls.key_file = "/nonexistent/key.pem";
  HttpServerOptions o;
  o.address = *parse_listen_address("127.0.0.1:0", PortZero::kKernelPicks);
  o.web = std::make_shared<const WebConfig>(w);
  auto s = HttpServer::start(std::move(o));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("web.yml"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("/nonexistent/cert.pem"), std::string::npos);
}

}  // namespace
}  // namespace dimctl::exporters
