// dimctl_bench_attach_probe [--programs none|napi|napi,cpu] [--wake PERIOD_US]: one of the
// overhead harness's states (bench/host/overhead.py). It loads the daemon's BPF objects through
// the same collector and options the daemon uses (napi.bpf.c; with `cpu`, cpu_time.bpf.c timing
// one run in eight, as for the model policy) and never reads them, so what a state costs over
// `none` is the programs alone; with --wake it also wakes every PERIOD_US and does nothing, which
// is the daemon loop's wake-ups without its work. Prints {"ready":true} once attached, then runs
// until SIGTERM or SIGINT.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include <spdlog/spdlog.h>

#include "dimctl/collector/bpf_collector.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "dimctl_bench_attach_probe: %s\n"
               "usage: dimctl_bench_attach_probe [--programs none|napi|napi,cpu] "
               "[--wake PERIOD_US]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string programs = "napi";
  long wake_us = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--programs" && i + 1 < argc) {
      programs = argv[++i];
    } else if (a == "--wake" && i + 1 < argc) {
      char* end = nullptr;
      wake_us = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || wake_us <= 0) return usage("--wake takes a period in microseconds > 0");
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (programs != "none" && programs != "napi" && programs != "napi,cpu") {
    return usage(("--programs '" + programs + "': none, napi or napi,cpu").c_str());
  }
  spdlog::set_level(spdlog::level::warn);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  std::unique_ptr<dimctl::collector::BpfCollector> collector;
  if (programs != "none") {
    dimctl::collector::CollectorOptions o;  // the daemon's defaults (cmd_run.cc)
    o.enable_napi = true;
    o.enable_rdma = false;
    o.enable_cpu_times = programs == "napi,cpu";
    auto c = dimctl::collector::BpfCollector::open(o);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.error().detailed().c_str());
      return 1;
    }
    collector = std::move(*c);
  }
  std::printf("{\"ready\":true}\n");
  std::fflush(stdout);
  while (g_stop == 0) {
    if (wake_us > 0) {
      timespec t{wake_us / 1000000, (wake_us % 1000000) * 1000};
      nanosleep(&t, nullptr);
    } else {
      pause();
    }
  }
  return 0;
}
