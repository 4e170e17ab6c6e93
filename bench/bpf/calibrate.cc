// dimctl_bpf_calibrate SECONDS: attaches the empty tp_btf/napi_poll program (calibrate.bpf.c)
// for SECONDS and prints "empty_ns_per_run <ns> runs <n>" (needs kernel.bpf_stats_enabled=1).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "calibrate.skel.h"

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 3;
  calibrate_bpf* skel = calibrate_bpf__open_and_load();
  if (skel == nullptr) {
    std::perror("load calibrate.bpf.o");
    return 1;
  }
  if (calibrate_bpf__attach(skel) != 0) {
    std::perror("attach calibrate");
    calibrate_bpf__destroy(skel);
    return 1;
  }
  ::sleep(static_cast<unsigned>(seconds));
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  const int fd = bpf_program__fd(skel->progs.dimctl_calibrate_empty);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
    std::perror("bpf_obj_get_info_by_fd");
    calibrate_bpf__destroy(skel);
    return 1;
  }
  std::printf("empty_ns_per_run %.1f runs %llu\n",
              info.run_cnt
                  ? static_cast<double>(info.run_time_ns) / static_cast<double>(info.run_cnt)
                  : 0.0,
              static_cast<unsigned long long>(info.run_cnt));
  calibrate_bpf__destroy(skel);
  return 0;
}
