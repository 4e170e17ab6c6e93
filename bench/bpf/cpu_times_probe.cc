// dimctl_bpf_cpu_times MODE SECONDS [--raw-tp] [--one-in N]: the cost per run of the programs on
// the irq and sched_switch tracepoints, for cpu_times_overhead.sh (needs
// kernel.bpf_stats_enabled=1).
//   MODE dimctl: the collector with only enable_cpu_times (cpu_time.bpf.c, as the daemon loads
//                it; --one-in: cpu_times_time_one_in, default the collector's), sampled at the
//                start and the end;
//   MODE empty:  empty tp_btf programs on the same tracepoints (calibrate_irq.bpf.c): the floor.
// Prints one line per tracepoint: "<tracepoint> <ns_per_run> <runs>", then for dimctl the
// sampled deltas summed over CPUs, times estimated from the timed runs (seam::estimated_ns):
// "hardirq <ns> <count>" and "net_rx <ns> <count>".
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "calibrate_irq.skel.h"
#include "dimctl/collector/bpf_collector.h"

namespace {

void print_prog(const char* tracepoint, int fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
    std::printf("%s n/a 0\n", tracepoint);
    return;
  }
  const double per = info.run_cnt
                         ? static_cast<double>(info.run_time_ns) / static_cast<double>(info.run_cnt)
                         : 0.0;
  std::printf("%s %.1f %llu\n", tracepoint, per, static_cast<unsigned long long>(info.run_cnt));
}

int run_empty(unsigned seconds) {
  calibrate_irq_bpf* skel = calibrate_irq_bpf__open_and_load();
  if (skel == nullptr || calibrate_irq_bpf__attach(skel) != 0) {
    std::perror("calibrate_irq");
    if (skel != nullptr) calibrate_irq_bpf__destroy(skel);
    return 1;
  }
  ::sleep(seconds);
  auto& p = skel->progs;
  print_prog("irq:irq_handler_entry", bpf_program__fd(p.empty_irq_entry));
  print_prog("irq:irq_handler_exit", bpf_program__fd(p.empty_irq_exit));
  print_prog("irq:softirq_entry", bpf_program__fd(p.empty_softirq_entry));
  print_prog("irq:softirq_exit", bpf_program__fd(p.empty_softirq_exit));
  print_prog("sched:sched_switch", bpf_program__fd(p.empty_sched_switch));
  calibrate_irq_bpf__destroy(skel);
  return 0;
}

int run_dimctl(unsigned seconds, bool raw_tp, uint32_t one_in) {
  dimctl::collector::CollectorOptions o;
  if (one_in != 0) o.cpu_times_time_one_in = one_in;
  o.enable_napi = false;
  o.enable_rdma = false;
  o.enable_cpu_times = true;
  o.force_raw_tp = raw_tp;
  auto c = dimctl::collector::BpfCollector::open(o);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", c.error().detailed().c_str());
    return 1;
  }
  auto before = (*c)->sample();
  ::sleep(seconds);
  auto after = (*c)->sample();
  if (!before.ok() || !after.ok()) {
    std::fprintf(stderr, "sample failed\n");
    return 1;
  }
  for (const auto& p : (*c)->program_status()) {
    if (!p.view.attached) {
      std::printf("%s n/a 0\n", p.view.name.c_str());
      continue;
    }
    print_prog(p.view.name.c_str(), p.prog_fd);
  }
  uint64_t hns = 0, hn = 0, ht = 0, nns = 0, nn = 0, nt = 0;
  for (size_t i = 0; i < after->cpus.size() && i < before->cpus.size(); ++i) {
    const auto& a = after->cpus[i];
    const auto& b = before->cpus[i];
    hns += a.hardirq_ns - b.hardirq_ns;
    hn += a.hardirq_count - b.hardirq_count;
    ht += a.hardirq_timed - b.hardirq_timed;
    nns += a.softirq_net_rx_ns - b.softirq_net_rx_ns;
    nn += a.softirq_net_rx_count - b.softirq_net_rx_count;
    nt += a.softirq_net_rx_timed - b.softirq_net_rx_timed;
  }
  std::printf("hardirq %.0f %llu\nnet_rx %.0f %llu\n", dimctl::seam::estimated_ns(hns, ht, hn),
              static_cast<unsigned long long>(hn), dimctl::seam::estimated_ns(nns, nt, nn),
              static_cast<unsigned long long>(nn));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s dimctl|empty SECONDS [--raw-tp] [--one-in N]\n", argv[0]);
    return 2;
  }
  const auto seconds = static_cast<unsigned>(std::atoi(argv[2]));
  bool raw_tp = false;
  uint32_t one_in = 0;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--raw-tp") == 0) raw_tp = true;
    if (std::strcmp(argv[i], "--one-in") == 0 && i + 1 < argc) {
      one_in = static_cast<uint32_t>(std::atoi(argv[++i]));
    }
  }
  if (std::strcmp(argv[1], "empty") == 0) return run_empty(seconds);
  if (std::strcmp(argv[1], "dimctl") == 0) return run_dimctl(seconds, raw_tp, one_in);
  std::fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
