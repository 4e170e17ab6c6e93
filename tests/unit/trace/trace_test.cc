// dimctl::trace: exact round trips, truncated tails, corruption, headers, rotation, size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "dimctl/trace/rotation.h"
#include "dimctl/trace/trace_reader.h"
#include "dimctl/trace/trace_text.h"
#include "dimctl/trace/trace_writer.h"
#include "unit/trace/snapshot_gen.h"

namespace dimctl::trace {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::same_snapshot;
using testing::SnapshotGen;

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dimctl-trace-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name = "t.dtr") const { return dir_ + "/" + name; }

  static std::string slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
  }

  // Writes `frames` to a fresh file with default options and returns its bytes.
  std::string write_all(const std::vector<seam::Snapshot>& frames, WriterOptions o = {}) {
    auto w = TraceWriter::open(path(), o);
    EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message());
    if (!w.ok()) return {};
    for (const auto& s : frames) {
      auto r = w->write(s);
      EXPECT_TRUE(r.ok()) << r.error().message();
    }
    EXPECT_TRUE(w->close().ok());
    return slurp(path());
  }

  // Reads every frame; fails the test on an error.
  static std::vector<seam::Snapshot> read_all(TraceReader& r) {
    std::vector<seam::Snapshot> out;
    for (;;) {
      auto f = r.next();
      EXPECT_TRUE(f.ok()) << f.error().message();
      if (!f.ok() || !f->has_value()) return out;
      out.push_back(std::move(**f));
    }
  }

  std::string dir_;
};

TEST_F(TraceTest, RandomSequencesRoundTripExactly) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    SnapshotGen gen(seed);
    const auto frames = gen.sequence(150);
    write_all(frames);
    auto r = TraceReader::open(path());
    ASSERT_TRUE(r.ok()) << r.error().message();
    const auto back = read_all(*r);
    ASSERT_EQ(back.size(), frames.size());
    for (size_t i = 0; i < frames.size(); ++i) {
      ASSERT_TRUE(same_snapshot(back[i], frames[i])) << "frame " << i;
    }
    EXPECT_FALSE(r->warning().has_value());
    EXPECT_EQ(r->offset(), r->size());
  }
}

TEST_F(TraceTest, ExtremeValuesRoundTrip) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  seam::Snapshot a;
  a.time_ns = std::numeric_limits<int64_t>::min();
  a.devices = {"", "x", std::string(300, 'n')};
  seam::QueueCounters q;
  q.key = {std::numeric_limits<uint32_t>::max(), std::numeric_limits<uint32_t>::max()};
  q.queue = std::numeric_limits<int32_t>::min();
  q.irq = std::numeric_limits<int32_t>::max();
  q.polls = kMax;
  q.packets = kMax - 1;
  q.bytes = kMax;
  q.has_bytes = true;
  q.device_ix = 2;
  a.queues = {q};
  seam::CqCounters c;
  c.key = {std::numeric_limits<uint32_t>::max(), 0};
  c.completions = kMax;
  c.kernel_comps = 0xffff;
  c.kernel_usec = 0xffff;
  c.nr_cqe = std::numeric_limits<uint32_t>::max();
  c.comp_vector = std::numeric_limits<int32_t>::min();
  c.poll_ctx = seam::PollContext::kUnboundWorkqueue;
  c.budget_exhausted = kMax;
  c.cpu = 0xfffe;
  a.cqs = {c};
  a.queues[0].cpu = 0;
  seam::CpuTimes t;
  t.hardirq_ns = kMax;
  t.idle_ns = kMax - 1;
  t.softirq_irq_poll_timed = kMax;
  t.idle_known = true;
  a.cpus = {t, seam::CpuTimes{}, t};
  a.irqs = {{0, kMax, 1, kMax}, {std::numeric_limits<uint32_t>::max(), 0, kMax, 0}};
  seam::Snapshot b = a;  // every counter wraps to a small value, time to the other extreme
  b.time_ns = std::numeric_limits<int64_t>::max();
  b.queues[0].polls = 3;
  b.queues[0].packets = kMax;
  b.queues[0].bytes = 0;
  b.cqs[0].completions = 1;
  b.cqs[0].budget_exhausted = 0;
  b.cpus[0].hardirq_ns = 2;
  b.cpus[2].idle_known = false;
  b.irqs[0].ns = 0;
  seam::Snapshot c2 = a;  // and back up
  const std::vector<seam::Snapshot> frames{a, b, c2, seam::Snapshot{}, a};
  write_all(frames);
  auto r = TraceReader::open(path());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const auto back = read_all(*r);
  ASSERT_EQ(back.size(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_TRUE(same_snapshot(back[i], frames[i])) << i;
}

TEST_F(TraceTest, HeaderCarriesTheRecordingContext) {
  WriterOptions o;
  o.interval_ns = 20'000'000;
  o.recorder_version = "dimctl 9.9.9";
  o.note = "dimctl record --devices 'dimdemo*'";
  auto w = TraceWriter::open(path(), o);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->close().ok());
  auto r = TraceReader::open(path());
  ASSERT_TRUE(r.ok()) << r.error().message();
  utsname u{};
  ASSERT_EQ(::uname(&u), 0);
  const TraceHeader& h = r->header();
  EXPECT_EQ(h, w->header());
  EXPECT_EQ(h.version, kFormatVersion);
  EXPECT_EQ(h.host, u.nodename);
  EXPECT_EQ(h.kernel_release, u.release);
  EXPECT_EQ(h.recorder_version, "dimctl 9.9.9");
  EXPECT_EQ(h.note, o.note);
  EXPECT_EQ(h.interval_ns, 20'000'000);
  EXPECT_GT(h.start_monotonic_ns, 0);
  EXPECT_GT(h.start_realtime_ns, 1'600'000'000'000'000'000);  // after 2020
  // A trace with no frame is a valid, empty trace.
  auto f = r->next();
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->has_value());
}

// A recorder killed mid-write leaves a prefix of its last frame: at every cut the reader returns
// exactly the frames before it, then a clean end with a warning naming the file and offset.
TEST_F(TraceTest, TruncatedLastFrameStopsCleanlyAtThePreviousFrame) {
  SnapshotGen gen(7);
  const auto frames = gen.sequence(30);
  const std::string bytes = write_all(frames);
  uint64_t last_start = 0;
  {
    auto r = TraceReader::from_bytes(bytes, "whole.dtr");
    ASSERT_TRUE(r.ok());
    for (size_t i = 0; i + 1 < frames.size(); ++i) ASSERT_TRUE(r->next().ok());
    last_start = r->offset();
  }
  ASSERT_LT(last_start, bytes.size());
  for (uint64_t cut = last_start; cut < bytes.size(); ++cut) {
    SCOPED_TRACE(::testing::Message() << "cut at " << cut);
    auto r = TraceReader::from_bytes(bytes.substr(0, cut), "cut.dtr");
    ASSERT_TRUE(r.ok());
    const auto back = read_all(*r);
    ASSERT_EQ(back.size(), frames.size() - 1);
    EXPECT_TRUE(same_snapshot(back.back(), frames[frames.size() - 2]));
    if (cut == last_start) {
      EXPECT_FALSE(r->warning().has_value()) << "a cut between frames is a clean end";
    } else {
      ASSERT_TRUE(r->warning().has_value());
      EXPECT_THAT(*r->warning(), HasSubstr("cut.dtr"));
      EXPECT_THAT(*r->warning(), HasSubstr("byte " + std::to_string(last_start)));
    }
    auto again = r->next();  // stays at the end
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->has_value());
  }
}

TEST_F(TraceTest, CorruptFramesAreErrorsNamingFileAndOffset) {
  SnapshotGen gen(11);
  const auto frames = gen.sequence(10);
  const std::string bytes = write_all(frames);
  // Offsets of frame 5 (start) and the next one.
  uint64_t start = 0, end = 0;
  {
    auto r = TraceReader::from_bytes(bytes, "x");
    ASSERT_TRUE(r.ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(r->next().ok());
    start = r->offset();
    ASSERT_TRUE(r->next().ok());
    end = r->offset();
  }
  struct Case {
    uint64_t at;
    const char* want;
  };
  const Case cases[] = {
      {end - 1, "frame checksum mismatch at byte"},    // the stored CRC
      {start + 8, "frame checksum mismatch at byte"},  // the payload
      {start + 0, "corrupt frame length at byte"},     // the length
      {start + 5, "corrupt frame length at byte"},     // the length check
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    std::string bad = bytes;
    bad[c.at] = static_cast<char>(bad[c.at] ^ 0x41);
    auto r = TraceReader::from_bytes(bad, "bad.dtr");
    ASSERT_TRUE(r.ok());
    for (int i = 0; i < 5; ++i) {
      auto f = r->next();
      ASSERT_TRUE(f.ok());
      EXPECT_TRUE(same_snapshot(**f, frames[static_cast<size_t>(i)]));
    }
    auto f = r->next();
    ASSERT_FALSE(f.ok());
    EXPECT_THAT(f.error().message(), HasSubstr("bad.dtr: "));
    EXPECT_THAT(f.error().message(), HasSubstr(c.want));
    EXPECT_THAT(f.error().message(), HasSubstr("byte " + std::to_string(start)));
    EXPECT_FALSE(r->next().ok()) << "errors are sticky";
  }
}

TEST_F(TraceTest, BadHeadersAreErrorsNamingTheFile) {
  const std::string bytes = write_all(SnapshotGen(3).sequence(2));
  struct Case {
    std::string bytes;
    const char* want;
  };
  std::string magic = bytes, version = bytes, crc = bytes;
  magic[0] = 'X';
  version[8] = 3;
  crc[20] = static_cast<char>(crc[20] ^ 1);
  const Case cases[] = {
      {"", "empty file"},
      {magic, "not a dimctl trace (bad magic"},
      {"hello world, this is text", "not a dimctl trace (bad magic"},
      {version, "trace format version 3 at byte 8; this dimctl reads versions 1 to 2"},
      {crc, "header checksum mismatch"},
      {bytes.substr(0, 12), "truncated header"},
      {bytes.substr(0, 30), "truncated header"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    auto r = TraceReader::from_bytes(c.bytes, "some/file.dtr");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message(), HasSubstr("some/file.dtr: "));
    EXPECT_THAT(r.error().message(), HasSubstr(c.want));
  }
  auto missing = TraceReader::open(path("missing.dtr"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message(), HasSubstr("missing.dtr"));
  EXPECT_EQ(missing.error().code(), ENOENT);
}

// A frame whose checksums are right but whose content is not (a writer bug, not a flipped bit):
// an IRQ number delta that would overflow, or leave the IRQ range, is an error naming it.
TEST_F(TraceTest, IrqNumbersOutOfRangeAreErrorsNotOverflows) {
  const std::string header = write_all({});  // a header and no frame
  auto le = [](std::string& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  auto varint = [](std::string& out, uint64_t v) {
    do {
      const auto b = static_cast<uint8_t>(v & 0x7f);
      v >>= 7;
      out.push_back(static_cast<char>(v != 0 ? b | 0x80 : b));
    } while (v != 0);
  };
  auto crc = [](const std::string& b) {
    return static_cast<uint32_t>(
        ::crc32(0, reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size())));
  };
  // zigzag: 2^64 - 2 is INT64_MAX (overflows from IRQ 5), 2^33 is +2^32 (past uint32).
  for (const uint64_t second_delta : {~uint64_t{1}, uint64_t{1} << 33}) {
    SCOPED_TRACE(second_delta);
    std::string payload;
    for (uint64_t v : {0, 0, 0, 0, 0, 2}) varint(payload, v);  // flags, time, queues, CQs, CPUs
    varint(payload, 10);                                       // IRQ 5
    varint(payload, 0);                                        // its mask: no counter
    varint(payload, second_delta);
    varint(payload, 0);
    std::string frame, len;
    le(len, payload.size(), 4);
    frame += len;
    le(frame, crc(len) & 0xffff, 2);
    frame += payload;
    le(frame, crc(payload), 4);
    auto r = TraceReader::from_bytes(header + frame, "irq.dtr");
    ASSERT_TRUE(r.ok()) << r.error().message();
    auto f = r->next();
    ASSERT_FALSE(f.ok());
    EXPECT_THAT(f.error().message(), HasSubstr("IRQ 1 number"));
    EXPECT_THAT(f.error().message(), HasSubstr("out of range"));
  }
}

// Any single flipped bit anywhere gives an error or a clean stop, never a crash or garbage past
// the corruption (run under ASan/UBSan in the sanitizer build).
TEST_F(TraceTest, FlippedBitsNeverCrashAndNeverPassUnnoticed) {
  const auto frames = SnapshotGen(5).sequence(8);
  const std::string bytes = write_all(frames);
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ (1 << (at % 8)));
    auto r = TraceReader::from_bytes(bad, "f");
    if (!r.ok()) continue;
    size_t i = 0;
    bool errored = false;
    for (;; ++i) {
      auto f = r->next();
      if (!f.ok()) {
        errored = true;
        break;
      }
      if (!f->has_value()) break;
      ASSERT_LT(i, frames.size());
      ASSERT_TRUE(same_snapshot(**f, frames[i])) << "flip at " << at << " passed unnoticed";
    }
    // Header bytes after the known fields are not covered beyond the header CRC, which catches
    // them: every flip must end in an error or (a flipped length check) a warned stop.
    EXPECT_TRUE(errored || r->warning().has_value()) << "flip at " << at;
  }
}

TEST_F(TraceTest, WriterRefusesASnapshotBreakingTheDeviceTableInvariant) {
  auto w = TraceWriter::open(path());
  ASSERT_TRUE(w.ok());
  seam::Snapshot s;
  s.devices = {"a"};
  s.queues.resize(2);
  s.queues[1].device_ix = 1;
  auto r = w->write(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EINVAL);
  EXPECT_THAT(r.error().message(), HasSubstr("device_ix 1 outside its device table of 1"));
  EXPECT_EQ(w->frames_written(), 0u);
  // The writer is still usable, and the refused frame left no trace in the delta state.
  s.queues[1].device_ix = 0;
  ASSERT_TRUE(w->write(s).ok());
  ASSERT_TRUE(w->close().ok());
  auto rd = TraceReader::open(path());
  ASSERT_TRUE(rd.ok());
  const auto back = read_all(*rd);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(same_snapshot(back[0], s));
}

TEST_F(TraceTest, RotationKeepsTheBoundAndEachFileReadsAlone) {
  WriterOptions o;
  o.max_bytes = 4096;
  o.keep_files = 2;
  SnapshotGen gen(21);
  const auto frames = gen.sequence(400);
  auto w = TraceWriter::open(path(), o);
  ASSERT_TRUE(w.ok());
  for (const auto& s : frames) ASSERT_TRUE(w->write(s).ok());
  ASSERT_TRUE(w->close().ok());
  EXPECT_GE(w->rotations(), 3u);

  EXPECT_TRUE(fs::exists(path() + ".1"));
  EXPECT_TRUE(fs::exists(path() + ".2"));
  EXPECT_FALSE(fs::exists(path() + ".3")) << "keep_files 2 keeps two old files";
  auto set = rotation_set(path());
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(*set, (std::vector<std::string>{path() + ".2", path() + ".1", path()}));

  // Oldest first, the files hold the last frames written, in order, each from a fresh header.
  std::vector<seam::Snapshot> back;
  int64_t last_start = 0;
  for (const auto& f : *set) {
    EXPECT_LE(fs::file_size(f), o.max_bytes) << f;
    auto r = TraceReader::open(f);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_GE(r->header().start_monotonic_ns, last_start);
    last_start = r->header().start_monotonic_ns;
    const auto part = read_all(*r);
    EXPECT_FALSE(part.empty()) << f;
    back.insert(back.end(), part.begin(), part.end());
  }
  ASSERT_LT(back.size(), frames.size());
  const size_t skip = frames.size() - back.size();
  for (size_t i = 0; i < back.size(); ++i) {
    ASSERT_TRUE(same_snapshot(back[i], frames[skip + i])) << "frame " << skip + i;
  }
  EXPECT_EQ(w->frames_written(), frames.size());
}

// `dimctl trace show` over a rotation set, oldest first, counts every packet after the first
// frame of the oldest file, across the file boundaries (each new file restarts its deltas).
TEST_F(TraceTest, RotationSetAddsUpExactlyThroughTraceShow) {
  WriterOptions o;
  o.max_bytes = 1024;
  o.keep_files = 5;
  seam::Snapshot s;
  s.devices = {"veth0"};
  s.queues.resize(4);
  for (uint32_t i = 0; i < 4; ++i) s.queues[i].key = {7, 100 + i};
  auto w = TraceWriter::open(path(), o);
  ASSERT_TRUE(w.ok());
  std::mt19937_64 rng(3);
  for (int f = 0; f < 150; ++f) {
    s.time_ns += 20'000'000;
    for (auto& q : s.queues) q.packets += rng() % 5000;
    ASSERT_TRUE(w->write(s).ok());
  }
  ASSERT_TRUE(w->close().ok());
  auto set = rotation_set(path());
  ASSERT_TRUE(set.ok());
  ASSERT_GE(set->size(), 3u);
  TraceShow show;
  std::string text;
  std::optional<seam::Snapshot> first, last;
  for (const auto& f : *set) {
    auto r = TraceReader::open(f);
    ASSERT_TRUE(r.ok());
    for (const auto& snap : read_all(*r)) {
      if (!first) first = snap;
      last = snap;
      show.frame(snap, text);
    }
  }
  ASSERT_TRUE(first && last);
  for (size_t i = 0; i < 4; ++i) {
    const auto& t = show.queue_totals().at(seam::packed(s.queues[i].key));
    EXPECT_EQ(t.packets, last->queues[i].packets - first->queues[i].packets) << i;
    EXPECT_EQ(t.resets, 0u);
  }
}

TEST_F(TraceTest, OpeningOverAnExistingTraceRotatesItOutOfTheWay) {
  const auto first = SnapshotGen(1).sequence(3);
  write_all(first);
  const std::string old_bytes = slurp(path());
  const auto second = SnapshotGen(2).sequence(2);
  write_all(second);
  EXPECT_EQ(slurp(path() + ".1"), old_bytes);
  auto r = TraceReader::open(path());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(read_all(*r).size(), second.size());

  // keep_files 0: the old file is simply replaced.
  WriterOptions none;
  none.keep_files = 0;
  write_all(first, none);
  EXPECT_EQ(slurp(path() + ".1"), old_bytes) << "keep_files 0 does not touch FILE.1";
  auto r2 = TraceReader::open(path());
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(read_all(*r2).size(), first.size());
}

TEST_F(TraceTest, OversizedFrameMakesAOneFrameFileAndZeroBoundIsRefused) {
  WriterOptions o;
  o.max_bytes = 100;  // smaller than the header plus any frame
  o.keep_files = 1;
  auto w = TraceWriter::open(path(), o);
  ASSERT_TRUE(w.ok());
  const auto frames = SnapshotGen(9).sequence(3);
  for (const auto& s : frames) ASSERT_TRUE(w->write(s).ok());
  ASSERT_TRUE(w->close().ok());
  for (const auto& f : {path(), path() + ".1"}) {
    auto r = TraceReader::open(f);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(read_all(*r).size(), 1u) << f;
  }
  o.max_bytes = 0;
  auto bad = TraceWriter::open(path("zero.dtr"), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), EINVAL);
}

TEST_F(TraceTest, RotationSetOfNothingIsENOENT) {
  auto set = rotation_set(path("none.dtr"));
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().code(), ENOENT);
}

// Size of a steady 100-queue trace, as the daemon's 20 ms samples would make it: an idle queue
// costs one byte per frame, a busy one a few.
TEST_F(TraceTest, SteadyHundredQueueTraceIsAFewBytesPerQueuePerFrame) {
  constexpr int kQueues = 100, kFrames = 500;
  std::mt19937_64 rng(1);
  auto run = [&](bool busy) {
    seam::Snapshot s;
    s.devices = {"eth0", "eth1"};
    for (int i = 0; i < kQueues; ++i) {
      seam::QueueCounters q;
      q.key = {static_cast<uint32_t>(2 + i / 50), static_cast<uint32_t>(8192 + i)};
      q.queue = i % 50;
      q.irq = 100 + i;
      q.device_ix = static_cast<uint32_t>(i / 50);
      q.polls = 1'000'000 + static_cast<uint64_t>(i);
      q.packets = 50'000'000;
      s.queues.push_back(q);
    }
    auto w = TraceWriter::open(path(busy ? "busy.dtr" : "idle.dtr"));
    EXPECT_TRUE(w.ok());
    const uint64_t start = w->file_bytes();
    for (int f = 0; f < kFrames; ++f) {
      s.time_ns += 20'000'000 + static_cast<int64_t>(rng() % 50'000);
      if (busy) {
        for (auto& q : s.queues) {  // ~20k packets/s per queue, ~64 packets per poll
          const uint64_t polls = 4 + rng() % 4;
          q.polls += polls;
          q.packets += polls * 50 + rng() % 100;
          q.empty_polls += rng() % 2;
          q.budget_exhausted += rng() % 8 == 0 ? 1 : 0;
        }
      }
      EXPECT_TRUE(w->write(s).ok());
    }
    const double per_frame = static_cast<double>(w->file_bytes() - start) / kFrames;
    EXPECT_TRUE(w->close().ok());
    return per_frame / kQueues;
  };
  const double idle = run(false), busy = run(true);
  std::printf("bytes per queue per frame, 100 queues: idle %.3f, busy %.3f\n", idle, busy);
  RecordProperty("idle_bytes_per_queue_frame", std::to_string(idle));
  RecordProperty("busy_bytes_per_queue_frame", std::to_string(busy));
  EXPECT_LT(idle, 1.25);  // 1 byte per queue + the frame's own ~18 bytes
  EXPECT_LT(busy, 6.0);
}

// Format 2's CPU times on a 64-CPU host whose every CPU takes interrupts and polls each frame
// (one queue IRQ per CPU): what they add to every frame, per CPU.
TEST_F(TraceTest, BusyCpuTimesAreAFewBytesPerCpuPerFrame) {
  constexpr int kCpus = 64, kFrames = 500;
  std::mt19937_64 rng(2);
  seam::Snapshot s;
  s.cpus.resize(kCpus);
  for (auto& t : s.cpus) t.idle_known = true;
  for (int i = 0; i < kCpus; ++i) s.irqs.push_back({static_cast<uint32_t>(100 + i), 0, 0, 0});
  auto w = TraceWriter::open(path());
  ASSERT_TRUE(w.ok());
  const uint64_t start = w->file_bytes();
  for (int f = 0; f < kFrames; ++f) {
    s.time_ns += 20'000'000;
    for (int i = 0; i < kCpus; ++i) {  // ~50k interrupts/s and ~40k softirqs/s per CPU
      auto& t = s.cpus[static_cast<size_t>(i)];
      const uint64_t irqs = 900 + rng() % 200, rx = 700 + rng() % 200;
      t.hardirq_count += irqs;
      t.hardirq_timed += irqs / 8;
      t.hardirq_ns += irqs / 8 * (1'000 + rng() % 500);
      t.softirq_net_rx_count += rx;
      t.softirq_net_rx_timed += rx / 8;
      t.softirq_net_rx_ns += rx / 8 * (3'000 + rng() % 2'000);
      t.idle_ns += 10'000'000 + rng() % 5'000'000;
      auto& q = s.irqs[static_cast<size_t>(i)];
      q.count += irqs;
      q.timed += irqs / 8;
      q.ns += irqs / 8 * 1'200;
    }
    ASSERT_TRUE(w->write(s).ok());
  }
  const double per_cpu = static_cast<double>(w->file_bytes() - start) / kFrames / kCpus;
  EXPECT_TRUE(w->close().ok());
  std::printf("bytes per busy CPU (and its IRQ) per frame, 64 CPUs: %.2f\n", per_cpu);
  RecordProperty("busy_bytes_per_cpu_frame", std::to_string(per_cpu));
  EXPECT_LT(per_cpu, 32.0);  // nanosecond deltas of ~0.1-10 ms: 3-4 bytes each
}

}  // namespace
}  // namespace dimctl::trace
