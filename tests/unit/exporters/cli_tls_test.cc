// `dimctl status` and `dimctl top --once` against a daemon endpoint secured like the shipped
// DaemonSet's (TLS + basic auth, --web.config.file): the real binary, an in-test server with
// test certificates from the openssl CLI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "dimctl/exporters/http_server.h"
#include "unit/exporters/fake_state.h"
#include "unit/exporters/tls_test_support.h"

#ifndef DIMCTL_BINARY
#error "DIMCTL_BINARY must name the dimctl executable"
#endif

namespace dimctl::exporters {
namespace {

// bcrypt of "secret" (cost 4), as in web_server_test.cc.
constexpr const char* kSecret = "$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC";

struct CmdResult {
  int rc = -1;
  std::string out;  // stdout and stderr
};

CmdResult run(const std::string& args) {
  std::string cmd = std::string(DIMCTL_BINARY) + " " + args + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct CliTls : ::testing::Test {
  tls_testing::TestPki pki;
  std::unique_ptr<HttpServer> server;
  std::string addr;
  std::string good;  // password files
  std::string wrong;

  void SetUp() override {
    ASSERT_TRUE(pki.ok());
    auto state = std::make_shared<const seam::ControllerState>(dimctl::testing::full_fake_state());
    WebConfig w;
    w.source = "test";
    w.tls.cert_file = pki.pem("server");
    w.tls.key_file = pki.key("server");
    w.users = {{"prometheus", kSecret}};
    HttpServerOptions o;
    o.address = *parse_listen_address("127.0.0.1:0", PortZero::kKernelPicks);
    o.state = [state] { return state; };
    o.web = std::make_shared<const WebConfig>(std::move(w));
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message();
    server = std::move(*s);
    addr = server->bound_address();
    good = pki.dir() + "/password";
    std::ofstream(good) << "secret\n";  // as `echo secret >file` writes it
    wrong = pki.dir() + "/wrong";
    std::ofstream(wrong) << "guess";
  }
  std::string auth(const std::string& file) const {
    return " --basic-auth.username prometheus --basic-auth.password-file " + file;
  }
  std::string ca() const { return " --tls.ca-file " + pki.pem("ca"); }
};

TEST_F(CliTls, StatusWithTheCaAndTheCredentialsGetsTheState) {
  CmdResult r = run("status --tls --address " + addr + ca() + auth(good));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("dimctl daemon at " + addr + ": ready"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eth0"), std::string::npos) << r.out;
  // The https:// form of the address is the same as --tls.
  r = run("status --json --address https://" + addr + ca() + auth(good));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("{", 0), 0u) << r.out;
  // The password on stdin, as through `kubectl exec -i`.
  r = run("status --tls --address " + addr + ca() + auth("/dev/stdin") + " <" + good);
  EXPECT_EQ(r.rc, 0) << r.out;
  r = run("top --once --tls --address " + addr + ca() + auth(good));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("eth0"), std::string::npos) << r.out;
}

TEST_F(CliTls, WrongOrMissingCredentialsSay401) {
  CmdResult r = run("status --tls --address " + addr + ca() + auth(wrong));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("401"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrong user name or password"), std::string::npos) << r.out;
  r = run("status --tls --address " + addr + ca());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("401"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--basic-auth.password-file"), std::string::npos) << r.out;
}

TEST_F(CliTls, WithoutTheCaTheServerCertificateFailsVerification) {
  // The test CA is in no system store.
  CmdResult r = run("status --tls --address " + addr + auth(good));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("TLS verification of the server certificate failed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(addr), std::string::npos) << r.out;
  // A CA that did not sign it: the same.
  r = run("top --once --tls --address " + addr + " --tls.ca-file " + pki.pem("stranger") +
          auth(good));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("TLS verification of the server certificate failed"), std::string::npos)
      << r.out;
}

TEST_F(CliTls, InsecureSkipVerifyNeedsNoCa) {
  CmdResult r = run("status --tls --tls.insecure-skip-verify --address " + addr + auth(good));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find(": ready"), std::string::npos) << r.out;
}

TEST_F(CliTls, ServerNameIsWhatTheCertificateIsCheckedAgainst) {
  // The certificate carries 127.0.0.1 and localhost, not "dimctl".
  CmdResult r =
      run("status --tls --tls.server-name localhost --address " + addr + ca() + auth(good));
  EXPECT_EQ(r.rc, 0) << r.out;
  r = run("status --tls --tls.server-name dimctl --address " + addr + ca() + auth(good));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("TLS verification"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not for this host name"), std::string::npos) << r.out;
}

TEST_F(CliTls, PlainHttpToATlsEndpointFails) {
  CmdResult r = run("status --address " + addr + auth(good));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("pass --tls"), std::string::npos) << r.out;
}

TEST_F(CliTls, MissingPasswordFileIsAUsageErrorNamingIt) {
  const std::string missing = pki.dir() + "/no-such-password";
  for (const char* cmd : {"status", "top --once"}) {
    CmdResult r = run(std::string(cmd) + " --tls --address " + addr + ca() + auth(missing));
    EXPECT_EQ(r.rc, 2) << cmd << r.out;
    EXPECT_NE(r.out.find(missing), std::string::npos) << r.out;
  }
}

TEST(CliTlsUsage, BadCombinationsAreUsageErrors) {
  const std::string a = " --address 127.0.0.1:1";
  for (const std::string& flags : {
           std::string(" --tls.ca-file /etc/hostname"),          // TLS detail without --tls
           std::string(" --tls.insecure-skip-verify"),           // the same
           std::string(" --tls --tls.cert-file /etc/hostname"),  // a certificate without its key
           std::string(" --tls --tls.insecure-skip-verify --tls.ca-file /etc/hostname"),
           std::string(" --basic-auth.username u"),                   // no password file
           std::string(" --basic-auth.password-file /etc/hostname"),  // no user
       }) {
    EXPECT_EQ(run("status" + a + flags).rc, 2) << flags;
    EXPECT_EQ(run("top --once" + a + flags).rc, 2) << flags;
  }
  EXPECT_EQ(run("status --tls --address http://127.0.0.1:1").rc, 2);
}

}  // namespace
}  // namespace dimctl::exporters
