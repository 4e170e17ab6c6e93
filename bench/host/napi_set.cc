// dimctl_bench_napi_set DEV [DEFER GRO_FLUSH_TIMEOUT_NS]: bench/host's setter. Prints one JSON
// line per NAPI of DEV (in the caller's network namespace) with what it held before and, when
// values are given, what napi-set left after the write (NapiNetlink reads it back). run.py keeps
// the first "before" of each NAPI and writes it back at the end: what the benchmark changed, it
// restores. Not a dimctl feature: the daemon is what applies software moderation in production.
#include <net/if.h>

#include <charconv>
#include <cstdio>
#include <string_view>

#include "dimctl/actuators/napi_netlink.h"

namespace {

template <typename T>
bool parse(std::string_view s, T& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string json(const dimctl::seam::NapiConfig& c) {
  return "{\"defer_hard_irqs\":" + std::to_string(c.defer_hard_irqs.value_or(0)) +
         ",\"gro_flush_timeout_ns\":" + std::to_string(c.gro_flush_timeout_ns.value_or(0)) + "}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s DEV [DEFER GRO_FLUSH_TIMEOUT_NS]\n", argv[0]);
    return 2;
  }
  dimctl::seam::NapiConfig req;
  if (argc == 4) {
    uint32_t defer = 0;
    uint64_t timeout = 0;
    if (!parse(argv[2], defer) || !parse(argv[3], timeout)) {
      std::fprintf(stderr, "%s: DEFER and GRO_FLUSH_TIMEOUT_NS are numbers\n", argv[0]);
      return 2;
    }
    req.defer_hard_irqs = defer;
    req.gro_flush_timeout_ns = timeout;
  }
  const unsigned ifindex = if_nametoindex(argv[1]);
  if (ifindex == 0) {
    std::fprintf(stderr, "%s: no device %s in this network namespace\n", argv[0], argv[1]);
    return 1;
  }
  auto nl = dimctl::actuators::NapiNetlink::open();
  if (!nl) {
    std::fprintf(stderr, "%s\n", nl.error().message().c_str());
    return 1;
  }
  if (auto ok = (*nl)->available(); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }
  auto napis = (*nl)->list(ifindex);
  if (!napis) {
    std::fprintf(stderr, "%s\n", napis.error().message().c_str());
    return 1;
  }
  if (napis->empty()) {
    std::fprintf(stderr, "%s: %s has no NAPI (veth: turn GRO on)\n", argv[0], argv[1]);
    return 1;
  }
  for (const auto& n : *napis) {
    std::string line = "{\"id\":" + std::to_string(n.id) + ",\"before\":" + json(n.config);
    if (!req.empty()) {
      auto after = (*nl)->set(n.id, req);
      if (!after) {
        std::fprintf(stderr, "napi %u: %s\n", n.id, after.error().message().c_str());
        return 1;
      }
      line += ",\"after\":" + json(after->config);
    }
    std::printf("%s}\n", line.c_str());
  }
  return 0;
}
