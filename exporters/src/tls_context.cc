#include "tls_context.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dimctl::exporters {
namespace {

struct CipherName {
  std::string_view go;       // IANA, as Go's tls.CipherSuites() names it
  std::string_view openssl;  // "" = a TLS 1.3 suite: not configurable, as in Go
};
// Go's tls.CipherSuites(): the suites exporter-toolkit accepts (its insecure ones are refused).
constexpr std::array<CipherName, 17> kCiphers = {{
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_AES_128_GCM_SHA256", ""},
    {"TLS_AES_256_GCM_SHA384", ""},
    {"TLS_CHACHA20_POLY1305_SHA256", ""},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
}};

struct CurveName {
  std::string_view go;
  std::string_view openssl;
};
constexpr std::array<CurveName, 4> kCurves = {{
    {"CurveP256", "P-256"},
    {"CurveP384", "P-384"},
    {"CurveP521", "P-521"},
    {"X25519", "X25519"},
}};

// OpenSSL's error queue as one line (and emptied).
std::string ssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

// A file OpenSSL is about to read: say plainly when it is missing or unreadable.
Result<void> readable(std::string_view key, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return DIMCTL_FAIL(errno, "{} {}: cannot read", key, path);
  std::fclose(f);
  return ok();
}

// Request/RequireAny: a client certificate is taken as given, not verified (Go's semantics).
int accept_any(int /*preverify*/, X509_STORE_CTX* /*store*/) {
  return 1;
}

int bio_write(BIO* b, const char* data, int n) {
  BIO_clear_retry_flags(b);
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b)));
  const ssize_t r = ::send(fd, data, static_cast<std::size_t>(n), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(b);
  return static_cast<int>(r);
}

int bio_read(BIO* b, char* data, int n) {
  BIO_clear_retry_flags(b);
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b)));
  const ssize_t r = ::recv(fd, data, static_cast<std::size_t>(n), MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(b);
  return static_cast<int>(r);
}

long bio_ctrl(BIO* /*b*/, int cmd, long /*num*/, void* /*ptr*/) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is buffered here
}

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* const kMethod = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "dimctl socket");
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return kMethod;
}

}  // namespace

bool known_cipher_suite(std::string_view name) {
  for (const auto& c : kCiphers) {
    if (c.go == name) return true;
  }
  return false;
}

bool known_curve(std::string_view name) {
  for (const auto& c : kCurves) {
    if (c.go == name) return true;
  }
  return false;
}

Result<SslCtxPtr> build_tls_context(const TlsServerConfig& c) {
  ERR_clear_error();
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return DIMCTL_FAIL(0, "SSL_CTX_new: {}", ssl_errors());
  SSL_CTX* x = ctx.get();
  // TLS 1.0 and 1.1 stay refused at OpenSSL 3's default security level even when min_version
  // allows them: that level is not lowered here.
  SSL_CTX_set_min_proto_version(x, static_cast<int>(c.min_version));
  SSL_CTX_set_max_proto_version(x, static_cast<int>(c.max_version));
  // A client that closes without close_notify has still sent whole requests: an EOF, not an error.
  uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF;
  if (c.prefer_server_cipher_suites) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(x, opts);
  // A response the kernel takes in part is finished later from the same bytes, moved.
  SSL_CTX_set_mode(x, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);

  if (auto r = readable("cert_file", c.cert_file); !r) return fail(std::move(r).error());
  if (SSL_CTX_use_certificate_chain_file(x, c.cert_file.c_str()) != 1) {
    return DIMCTL_FAIL(0, "cert_file {}: no usable certificate: {}", c.cert_file, ssl_errors());
  }
  if (auto r = readable("key_file", c.key_file); !r) return fail(std::move(r).error());
  if (SSL_CTX_use_PrivateKey_file(x, c.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    const unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return DIMCTL_FAIL(0, "key_file {} does not match cert_file {}", c.key_file, c.cert_file);
    }
    return DIMCTL_FAIL(0, "key_file {}: no usable private key: {}", c.key_file, ssl_errors());
  }
  if (SSL_CTX_check_private_key(x) != 1) {
    return DIMCTL_FAIL(0, "key_file {} does not match cert_file {}: {}", c.key_file, c.cert_file,
                       ssl_errors());
  }

  std::string ciphers;
  for (const auto& name : c.cipher_suites) {
    for (const auto& k : kCiphers) {
      if (k.go != name || k.openssl.empty()) continue;
      if (!ciphers.empty()) ciphers += ':';
      ciphers += k.openssl;
    }
  }
  if (!ciphers.empty() && SSL_CTX_set_cipher_list(x, ciphers.c_str()) != 1) {
    return DIMCTL_FAIL(0, "cipher_suites: OpenSSL offers none of {}: {}", ciphers, ssl_errors());
  }
  std::string groups;
  for (const auto& name : c.curve_preferences) {
    for (const auto& k : kCurves) {
      if (k.go != name) continue;
      if (!groups.empty()) groups += ':';
      groups += k.openssl;
    }
  }
  if (!groups.empty() && SSL_CTX_set1_groups_list(x, groups.c_str()) != 1) {
    return DIMCTL_FAIL(0, "curve_preferences: OpenSSL refused {}: {}", groups, ssl_errors());
  }

  if (!c.client_ca_file.empty()) {
    if (auto r = readable("client_ca_file", c.client_ca_file); !r)
      return fail(std::move(r).error());
    if (SSL_CTX_load_verify_locations(x, c.client_ca_file.c_str(), nullptr) != 1) {
      return DIMCTL_FAIL(0, "client_ca_file {}: no usable CA certificate: {}", c.client_ca_file,
                         ssl_errors());
    }
    // The CA names sent in the CertificateRequest, so a client with several picks the right one.
    SSL_CTX_set_client_CA_list(x, SSL_load_client_CA_file(c.client_ca_file.c_str()));
  }
  switch (c.client_auth) {
    case ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(x, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(x, SSL_VERIFY_PEER, accept_any);
      break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(x, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(x, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(x, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  if ((c.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
       c.client_auth == ClientAuth::kRequireAndVerifyClientCert) &&
      c.client_ca_file.empty()) {
    SSL_CTX_set_default_verify_paths(x);  // Go verifies against the system roots then
  }
  // Session resumption with client certificates needs a context id (else OpenSSL refuses it).
  static constexpr unsigned char kSessionId[] = "dimctl";
  SSL_CTX_set_session_id_context(x, kSessionId, sizeof(kSessionId) - 1);
  return ctx;
}

Result<std::unique_ptr<TlsContext>> TlsContext::create(TlsServerConfig config) {
  std::unique_ptr<TlsContext> t(new TlsContext(std::move(config)));
  t->built_ = t->tried_ = t->stamps();
  auto ctx = build_tls_context(t->config_);
  if (!ctx) return fail(std::move(ctx).error().wrap("tls_server_config"));
  t->ctx_ = std::move(*ctx);
  if (t->config_.min_version > t->config_.max_version) {
    spdlog::warn(
        "web config: tls_server_config: min_version is above max_version: every TLS "
        "handshake will fail");
  }
  return t;
}

std::vector<TlsContext::Stamp> TlsContext::stamps() const {
  std::vector<Stamp> out;
  for (const std::string* path : {&config_.cert_file, &config_.key_file, &config_.client_ca_file}) {
    Stamp s;
    struct stat st {};
    // stat follows symlinks: a Kubernetes Secret volume swaps its ..data link on update.
    if (!path->empty() && ::stat(path->c_str(), &st) == 0) {
      s = Stamp{st.st_dev, st.st_ino, st.st_size,
                int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
                int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec};
    }
    out.push_back(s);
  }
  return out;
}

SSL* TlsContext::new_connection(int fd) {
  std::vector<Stamp> now = stamps();
  std::lock_guard<std::mutex> l(mu_);
  if (now != built_ && now != tried_) {
    tried_ = now;
    if (auto ctx = build_tls_context(config_)) {
      ctx_ = std::move(*ctx);  // connections in progress keep a reference to the old one
      built_ = now;
      spdlog::info("web config: certificate files changed; new TLS connections use them");
    } else {
      spdlog::error(
          "web config: certificate files changed but cannot be used ({}); keeping the "
          "previous certificate",
          ctx.error().message());
    }
  }
  SSL* ssl = SSL_new(ctx_.get());
  if (!ssl) return nullptr;
  BIO* bio = BIO_new(socket_method());
  if (!bio) {
    SSL_free(ssl);
    return nullptr;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);
  SSL_set_accept_state(ssl);
  return ssl;
}

}  // namespace dimctl::exporters
