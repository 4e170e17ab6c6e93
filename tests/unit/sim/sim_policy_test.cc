#include <gtest/gtest.h>

#include "dimctl/sim/simulator.h"

namespace dimctl::sim {
namespace {

TEST(SimPolicy, ParsesEveryNameAndRejectsBadOnes) {
  for (const char* ok :
       {"none", "static:0", "static:8", "kernel-net-eqe", "kernel-net-cqe", "kernel-rdma",
        "dimctl-net-eqe", "dimctl-net-cqe", "dimctl-rdma", "dimctl-rdma@1ms", "oracle"}) {
    EXPECT_TRUE(parse_policy(ok)) << ok;
  }
  for (const char* bad : {"", "static", "static:", "static:x", "static:300", "dim", "none@1ms",
                          "dimctl-rdma@", "dimctl-rdma@0ms", "dimctl-rdma@5"}) {
    auto p = parse_policy(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_NE(p.error().message().find(std::string("'") + bad), std::string::npos)
        << p.error().message();
  }
  EXPECT_EQ(parse_policy("dimctl-net-eqe@500us")->period_ns, 500'000);
}

}  // namespace
}  // namespace dimctl::sim
