// Header encoding and the frame container (docs/TRACE.md, "File layout").
#include <zlib.h>

#include <algorithm>

#include "layout.h"
#include "varint.h"

namespace dimctl::trace::detail {

uint32_t crc32(std::string_view bytes) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large inputs in pieces.
  while (!bytes.empty()) {
    const size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    c = ::crc32(c, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(c);
}

uint16_t length_check(uint32_t payload_len) {
  std::string b;
  put_u32(b, payload_len);
  return static_cast<uint16_t>(crc32(b) & 0xffff);
}

std::string encode_header(const TraceHeader& h) {
  std::string body;
  put_string(body, h.host);
  put_string(body, h.kernel_release);
  put_string(body, h.recorder_version);
  put_string(body, h.note);
  put_varint(body, zigzag(h.start_monotonic_ns));
  put_varint(body, zigzag(h.start_realtime_ns));
  put_varint(body, zigzag(h.interval_ns));

  std::string out(kMagic);
  put_u16(out, h.version);
  put_u16(out, 0);  // reserved
  put_u32(out, static_cast<uint32_t>(body.size()));
  out += body;
  put_u32(out, crc32(out));
  return out;
}

Result<TraceHeader> decode_header(std::string_view bytes, const std::string& name,
                                  size_t& header_bytes) {
  if (bytes.empty()) return DIMCTL_FAIL(0, "{}: empty file, not a dimctl trace", name);
  const size_t m = std::min(bytes.size(), kMagic.size());
  if (bytes.substr(0, m) != kMagic.substr(0, m)) {
    return DIMCTL_FAIL(0, "{}: not a dimctl trace (bad magic at byte 0)", name);
  }
  if (bytes.size() < kHeaderFixed) {
    return DIMCTL_FAIL(0, "{}: truncated header ({} bytes)", name, bytes.size());
  }
  TraceHeader h;
  h.version = get_u16(bytes.data() + 8);
  if (h.version < kOldestFormatVersion || h.version > kFormatVersion) {
    return DIMCTL_FAIL(0,
                       "{}: trace format version {} at byte 8; this dimctl reads versions {} to {}",
                       name, h.version, kOldestFormatVersion, kFormatVersion);
  }
  const uint32_t body_len = get_u32(bytes.data() + 12);
  if (body_len > kMaxHeaderBody) {
    return DIMCTL_FAIL(0, "{}: corrupt header: body length {} at byte 12", name, body_len);
  }
  const size_t total = kHeaderFixed + body_len + 4;
  if (bytes.size() < total) {
    return DIMCTL_FAIL(0, "{}: truncated header ({} of {} bytes)", name, bytes.size(), total);
  }
  const uint32_t stored = get_u32(bytes.data() + kHeaderFixed + body_len);
  const uint32_t computed = crc32(bytes.substr(0, kHeaderFixed + body_len));
  if (stored != computed) {
    return DIMCTL_FAIL(0,
                       "{}: header checksum mismatch at byte {} (stored {:08x}, computed {:08x})",
                       name, kHeaderFixed + body_len, stored, computed);
  }
  ByteCursor c(bytes.substr(kHeaderFixed, body_len));
  uint64_t mono = 0, real = 0, interval = 0;
  if (!c.string(h.host) || !c.string(h.kernel_release) || !c.string(h.recorder_version) ||
      !c.string(h.note) || !c.varint(mono) || !c.varint(real) || !c.varint(interval)) {
    return DIMCTL_FAIL(0, "{}: corrupt header body at byte {}", name, kHeaderFixed + c.pos());
  }
  // Bytes after the known fields are ignored: a later writer of this version may append fields.
  h.start_monotonic_ns = unzigzag(mono);
  h.start_realtime_ns = unzigzag(real);
  h.interval_ns = unzigzag(interval);
  header_bytes = total;
  return h;
}

void append_frame(std::string& out, std::string_view payload) {
  const auto len = static_cast<uint32_t>(payload.size());
  put_u32(out, len);
  put_u16(out, length_check(len));
  out.append(payload);
  put_u32(out, crc32(payload));
}

}  // namespace dimctl::trace::detail
