#include "basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace dimctl::exporters {
namespace {

// Verified in place of an unknown user's hash, so that an unknown name costs what a known one
// does (the password "dimctl", cost 10; exporter-toolkit does the same).
constexpr std::string_view kDecoyHash =
    "$2b$10$8R8Vp4aseG2WwGhJ4gtyfORDyOdSLtJ67U7F3X6VJIGP7OewyEDCC";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return bits < 6;  // one leftover character cannot be a whole byte
}

std::string cache_key(std::string_view user, std::string_view hash, std::string_view password) {
  // Lengths first: ("ab", "c") and ("a", "bc") must not meet.
  std::string input;
  for (std::string_view part : {user, hash, password}) {
    const uint64_t n = part.size();
    input.append(reinterpret_cast<const char*>(&n), sizeof(n));
    input.append(part);
  }
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
         reinterpret_cast<unsigned char*>(out.data()));
  OPENSSL_cleanse(input.data(), input.size());
  return out;
}

}  // namespace

bool parse_basic_authorization(std::string_view header, std::string& user, std::string& password) {
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  if (header.size() < 6) return false;
  std::string scheme(header.substr(0, 6));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "basic ") return false;
  header.remove_prefix(6);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  std::string decoded;
  if (!base64_decode(header, decoded)) return false;
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  user = decoded.substr(0, colon);
  password = decoded.substr(colon + 1);
  return true;
}

BasicAuth::BasicAuth(std::vector<std::pair<std::string, std::string>> users, AuthLimits limits,
                     std::function<Clock::time_point()> now)
    : users_(std::move(users)),
      limits_(limits),
      now_(now ? std::move(now) : [] { return Clock::now(); }) {}

std::size_t BasicAuth::verifications() const {
  std::lock_guard<std::mutex> l(mu_);
  return verifications_;
}

bool BasicAuth::verify(const std::string& user, const std::string& password) {
  auto it =
      std::find_if(users_.begin(), users_.end(), [&](const auto& u) { return u.first == user; });
  const bool known = it != users_.end();
  const std::string hash = known ? it->second : std::string(kDecoyHash);
  const std::string key = cache_key(user, hash, password);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto c = cache_.find(key); c != cache_.end()) return c->second;
  }
  // crypt(3) reads a C string: a password with a NUL would be checked cut short.
  bool ok = false;
  if (password.find('\0') == std::string::npos) {
    auto data = std::make_unique<crypt_data>();
    const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
    ok =
        out && std::strlen(out) == hash.size() && CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
  }
  ok = ok && known;
  std::lock_guard<std::mutex> l(mu_);
  ++verifications_;
  if (cache_.size() >= limits_.max_cached) cache_.clear();
  cache_.emplace(key, ok);
  return ok;
}

bool BasicAuth::allowed(const std::string& client, Clock::time_point now) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = buckets_.find(client);
  if (it == buckets_.end()) it = buckets_.find("");  // the overflow bucket, if any
  if (it == buckets_.end()) return true;
  Bucket& b = it->second;
  const double refilled =
      std::chrono::duration<double>(now - b.at) / std::chrono::duration<double>(limits_.refill);
  b.tokens = std::min<double>(limits_.burst, b.tokens + refilled);
  b.at = now;
  return b.tokens >= 1;
}

void BasicAuth::failed(const std::string& client, Clock::time_point now) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= limits_.max_clients) {
      // Forget the addresses whose bucket is full again; if none, the newcomer shares "".
      for (auto b = buckets_.begin(); b != buckets_.end();) {
        const double refilled = std::chrono::duration<double>(now - b->second.at) /
                                std::chrono::duration<double>(limits_.refill);
        b = b->second.tokens + refilled >= limits_.burst ? buckets_.erase(b) : std::next(b);
      }
    }
    std::string key = buckets_.size() >= limits_.max_clients ? std::string() : client;
    it = buckets_.try_emplace(key, Bucket{static_cast<double>(limits_.burst), now}).first;
  }
  Bucket& b = it->second;
  b.tokens = std::max(0.0, b.tokens - 1);
}

BasicAuth::Verdict BasicAuth::check(std::string_view authorization, const std::string& client) {
  const auto now = now_();
  std::string user, password;
  const bool parsed = parse_basic_authorization(authorization, user, password);
  if (parsed) {
    // A verdict already cached costs nothing: a scraper with the right password is never held
    // back by someone else's guessing from the same address.
    std::string key;
    {
      auto it = std::find_if(users_.begin(), users_.end(),
                             [&](const auto& u) { return u.first == user; });
      if (it != users_.end()) {
        key = cache_key(user, it->second, password);
        std::lock_guard<std::mutex> l(mu_);
        if (auto c = cache_.find(key); c != cache_.end() && c->second) return Verdict::kOk;
      }
    }
  }
  if (!allowed(client, now)) return Verdict::kRateLimited;
  if (parsed && verify(user, password)) return Verdict::kOk;
  // No credentials at all is how every browser and curl starts: not counted as a guess.
  if (!authorization.empty()) failed(client, now);
  return Verdict::kDenied;
}

}  // namespace dimctl::exporters
