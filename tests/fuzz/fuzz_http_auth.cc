// libFuzzer harness: what a client sends for basic auth (the Authorization header, bytes from the
// network) through BasicAuth::check: the header parser, the verdict cache, the rate limit and
// libcrypt. The input is the header value; its first byte picks the client address.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "basic_auth.h"

namespace {

// "secret", bcrypt cost 4.
constexpr const char* kHash = "$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimctl::exporters::BasicAuth;
  static BasicAuth auth({{"prometheus", kHash}, {"", kHash}});
  if (size == 0) return 0;
  const std::string client = "10.0.0." + std::to_string(data[0] % 8);
  const std::string_view header(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string user, password;
  const bool parsed = dimctl::exporters::parse_basic_authorization(header, user, password);
  const BasicAuth::Verdict v = auth.check(header, client);
  // Only the one right password passes, and only for a known user.
  if (v == BasicAuth::Verdict::kOk &&
      (!parsed || password != "secret" || (user != "prometheus" && !user.empty()))) {
    std::abort();
  }
  return 0;
}
