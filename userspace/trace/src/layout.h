// The file layout around the frame payloads (docs/TRACE.md): header, frame container, CRC.
// Internal to dimctl::trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dimctl/common/result.h"
#include "dimctl/trace/trace_header.h"

namespace dimctl::trace::detail {

// Header: magic(8) version(u16) reserved(u16) body_len(u32), body, crc32 of all before(u32).
inline constexpr size_t kHeaderFixed = 16;
inline constexpr uint32_t kMaxHeaderBody = 1u << 20;
// Frame: payload_len(u32) len_check(u16), payload, crc32 of the payload(u32).
inline constexpr size_t kFrameHead = 6;
inline constexpr size_t kFrameTail = 4;
inline constexpr size_t kFrameOverhead = kFrameHead + kFrameTail;
// Far above any real frame (10k queues change by a few bytes each); a larger length is corrupt.
inline constexpr uint32_t kMaxFramePayload = 256u << 20;

uint32_t crc32(std::string_view bytes);
// Low 16 bits of the CRC-32 of the 4 length bytes: a corrupt length is caught before the reader
// trusts it (otherwise it would look like a truncated tail and hide every later frame).
uint16_t length_check(uint32_t payload_len);

std::string encode_header(const TraceHeader& h);
// Decodes the header at the start of `bytes`; `header_bytes` is its size. Errors name `name`.
Result<TraceHeader> decode_header(std::string_view bytes, const std::string& name,
                                  size_t& header_bytes);

// Appends the frame container around `payload`.
void append_frame(std::string& out, std::string_view payload);

}  // namespace dimctl::trace::detail
