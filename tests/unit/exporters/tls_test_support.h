// Test certificates (tests/support/pki.sh, in a temporary directory) and a blocking OpenSSL
// client that says what the handshake and the response were, for the TLS and auth tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace dimctl::exporters::tls_testing {

// A CA; "server" and "server2" (signed by it, for 127.0.0.1 and localhost; different CNs, so a
// client sees which one is served); "client" (signed by it, clientAuth); "stranger" (a
// self-signed client certificate). Each as NAME.pem and NAME.key (tests/support/pki.sh).
class TestPki {
 public:
  TestPki() {
    char tmpl[] = "/tmp/dimctl-pki-XXXXXX";
    dir_ = mkdtemp(tmpl);
    ok_ = std::system(("bash '" DIMCTL_PKI_SCRIPT "' '" + dir_ + "'").c_str()) == 0;
  }
  ~TestPki() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }
  std::string pem(const std::string& name) const { return dir_ + "/" + name + ".pem"; }
  std::string key(const std::string& name) const { return dir_ + "/" + name + ".key"; }

 private:
  std::string dir_;
  bool ok_ = false;
};

struct TlsClient {
  int min_version = TLS1_2_VERSION;
  int max_version = TLS1_3_VERSION;
  std::string ca;    // verify the server against it ("" = do not verify)
  std::string cert;  // client certificate ("" = none)
  std::string key;
  std::string authorization;  // Authorization header value ("" = none)
};

struct TlsResult {
  bool handshake = false;  // the client's side of the handshake completed
  int version = 0;         // negotiated, e.g. TLS1_3_VERSION
  std::string server_cn;   // the served certificate's subject CN
  int status = 0;          // 0: no HTTP response came (the TLS session failed)
  std::string head;        // status line and headers
  std::string body;
};

inline TlsResult tls_get(uint16_t port, const std::string& path, const TlsClient& c) {
  TlsResult out;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  // Level 0 so that this client can offer TLS 1.0/1.1: refusing them is the server's job here.
  SSL_CTX_set_security_level(ctx, 0);
  SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0");
  SSL_CTX_set_min_proto_version(ctx, c.min_version);
  SSL_CTX_set_max_proto_version(ctx, c.max_version);
  if (!c.ca.empty()) {
    SSL_CTX_load_verify_locations(ctx, c.ca.c_str(), nullptr);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  if (!c.cert.empty()) {
    SSL_CTX_use_certificate_file(ctx, c.cert.c_str(), SSL_FILETYPE_PEM);
    SSL_CTX_use_PrivateKey_file(ctx, c.key.c_str(), SSL_FILETYPE_PEM);
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  SSL* ssl = nullptr;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) == 1) {
      out.handshake = true;
      out.version = SSL_version(ssl);
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        char cn[256] = "";
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
        out.server_cn = cn;
        X509_free(peer);
      }
      std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
      if (!c.authorization.empty()) req += "Authorization: " + c.authorization + "\r\n";
      req += "\r\n";
      std::string resp;
      if (SSL_write(ssl, req.data(), static_cast<int>(req.size())) > 0) {
        char buf[16384];
        for (;;) {
          const int n = SSL_read(ssl, buf, sizeof(buf));
          if (n <= 0) break;
          resp.append(buf, static_cast<std::size_t>(n));
        }
      }
      const auto end = resp.find("\r\n\r\n");
      if (resp.rfind("HTTP/1.1 ", 0) == 0 && end != std::string::npos) {
        out.status = std::atoi(resp.c_str() + 9);
        out.head = resp.substr(0, end);
        out.body = resp.substr(end + 4);
      }
    }
  }
  ERR_clear_error();
  if (ssl) SSL_free(ssl);
  close(fd);
  SSL_CTX_free(ctx);
  return out;
}

inline std::string basic(const std::string& user, const std::string& password) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string in = user + ":" + password;
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const unsigned v =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return "Basic " + out;
}

}  // namespace dimctl::exporters::tls_testing
