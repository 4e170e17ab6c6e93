// `dimctl status` and `dimctl top --once`: the real binary against an in-test server that
// publishes the fake state.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/state_json.h"
#include "unit/exporters/fake_state.h"

#ifndef DIMCTL_BINARY
#error "DIMCTL_BINARY must name the dimctl executable"
#endif

namespace dimctl::exporters {
namespace {

struct CmdResult {
  int rc = -1;
  std::string out;  // stdout and stderr
};

// The cell under `column` in the first row starting with `row` (or the "#N"-th row) of the table
// after the line `title` ("": the first blank line): columns are aligned, so a cell starts where
// its header does (up to two spaces).
std::string column_of(const std::string& out, const std::string& title, const std::string& column,
                      const std::string& row) {
  const std::size_t t = out.find("\n" + title + "\n");
  if (t == std::string::npos) return "<no table>";
  const std::size_t h = t + title.size() + 2;
  const std::string header = out.substr(h, out.find('\n', h) - h);
  const std::size_t col = header.find(column);
  if (col == std::string::npos) return "<no column>";
  // `row`: the start of the row's line, or "#N" for the N-th line after the header.
  std::size_t r = std::string::npos;
  if (row.size() > 1 && row[0] == '#') {
    r = out.find('\n', h);
    for (int n = std::stoi(row.substr(1)); n > 1 && r != std::string::npos; --n) {
      r = out.find('\n', r + 1);
    }
  } else {
    r = out.find("\n" + row, h);
  }
  if (r == std::string::npos) return "<no row>";
  const std::string line = out.substr(r + 1, out.find('\n', r + 1) - r - 1);
  if (line.size() <= col) return "<short row>";
  const std::size_t end = line.find("  ", col);
  return line.substr(col, end == std::string::npos ? std::string::npos : end - col);
}

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

struct Cli : ::testing::Test {
  std::mutex mu;  // the server thread reads `state` while a test may replace it
  std::shared_ptr<const seam::ControllerState> state =
      std::make_shared<const seam::ControllerState>(testing::full_fake_state());
  std::unique_ptr<HttpServer> server;
  std::string addr;

  void SetUp() override {
    HttpServerOptions o;
    o.address = *parse_listen_address("127.0.0.1:0", PortZero::kKernelPicks);
    o.state = [this] {
      std::lock_guard<std::mutex> l(mu);
      return state;
    };
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message();
    server = std::move(*s);
    addr = server->bound_address();
  }
};

TEST_F(Cli, StatusJsonPrintsTheStateDocument) {
  CmdResult r = run("status --json --address " + addr);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out), state_to_json(testing::full_fake_state()));
}

TEST_F(Cli, StatusSummary) {
  CmdResult r = run("status --address " + addr);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("ready, 1234 loops"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bpf program cq_poll: NOT attached (ib_core not loaded)"), std::string::npos)
      << r.out;
  // eth0: enforce, rule, requested/applied rx-usecs 64/62, applies 10/1/3, the last error.
  EXPECT_NE(r.out.find("fast-nics"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64/62"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10/1/3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eth0: set coalesce: Operation not supported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(kernel DIM on)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rdma vs model"), std::string::npos) << r.out;  // compare: model
  EXPECT_NE(r.out.find("BPF events dropped (napi_map_full): 17"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cq_map_full"), std::string::npos) << "zero counts are not printed";
  // CPU 3: measured costs (2.5 us per interrupt, 400 ns per completion), saturated at profile 3.
  const std::string cores = "cores (measured costs, saturation)";
  EXPECT_EQ(column_of(r.out, cores, "CPU", "#1"), "3") << r.out;
  EXPECT_EQ(column_of(r.out, cores, "BUSY", "#1"), "93%") << r.out;
  EXPECT_EQ(column_of(r.out, cores, "ESTIMATE irq/comp ns", "#1"), "2500/400") << r.out;
  EXPECT_EQ(column_of(r.out, cores, "USED irq/comp ns", "#1"), "2508/401") << r.out;
  EXPECT_EQ(column_of(r.out, cores, "CONFIDENCE", "#1"), "measured (0/0 periods)") << r.out;
  EXPECT_EQ(column_of(r.out, cores, "SATURATED", "#1"), "yes (profile 3)") << r.out;
}

TEST_F(Cli, AddressFromTheEnvironment) {
  std::string cmd =
      "DIMCTL_ADDRESS=" + addr + " " + DIMCTL_BINARY + " status --json >/dev/null 2>&1";
  EXPECT_EQ(system(cmd.c_str()), 0);
}

TEST_F(Cli, TopOncePrintsOneFrame) {
  CmdResult r = run("top --once --address " + addr);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "--once must not clear the screen";
  // eth0 queue 0: 250k packets/s, 5k events/s, 50 packets per event, profile 3 -> 2 after
  // bounds, 64 usecs wanted vs 62 applied, 128 frames wanted and applied.
  EXPECT_NE(r.out.find("250k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5.00k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("50.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3->2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64/62"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("128/128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("napi9001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("enforce"), std::string::npos) << r.out;
  // The CQ table: 12.8k completions/s, 16 per event, wanted 8 usec vs kernel 8, 64 vs 32 comps.
  EXPECT_NE(r.out.find("RDMA CQs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12.8k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64/32"), std::string::npos) << r.out;
  // Rules with compare: both policies' picks, dim/model (queue 0: 2/1, the CQ: 4/6).
  EXPECT_NE(r.out.find("DIM/MODEL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2/1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4/6"), std::string::npos) << r.out;
  // Queue 0's CPU (6) and its compared model's sharers (2); queue 1's CPU is unknown.
  // (The queue table follows the banner's blank line; its rows in queue order.)
  EXPECT_EQ(column_of(r.out, "", "CPU", "#1"), "6") << r.out;
  EXPECT_EQ(column_of(r.out, "", "SHARERS", "#1"), "2") << r.out;
  EXPECT_EQ(column_of(r.out, "", "CPU", "#2"), "-") << r.out;
  // The cost model's objective and predicted trade-off, the model's pick / no moderation:
  // queue 0 under latency, queue 1 without a model, the tx NAPI with a 50 us budget.
  EXPECT_EQ(column_of(r.out, "", "OBJECTIVE", "#1"), "latency") << r.out;
  EXPECT_EQ(column_of(r.out, "", "+LATENCY chosen/none", "#1"), "3.0us/250ns") << r.out;
  EXPECT_EQ(column_of(r.out, "", "OBJECTIVE", "#2"), "-") << r.out;
  EXPECT_EQ(column_of(r.out, "", "OBJECTIVE", "#3"), "efficiency 50.0us") << r.out;
  EXPECT_EQ(column_of(r.out, "", "+LATENCY chosen/none", "#3"), "12.0us/500ns") << r.out;
  EXPECT_EQ(column_of(r.out, "", "CPU/COMP chosen/none", "#3"), "1.8us/3.0us") << r.out;
  EXPECT_EQ(column_of(r.out, "RDMA CQs", "OBJECTIVE", "mlx5_0"), "efficiency 100.0us") << r.out;
  EXPECT_EQ(column_of(r.out, "RDMA CQs", "+LATENCY chosen/none", "mlx5_0"), "40.0us/500ns")
      << r.out;
  // The CQ's completion vector (3) and the compared model's sharers (4), in their columns.
  EXPECT_EQ(column_of(r.out, "RDMA CQs", "VEC", "mlx5_0"), "3") << r.out;
  EXPECT_EQ(column_of(r.out, "RDMA CQs", "SHARERS", "mlx5_0"), "4") << r.out;
  EXPECT_EQ(column_of(r.out, "cores (measured costs, saturation)", "SATURATED", "#1"),
            "yes (profile 3)")
      << r.out;
}

// Live mode, as an operator runs it: frames repeat at the interval, each clears the screen, and
// a change in the daemon's state shows in a later frame. (SIGTERM ends it: a background job of a
// non-interactive shell ignores SIGINT.)
TEST_F(Cli, TopLiveRefreshesAndFollowsTheState) {
  std::thread change([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(450));
    auto next = std::make_shared<seam::ControllerState>(testing::full_fake_state());
    next->loops_total = 987654;
    std::lock_guard<std::mutex> l(mu);
    state = std::move(next);
  });
  CmdResult r = run("top --interval 100ms --address " + addr +
                    " & pid=$!; sleep 1.2; kill -TERM $pid; wait $pid");
  change.join();
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = r.out.find(needle); at != std::string::npos; at = r.out.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_GE(count("\x1b[H\x1b[2J"), 5u) << "about 12 frames in 1.2 s at 100 ms";
  EXPECT_EQ(count("\x1b[H\x1b[2J"), count("dimctl top  " + addr)) << "every frame clears first";
  EXPECT_NE(r.out.find("loops 1234 "), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("loops 987654 "), std::string::npos) << "the later state is shown";
  EXPECT_NE(r.out.find("Ctrl-C quits"), std::string::npos);
  EXPECT_NE(r.out.find("3->2"), std::string::npos);
}

TEST_F(Cli, UnreachableDaemonIsExit1WithAClearMessage) {
  std::string dead = addr;
  server.reset();  // nobody listens on that port any more
  for (const char* cmd : {"status", "status --json", "top --once"}) {
    CmdResult r = run(std::string(cmd) + " --address " + dead);
    EXPECT_EQ(r.rc, 1) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("cannot reach the dimctl daemon at " + dead), std::string::npos)
        << cmd << ": " << r.out;
  }
}

TEST_F(Cli, NoStateYetIsExit1) {
  {
    std::lock_guard<std::mutex> l(mu);
    state = nullptr;
  }
  CmdResult r = run("status --address " + addr);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("HTTP 503"), std::string::npos) << r.out;
}

TEST(CliUsage, BadIntervalIsAUsageError) {
  EXPECT_EQ(run("top --once --interval 5x").rc, 2);
  EXPECT_EQ(run("top --once --interval 10ms").rc, 2);
}

}  // namespace
}  // namespace dimctl::exporters
