// TraceReader: frame container checks and the truncated-tail policy (docs/TRACE.md).
#include "dimctl/trace/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "dimctl/common/fd.h"
#include "frame_codec.h"
#include "layout.h"
#include "varint.h"

namespace dimctl::trace {

struct TraceReader::Impl {
  std::string name;
  std::string bytes;
  TraceHeader header;
  detail::FrameDecoder decoder;
  size_t pos = 0;
  uint64_t frames = 0;
  std::optional<std::string> warning;
  std::optional<Error> error;  // sticky

  // Stops before an incomplete last frame: the end a killed recorder leaves.
  Result<std::optional<seam::Snapshot>> truncated_tail(size_t need) {
    warning = fmt::format(
        "{}: truncated frame at byte {} ({} of {} bytes present): stopped after frame {}, the "
        "last complete one",
        name, pos, bytes.size() - pos, need, frames);
    pos = bytes.size();
    return std::optional<seam::Snapshot>{};
  }

  Result<std::optional<seam::Snapshot>> failed(Error e) {
    error = std::move(e);
    return *error;
  }

  Result<std::optional<seam::Snapshot>> next() {
    if (error) return *error;
    if (pos == bytes.size()) return std::optional<seam::Snapshot>{};
    const size_t left = bytes.size() - pos;
    if (left < detail::kFrameHead) return truncated_tail(detail::kFrameHead);
    const char* p = bytes.data() + pos;
    const uint32_t len = detail::get_u32(p);
    if (detail::get_u16(p + 4) != detail::length_check(len) || len > detail::kMaxFramePayload) {
      return failed(
          DIMCTL_ERR(0, "{}: corrupt frame length at byte {} (frame {})", name, pos, frames));
    }
    const size_t need = detail::kFrameOverhead + len;
    if (left < need) return truncated_tail(need);
    const std::string_view payload(p + detail::kFrameHead, len);
    const uint32_t stored = detail::get_u32(p + detail::kFrameHead + len);
    const uint32_t computed = detail::crc32(payload);
    if (stored != computed) {
      return failed(DIMCTL_ERR(
          0, "{}: frame checksum mismatch at byte {} (frame {}: stored {:08x}, computed {:08x})",
          name, pos, frames, stored, computed));
    }
    seam::Snapshot s;
    if (auto r = decoder.decode(payload, s); !r) {
      return failed(DIMCTL_ERR(0, "{}: corrupt frame at byte {} (frame {}): {}", name, pos, frames,
                               r.error().message()));
    }
    pos += need;
    ++frames;
    return std::optional<seam::Snapshot>(std::move(s));
  }
};

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

Result<TraceReader> TraceReader::open(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return DIMCTL_FAIL(errno, "cannot open {}", path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return DIMCTL_FAIL(errno, "stat {}", path);
  if (!S_ISREG(st.st_mode)) return DIMCTL_FAIL(0, "{}: not a regular file", path);
  std::string bytes;
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return DIMCTL_FAIL(errno, "read {}", path);
    if (n == 0) break;  // shrank while we read: take what is there
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return from_bytes(std::move(bytes), path);
}

Result<TraceReader> TraceReader::from_bytes(std::string bytes, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->bytes = std::move(bytes);
  size_t header_bytes = 0;
  auto h = detail::decode_header(impl->bytes, impl->name, header_bytes);
  if (!h) return fail(std::move(h).error());
  impl->header = std::move(*h);
  impl->pos = header_bytes;
  impl->decoder.reset(impl->header.start_monotonic_ns, impl->header.version);
  return TraceReader(std::move(impl));
}

Result<std::optional<seam::Snapshot>> TraceReader::next() {
  return impl_->next();
}
const TraceHeader& TraceReader::header() const {
  return impl_->header;
}
const std::string& TraceReader::name() const {
  return impl_->name;
}
const std::optional<std::string>& TraceReader::warning() const {
  return impl_->warning;
}
uint64_t TraceReader::frames_read() const {
  return impl_->frames;
}
uint64_t TraceReader::offset() const {
  return impl_->pos;
}
uint64_t TraceReader::size() const {
  return impl_->bytes.size();
}

}  // namespace dimctl::trace
