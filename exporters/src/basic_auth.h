// Basic authentication against web_config.h's basic_auth_users: bcrypt verified by libcrypt,
// each verdict cached (bcrypt costs tens of milliseconds by design; a scraper sends the same
// credentials every few seconds), hashes compared in constant time, and failed attempts
// rate-limited per client address so that guessing is slow and cannot keep the handler threads
// busy hashing.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dimctl::exporters {

struct AuthLimits {
  // A client address may fail this many times in a row at once, then one more per `refill`.
  // Beyond: 429 without checking the password. A correct password already verified still passes.
  int burst = 10;
  std::chrono::milliseconds refill{1000};
  std::size_t max_clients = 4096;  // addresses tracked; beyond, the newest share one bucket
  std::size_t max_cached = 1024;   // verdicts cached; the cache is emptied when full
};

class BasicAuth {
 public:
  enum class Verdict { kOk, kDenied, kRateLimited };
  using Clock = std::chrono::steady_clock;

  BasicAuth(std::vector<std::pair<std::string, std::string>> users, AuthLimits limits = {},
            std::function<Clock::time_point()> now = {});

  // The value of an Authorization header (may be empty) from `client` (an address).
  Verdict check(std::string_view authorization, const std::string& client);

  // How many bcrypt verifications ran (tests: the cache works).
  std::size_t verifications() const;

 private:
  bool verify(const std::string& user, const std::string& password);
  bool allowed(const std::string& client, Clock::time_point now);
  void failed(const std::string& client, Clock::time_point now);

  struct Bucket {
    double tokens = 0;
    Clock::time_point at;
  };

  const std::vector<std::pair<std::string, std::string>> users_;
  const AuthLimits limits_;
  const std::function<Clock::time_point()> now_;

  mutable std::mutex mu_;                            // guards what follows
  std::unordered_map<std::string, bool> cache_;      // sha256(user, hash, password) -> ok
  std::unordered_map<std::string, Bucket> buckets_;  // client address -> failures allowed
  std::size_t verifications_ = 0;
};

// "Basic <base64 user:password>" -> user, password; false when it is not one.
bool parse_basic_authorization(std::string_view header, std::string& user, std::string& password);

}  // namespace dimctl::exporters
