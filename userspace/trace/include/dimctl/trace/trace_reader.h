// TraceReader: reads the frames of one trace file (docs/TRACE.md) back into seam::Snapshot,
// exactly as they were written.
//
// Error policy. A file that ends inside a frame is what a recorder killed mid-write leaves: the
// reader stops cleanly after the last complete frame (next() returns std::nullopt) and
// warning() says where and how many bytes were dropped. Everything else is an error naming the
// file and the byte offset: a bad or unknown header (magic, version, header checksum), a frame
// whose length check or checksum does not match, a frame that does not decode. After an error
// next() returns the same error again. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "dimctl/common/result.h"
#include "dimctl/seam/snapshot.h"
#include "dimctl/trace/trace_header.h"

namespace dimctl::trace {

class TraceReader {
 public:
  // Reads the whole file into memory and checks its header.
  static Result<TraceReader> open(const std::string& path);
  // The same over bytes in memory; `name` stands for the file in messages (tests, fuzzing).
  static Result<TraceReader> from_bytes(std::string bytes, std::string name);

  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  ~TraceReader();

  // The next frame; std::nullopt at the end of the file (clean, or after a truncated last
  // frame: see warning()). A corrupt frame is an error naming the file and byte offset.
  Result<std::optional<seam::Snapshot>> next();
  const TraceHeader& header() const;

  const std::string& name() const;
  // Set once the reader stopped before a truncated last frame: file, offset, bytes dropped.
  const std::optional<std::string>& warning() const;
  uint64_t frames_read() const;
  // Byte offset of the next frame (the file size once the end is reached).
  uint64_t offset() const;
  uint64_t size() const;  // of the file, in bytes

 private:
  struct Impl;
  explicit TraceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dimctl::trace
