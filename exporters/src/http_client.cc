#include "dimctl/exporters/http_client.h"

#include <httplib.h>
#include <openssl/x509.h>

#include <memory>

#include "dimctl/exporters/http_server.h"

namespace dimctl::exporters {

Result<HttpResponse> http_get(std::string_view address, std::string_view path,
                              std::chrono::milliseconds timeout) {
  return http_get(address, path, HttpClientOptions{}, timeout);
}

Result<HttpResponse> http_get(std::string_view address, std::string_view path,
                              const HttpClientOptions& opts, std::chrono::milliseconds timeout) {
  auto addr = parse_listen_address(address);
  if (!addr) return fail(std::move(addr).error());
  // A wildcard address (":port", "0.0.0.0:port", "[::]:port") means this host to a client. A
  // ":port" server listens on IPv4 in every case (dual-stack or IPv4 fallback): use 127.0.0.1.
  std::string host = addr->host;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  const char* scheme = opts.tls ? "https" : "http";

  std::unique_ptr<httplib::ClientImpl> cli;
  httplib::SSLClient* ssl = nullptr;
  if (opts.tls) {
    // httplib checks the certificate against the host it connects to; with a server name it
    // connects to that name, which the map resolves to the address's host.
    const std::string name = opts.server_name.empty() ? host : opts.server_name;
    auto s = opts.cert_file.empty() ? std::make_unique<httplib::SSLClient>(name, addr->port)
                                    : std::make_unique<httplib::SSLClient>(
                                          name, addr->port, opts.cert_file, opts.key_file);
    if (!s->is_valid()) {
      return DIMCTL_FAIL(0, "GET https://{}{}: cannot load the client certificate {} / key {}",
                         addr->to_string(), path, opts.cert_file, opts.key_file);
    }
    if (!opts.server_name.empty()) s->set_hostname_addr_map({{opts.server_name, host}});
    s->enable_server_certificate_verification(!opts.insecure_skip_verify);
    // "" = httplib's default, the system store.
    if (!opts.ca_file.empty()) s->set_ca_cert_path(opts.ca_file);
    ssl = s.get();
    cli = std::move(s);
  } else {
    cli = std::make_unique<httplib::ClientImpl>(host, addr->port);
  }
  if (!opts.user.empty()) cli->set_basic_auth(opts.user, opts.password);
  const auto sec = static_cast<time_t>(timeout.count() / 1000);
  const auto usec = static_cast<time_t>((timeout.count() % 1000) * 1000);
  cli->set_connection_timeout(sec, usec);
  cli->set_read_timeout(sec, usec);
  cli->set_write_timeout(sec, usec);
  auto res = cli->Get(std::string(path));
  if (!res) {
    const auto err = res.error();
    if (err == httplib::Error::SSLServerVerification && ssl) {
      const long v = ssl->get_openssl_verify_result();
      // X509_V_OK with a verification error: the certificate chains but names another host.
      return DIMCTL_FAIL(
          0,
          "GET https://{}{}: TLS verification of the server certificate failed "
          "({}); give its CA with --tls.ca-file{}",
          addr->to_string(), path,
          v == X509_V_OK ? "it is not for this host name" : X509_verify_cert_error_string(v),
          v == X509_V_OK ? " and the name it carries with --tls.server-name" : "");
    }
    if (err == httplib::Error::SSLLoadingCerts) {
      return DIMCTL_FAIL(0, "GET https://{}{}: cannot load the CA file {}", addr->to_string(), path,
                         opts.ca_file.empty() ? "(system store)" : opts.ca_file);
    }
    if (err == httplib::Error::SSLConnection) {
      return DIMCTL_FAIL(0,
                         "GET https://{}{}: TLS handshake failed (does the endpoint serve TLS? "
                         "does it require a client certificate?)",
                         addr->to_string(), path);
    }
    // httplib's names are terse ("Connection"); say what kind of failure it was.
    return DIMCTL_FAIL(0, "GET {}://{}{} failed: {} error", scheme, addr->to_string(), path,
                       httplib::to_string(err));
  }
  HttpResponse out;
  out.status = res->status;
  out.content_type = res->get_header_value("Content-Type");
  out.body = std::move(res->body);
  return out;
}

}  // namespace dimctl::exporters
