// dimctl_bench_cpu_probe [DEV]: bench/host's meter. Loads cpu_time.bpf.c and napi.bpf.c
// through the collector (enable_cpu_times, every run timed: one in 1) and, for each line read on
// stdin, prints one JSON line with the cumulative NET_RX softirq and hard interrupt time and
// counts per CPU, and the poll counters of DEV's NAPIs (of the caller's network namespace). The
// harness samples before and after each sockperf run: the NET_RX time a run cost, exactly, and
// without the system time of whatever else the cores run (other builds), which /proc/stat's
// tick-sampled columns include; and how many polls (empty ones apart) the moderated NAPI made.
// Ends at EOF.
#include <cstdio>
#include <iostream>
#include <string>

#include <spdlog/spdlog.h>

#include "dimctl/collector/bpf_collector.h"

int main(int argc, char** argv) {
  const std::string dev = argc > 1 ? argv[1] : "";
  spdlog::set_level(spdlog::level::warn);  // stdout carries the JSON lines only
  dimctl::collector::CollectorOptions o;
  o.cpu_times_time_one_in = 1;
  o.enable_napi = !dev.empty();
  o.enable_rdma = false;
  o.enable_cpu_times = true;
  auto c = dimctl::collector::BpfCollector::open(o);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", c.error().detailed().c_str());
    return 1;
  }
  std::printf("{\"ready\":true}\n");
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    auto s = (*c)->sample();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.error().detailed().c_str());
      return 1;
    }
    uint64_t polls = 0, packets = 0, empty = 0, exhausted = 0;
    for (const auto& q : s->queues) {
      if (q.device_ix >= s->devices.size() || s->devices[q.device_ix] != dev) continue;
      polls += q.polls;
      packets += q.packets;
      empty += q.empty_polls;
      exhausted += q.budget_exhausted;
    }
    std::printf("{\"cpus\":[");
    for (size_t i = 0; i < s->cpus.size(); ++i) {
      const auto& p = s->cpus[i];
      std::printf("%s{\"net_rx_ns\":%.0f,\"net_rx\":%llu,\"hardirq_ns\":%.0f,\"hardirq\":%llu}",
                  i ? "," : "",
                  dimctl::seam::estimated_ns(p.softirq_net_rx_ns, p.softirq_net_rx_timed,
                                             p.softirq_net_rx_count),
                  static_cast<unsigned long long>(p.softirq_net_rx_count),
                  dimctl::seam::estimated_ns(p.hardirq_ns, p.hardirq_timed, p.hardirq_count),
                  static_cast<unsigned long long>(p.hardirq_count));
    }
    std::printf(
        "],\"napi\":{\"polls\":%llu,\"packets\":%llu,\"empty_polls\":%llu,"
        "\"budget_exhausted\":%llu}}\n",
        static_cast<unsigned long long>(polls), static_cast<unsigned long long>(packets),
        static_cast<unsigned long long>(empty), static_cast<unsigned long long>(exhausted));
    std::fflush(stdout);
  }
  return 0;
}
