// BasicAuth (exporters/src/basic_auth.h): the Authorization header, bcrypt through libcrypt, the
// verdict cache and the per-address rate limit of failures, on a fake clock.
#include "basic_auth.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "unit/exporters/tls_test_support.h"

namespace dimctl::exporters {
namespace {

using tls_testing::basic;
using Clock = BasicAuth::Clock;

// "secret" and "prom", cost 4 (as fast as bcrypt goes).
constexpr const char* kSecret = "$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC";
constexpr const char* kProm = "$2y$04$ohF0J8wTPLODRtwD188MNuOrK/yTE2mg5U7XFC157Rv0pgQeX.CnG";

TEST(BasicAuthHeader, Parses) {
  std::string u, p;
  ASSERT_TRUE(parse_basic_authorization(basic("alice", "pa:ss word"), u, p));
  EXPECT_EQ(u, "alice");
  EXPECT_EQ(p, "pa:ss word");  // only the first colon separates
  ASSERT_TRUE(parse_basic_authorization("basic " + basic("a", "b").substr(6), u, p));
  ASSERT_TRUE(parse_basic_authorization(basic("", ""), u, p));
  EXPECT_EQ(u, "");
  for (const char* bad : {"", "Basic", "Bearer abc", "Basic !!!!", "Basic YWxpY2U="}) {
    EXPECT_FALSE(parse_basic_authorization(bad, u, p)) << bad;  // last: "alice", no colon
  }
}

struct Fixture : ::testing::Test {
  Clock::time_point now = Clock::time_point() + std::chrono::hours(1);
  AuthLimits limits;
  std::unique_ptr<BasicAuth> auth;
  void SetUp() override {
    limits.burst = 3;
    limits.refill = std::chrono::milliseconds(1000);
    auth = std::make_unique<BasicAuth>(
        std::vector<std::pair<std::string, std::string>>{{"alice", kSecret}, {"prom", kProm}},
        limits, [this] { return now; });
  }
};

TEST_F(Fixture, VerifiesWithLibcrypt) {
  EXPECT_EQ(auth->check(basic("alice", "secret"), "10.0.0.1"), BasicAuth::Verdict::kOk);
  EXPECT_EQ(auth->check(basic("prom", "prom"), "10.0.0.1"), BasicAuth::Verdict::kOk);  // $2y$
  EXPECT_EQ(auth->check(basic("alice", "prom"), "10.0.0.2"), BasicAuth::Verdict::kDenied);
  EXPECT_EQ(auth->check(basic("alice", "secre"), "10.0.0.2"), BasicAuth::Verdict::kDenied);
  EXPECT_EQ(auth->check(basic("alice", std::string("secret\0x", 8)), "10.0.0.3"),
            BasicAuth::Verdict::kDenied);
  // An unknown user with another user's right password.
  EXPECT_EQ(auth->check(basic("bob", "secret"), "10.0.0.3"), BasicAuth::Verdict::kDenied);
  EXPECT_EQ(auth->check("", "10.0.0.4"), BasicAuth::Verdict::kDenied);
}

TEST_F(Fixture, CachesVerdicts) {
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(auth->check(basic("alice", "secret"), "10.0.0.1"), BasicAuth::Verdict::kOk);
  }
  EXPECT_EQ(auth->verifications(), 1u);
  EXPECT_EQ(auth->check(basic("alice", "wrong"), "10.0.0.1"), BasicAuth::Verdict::kDenied);
  EXPECT_EQ(auth->check(basic("alice", "wrong"), "10.0.0.1"), BasicAuth::Verdict::kDenied);
  EXPECT_EQ(auth->verifications(), 2u);
  // The unknown user is hashed too (the decoy), once.
  auth->check(basic("bob", "x"), "10.0.0.1");
  EXPECT_EQ(auth->verifications(), 3u);
}

TEST_F(Fixture, RateLimitsFailuresPerAddress) {
  for (int i = 0; i < limits.burst; ++i) {
    EXPECT_EQ(auth->check(basic("alice", "guess" + std::to_string(i)), "10.0.0.9"),
              BasicAuth::Verdict::kDenied);
  }
  const auto hashed = auth->verifications();
  EXPECT_EQ(auth->check(basic("alice", "guess-more"), "10.0.0.9"),
            BasicAuth::Verdict::kRateLimited);
  // Even the right password, not yet verified: no bcrypt runs for a limited address.
  EXPECT_EQ(auth->check(basic("alice", "secret"), "10.0.0.9"), BasicAuth::Verdict::kRateLimited);
  EXPECT_EQ(auth->verifications(), hashed);
  // Another address is not held back.
  EXPECT_EQ(auth->check(basic("alice", "secret"), "10.0.0.10"), BasicAuth::Verdict::kOk);
  // A verified password passes at once even from the limited address (a scraper sharing it).
  EXPECT_EQ(auth->check(basic("alice", "secret"), "10.0.0.9"), BasicAuth::Verdict::kOk);
  // One more try per refill period.
  now += std::chrono::milliseconds(1000);
  EXPECT_EQ(auth->check(basic("alice", "guess-x"), "10.0.0.9"), BasicAuth::Verdict::kDenied);
  EXPECT_EQ(auth->check(basic("alice", "guess-y"), "10.0.0.9"), BasicAuth::Verdict::kRateLimited);
  // Requests without credentials are not guesses.
  now += std::chrono::seconds(10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(auth->check("", "10.0.0.11"), BasicAuth::Verdict::kDenied);
  }
}

TEST_F(Fixture, BoundedAddressTable) {
  limits.max_clients = 4;
  limits.burst = 1;
  auth = std::make_unique<BasicAuth>(
      std::vector<std::pair<std::string, std::string>>{{"alice", kSecret}}, limits,
      [this] { return now; });
  for (int i = 0; i < 8; ++i) {
    auth->check(basic("alice", "x"), "10.1.0." + std::to_string(i));
  }
  // Addresses beyond the table share one bucket, already empty.
  EXPECT_EQ(auth->check(basic("alice", "y"), "10.1.0.100"), BasicAuth::Verdict::kRateLimited);
}

}  // namespace
}  // namespace dimctl::exporters
