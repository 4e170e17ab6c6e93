// The web config loader (exporter-toolkit's format): what it reads, each refusal with its
// position, the files it loads, and the bcrypt hash rule. tests/e2e/webconfig checks the same
// files against Debian's `promtool check web-config`.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "dimctl/exporters/web_config.h"
#include "unit/exporters/tls_test_support.h"

namespace dimctl::exporters {
namespace {

constexpr const char* kHash = "$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC";

std::vector<Diagnostic> refuse(const std::string& text) {
  WebConfig cfg;
  std::vector<Diagnostic> diags;
  EXPECT_FALSE(parse_web_config(text, "web.yml", "", cfg, diags)) << text;
  EXPECT_FALSE(diags.empty());
  return diags;
}

std::string first(const std::string& text) {
  auto d = refuse(text);
  return d.empty() ? "" : d.front().to_string();
}

TEST(WebConfig, ReadsEveryField) {
  const std::string text = std::string(R"(tls_server_config:
  cert_file: server.pem
  key_file: /abs/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
  prefer_server_cipher_suites: no
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  prometheus: )") + kHash + "\n";
  WebConfig cfg;
  std::vector<Diagnostic> diags;
  ASSERT_TRUE(parse_web_config(text, "web.yml", "/etc/dimctl", cfg, diags))
      << diagnostics_text(diags);
  EXPECT_TRUE(cfg.tls.enabled());
  EXPECT_EQ(cfg.tls.cert_file, "/etc/dimctl/server.pem");  // relative to the file's directory
  EXPECT_EQ(cfg.tls.key_file, "/abs/server.key");
  EXPECT_EQ(cfg.tls.client_ca_file, "/etc/dimctl/ca.pem");
  EXPECT_EQ(cfg.tls.client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(cfg.tls.min_version, TlsVersion::kTls13);
  EXPECT_EQ(cfg.tls.cipher_suites.size(), 2u);
  EXPECT_EQ(cfg.tls.curve_preferences, (std::vector<std::string>{"X25519", "CurveP256"}));
  EXPECT_FALSE(cfg.tls.prefer_server_cipher_suites);
  EXPECT_FALSE(cfg.http2);
  ASSERT_EQ(cfg.headers.size(), 2u);
  EXPECT_EQ(cfg.headers[0].first, "X-Frame-Options");
  ASSERT_EQ(cfg.users.size(), 1u);
  EXPECT_EQ(cfg.users[0].second, kHash);
}

TEST(WebConfig, DefaultsAndEmptyFiles) {
  for (const char* text : {"", "tls_server_config:\n", "tls_server_config:\n  cert_file: \"\"\n",
                           "http_server_config:\n  headers:\n"}) {
    WebConfig cfg;
    std::vector<Diagnostic> diags;
    ASSERT_TRUE(parse_web_config(text, "web.yml", "", cfg, diags)) << text;
    EXPECT_FALSE(cfg.tls.enabled()) << text;
    EXPECT_EQ(cfg.tls.min_version, TlsVersion::kTls12);
    EXPECT_EQ(cfg.tls.max_version, TlsVersion::kTls13);
    EXPECT_TRUE(cfg.tls.prefer_server_cipher_suites);
    EXPECT_TRUE(cfg.users.empty());
  }
}

TEST(WebConfig, ClientAuthTypes) {
  const std::pair<const char*, ClientAuth> cases[] = {
      {"NoClientCert", ClientAuth::kNoClientCert},
      {"RequestClientCert", ClientAuth::kRequestClientCert},
      {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
      {"RequireClientCert", ClientAuth::kRequireAnyClientCert},
      {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
      {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
  };
  for (const auto& [name, value] : cases) {
    WebConfig cfg;
    std::vector<Diagnostic> diags;
    const std::string text =
        std::string("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: ") +
        name + "\n";
    ASSERT_TRUE(parse_web_config(text, "web.yml", "", cfg, diags)) << diagnostics_text(diags);
    EXPECT_EQ(cfg.tls.client_auth, value) << name;
  }
}

TEST(WebConfig, RefusalsSayWhatAndWhere) {
  EXPECT_EQ(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  cert_flie: x\n"),
            "web.yml:4:3: tls_server_config.cert_flie: unknown key 'cert_flie'; did you mean "
            "'cert_file'? (allowed here: cert_file, key_file, client_auth_type, client_ca_file, "
            "min_version, max_version, cipher_suites, curve_preferences, "
            "prefer_server_cipher_suites)");
  EXPECT_NE(first("tls_server_config:\n  key_file: k\n").find("missing cert_file"),
            std::string::npos);
  EXPECT_NE(
      first("tls_server_config:\n  client_auth_type: NoClientCert\n").find("missing cert_file"),
      std::string::npos);
  EXPECT_NE(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n")
                .find("client_ca_file is set but client_auth_type is NoClientCert"),
            std::string::npos);
  EXPECT_EQ(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: Foo\n")
                .substr(0, 80),
            "web.yml:4:21: tls_server_config.client_auth_type: invalid client_auth_type 'Foo'");
  EXPECT_NE(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS14\n")
                .find("unknown TLS version 'TLS14'"),
            std::string::npos);
  EXPECT_NE(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: 12\n")
                .find("unknown TLS version '12'"),
            std::string::npos);
  // Go's insecure suites are not in tls.CipherSuites(): exporter-toolkit refuses them too.
  EXPECT_NE(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: "
                  "[TLS_RSA_WITH_AES_128_CBC_SHA256]\n")
                .find("unknown cipher suite"),
            std::string::npos);
  EXPECT_NE(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: "
                  "TLS_AES_128_GCM_SHA256\n")
                .find("expected a list"),
            std::string::npos);
  EXPECT_NE(
      first("tls_server_config:\n  cert_file: c\n  key_file: k\n  curve_preferences: [P256]\n")
          .find("unknown curve 'P256'"),
      std::string::npos);
  EXPECT_NE(first("tls_server_config:\n  cert_file: c\n  key_file: k\n  "
                  "prefer_server_cipher_suites: 1\n")
                .find("expected true or false"),
            std::string::npos);
  EXPECT_NE(first("http_server_config:\n  http2: \"true\"\n").find("expected true or false"),
            std::string::npos);
  EXPECT_NE(first("http_server_config:\n  headers:\n    x-frame-options: deny\n")
                .find("header 'x-frame-options' cannot be configured"),
            std::string::npos);
  EXPECT_NE(first("http_server_config:\n  headers:\n    X-Frame-Options: DENY\n")
                .find("invalid value 'DENY' (one of: deny, sameorigin)"),
            std::string::npos);
  EXPECT_NE(first("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n")
                .find("invalid value 'sniff'"),
            std::string::npos);
  EXPECT_NE(first("http_server_config:\n  http3: true\n").find("unknown key 'http3'"),
            std::string::npos);
  EXPECT_NE(first("rate_limit:\n  burst: 1\n").find("unknown key 'rate_limit'"), std::string::npos);
  EXPECT_NE(first("foo\n").find("expected a mapping"), std::string::npos);
  EXPECT_NE(first("basic_auth_users: []\n").find("expected a mapping"), std::string::npos);
  EXPECT_NE(first("tls_server_config: 3\n").find("expected a mapping"), std::string::npos);
  EXPECT_NE(first(std::string("basic_auth_users:\n  u: ") + kHash + "\n  u: " + kHash + "\n")
                .find("duplicate key"),
            std::string::npos);
  EXPECT_NE(first("tls_server_config: {cert_file: [a]}\n").find("expected a string"),
            std::string::npos);
}

TEST(WebConfig, OnlyBcryptHashes) {
  // sha512-crypt, md5-crypt, yescrypt, a plain password, cost 3, bcrypt's $2x$, a hash cut short.
  for (const char* hash : {"$6$saltsalt$Vf2b8J0bgcL3OXv5DzgD4l/3j3OfL8E5c0vD3A2kz7c8QfXXy3m/"
                           "1mQq1Xq6qjvQh4lPq3dJ8n9h6z1aXvEPq.",
                           "$1$saltsalt$YhF5u4ZyR4Q8tH3xYv8Gk/", "$y$j9T$salt$hash", "secret",
                           "$2y$03$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC",
                           "$2x$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC",
                           "$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFL"}) {
    EXPECT_FALSE(is_bcrypt_hash(hash)) << hash;
    EXPECT_NE(first(std::string("basic_auth_users:\n  prometheus: '") + hash + "'\n")
                  .find("basic_auth_users.prometheus: not a bcrypt hash"),
              std::string::npos)
        << hash;
  }
  for (const char* hash : {"$2a$10$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC",
                           "$2b$31$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC",
                           "$2y$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC"}) {
    EXPECT_TRUE(is_bcrypt_hash(hash)) << hash;
  }
  EXPECT_NE(first("basic_auth_users:\n  u:\n").find("not a bcrypt hash"), std::string::npos);
}

TEST(WebConfig, EveryProblemIsReported) {
  auto d = refuse(
      "tls_server_config:\n  cert_file: c\n  min_version: TLS9\n"
      "http_server_config:\n  headers:\n    X-Frame-Options: maybe\n"
      "basic_auth_users:\n  u: nope\n");
  EXPECT_EQ(d.size(), 4u) << diagnostics_text(d);  // version, key_file, header, hash
}

class WebConfigFiles : public ::testing::Test {
 protected:
  tls_testing::TestPki pki;
  std::string write(const std::string& text) {
    const std::string path = pki.dir() + "/web.yml";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(WebConfigFiles, LoadsWhatItNamesRelativeToTheFile) {
  ASSERT_TRUE(pki.ok());
  auto cfg = load_web_config(
      write("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
            "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"));
  ASSERT_TRUE(cfg.ok()) << cfg.error().message();
  EXPECT_EQ(cfg->tls.cert_file, pki.pem("server"));
}

TEST_F(WebConfigFiles, RefusesFilesTheServerCouldNotUse) {
  ASSERT_TRUE(pki.ok());
  const std::pair<std::string, std::string> cases[] = {
      {"cert_file: missing.pem\n  key_file: server.key",
       "cert_file " + pki.dir() + "/missing.pem: cannot read"},
      {"cert_file: server.pem\n  key_file: server2.key", "does not match cert_file"},
      {"cert_file: server.key\n  key_file: server.key", "no usable certificate"},
      {"cert_file: server.pem\n  key_file: server.pem", "no usable private key"},
      {"cert_file: server.pem\n  key_file: server.key\n  client_auth_type: "
       "RequireAndVerifyClientCert\n  client_ca_file: server.key",
       "client_ca_file"},
  };
  for (const auto& [tls, expected] : cases) {
    auto cfg = load_web_config(write("tls_server_config:\n  " + tls + "\n"));
    ASSERT_FALSE(cfg.ok()) << tls;
    EXPECT_NE(cfg.error().message().find(expected), std::string::npos) << cfg.error().message();
    EXPECT_NE(cfg.error().message().find("web.yml"), std::string::npos) << cfg.error().message();
  }
  auto missing = load_web_config(pki.dir() + "/nothing.yml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("nothing.yml: cannot read"), std::string::npos);
}

}  // namespace
}  // namespace dimctl::exporters
