// dimctl_napi_set NAPI_ID DEFER_HARD_IRQS GRO_FLUSH_TIMEOUT_NS: one netdev napi-set through
// NapiNetlink, in the caller's network namespace: the "other writer" of napi_test.sh's drift
// case (the daemon must see it and not overwrite it). Prints the read-back; exit 1 on failure.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "dimctl/actuators/napi_netlink.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: dimctl_napi_set NAPI_ID DEFER_HARD_IRQS GRO_FLUSH_TIMEOUT_NS\n";
    return 2;
  }
  const auto id = static_cast<uint32_t>(std::stoul(argv[1]));
  dimctl::seam::NapiConfig req;
  req.defer_hard_irqs = static_cast<uint32_t>(std::stoul(argv[2]));
  req.gro_flush_timeout_ns = std::stoull(argv[3]);
  auto napi = dimctl::actuators::NapiNetlink::open();
  if (!napi) {
    std::cerr << napi.error().message() << "\n";
    return 1;
  }
  auto r = (*napi)->set(id, req);
  if (!r) {
    std::cerr << r.error().message() << "\n";
    return 1;
  }
  std::cout << "napi " << r->id << ": defer_hard_irqs " << r->config.defer_hard_irqs.value_or(0)
            << " gro_flush_timeout_ns " << r->config.gro_flush_timeout_ns.value_or(0) << "\n";
  return 0;
}
