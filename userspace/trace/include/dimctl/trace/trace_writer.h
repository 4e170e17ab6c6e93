// TraceWriter: appends seam::Snapshot frames to a trace file (docs/TRACE.md), rotating it when
// it would exceed a size bound: FILE -> FILE.1 -> FILE.2 ... up to keep_files old files, and a
// new FILE starts with a fresh header and a self-contained first frame.
//
// Frames are buffered in memory and written by flush() (or when 64 KiB are pending); a process
// killed between flushes loses the frames since the last one, and one killed inside a write()
// leaves a truncated last frame, which TraceReader detects and stops before. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dimctl/common/result.h"
#include "dimctl/seam/snapshot.h"
#include "dimctl/trace/trace_header.h"

namespace dimctl::trace {

struct WriterOptions {
  // A file is rotated before a frame would take it past max_bytes (every file holds at least
  // one frame, so one frame larger than the bound makes a file of one frame).
  uint64_t max_bytes = 64ull << 20;
  // Rotated files kept: FILE.1 (newest) .. FILE.keep_files. 0: FILE is simply restarted.
  uint32_t keep_files = 2;
  // Header fields (host and kernel release are read from uname(2)).
  int64_t interval_ns = 0;
  std::string recorder_version;
  std::string note;
};

// EINVAL naming the first queue whose device_ix is outside the snapshot's device table (the
// invariant seam::Snapshot documents, which the writer keeps and every reader may rely on).
Result<void> check_snapshot(const seam::Snapshot& snap);

class TraceWriter {
 public:
  // Creates FILE and writes its header. An existing non-empty FILE is rotated out of the way
  // first, exactly as a full one would be: a new recording never overwrites an old one beyond
  // the keep_files bound. max_bytes 0 is refused (EINVAL).
  static Result<TraceWriter> open(const std::string& path, WriterOptions opts = {});

  TraceWriter(TraceWriter&&) noexcept;
  TraceWriter& operator=(TraceWriter&&) noexcept;
  // Flushes what is pending (errors are lost: call close() to see them).
  ~TraceWriter();

  // One frame. Refuses a snapshot that fails check_snapshot() (EINVAL, nothing written).
  Result<void> write(const seam::Snapshot& snap);
  // Writes every pending frame to the file.
  Result<void> flush();
  // flush() and close the file; the writer accepts nothing afterwards.
  Result<void> close();

  const std::string& path() const;
  const TraceHeader& header() const;  // of the current file
  uint64_t file_bytes() const;        // current file, pending bytes included
  uint64_t frames_in_file() const;
  uint64_t frames_written() const;  // since open, over every file
  uint64_t bytes_written() const;   // since open, headers included, over every file
  uint32_t rotations() const;

 private:
  struct Impl;
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dimctl::trace
