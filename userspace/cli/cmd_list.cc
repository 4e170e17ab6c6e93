// dimctl list [--interval D] [--json] [--count-bytes] [--raw-tp]: attach the BPF collector,
// wait one interval, and print every queue (NAPI) and kernel CQ with its counters over the
// interval, plus the attach status of each BPF program. Exit 1 when the collector cannot open.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "command.h"
#include "dimctl/collector/bpf_collector.h"
#include "dimctl/common/duration.h"
#include "dimctl/common/exit_codes.h"
#include "interval_report.h"

namespace dimctl::cli {
namespace {

constexpr int64_t kMinInterval = 10'000'000;         // 10ms
constexpr int64_t kMaxInterval = 3'600'000'000'000;  // 1h

struct ListOptions {
  std::string interval = "1s";
  bool json = false;
  bool count_bytes = false;
  bool raw_tp = false;
  bool all_netns = false;
};

int run_list(const ListOptions& o) {
  // A duration, or as before durations were one grammar a bare number of seconds.
  DurationError why = DurationError::kSyntax;
  auto interval = parse_duration_or_seconds(o.interval, &why);
  if (!interval) {
    std::cerr << "dimctl list: --interval " << duration_error(o.interval, why, "s") << "\n";
    return kExitUsage;
  }
  if (*interval < kMinInterval || *interval > kMaxInterval) {
    std::cerr << fmt::format("dimctl list: --interval {} is out of range {}..{}\n", o.interval,
                             format_duration(kMinInterval), format_duration(kMaxInterval));
    return kExitUsage;
  }
  // stdout carries the table / JSON; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dimctl-list"));
  collector::CollectorOptions copts;
  copts.count_bytes = o.count_bytes;
  copts.force_raw_tp = o.raw_tp;
  copts.own_netns_only = !o.all_netns;
  auto col = collector::BpfCollector::open(copts);
  if (!col) {
    std::cerr << "dimctl list: " << col.error().message() << "\n";
    return kExitFailure;
  }
  auto before = (*col)->sample();
  if (!before) {
    std::cerr << "dimctl list: sample: " << before.error().message() << "\n";
    return kExitFailure;
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(*interval));
  auto after = (*col)->sample();
  if (!after) {
    std::cerr << "dimctl list: sample: " << after.error().message() << "\n";
    return kExitFailure;
  }
  auto report = make_interval_report(*before, *after, (*col)->program_status(), (*col)->drops());
  std::cout << (o.json ? render_json(report) + "\n" : render_table(report));
  return kExitOk;
}

const Registrar kRegisterList{
    "list", [](CLI::App& app, Runner& run) {
      auto opts = std::make_shared<ListOptions>();
      CLI::App* sub = app.add_subcommand(
          "list", "Attach the BPF collector for one interval and list queues, CQs and programs");
      sub->add_option("--interval", opts->interval,
                      "How long to count, 10ms..1h (e.g. 500ms; a bare number is seconds)")
          ->capture_default_str();
      sub->add_flag("--json", opts->json, "JSON output (cumulative counters over the interval)");
      sub->add_flag("--count-bytes", opts->count_bytes,
                    "Attach the per-packet byte counter (devices without netdev qstats)");
      sub->add_flag("--raw-tp", opts->raw_tp, "Use raw_tp programs instead of tp_btf");
      sub->add_flag("--all-netns", opts->all_netns,
                    "Count NAPIs of every network namespace (names resolve in this one only)");
      run = [opts] { return run_list(*opts); };
      return sub;
    }};

}  // namespace
}  // namespace dimctl::cli
