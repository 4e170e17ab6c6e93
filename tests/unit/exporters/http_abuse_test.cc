// HttpServer under abuse, on 127.0.0.1 with an ephemeral port: idle, slowloris and trickling
// connections held open, oversized request lines and headers, endless heads, clients that never
// read. Throughout, fresh /metrics and /healthz requests must be answered promptly, and the
// abusive connections must be closed by the server within its limits.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/collectable.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "dimctl/common/fd.h"
#include "dimctl/exporters/http_client.h"
#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/state_collector.h"
#include "unit/exporters/fake_state.h"

namespace dimctl::exporters {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What "promptly" means for one scrape or probe while the abuse goes on.
constexpr auto kPrompt = std::chrono::seconds(2);
// Client timeout: longer than kPrompt so a slow answer is measured, not just failed.
constexpr auto kClientTimeout = std::chrono::seconds(10);

// A blocking TCP connection to 127.0.0.1:port, or -1.
Fd connect_loopback(uint16_t port, int sndbuf = 0) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return fd;
  if (sndbuf > 0) setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) return Fd();
  return fd;
}

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the peer closes or `deadline`. closed: the server ended the connection (EOF or
// reset); data: everything it sent before.
struct Drained {
  bool closed = false;
  std::string data;
};
Drained drain(int fd, Clock::time_point deadline) {
  Drained d;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return d;
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return d;
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      d.data.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    d.closed = true;  // 0: orderly close; <0: reset
    return d;
  }
}

// The status code of the first response in `data`, 0 when there is none.
int status_of(const std::string& data) {
  if (data.rfind("HTTP/1.", 0) != 0 || data.size() < 12) return 0;
  return std::atoi(data.substr(9, 3).c_str());
}

// Waits until every fd has something to read (or `deadline`).
void wait_readable(const std::vector<Fd>& fds, Clock::time_point deadline) {
  for (const auto& fd : fds) {
    pollfd p{fd.get(), POLLIN, 0};
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left > 0) poll(&p, 1, static_cast<int>(left));
  }
}

// Descriptors open in this process (client and server side alike).
long open_fds() {
  long n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

struct Timed {
  int status = 0;
  std::string error;
  std::chrono::duration<double> elapsed{};
};
Timed timed_get(const std::string& address, const std::string& path) {
  Timed t;
  auto start = Clock::now();
  auto r = http_get(address, path, std::chrono::duration_cast<milliseconds>(kClientTimeout));
  t.elapsed = Clock::now() - start;
  if (r.ok()) {
    t.status = r->status;
  } else {
    t.error = r.error().message();
  }
  return t;
}

// A collectable whose exposition is `bytes` long: one gauge with a huge HELP text.
class BigCollectable : public prometheus::Collectable {
 public:
  explicit BigCollectable(size_t bytes) : help_(bytes, 'h') {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily f;
    f.name = "dimctl_test_big";
    f.help = help_;
    f.type = prometheus::MetricType::Gauge;
    prometheus::ClientMetric m;
    m.gauge.value = 1;
    f.metric.push_back(m);
    return {f};
  }

 private:
  std::string help_;
};

struct Abuse : ::testing::Test {
  std::shared_ptr<const seam::ControllerState> state =
      std::make_shared<const seam::ControllerState>(testing::full_fake_state());
  std::shared_ptr<StateCollector> collector;
  std::shared_ptr<BigCollectable> big;  // only served when a test sets it before start()
  std::unique_ptr<HttpServer> server;
  HttpLimits limits;  // the daemon's defaults unless a test restarts with others

  void restart() {
    server.reset();
    start();
  }
  void start() {
    auto c = StateCollector::create([this] { return state; }, CollectorOptions{});
    ASSERT_TRUE(c.ok()) << c.error().message();
    collector = *c;
    HttpServerOptions o;
    o.address = *parse_listen_address("127.0.0.1:0", PortZero::kKernelPicks);
    o.collectables = {collector};
    if (big) o.collectables.push_back(big);
    o.state = [this] { return state; };
    o.limits = limits;
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message();
    server = std::move(*s);
  }
  void SetUp() override { start(); }

  // `rounds` × (/metrics, /healthz) on fresh connections; each must be 200 within kPrompt.
  // Stops at the first failure so a starved server does not run the test into its timeout.
  void expect_prompt_answers(int rounds, const char* while_what) {
    std::vector<double> ms;
    for (int i = 0; i < rounds; ++i) {
      for (const char* path : {"/metrics", "/healthz"}) {
        Timed t = timed_get(server->bound_address(), path);
        ms.push_back(t.elapsed.count() * 1000);
        if (t.status != 200 || t.elapsed > kPrompt) {
          ADD_FAILURE() << while_what << ": GET " << path << " #" << i << " took "
                        << t.elapsed.count() << " s, status " << t.status << " " << t.error;
          return;
        }
      }
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%s: %zu requests, median %.2f ms, max %.2f ms\n", while_what, ms.size(),
                ms[ms.size() / 2], ms.back());
  }
};

// 200 silent connections, 50 that sent half a request line and stalled, 20 that trickle one
// byte every 200 ms (a per-read timeout never fires for those): scrapes and probes are still
// answered promptly, and the server closes every one of the 270 connections by itself.
TEST_F(Abuse, IdleSlowlorisAndTricklingConnectionsDoNotStarveScrapes) {
  const uint16_t port = server->port();
  std::vector<Fd> idle, stalled, trickling;
  const auto opened = Clock::now();
  for (int i = 0; i < 200; ++i) {
    idle.push_back(connect_loopback(port));
    ASSERT_GE(idle.back().get(), 0) << "idle connection " << i << ": " << std::strerror(errno);
  }
  for (int i = 0; i < 50; ++i) {
    stalled.push_back(connect_loopback(port));
    ASSERT_GE(stalled.back().get(), 0) << std::strerror(errno);
    ASSERT_TRUE(send_all(stalled.back().get(), "GET /metrics HT"));
  }
  for (int i = 0; i < 20; ++i) {
    trickling.push_back(connect_loopback(port));
    ASSERT_GE(trickling.back().get(), 0) << std::strerror(errno);
    ASSERT_TRUE(send_all(trickling.back().get(), "GET /metrics HTTP/1.1\r\nX-Slow: "));
  }
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    // Bounded: at most 60 s. Keeps trickling until the checks below are over; a send to a
    // connection the server closed just fails.
    for (int round = 0; round < 300 && !done; ++round) {
      for (auto& fd : trickling) send(fd.get(), "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(milliseconds(200));
    }
  });
  std::this_thread::sleep_for(milliseconds(300));  // let the server accept them all

  expect_prompt_answers(10, "270 idle/stalled/trickling connections held");

  // Closed by the server within its request-head deadline (a few seconds), not by us. The
  // trickling ones too, while they still trickle: a per-read timeout would never fire.
  const auto deadline = opened + std::chrono::seconds(12);
  int still_open = 0;
  for (auto* group : {&idle, &stalled}) {
    for (auto& fd : *group) {
      if (!drain(fd.get(), deadline).closed) ++still_open;
    }
  }
  int trickling_open = 0;
  for (auto& fd : trickling) {
    if (!drain(fd.get(), deadline).closed) ++trickling_open;
  }
  done = true;
  trickler.join();
  EXPECT_EQ(still_open, 0) << "idle or stalled connections the server never closed";
  EXPECT_EQ(trickling_open, 0) << "trickling connections the server never closed";
  expect_prompt_answers(2, "after the abusive connections are gone");
}

// Sends `request`; returns what the server answered and whether it closed the connection.
Drained ask(uint16_t port, const std::string& request) {
  Fd fd = connect_loopback(port);
  if (fd.get() < 0) return {};
  send_all(fd.get(), request);  // may fail half-way when the server closes early: fine
  shutdown(fd.get(), SHUT_WR);
  return drain(fd.get(), Clock::now() + std::chrono::seconds(8));
}

// A request the server must refuse: a 4xx, or a close without any response.
void expect_refused(const Drained& d, const char* what) {
  const int status = status_of(d.data);
  EXPECT_TRUE((status >= 400 && status < 500) || (status == 0 && d.closed))
      << what << ": status " << status << ", closed " << d.closed
      << ", answer: " << d.data.substr(0, 200);
}

TEST_F(Abuse, OversizedRequestsAreRefusedAndTheServerKeepsAnswering) {
  const uint16_t port = server->port();
  expect_refused(ask(port, "GET /" + std::string(64 * 1024, 'p') + " HTTP/1.1\r\n\r\n"),
                 "64 KiB path");
  expect_prompt_answers(1, "after a 64 KiB path");
  expect_refused(
      ask(port, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(64 * 1024, 'h') + "\r\n\r\n"),
      "one 64 KiB header");
  expect_prompt_answers(1, "after a 64 KiB header");
  std::string many = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 1000; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  expect_refused(ask(port, many + "\r\n"), "1000 headers");
  expect_prompt_answers(1, "after 1000 headers");
  std::string short_headers = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 150; ++i) short_headers += "X-" + std::to_string(i) + ": v\r\n";
  expect_refused(ask(port, short_headers + "\r\n"), "150 short headers (1.4 KiB)");
  expect_prompt_answers(1, "after 150 short headers");
  std::string long_headers = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 200; ++i)
    long_headers += "X-" + std::to_string(i) + ": " + std::string(100, 'v') + "\r\n";
  expect_refused(ask(port, long_headers + "\r\n"), "200 headers of 100 bytes (20 KiB)");
  expect_prompt_answers(1, "after 20 KiB of headers");
}

// A head that never ends (an endless request line, endless headers) is cut off after the head
// limit: the server stops reading and closes. Measured as what the client managed to send
// (its own 8 KiB send buffer plus the server's receive window), far below what it tried.
TEST_F(Abuse, EndlessHeadsAreCutOffNotBuffered) {
  constexpr size_t kTry = 16 << 20;
  constexpr size_t kAtMost = 2 << 20;
  const std::string line_chunk(64 * 1024, 'p');
  std::string header_chunk;
  while (header_chunk.size() < 64 * 1024)
    header_chunk += "X-Endless: " + std::string(90, 'v') + "\r\n";
  struct Case {
    const char* what;
    std::string first;
    const std::string& chunk;
  };
  for (const Case& c : {Case{"endless request line", "GET /", line_chunk},
                        Case{"endless headers", "GET /healthz HTTP/1.1\r\n", header_chunk}}) {
    Fd fd = connect_loopback(server->port(), 8192);
    ASSERT_GE(fd.get(), 0);
    ASSERT_TRUE(send_all(fd.get(), c.first));
    size_t sent = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    bool refused = false;
    while (sent < kTry && Clock::now() < deadline) {
      pollfd p{fd.get(), POLLOUT, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t n = send(fd.get(), c.chunk.data(), c.chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        refused = true;  // reset or pipe: the server closed the connection
        break;
      }
      sent += static_cast<size_t>(n);
    }
    if (!refused) refused = drain(fd.get(), Clock::now() + std::chrono::seconds(2)).closed;
    EXPECT_TRUE(refused) << c.what << ": the server kept the connection";
    EXPECT_LT(sent, kAtMost) << c.what << ": the server took " << sent << " bytes of one head";
    expect_prompt_answers(1, c.what);
  }
}

// Clients that ask for a big /metrics and never read it: the response waits in the socket, not
// in a handler thread, so other scrapes and probes go on.
TEST_F(Abuse, ClientsThatNeverReadDoNotBlockOthers) {
  server.reset();
  big = std::make_shared<BigCollectable>(16 << 20);  // more than loopback socket buffers hold
  start();
  std::vector<Fd> readers;
  for (int i = 0; i < 6; ++i) {
    readers.push_back(connect_loopback(server->port()));
    ASSERT_GE(readers.back().get(), 0);
    ASSERT_TRUE(send_all(readers.back().get(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  // Measure once the responses are rendered and waiting (rendering is CPU, not what this is
  // about), and without the 16 MiB in our own scrapes.
  wait_readable(readers, Clock::now() + std::chrono::seconds(30));
  big.reset();
  expect_prompt_answers(5, "6 clients not reading a 16 MiB /metrics");
}

// Reads one connection's responses until `n` are complete (or it closes, or `deadline`).
struct Responses {
  std::vector<int> statuses;
  bool closed = false;
};
Responses read_responses(int fd, std::size_t n, Clock::time_point deadline) {
  Responses r;
  std::string data;
  char buf[65536];
  while (r.statuses.size() < n && Clock::now() < deadline) {
    // Parse what is complete.
    const auto head_end = data.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const auto cl = data.find("Content-Length: ");
      const std::size_t body = cl < head_end ? std::stoul(data.substr(cl + 16)) : 0;
      if (data.size() >= head_end + 4 + body) {
        r.statuses.push_back(status_of(data));
        data.erase(0, head_end + 4 + body);
        continue;
      }
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (got > 0) {
      data.append(buf, static_cast<std::size_t>(got));
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      r.closed = true;
      break;
    }
  }
  return r;
}

TEST_F(Abuse, KeepAliveAndPipelinedRequestsAreAnswered) {
  Fd fd = connect_loopback(server->port());
  ASSERT_GE(fd.get(), 0);
  const std::string healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string readyz = "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n";
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  ASSERT_TRUE(send_all(fd.get(), healthz));
  EXPECT_EQ(read_responses(fd.get(), 1, deadline).statuses, std::vector<int>{200});
  ASSERT_TRUE(send_all(fd.get(), readyz));
  EXPECT_EQ(read_responses(fd.get(), 1, deadline).statuses, std::vector<int>{200});
  // Three at once, the last asking to close, then a fourth the server must not answer.
  ASSERT_TRUE(send_all(fd.get(), healthz + "GET /nope HTTP/1.1\r\n\r\n" +
                                     "GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n" +
                                     healthz));
  auto r = read_responses(fd.get(), 4, deadline);
  EXPECT_EQ(r.statuses, (std::vector<int>{200, 404, 200}));
  EXPECT_TRUE(r.closed);
}

// With a cap of 20: 30 idle connections close the 10 that waited longest, and a scrape still
// gets in (closing one more). The server never holds more than the cap. gap: the pause between
// two connects; 0 makes the server admit them in batches, which must keep the accept order.
void expect_longest_idle_evicted(Abuse& t, std::chrono::milliseconds gap) {
  t.limits.max_connections = 20;
  t.restart();
  const auto fds_before = open_fds();
  std::vector<Fd> idle;
  for (int i = 0; i < 30; ++i) {
    idle.push_back(connect_loopback(t.server->port()));
    ASSERT_GE(idle.back().get(), 0);
    // One at a time, so the order the server admits them in is the order here.
    if (gap.count() > 0) std::this_thread::sleep_for(gap);
  }
  // Generous: a passing run returns at the tenth close. Once connection 9 is closed the server
  // has admitted connection 29 (the admission that evicted it), so it holds exactly the cap: 20
  // server ends beside the 30 client ends (until then, connections the acceptor took may wait
  // for the loop beyond the cap).
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(drain(idle[i].get(), deadline).closed) << "connection " << i << " not evicted";
  }
  EXPECT_LE(open_fds() - fds_before, 30 + 20) << "the server holds more connections than its cap";
  for (int i = 10; i < 30; ++i) {
    pollfd p{idle[i].get(), POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0) << "connection " << i << " closed, but it was within the cap";
  }
  t.expect_prompt_answers(3, "30 idle connections, cap 20");
}

TEST_F(Abuse, ConnectionsBeyondTheCapCloseTheLongestIdle) {
  expect_longest_idle_evicted(*this, milliseconds(2));
}

TEST_F(Abuse, ABurstBeyondTheCapClosesTheFirstAccepted) {
  expect_longest_idle_evicted(*this, milliseconds(0));
}

// At the cap with every connection writing to a client that does not read, the slowest reader
// gives way to a new client.
TEST_F(Abuse, AtTheCapSlowReadersGiveWay) {
  limits.max_connections = 3;
  limits.max_pending_output = std::size_t{1} << 30;
  big = std::make_shared<BigCollectable>(16 << 20);
  restart();
  std::vector<Fd> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(connect_loopback(server->port()));
    ASSERT_GE(readers.back().get(), 0);
    ASSERT_TRUE(send_all(readers.back().get(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
    wait_readable(readers, Clock::now() + std::chrono::seconds(30));
  }
  big.reset();
  Timed t = timed_get(server->bound_address(), "/healthz");
  EXPECT_EQ(t.status, 200) << t.error;
  EXPECT_LT(t.elapsed, kPrompt);
  Drained first = drain(readers[0].get(), Clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(first.closed);
  EXPECT_LT(first.data.size(), std::size_t{16} << 20) << "the slowest reader got all of it";
}

// A head that stalls gets 408 and a close at head_timeout, an idle connection a silent close, a
// client that does not read its response a close at write_timeout.
TEST_F(Abuse, DeadlinesCloseSlowHeadsAndNonReaders) {
  limits.head_timeout = milliseconds(300);
  limits.write_timeout = milliseconds(300);
  big = std::make_shared<BigCollectable>(16 << 20);
  restart();
  const auto opened = Clock::now();
  Fd idle = connect_loopback(server->port());
  Fd stalled = connect_loopback(server->port());
  Fd reader = connect_loopback(server->port());
  ASSERT_TRUE(send_all(stalled.get(), "GET /healthz HTTP/1.1\r\nHost"));
  ASSERT_TRUE(send_all(reader.get(), "GET /metrics HTTP/1.1\r\n\r\n"));
  Drained d = drain(idle.get(), opened + std::chrono::seconds(3));
  EXPECT_TRUE(d.closed);
  EXPECT_EQ(d.data, "");
  std::chrono::duration<double> took = Clock::now() - opened;
  EXPECT_GE(took.count(), 0.25);
  d = drain(stalled.get(), opened + std::chrono::seconds(3));
  EXPECT_TRUE(d.closed);
  EXPECT_EQ(status_of(d.data), 408) << d.data;
  std::this_thread::sleep_for(std::chrono::seconds(2));  // not reading, well past write_timeout
  big.reset();
  d = drain(reader.get(), Clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(d.closed);
  EXPECT_EQ(status_of(d.data), 200);
  EXPECT_LT(d.data.size(), std::size_t{16} << 20) << "a non-reader got the whole response";
}

// Responses waiting for slow readers share one budget: beyond it, connections are closed rather
// than their responses buffered; the only one waiting may exceed it.
TEST_F(Abuse, PendingOutputIsBounded) {
  limits.max_pending_output = 1 << 20;
  big = std::make_shared<BigCollectable>(16 << 20);
  restart();
  std::vector<Fd> readers;
  for (int i = 0; i < 4; ++i) {
    readers.push_back(connect_loopback(server->port()));
    ASSERT_GE(readers.back().get(), 0);
    ASSERT_TRUE(
        send_all(readers.back().get(), "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n"));
  }
  wait_readable(readers, Clock::now() + std::chrono::seconds(30));
  std::this_thread::sleep_for(milliseconds(500));  // every render done
  big.reset();
  int complete = 0;
  for (auto& fd : readers) {
    Drained d = drain(fd.get(), Clock::now() + std::chrono::seconds(10));
    if (d.data.size() > (std::size_t{16} << 20)) ++complete;
  }
  EXPECT_EQ(complete, 1) << "responses delivered in full to clients that did not read";
  expect_prompt_answers(1, "after the budget was exceeded");
}

TEST_F(Abuse, StopIsPromptWithConnectionsHeld) {
  std::vector<Fd> idle;
  for (int i = 0; i < 100; ++i) {
    idle.push_back(connect_loopback(server->port()));
    ASSERT_GE(idle.back().get(), 0);
  }
  std::this_thread::sleep_for(milliseconds(200));
  auto start = Clock::now();
  server->stop();
  std::chrono::duration<double> took = Clock::now() - start;
  EXPECT_LT(took, kPrompt) << "stop() took " << took.count() << " s";
}

}  // namespace
}  // namespace dimctl::exporters
