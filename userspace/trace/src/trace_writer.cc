// TraceWriter: buffered frames, rotation (docs/TRACE.md, "Rotation").
#include "dimctl/trace/trace_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "dimctl/common/fd.h"
#include "dimctl/trace/rotation.h"
#include "frame_codec.h"
#include "layout.h"

namespace dimctl::trace {
namespace {

// Pending bytes that trigger a write without an explicit flush().
constexpr size_t kFlushThreshold = 64 * 1024;

int64_t now_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Result<void> write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return DIMCTL_FAIL(errno, "write {}", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return ok();
}

bool exists_nonempty(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

}  // namespace

struct TraceWriter::Impl {
  std::string path;
  WriterOptions opts;
  std::string host, kernel_release;
  Fd fd;
  TraceHeader header;
  detail::FrameEncoder encoder;
  std::string pending;  // encoded, not yet written
  std::string payload;  // scratch
  uint64_t file_bytes = 0;
  uint64_t frames_in_file = 0;
  uint64_t frames_written = 0;
  uint64_t bytes_written = 0;
  uint32_t rotations = 0;

  // FILE -> FILE.1 -> ... -> FILE.keep; with keep 0 FILE is removed.
  Result<void> shift_files() {
    if (opts.keep_files == 0) {
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        return DIMCTL_FAIL(errno, "remove {}", path);
      }
      return ok();
    }
    for (uint32_t n = opts.keep_files; n >= 1; --n) {
      const std::string from = rotated_path(path, n - 1), to = rotated_path(path, n);
      if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT) {
        return DIMCTL_FAIL(errno, "rename {} to {}", from, to);
      }
    }
    return ok();
  }

  // Creates FILE with a fresh header; the next frame is self-contained.
  Result<void> start_file() {
    fd = Fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) return DIMCTL_FAIL(errno, "create {}", path);
    header = TraceHeader{};
    header.host = host;
    header.kernel_release = kernel_release;
    header.recorder_version = opts.recorder_version;
    header.note = opts.note;
    header.start_monotonic_ns = now_ns(CLOCK_MONOTONIC);
    header.start_realtime_ns = now_ns(CLOCK_REALTIME);
    header.interval_ns = opts.interval_ns;
    const std::string h = detail::encode_header(header);
    encoder.reset(header.start_monotonic_ns);
    file_bytes = h.size();
    bytes_written += h.size();
    frames_in_file = 0;
    // Written at once: a file that exists is a valid (possibly empty) trace.
    return write_all(fd.get(), h, path);
  }

  Result<void> flush() {
    if (!fd.valid()) return DIMCTL_FAIL(EBADF, "{}: writer is closed", path);
    auto r = write_all(fd.get(), pending, path);
    pending.clear();
    return r;
  }

  Result<void> rotate() {
    if (auto r = flush(); !r) return r;
    fd.reset();
    if (auto r = shift_files(); !r) return r;
    ++rotations;
    return start_file();
  }
};

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&&) noexcept = default;
TraceWriter::~TraceWriter() {
  if (impl_ && impl_->fd.valid()) (void)impl_->flush();
}

Result<TraceWriter> TraceWriter::open(const std::string& path, WriterOptions opts) {
  if (opts.max_bytes == 0) return DIMCTL_FAIL(EINVAL, "{}: max_bytes must be > 0", path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->opts = std::move(opts);
  utsname u{};
  if (::uname(&u) == 0) {
    impl->host = u.nodename;
    impl->kernel_release = u.release;
  }
  if (exists_nonempty(path)) {
    if (auto r = impl->shift_files(); !r) return fail(std::move(r).error());
  }
  if (auto r = impl->start_file(); !r) return fail(std::move(r).error());
  return TraceWriter(std::move(impl));
}

Result<void> TraceWriter::write(const seam::Snapshot& snap) {
  Impl& w = *impl_;
  if (!w.fd.valid()) return DIMCTL_FAIL(EBADF, "{}: writer is closed", w.path);
  w.payload.clear();
  if (auto r = w.encoder.encode(snap, w.payload); !r) return r;
  uint64_t size = w.payload.size() + detail::kFrameOverhead;
  if (w.frames_in_file > 0 && w.file_bytes + size > w.opts.max_bytes) {
    if (auto r = w.rotate(); !r) return r;
    // The new file starts from nothing: encode the frame again, self-contained.
    w.payload.clear();
    if (auto r = w.encoder.encode(snap, w.payload); !r) return r;
    size = w.payload.size() + detail::kFrameOverhead;
  }
  detail::append_frame(w.pending, w.payload);
  w.file_bytes += size;
  w.bytes_written += size;
  ++w.frames_in_file;
  ++w.frames_written;
  if (w.pending.size() >= kFlushThreshold) return w.flush();
  return ok();
}

Result<void> TraceWriter::flush() {
  return impl_->flush();
}

Result<void> TraceWriter::close() {
  if (!impl_->fd.valid()) return ok();
  auto r = impl_->flush();
  if (::close(impl_->fd.release()) != 0 && r.ok()) {
    return DIMCTL_FAIL(errno, "close {}", impl_->path);
  }
  return r;
}

const std::string& TraceWriter::path() const {
  return impl_->path;
}
const TraceHeader& TraceWriter::header() const {
  return impl_->header;
}
uint64_t TraceWriter::file_bytes() const {
  return impl_->file_bytes;
}
uint64_t TraceWriter::frames_in_file() const {
  return impl_->frames_in_file;
}
uint64_t TraceWriter::frames_written() const {
  return impl_->frames_written;
}
uint64_t TraceWriter::bytes_written() const {
  return impl_->bytes_written;
}
uint32_t TraceWriter::rotations() const {
  return impl_->rotations;
}

}  // namespace dimctl::trace
