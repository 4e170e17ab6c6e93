// TLS for the HTTP server (web_config.h's tls_server_config) with OpenSSL, the library Debian's
// cpp-httplib is built with: the server context a configuration describes, and the one every new
// connection gets, rebuilt when the certificate, key or client CA file changes (a rotated
// certificate is served without dropping the listener; a broken rotation keeps the last good one).
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/exporters/web_config.h"

namespace dimctl::exporters {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

// Go's name for a cipher suite (tls.CipherSuites(), the secure ones) and for a curve.
bool known_cipher_suite(std::string_view name);
bool known_curve(std::string_view name);

// The server context `c` describes, its files read now. Errors name the file and OpenSSL's reason.
Result<SslCtxPtr> build_tls_context(const TlsServerConfig& c);

class TlsContext {
 public:
  static Result<std::unique_ptr<TlsContext>> create(TlsServerConfig config);
  // The SSL of a connection accepted now on non-blocking socket `fd`, which it does not own
  // (nullptr when OpenSSL cannot allocate one). Its context is the configuration's as the files
  // are now: they are looked at (stat) first, and when one changed the context is rebuilt; a
  // rebuild that fails is logged and the last good context kept (tried again when the files
  // change again). It never raises SIGPIPE: it sends with MSG_NOSIGNAL (OpenSSL's socket BIO
  // uses write(2)). Thread-safe.
  SSL* new_connection(int fd);

 private:
  struct Stamp {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  explicit TlsContext(TlsServerConfig config) : config_(std::move(config)) {}
  std::vector<Stamp> stamps() const;

  const TlsServerConfig config_;
  std::mutex mu_;
  SslCtxPtr ctx_;             // guarded by mu_
  std::vector<Stamp> built_;  // the files' stamps when ctx_ was built
  std::vector<Stamp> tried_;  // the stamps of the last rebuild attempt
};

}  // namespace dimctl::exporters
