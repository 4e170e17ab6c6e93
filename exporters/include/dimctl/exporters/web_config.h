// The web configuration file (`--web.config.file`, `metrics.web_config:`): TLS, client
// certificates, basic auth and response headers for the HTTP server, in the format of the
// Prometheus exporter-toolkit (docs/METRICS.md, "Securing the endpoint"), so that one file serves
// node_exporter and dimctl alike and `promtool check web-config` judges it as dimctl does.
//
//   tls_server_config:       cert_file, key_file, client_auth_type, client_ca_file,
//                            min_version, max_version, cipher_suites, curve_preferences,
//                            prefer_server_cipher_suites
//   http_server_config:      http2 (accepted; dimctl serves HTTP/1.1), headers
//   basic_auth_users:        user: bcrypt hash ($2a$, $2b$, $2y$)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dimctl/common/diagnostic.h"
#include "dimctl/common/result.h"

namespace dimctl::exporters {

// Go's crypto/tls ClientAuthType, by the names the file uses.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // not required, verified against client_ca_file when sent
  kRequireAndVerifyClientCert,  // required and verified
};

// The wire values (0x0301 = TLS 1.0 ... 0x0304 = TLS 1.3), as OpenSSL and Go number them.
enum class TlsVersion : uint16_t {
  kTls10 = 0x0301,
  kTls11 = 0x0302,
  kTls12 = 0x0303,
  kTls13 = 0x0304
};

struct TlsServerConfig {
  // Paths as written, resolved against the web config file's directory (as exporter-toolkit
  // does); empty = not given.
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  bool client_auth_given = false;  // `client_auth_type:` present (it alone turns TLS on)
  TlsVersion min_version = TlsVersion::kTls12;
  TlsVersion max_version = TlsVersion::kTls13;
  // IANA names as Go's tls.CipherSuites() lists them; the TLS 1.3 ones are accepted and, as in
  // Go, not configurable (TLS 1.3 always offers its three suites). Empty = OpenSSL's defaults.
  std::vector<std::string> cipher_suites;
  std::vector<std::string> curve_preferences;  // CurveP256, CurveP384, CurveP521, X25519
  bool prefer_server_cipher_suites = true;

  // TLS is on when any of cert_file, key_file, client_ca_file, client_auth_type is set (then
  // cert_file and key_file are both required), exactly as exporter-toolkit decides.
  bool enabled() const {
    return !cert_file.empty() || !key_file.empty() || !client_ca_file.empty() || client_auth_given;
  }
};

struct WebConfig {
  std::string source;  // the file, for messages
  TlsServerConfig tls;
  bool http2 = true;  // accepted for compatibility; dimctl serves HTTP/1.1 only
  // Extra response headers, from the set exporter-toolkit allows (Content-Security-Policy,
  // Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection).
  std::vector<std::pair<std::string, std::string>> headers;
  // user -> bcrypt hash, in file order. Non-empty = every request needs Basic credentials.
  std::vector<std::pair<std::string, std::string>> users;
};

// The file's text alone (no file is opened): YAML syntax, keys (unknown and duplicate keys are
// errors, as `promtool check web-config`'s strict decoding makes them), types and values, every
// problem with its line and column. `dir` resolves relative paths ("" = as written). True when
// nothing was found (then `out` holds the config).
bool parse_web_config(std::string_view text, std::string_view source, std::string_view dir,
                      WebConfig& out, std::vector<Diagnostic>& diags);

// Reads `path` and parses it, then loads what it names as the server will (certificate chain,
// private key and that they match, client CA file), so that start-up and `dimctl check-config`
// refuse the same files. Errors say what and where ("FILE:LINE:COL: key: reason").
Result<WebConfig> load_web_config(const std::string& path);

// Whether `hash` is a bcrypt hash libcrypt verifies: $2a$, $2b$ or $2y$, a two-digit cost in
// 04..31, 53 characters of bcrypt's base64 (60 in all). Other crypt(3) schemes are refused.
bool is_bcrypt_hash(std::string_view hash);

}  // namespace dimctl::exporters
