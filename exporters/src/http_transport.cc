#include "http_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "dimctl/common/fd.h"
#include "tls_context.h"

namespace dimctl::exporters {
namespace {

using Clock = std::chrono::steady_clock;

struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};

// One client connection. The event loop owns it; while a handler thread serves it (kServing)
// only that thread touches it, and hands it back through the loop's queue.
struct Connection {
  enum class Phase { kHead, kServing, kWriting };
  Fd fd;
  // TLS (web config): the session over `fd`. Its handshake is part of waiting for the first
  // head, under the same deadline, so a client that stalls it is a slowloris like any other.
  std::unique_ptr<SSL, SslFree> ssl;
  bool handshaken = false;
  bool handshake_wants_write = false;  // the socket is watched for EPOLLOUT, not EPOLLIN
  Phase phase = Phase::kHead;
  // When the current phase began, as the loop's count of phase starts: eviction picks the lowest.
  // A count, not a time: connections admitted in one batch share a time, and must still go in
  // the order they were accepted (the longest waiting first).
  uint64_t since = 0;
  Clock::time_point deadline;  // of the current phase
  std::string in;              // the request head being read, then any bytes after it
  std::size_t head_end = 0;    // in[0, head_end) is a complete head (0: not yet)
  std::size_t scanned = 0;     // in[0, scanned) holds no head terminator
  bool peer_done = false;      // the client shut down its sending side
  std::string out;             // response bytes the kernel did not take yet
  std::size_t out_sent = 0;
  std::size_t served = 0;  // requests answered on this connection
  bool close_after_write = false;
};

// What one non-blocking read or write on a connection did, plain or TLS alike.
enum class Io { kOk, kAgain, kEof, kError };

Io recv_some(Connection& c, char* buf, std::size_t size, std::size_t& n) {
  n = 0;
  if (!c.ssl) {
    const ssize_t r = ::recv(c.fd.get(), buf, size, MSG_DONTWAIT);
    if (r > 0) {
      n = static_cast<std::size_t>(r);
      return Io::kOk;
    }
    if (r == 0) return Io::kEof;
    return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ? Io::kAgain : Io::kError;
  }
  ERR_clear_error();
  const int r = SSL_read(c.ssl.get(), buf, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (r > 0) {
    n = static_cast<std::size_t>(r);
    return Io::kOk;
  }
  switch (SSL_get_error(c.ssl.get(), r)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return Io::kAgain;
    case SSL_ERROR_ZERO_RETURN:
      return Io::kEof;
    default:
      return Io::kError;
  }
}

Io send_some(Connection& c, const char* data, std::size_t size, std::size_t& n) {
  n = 0;
  if (size == 0) return Io::kOk;
  if (!c.ssl) {
    const ssize_t r = ::send(c.fd.get(), data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
      n = static_cast<std::size_t>(r);
      return Io::kOk;
    }
    if (r == 0 || errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return Io::kAgain;
    return Io::kError;
  }
  ERR_clear_error();
  // Partial writes are on (tls_context.cc): a record the kernel took in part is finished by the
  // next call, from the same bytes.
  const int r =
      SSL_write(c.ssl.get(), data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
  if (r > 0) {
    n = static_cast<std::size_t>(r);
    return Io::kOk;
  }
  const int e = SSL_get_error(c.ssl.get(), r);
  return e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? Io::kAgain : Io::kError;
}

// httplib's task queue runs each accepted connection's job on a pool thread that reads and
// waits on the client: an idle or slow client holds a thread. Ours runs the job inline on the
// accept thread, where it only hands the socket to the ConnectionLoop.
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// Serves one complete request head to httplib (parsing, routing, the response) without ever
// waiting on the client: reads end at the bytes already received; writes go to the kernel
// without blocking and the rest waits in Connection::out for the event loop.
class BufferedStream final : public httplib::Stream {
 public:
  BufferedStream(Connection& c, std::atomic<std::size_t>& pending, std::size_t max_pending)
      : c_(c), pending_(pending), max_pending_(max_pending) {}

  bool is_readable() const override { return consumed_ < c_.in.size(); }
  bool is_writable() const override { return !failed_; }
  ssize_t read(char* ptr, std::size_t size) override {
    const std::size_t n = std::min(size, c_.in.size() - consumed_);
    if (n == 0) {
      ran_dry_ = true;  // a body that is not all here yet: the connection closes after this
      return 0;
    }
    std::memcpy(ptr, c_.in.data() + consumed_, n);
    consumed_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, std::size_t size) override {
    if (failed_) return -1;
    std::size_t sent = 0;
    if (c_.out.size() == c_.out_sent) {
      while (sent < size) {
        std::size_t n = 0;
        const Io io = send_some(c_, ptr + sent, size - sent, n);
        sent += n;
        if (io == Io::kAgain) break;
        if (io != Io::kOk) {
          failed_ = true;  // reset by the client
          return -1;
        }
      }
    }
    const std::size_t rest = size - sent;
    if (rest > 0) {
      if (!reserve(rest)) {
        failed_ = true;
        return -1;
      }
      c_.out.append(ptr + sent, rest);
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(getsockname, ip, port);
  }
  socket_t socket() const override { return c_.fd.get(); }

  std::size_t consumed() const { return consumed_; }
  bool ran_dry() const { return ran_dry_; }
  bool failed() const { return failed_; }

 private:
  // Room in the shared budget for `n` more waiting bytes; the only connection waiting may
  // exceed it (one large scrape to one slow reader must still work).
  bool reserve(std::size_t n) {
    const std::size_t mine = c_.out.size() - c_.out_sent;
    std::size_t total = pending_.load();
    do {
      if (total > mine && total + n > max_pending_) return false;
    } while (!pending_.compare_exchange_weak(total, total + n));
    return true;
  }
  void address_of(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage sa{};
    socklen_t len = sizeof(sa);
    char text[INET6_ADDRSTRLEN] = "";
    port = 0;
    if (get(c_.fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
      if (sa.ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&sa);
        inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
        port = ntohs(v4->sin_port);
      } else if (sa.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&sa);
        inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
        port = ntohs(v6->sin6_port);
      }
    }
    ip = text;
  }

  Connection& c_;
  std::atomic<std::size_t>& pending_;
  const std::size_t max_pending_;
  std::size_t consumed_ = 0;
  bool ran_dry_ = false;
  bool failed_ = false;
};

// Answers a complete request head on `stream`: httplib's parsing, routing and response writing.
// `last`: answer with "Connection: close". Returns false when httplib gave up on the connection;
// `closed` says the client asked for the close.
using Serve = std::function<bool(httplib::Stream& stream, bool last, bool& closed)>;

}  // namespace

// The event loop and the handler threads. The loop thread owns every connection: it reads
// request heads (bounded in bytes, lines and time), refuses what breaks a limit, writes out what
// a response could not send at once, and closes what times out. A complete head goes to a
// handler thread, which only parses, routes and renders: it never waits on a client, so idle,
// slow or non-reading clients cannot starve /metrics or /healthz.
class ConnectionLoop {
 public:
  ConnectionLoop(const HttpLimits& limits, int threads, Serve serve)
      : limits_(limits), threads_(std::max(1, threads)), serve_(std::move(serve)) {}

  // Before start(): every connection from now on speaks TLS with `tls`'s current context.
  void use_tls(TlsContext* tls) { tls_ = tls; }
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;
  ~ConnectionLoop() { stop(); }

  Result<void> start() {
    epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) return DIMCTL_FAIL(errno, "http server: epoll_create1");
    wake_ = Fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_.valid()) return DIMCTL_FAIL(errno, "http server: eventfd");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_.get();
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev) != 0) {
      return DIMCTL_FAIL(errno, "http server: epoll_ctl(eventfd)");
    }
    loop_ = std::thread([this] { run(); });
    for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { work(); });
    return ok();
  }

  // From the accept thread: the loop takes over `fd` (it applies the connection cap).
  void adopt(int fd) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!stopping_) {
        incoming_.push_back(fd);
        fd = -1;
      }
    }
    if (fd >= 0) ::close(fd);
    wake();
  }

  // Idempotent. Handler threads finish the request in hand; every connection is closed.
  void stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    wake();
    for (auto& t : workers_) t.join();
    workers_.clear();
    if (loop_.joinable()) loop_.join();
    for (int fd : incoming_) ::close(fd);
    incoming_.clear();
    ready_.clear();
    returned_.clear();
    conns_.clear();
  }

 private:
  void wake() {
    if (!wake_.valid()) return;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  }

  void run() {
    std::vector<epoll_event> events(64);
    for (;;) {
      const int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()),
                               timeout_ms(Clock::now()));
      if (n < 0 && errno != EINTR) {
        spdlog::error("http server: epoll_wait: {}", std::strerror(errno));
        return;
      }
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == wake_.get()) {
          uint64_t count = 0;
          [[maybe_unused]] ssize_t r = ::read(wake_.get(), &count, sizeof(count));
          continue;
        }
        auto it = conns_.find(fd);
        if (it == conns_.end()) continue;
        Connection& c = *it->second;
        if (c.phase == Connection::Phase::kHead) {
          on_readable(c);
        } else if (c.phase == Connection::Phase::kWriting) {
          flush(c);
        }
      }
      std::vector<int> incoming;
      std::vector<Connection*> returned;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stopping_) return;
        incoming.swap(incoming_);
        returned.swap(returned_);
      }
      const auto now = Clock::now();
      for (Connection* c : returned) served(*c, now);
      for (int fd : incoming) admit(Fd(fd), now);
      expire(now);
    }
  }

  // Until the earliest deadline; -1 (none) when no connection waits on one.
  int timeout_ms(Clock::time_point now) const {
    auto earliest = Clock::time_point::max();
    for (const auto& [fd, c] : conns_) {
      if (c->phase != Connection::Phase::kServing) earliest = std::min(earliest, c->deadline);
    }
    if (earliest == Clock::time_point::max()) return -1;
    if (earliest <= now) return 0;
    // Round up: waking a little after the deadline is fine, spinning before it is not.
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(earliest - now).count();
    return static_cast<int>(std::min<int64_t>(ms, 60'000));
  }

  void admit(Fd fd, Clock::time_point now) {
    if (conns_.size() >= limits_.max_connections) {
      // Make room: close the connection that has waited longest for a request head (an idle
      // keep-alive, a slowloris), else the one that has been slowest to read its response. A
      // client that just connected is about to send its request; those two may never act.
      Connection* victim = oldest(Connection::Phase::kHead);
      if (!victim) victim = oldest(Connection::Phase::kWriting);
      if (!victim) return;  // every connection is in a handler: refuse this one (fd closes)
      drop(*victim);
    }
    const int flags = fcntl(fd.get(), F_GETFL);
    if (flags < 0 || fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) return;
    auto c = std::make_unique<Connection>();
    if (tls_) {
      c->ssl.reset(tls_->new_connection(fd.get()));
      if (!c->ssl) return;
    }
    c->fd = std::move(fd);
    const int key = c->fd.get();
    Connection& ref = *c;
    conns_.emplace(key, std::move(c));
    wait_for_head(ref, now, /*registered=*/false);
  }

  Connection* oldest(Connection::Phase phase) {
    Connection* found = nullptr;
    for (auto& [fd, c] : conns_) {
      if (c->phase == phase && (!found || c->since < found->since)) found = c.get();
    }
    return found;
  }

  void begin(Connection& c, Connection::Phase phase, Clock::time_point deadline) {
    c.phase = phase;
    c.since = ++phase_starts_;
    c.deadline = deadline;
  }

  void wait_for_head(Connection& c, Clock::time_point now, bool registered) {
    begin(c, Connection::Phase::kHead, now + limits_.head_timeout);
    if (!watch(c, EPOLLIN, registered)) return drop(c);
    // A pipelined request may already be complete in the buffer, or wait decrypted in the TLS
    // session, where epoll does not see it.
    if (find_head(c) || (c.ssl && c.handshaken && SSL_has_pending(c.ssl.get()))) on_readable(c);
  }

  bool watch(Connection& c, uint32_t events, bool registered) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = c.fd.get();
    return epoll_ctl(epoll_.get(), registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd.get(), &ev) ==
           0;
  }

  // True when `in` holds a complete head (sets head_end).
  bool find_head(Connection& c) {
    if (c.head_end) return true;
    const std::size_t from = c.scanned >= 3 ? c.scanned - 3 : 0;
    const std::size_t at = c.in.find("\r\n\r\n", from);
    if (at == std::string::npos) {
      c.scanned = c.in.size();
      return false;
    }
    c.head_end = at + 4;
    return true;
  }

  // False while the TLS handshake is not done: it waits for the socket (watched for what it
  // needs), or failed and the connection is gone (a client without a required certificate, a
  // protocol version outside min_version..max_version, not TLS at all).
  bool handshake(Connection& c) {
    ERR_clear_error();
    const int r = SSL_do_handshake(c.ssl.get());
    int e = SSL_ERROR_NONE;
    if (r != 1) {
      e = SSL_get_error(c.ssl.get(), r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        spdlog::debug("http server: TLS handshake failed: {}",
                      ERR_reason_error_string(ERR_peek_last_error())
                          ? ERR_reason_error_string(ERR_peek_last_error())
                          : "connection closed");
        drop(c);
        return false;
      }
    }
    const bool wants_write = e == SSL_ERROR_WANT_WRITE;
    if (wants_write != c.handshake_wants_write) {
      c.handshake_wants_write = wants_write;
      if (!watch(c, wants_write ? EPOLLOUT : EPOLLIN, /*registered=*/true)) {
        drop(c);
        return false;
      }
    }
    if (r != 1) return false;
    c.handshaken = true;
    return true;
  }

  void on_readable(Connection& c) {
    if (c.ssl && !c.handshaken && !handshake(c)) return;
    // Read no further than the head limit: bytes past it stay in the kernel (or, with TLS, in
    // the session's current record).
    char buf[4096];
    while (!c.head_end && !c.peer_done && c.in.size() < limits_.max_head_bytes) {
      const std::size_t room = std::min(sizeof(buf), limits_.max_head_bytes - c.in.size());
      std::size_t n = 0;
      const Io io = recv_some(c, buf, room, n);
      if (io == Io::kOk) {
        c.in.append(buf, n);
        find_head(c);
      } else if (io == Io::kEof) {
        c.peer_done = true;
      } else if (io == Io::kAgain) {
        break;
      } else {
        return drop(c);
      }
    }
    if (find_head(c)) {
      const auto lines =
          static_cast<std::size_t>(std::count(c.in.begin(), c.in.begin() + c.head_end, '\n'));
      if (lines > limits_.max_header_lines + 2) {  // + the request line and the blank line
        return refuse(c, "431 Request Header Fields Too Large");
      }
      return dispatch(c);
    }
    if (c.in.size() >= limits_.max_head_bytes) {
      return refuse(c, c.in.find('\n') == std::string::npos
                           ? "414 URI Too Long"
                           : "431 Request Header Fields Too Large");
    }
    if (c.peer_done) drop(c);  // the client gave up before a complete head
  }

  // A canned response, then close. The client may still be sending: what it sent is dropped.
  void refuse(Connection& c, std::string_view status) {
    c.in.clear();
    c.head_end = c.scanned = 0;
    c.out = fmt::format("HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status);
    c.out_sent = 0;
    c.close_after_write = true;
    write_out(c, Clock::now());
  }

  void dispatch(Connection& c) {
    epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
    c.phase = Connection::Phase::kServing;
    {
      std::lock_guard<std::mutex> l(mu_);
      ready_.push_back(&c);
    }
    work_cv_.notify_one();
  }

  // Handler thread: answers ready connections.
  void work() {
    for (;;) {
      Connection* c = nullptr;
      {
        std::unique_lock<std::mutex> l(mu_);
        work_cv_.wait(l, [this] { return stopping_ || !ready_.empty(); });
        if (stopping_) return;
        c = ready_.front();
        ready_.pop_front();
      }
      answer(*c);
      {
        std::lock_guard<std::mutex> l(mu_);
        returned_.push_back(c);
      }
      wake();
    }
  }

  void answer(Connection& c) {
    // httplib sees the head and whatever followed it, nothing more.
    BufferedStream stream(c, pending_, limits_.max_pending_output);
    const bool last = c.served + 1 >= limits_.max_requests_per_connection || c.peer_done;
    bool closed = false;
    bool ok = false;
    try {
      ok = serve_(stream, last, closed);
    } catch (const std::exception& e) {
      spdlog::warn("http server: request failed: {}", e.what());
    }
    ++c.served;
    c.in.erase(0, std::max(stream.consumed(), c.head_end));
    c.head_end = c.scanned = 0;
    c.close_after_write = !ok || last || closed || stream.ran_dry() || stream.failed();
    if (stream.failed()) release(c);  // nothing more goes to this client
  }

  // Loop thread: a handler thread is done with `c`.
  void served(Connection& c, Clock::time_point now) {
    if (c.close_after_write && c.out.size() == c.out_sent) return drop(c);
    if (c.out.size() > c.out_sent) {
      begin(c, Connection::Phase::kWriting, now + limits_.write_timeout);
      if (!watch(c, EPOLLOUT, /*registered=*/false)) return drop(c);
      return;
    }
    wait_for_head(c, now, /*registered=*/false);
  }

  // Loop thread: `c.out` is to be written, then the connection closes or waits for its next
  // request.
  void write_out(Connection& c, Clock::time_point now) {
    begin(c, Connection::Phase::kWriting, now + limits_.write_timeout);
    pending_ += c.out.size() - c.out_sent;
    if (!watch(c, EPOLLOUT, /*registered=*/true)) return drop(c);
    flush(c);
  }

  void flush(Connection& c) {
    while (c.out_sent < c.out.size()) {
      std::size_t n = 0;
      const Io io = send_some(c, c.out.data() + c.out_sent, c.out.size() - c.out_sent, n);
      c.out_sent += n;
      pending_ -= n;
      if (io == Io::kAgain) return;  // EPOLLOUT brings us back
      if (io != Io::kOk) return drop(c);
    }
    c.out.clear();
    c.out_sent = 0;
    if (c.close_after_write) return drop(c);
    wait_for_head(c, Clock::now(), /*registered=*/true);
  }

  void expire(Clock::time_point now) {
    std::vector<Connection*> late;
    for (auto& [fd, c] : conns_) {
      if (c->phase != Connection::Phase::kServing && c->deadline <= now) late.push_back(c.get());
    }
    for (Connection* c : late) {
      if (c->phase == Connection::Phase::kHead && !c->in.empty()) {
        // Part of a head came, too slowly: say so (best effort, never waits), then close.
        static constexpr std::string_view k408 =
            "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        std::size_t n = 0;
        if (!c->ssl || c->handshaken) send_some(*c, k408.data(), k408.size(), n);
      }
      drop(*c);
    }
  }

  void release(Connection& c) {
    pending_ -= c.out.size() - c.out_sent;
    c.out.clear();
    c.out_sent = 0;
  }

  // Loop thread only. Erasing the map entry closes the socket, which also removes it from epoll.
  void drop(Connection& c) {
    release(c);
    // close_notify, best effort (never waits): a TLS client then sees a clean end.
    if (c.ssl && c.handshaken) SSL_shutdown(c.ssl.get());
    conns_.erase(c.fd.get());
  }

  const HttpLimits limits_;
  const int threads_;
  const Serve serve_;
  TlsContext* tls_ = nullptr;  // owned by HttpServer::Impl, which outlives the loop
  Fd epoll_;
  Fd wake_;
  std::thread loop_;
  std::vector<std::thread> workers_;
  std::unordered_map<int, std::unique_ptr<Connection>> conns_;  // loop thread only
  uint64_t phase_starts_ = 0;                                   // loop thread only
  std::atomic<std::size_t> pending_{0};  // bytes in every Connection::out not yet sent

  std::mutex mu_;  // guards what follows
  std::condition_variable work_cv_;
  bool stopping_ = false;
  std::vector<int> incoming_;          // accepted, not yet admitted
  std::deque<Connection*> ready_;      // complete heads for the handler threads
  std::vector<Connection*> returned_;  // answered, back to the loop
};

GatedServer::GatedServer(const HttpLimits& limits, int threads, TlsContext* tls)
    : loop_(std::make_unique<ConnectionLoop>(
          limits, threads, [this](httplib::Stream& stream, bool last, bool& closed) {
            return process_request(stream, last, closed, nullptr);
          })) {
  if (tls) loop_->use_tls(tls);
  new_task_queue = [] { return new InlineTaskQueue; };
  // What httplib writes in its Keep-Alive response header.
  set_keep_alive_timeout(std::max<time_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(limits.head_timeout).count()));
  set_keep_alive_max_count(limits.max_requests_per_connection);
  // Bodies are never waited for (BufferedStream): one that is not all there is a 400 anyway.
  set_payload_max_length(limits.max_head_bytes);
}

GatedServer::~GatedServer() {
  loop_->stop();
}

Result<void> GatedServer::start_loop() {
  return loop_->start();
}

void GatedServer::stop_loop() {
  loop_->stop();
}

void GatedServer::widen_backlog() {
  ::listen(svr_sock_, SOMAXCONN);
}

bool GatedServer::process_and_close_socket(socket_t sock) {
  loop_->adopt(sock);
  return true;
}

}  // namespace dimctl::exporters
