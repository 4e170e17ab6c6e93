// The flags `dimctl status` and `dimctl top` share to reach the daemon's endpoint, secured or
// not: --address, TLS (the client half of --web.config.file) and basic auth. Header-only because
// the CLI compiles cmd_*.cc only.
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "dimctl/common/result.h"
#include "dimctl/exporters/http_client.h"
#include "dimctl/exporters/names.h"

namespace dimctl::cli {

// Env var that overrides the default daemon address of status/top (flag still wins).
inline constexpr const char* kAddressEnv = "DIMCTL_ADDRESS";

struct EndpointFlags {
  std::string address = std::string(exporters::kDefaultListenAddress);
  bool tls = false;
  std::string ca_file;
  bool insecure_skip_verify = false;
  std::string cert_file;
  std::string key_file;
  std::string server_name;
  std::string username;
  std::string password_file;
};

inline void add_endpoint_flags(CLI::App* sub, EndpointFlags& f) {
  sub->add_option("--address", f.address,
                  "Address of the daemon's HTTP endpoint (host:port; https://host:port = --tls)")
      ->envname(kAddressEnv)
      ->capture_default_str();
  sub->add_flag("--tls", f.tls, "The endpoint serves TLS (a daemon with --web.config.file)");
  sub->add_option("--tls.ca-file", f.ca_file,
                  "CA that signed the server certificate (default: the system store)");
  sub->add_flag("--tls.insecure-skip-verify", f.insecure_skip_verify,
                "Do not verify the server certificate");
  sub->add_option("--tls.cert-file", f.cert_file, "Client certificate (with --tls.key-file)");
  sub->add_option("--tls.key-file", f.key_file, "Client certificate's key");
  sub->add_option("--tls.server-name", f.server_name,
                  "Name the server certificate carries when it is not the address's host");
  sub->add_option("--basic-auth.username", f.username,
                  "Basic auth user (with --basic-auth.password-file)");
  sub->add_option("--basic-auth.password-file", f.password_file,
                  "File holding the basic auth password (one trailing newline is ignored)");
}

// The endpoint's address (without a scheme) and the client options. Errors are usage errors
// (exit 2): contradictory flags, an unreadable password file.
struct Endpoint {
  std::string address;
  exporters::HttpClientOptions client;
};

inline Result<Endpoint> resolve_endpoint(const EndpointFlags& f) {
  Endpoint e;
  e.address = f.address;
  e.client.tls = f.tls;
  if (e.address.rfind("https://", 0) == 0) {
    e.address.erase(0, 8);
    e.client.tls = true;
  } else if (e.address.rfind("http://", 0) == 0) {
    if (f.tls) return DIMCTL_FAIL(0, "--tls contradicts --address {}", f.address);
    e.address.erase(0, 7);
  }
  if (!e.address.empty() && e.address.back() == '/') e.address.pop_back();
  const bool tls_detail = !f.ca_file.empty() || f.insecure_skip_verify || !f.cert_file.empty() ||
                          !f.key_file.empty() || !f.server_name.empty();
  if (tls_detail && !e.client.tls) {
    return DIMCTL_FAIL(0, "--tls.* flags need --tls (or an https:// address)");
  }
  if (f.insecure_skip_verify && (!f.ca_file.empty() || !f.server_name.empty())) {
    return DIMCTL_FAIL(0,
                       "--tls.insecure-skip-verify contradicts --tls.ca-file and "
                       "--tls.server-name (nothing is verified)");
  }
  if (f.cert_file.empty() != f.key_file.empty()) {
    return DIMCTL_FAIL(0, "--tls.cert-file and --tls.key-file go together");
  }
  if (f.username.empty() != f.password_file.empty()) {
    return DIMCTL_FAIL(0, "--basic-auth.username and --basic-auth.password-file go together");
  }
  e.client.ca_file = f.ca_file;
  e.client.insecure_skip_verify = f.insecure_skip_verify;
  e.client.cert_file = f.cert_file;
  e.client.key_file = f.key_file;
  e.client.server_name = f.server_name;
  if (!f.username.empty()) {
    // A file, never the command line: argv is readable by every user of the host (ps).
    std::ifstream in(f.password_file, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      return DIMCTL_FAIL(errno, "cannot read --basic-auth.password-file {}", f.password_file);
    }
    std::string password = text.str();
    if (!password.empty() && password.back() == '\n') password.pop_back();
    if (!password.empty() && password.back() == '\r') password.pop_back();
    e.client.user = f.username;
    e.client.password = std::move(password);
  }
  return e;
}

}  // namespace dimctl::cli
