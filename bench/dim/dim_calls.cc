// dim_bench_calls <net-cpp|net-c|rdma-cpp|rdma-c|model-eqe|model-rdma> <calls>: exactly <calls>
// DIM (or ModelPolicy::update) calls on the benchmark stream, for instruction counting, e.g.
//   valgrind --tool=callgrind --toggle-collect='dim::NetDim::on_sample*' dim_bench_calls net-cpp
//   1000000
// Timings on a shared box are noisy; instruction counts per call are not.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "dim/model_policy.h"
#include "dim/net_dim.h"
#include "dim/rdma_dim.h"
#include "ref_dim.h"
#include "streams.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s net-cpp|net-c|rdma-cpp|rdma-c|model-eqe|model-rdma CALLS\n",
                 argv[0]);
    return 2;
  }
  const std::string_view which = argv[1];
  const size_t calls = std::strtoull(argv[2], nullptr, 10);
  constexpr size_t kLen = 1 << 16;
  uint64_t changes = 0;
  if (which == "net-cpp" || which == "net-c") {
    const auto stream = dim::bench::make_net_stream(kLen, 42);
    dim::NetDim d;
    ref_dim r;
    ref_net_dim_init(&r, 0);
    for (size_t n = 0, i = 0; n < calls; ++n) {
      const dim::Sample& s = stream[i];
      if (which == "net-cpp") {
        if (d.on_sample(s)) d.profile_applied(), ++changes;
      } else {
        const ref_dim_sample rs{s.time_ns, s.pkt_ctr, s.byte_ctr, s.event_ctr, s.comp_ctr};
        if (ref_net_dim(&r, &rs)) ref_dim_work_done(&r), ++changes;
      }
      if (++i == kLen) i = 0, d = dim::NetDim(), ref_net_dim_init(&r, 0);
    }
  } else if (which == "rdma-cpp" || which == "rdma-c") {
    const auto stream = dim::bench::make_rdma_stream(kLen, 43);
    dim::RdmaDim d;
    ref_dim r;
    ref_rdma_dim_init(&r);
    for (size_t n = 0, i = 0; n < calls; ++n) {
      const auto& e = stream[i];
      if (which == "rdma-cpp") {
        if (d.on_event(e.time_ns, e.completions)) d.profile_applied(), ++changes;
      } else {
        if (ref_rdma_dim(&r, e.completions, e.time_ns)) ref_dim_work_done(&r), ++changes;
      }
      if (++i == kLen) i = 0, d = dim::RdmaDim(), ref_rdma_dim_init(&r);
    }
  } else if (which == "model-eqe" || which == "model-rdma") {
    const auto stream = dim::bench::make_model_stream(kLen, 44);
    const dim::ModelTable t =
        which == "model-eqe"
            ? dim::ModelTable(dim::kNetRxEqeProfiles, dim::ProfileCount::kPackets, {})
            : dim::ModelTable(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, {});
    dim::ModelPolicy m(t);
    for (size_t n = 0, i = 0; n < calls; ++n) {
      changes += m.update(t, stream[i]);
      if (++i == kLen) i = 0;
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  std::printf("%s calls=%zu changes=%llu\n", argv[1], calls,
              static_cast<unsigned long long>(changes));
  return 0;
}
