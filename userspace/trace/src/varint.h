// LEB128 varints, zigzag and little-endian fixed-width fields: the byte vocabulary of the trace
// format (docs/TRACE.md). Internal to dimctl::trace.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dimctl::trace::detail {

inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Signed values (time deltas, key deltas, -1 sentinels) as small unsigned ones.
inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void put_string(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

inline void put_u16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
inline void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline uint16_t get_u16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}
inline uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// Bounds-checked cursor over one frame payload or header body. Every getter returns false
// (and leaves the value unspecified) instead of reading past the end.
class ByteCursor {
 public:
  explicit ByteCursor(std::string_view data) : data_(data) {}

  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const auto b = static_cast<uint8_t>(data_[pos_++]);
      // The tenth byte may carry only bit 63.
      if (shift == 63 && b > 1) return false;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool byte(uint8_t& v) {
    if (pos_ >= data_.size()) return false;
    v = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }
  bool string(std::string& s) {
    uint64_t n = 0;
    if (!varint(n) || n > data_.size() - pos_) return false;
    s.assign(data_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace dimctl::trace::detail
