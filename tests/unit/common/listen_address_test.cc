// The one listen-address grammar: the config's metrics.listen, the daemon's --web.listen-address,
// `dimctl status --address` and the exporter's bind read the same texts the same way.
#include "dimctl/common/listen_address.h"

#include <gtest/gtest.h>

#include <string>

namespace dimctl {
namespace {

TEST(ListenAddress, EveryFormParsesAndPrintsBackAsItself) {
  struct Case {
    const char* text;
    const char* host;
    uint16_t port;
  };
  for (const Case& k : {Case{"127.0.0.1:9977", "127.0.0.1", 9977}, Case{"0.0.0.0:1", "0.0.0.0", 1},
                        Case{"localhost:65535", "localhost", 65535}, Case{"[::]:9977", "::", 9977},
                        Case{"[fe80::1]:80", "fe80::1", 80}, Case{":9977", "", 9977},
                        Case{"[::1]:0", "::1", 0}, Case{":0", "", 0}}) {
    auto a = parse_listen_address(k.text, PortZero::kKernelPicks);
    ASSERT_TRUE(a.ok()) << k.text << ": " << a.error().message();
    EXPECT_EQ(a->host, k.host) << k.text;
    EXPECT_EQ(a->port, k.port) << k.text;
    EXPECT_EQ(a->to_string(), k.text);
    EXPECT_EQ(*parse_listen_address(a->to_string(), PortZero::kKernelPicks), *a) << k.text;
    // Only port 0 depends on who asks.
    EXPECT_EQ(parse_listen_address(k.text).ok(), k.port != 0) << k.text;
  }
  EXPECT_EQ(default_listen_address().to_string(), kDefaultListenAddress);
}

TEST(ListenAddress, RefusedTextsSayWhy) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& k : {
           Case{"127.0.0.1", "expected host:port"},
           Case{"", "expected host:port"},
           Case{"[::1]", "expected [IPv6]:port"},
           Case{"[::1]9977", "expected [IPv6]:port"},
           Case{"[nope]:1", "'nope' is not an IPv6 address"},
           Case{"[]:9977", "'' is not an IPv6 address"},
           Case{"::9977", "IPv6 addresses must be in brackets"},
           Case{"300.1.1.1:80", "'300.1.1.1' is not an IPv4 address"},
           // No name resolution: the exporter's bind once took any host name, the config none.
           Case{"example.com:9977", "host names other than localhost are not resolved"},
           Case{"127.0.0.1:x", "port 'x' is not a number in 1..65535"},
           Case{"127.0.0.1:+80", "port '+80' is not a number"},
           Case{"127.0.0.1:65536", "port '65536' is not a number"},
           Case{":", "port '' is not a number"},
           // A daemon's endpoint on a port the kernel picks: no scraper could find it.
           Case{"127.0.0.1:0", "port '0' is not a number in 1..65535"},
           Case{":0", "port '0' is not a number in 1..65535"},
       }) {
    auto a = parse_listen_address(k.text);
    ASSERT_FALSE(a.ok()) << k.text;
    EXPECT_NE(a.error().message().find(std::string("bad listen address '") + k.text + "'"),
              std::string::npos)
        << a.error().message();
    EXPECT_NE(a.error().message().find(k.why), std::string::npos) << a.error().message();
  }
}

}  // namespace
}  // namespace dimctl
