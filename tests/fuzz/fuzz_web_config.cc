// libFuzzer harness: the web config loader (parse_web_config, what load_web_config, `dimctl run
// --web.config.file` and `dimctl check-config --web.config.file` run on a file's bytes before
// loading the certificates it names), and what it promises about what it accepted.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "dimctl/exporters/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  dimctl::exporters::WebConfig cfg;
  std::vector<dimctl::Diagnostic> diags;
  const bool accepted =
      dimctl::exporters::parse_web_config(yaml, "fuzz.yml", "/etc/dimctl", cfg, diags);
  // Refused exactly when there is something to say, and each thing said says something.
  if (accepted != diags.empty()) std::abort();
  for (const auto& d : diags) {
    if (d.to_string().empty() || d.reason.empty()) std::abort();
  }
  if (!accepted) return 0;
  // TLS on means both files named; a CA only with a client auth policy.
  if (cfg.tls.enabled() && (cfg.tls.cert_file.empty() || cfg.tls.key_file.empty())) std::abort();
  if (!cfg.tls.client_ca_file.empty() &&
      cfg.tls.client_auth == dimctl::exporters::ClientAuth::kNoClientCert) {
    std::abort();
  }
  // Only bcrypt hashes ever reach libcrypt.
  for (const auto& [user, hash] : cfg.users) {
    if (!dimctl::exporters::is_bcrypt_hash(hash)) std::abort();
  }
  return 0;
}
