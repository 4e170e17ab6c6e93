// `dimctl record --output FILE`: the BPF collector alone (no controller, nothing written to any
// device) sampled every --interval into a trace file (docs/TRACE.md), for --duration or until
// SIGINT/SIGTERM, which end the recording cleanly (last frame flushed, exit 0). The file rotates
// at --max-bytes, keeping --keep old files. Usage errors exit 2 before anything is attached.
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "dimctl/collector/bpf_collector.h"
#include "dimctl/common/control_period.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/seam/clock.h"
#include "dimctl/trace/device_filter.h"
#include "dimctl/trace/trace_writer.h"

namespace dimctl::cli {
namespace {

constexpr int64_t kMinInterval = 1'000'000;          // 1ms: below, sampling costs dominate
constexpr int64_t kMaxInterval = 3'600'000'000'000;  // 1h
constexpr uint64_t kMinMaxBytes = 4096;              // a header and a few frames
constexpr int64_t kFlushEvery = 1'000'000'000;       // a SIGKILL loses at most ~1 s of frames

struct RecordArgs {
  std::string output;
  std::string interval = format_duration(kDefaultControlPeriodNs);
  std::string duration = "0";
  std::string max_bytes = "64M";
  uint32_t keep = 2;
  std::vector<std::string> devices;
  bool count_bytes = false;
  bool all_netns = false;
  bool no_cpu_times = false;
};

// "4096", "512K", "64M", "1G" (binary multiples).
std::optional<uint64_t> parse_size(const std::string& s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return std::nullopt;
  const std::string unit(ptr, s.data() + s.size());
  int shift = 0;
  if (unit == "K" || unit == "k") {
    shift = 10;
  } else if (unit == "M") {
    shift = 20;
  } else if (unit == "G") {
    shift = 30;
  } else if (!unit.empty()) {
    return std::nullopt;
  }
  if (v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

timespec to_timespec(int64_t ns) {
  if (ns < 0) ns = 0;
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

struct Validated {
  int64_t interval_ns = 0;
  int64_t duration_ns = 0;  // 0: until a signal
  uint64_t max_bytes = 0;
};

// Every flag checked before anything is attached; the message names the flag.
std::optional<Validated> validate(const RecordArgs& a) {
  Validated v;
  auto usage = [](const std::string& msg) {
    std::cerr << "dimctl record: " << msg << "\n";
    return std::nullopt;
  };
  DurationError why = DurationError::kSyntax;
  auto iv = parse_duration(a.interval, &why);
  if (!iv) return usage("--interval " + duration_error(a.interval, why));
  if (*iv < kMinInterval || *iv > kMaxInterval) {
    return usage(fmt::format("--interval {} is out of range {}..{}", a.interval,
                             format_duration(kMinInterval), format_duration(kMaxInterval)));
  }
  v.interval_ns = *iv;
  auto d = parse_duration(a.duration, &why);
  if (!d) {
    return usage(fmt::format("--duration {}; 0 records until SIGINT/SIGTERM",
                             duration_error(a.duration, why, "s")));
  }
  v.duration_ns = *d;
  auto mb = parse_size(a.max_bytes);
  if (!mb) {
    return usage(
        fmt::format("--max-bytes '{}' is not a size (bytes, or with K, M, G)", a.max_bytes));
  }
  if (*mb < kMinMaxBytes) {
    return usage(
        fmt::format("--max-bytes {} is below the minimum of {} bytes", a.max_bytes, kMinMaxBytes));
  }
  v.max_bytes = *mb;
  for (const auto& g : a.devices) {
    if (g.empty()) return usage("--devices: empty glob");
  }
  return v;
}

std::string command_line(const RecordArgs& a, const Validated& v) {
  std::string s = fmt::format("dimctl record --interval {}", format_duration(v.interval_ns));
  if (v.duration_ns > 0) s += fmt::format(" --duration {}", format_duration(v.duration_ns));
  if (!a.devices.empty()) s += fmt::format(" --devices {}", fmt::join(a.devices, ","));
  if (a.count_bytes) s += " --count-bytes";
  if (a.all_netns) s += " --all-netns";
  if (a.no_cpu_times) s += " --no-cpu-times";
  return s;
}

int run_record(const RecordArgs& a) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("dimctl-record"));
  const auto v = validate(a);
  if (!v) return kExitUsage;

  // Taken synchronously by this thread (sigtimedwait); blocked before libbpf starts threads.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  collector::CollectorOptions copts;
  copts.count_bytes = a.count_bytes;
  copts.own_netns_only = !a.all_netns;
  // The per-CPU interrupt, softirq and idle times (format 2): what a replay or `trace show` needs
  // for the host's costs and busy time, as the daemon measures them for the model policy.
  copts.enable_cpu_times = !a.no_cpu_times;
  auto col = collector::BpfCollector::open(copts);
  if (!col) {
    std::cerr << "dimctl record: BPF collector: " << col.error().message() << "\n";
    return kExitFailure;
  }

  trace::WriterOptions wopts;
  wopts.max_bytes = v->max_bytes;
  wopts.keep_files = a.keep;
  wopts.interval_ns = v->interval_ns;
  wopts.recorder_version = "dimctl " DIMCTL_VERSION;
  wopts.note = command_line(a, *v);
  // After the collector: a failed attach leaves an earlier trace at FILE where it was.
  auto writer = trace::TraceWriter::open(a.output, wopts);
  if (!writer) {
    std::cerr << "dimctl record: --output: " << writer.error().message() << "\n";
    return kExitUsage;
  }

  seam::MonotonicClock clock;
  seam::Snapshot sampled, filtered;
  uint64_t consecutive_errors = 0;
  const int64_t start = clock.now_ns();
  int64_t next = start, last_flush = start;
  bool announced = false;
  int rc = kExitOk;
  for (;;) {
    if (auto r = (*col)->sample_into(sampled); !r) {
      if (consecutive_errors++ == 0) spdlog::error("sample failed: {}", r.error().message());
    } else {
      if (consecutive_errors != 0) {
        spdlog::info("sampling recovered after {} failed interval(s)", consecutive_errors);
        consecutive_errors = 0;
      }
      const seam::Snapshot* frame = &sampled;
      if (!a.devices.empty()) {
        trace::keep_devices(sampled, a.devices, filtered);
        frame = &filtered;
      }
      if (auto bad = trace::check_snapshot(*frame); !bad) {
        // A collector bug, not a disk problem: skipped like a failed sample, as the daemon does.
        spdlog::error("sample skipped: {}", bad.error().message());
        frame = nullptr;
      }
      Result<void> w = frame != nullptr ? writer->write(*frame) : Result<void>{};
      const int64_t now = clock.now_ns();
      if (w && (!announced || now - last_flush >= kFlushEvery)) {
        w = writer->flush();
        last_flush = now;
      }
      if (!w) {
        spdlog::error("dimctl record: {}", w.error().message());
        rc = kExitFailure;
        break;
      }
      if (!announced && frame != nullptr) {
        // After the first frame is on disk: a script may start its traffic from here.
        spdlog::info("recording to {} every {} {}", a.output, format_duration(v->interval_ns),
                     v->duration_ns > 0 ? fmt::format("for {}", format_duration(v->duration_ns))
                                        : std::string("until SIGINT/SIGTERM"));
        announced = true;
      }
    }
    if (v->duration_ns > 0 && next - start >= v->duration_ns) break;
    next += v->interval_ns;
    const int64_t now = clock.now_ns();
    while (next < now) next += v->interval_ns;  // overran: skip, never burst to catch up
    const timespec wait = to_timespec(next - now);
    siginfo_t info{};
    const int sig = sigtimedwait(&sigs, &info, &wait);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("{}: stopping", strsignal(sig));
      break;
    }
  }
  if (auto c = writer->close(); !c) {
    spdlog::error("dimctl record: {}", c.error().message());
    rc = kExitFailure;
  }
  spdlog::info("recorded {} frames ({} bytes, {} rotation(s)) to {}", writer->frames_written(),
               writer->bytes_written(), writer->rotations(), a.output);
  return rc;
}

const Registrar kRegisterRecord{
    "record", [](CLI::App& app, Runner& run) {
      auto a = std::make_shared<RecordArgs>();
      CLI::App* sub = app.add_subcommand(
          "record",
          "Sample the BPF collector into a trace file (no controller, nothing written to devices)");
      sub->add_option("-o,--output", a->output, "Trace file to write (rotated: FILE.1, FILE.2 ...)")
          ->required();
      sub->add_option("--interval", a->interval,
                      fmt::format("Sampling interval (default {}, as the daemon)", a->interval));
      sub->add_option("--duration", a->duration,
                      "How long to record, e.g. 10s (default 0: until SIGINT/SIGTERM)");
      sub->add_option("--max-bytes", a->max_bytes,
                      "Rotate the file before it exceeds this size (default 64M; K, M, G)");
      sub->add_option("--keep", a->keep, "Rotated files to keep (default 2)")
          ->check(CLI::Range(0, 1000));
      sub->add_option("--devices", a->devices,
                      "Record only these net devices / IB devices (fnmatch globs, comma-separated)")
          ->delimiter(',');
      sub->add_flag("--count-bytes", a->count_bytes,
                    "Attach the per-packet byte counter (devices without netdev qstats)");
      sub->add_flag("--all-netns", a->all_netns,
                    "Count NAPIs of every network namespace (names resolve in this one only)");
      sub->add_flag("--no-cpu-times", a->no_cpu_times,
                    "Do not attach the per-CPU interrupt/softirq/idle time programs (recorded by "
                    "default: the host's costs)");
      run = [a] { return run_record(*a); };
      return sub;
    }};

}  // namespace
}  // namespace dimctl::cli
