// map_of_prog: a map of a loaded BPF program found by name, straight from the kernel (program
// info, then each map's info), so that a kernel test reads what the BPF side really holds,
// independent of the collector's own readers.
#pragma once

#include <bpf/bpf.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dimctl/common/fd.h"

namespace dimctl::testing {

// The map called `name` among the maps of the program `prog_fd` (the kernel keeps 15 characters
// of a map's name); an invalid Fd when it has none.
inline Fd map_of_prog(int prog_fd, const std::string& name) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  std::vector<uint32_t> ids(16);
  info.nr_map_ids = static_cast<uint32_t>(ids.size());
  info.map_ids = reinterpret_cast<uint64_t>(ids.data());
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return Fd();
  for (uint32_t i = 0; i < info.nr_map_ids && i < ids.size(); ++i) {
    Fd fd(bpf_map_get_fd_by_id(ids[i]));
    bpf_map_info mi{};
    uint32_t mlen = sizeof(mi);
    if (fd.valid() && bpf_obj_get_info_by_fd(fd.get(), &mi, &mlen) == 0 && name == mi.name) {
      return fd;
    }
  }
  return Fd();
}

}  // namespace dimctl::testing
