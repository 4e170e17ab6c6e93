// NapiNetlink: seam::NapiActuator over the kernel's netdev generic netlink family (libmnl):
// NAPI_GET (one NAPI by id, or a dump filtered by ifindex) and NAPI_SET (Linux >= 6.13).
//
// - open() resolves the "netdev" family and probes its op list (CTRL_ATTR_OPS) for NAPI_SET.
//   A kernel without the family (< 6.3) or without NAPI_SET (< 6.13) still opens: available()
//   and every call then return EOPNOTSUPP naming the requirement, so a caller can refuse a rule
//   at start with that message before writing anything.
// - set() refuses, before sending, a defer-hard-irqs above the kernel's INT32_MAX and a request
//   with no field; sends the present fields only, then reads the NAPI back.
// - Errors keep the kernel's errno and extack message; a NAPI that does not exist (any more) is
//   ENOENT naming its id (veth re-creates its NAPI with a new id when GRO toggles).
//
// NAPI_SET needs CAP_NET_ADMIN; NAPI_GET works unprivileged. The socket is bound to the network
// namespace of the thread that calls open(), and NAPI ids are looked up there.
// Not thread-safe: use from one thread.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "dimctl/actuators/netlink_socket.h"
#include "dimctl/seam/napi_actuator.h"

namespace dimctl::actuators {

class NapiNetlink final : public seam::NapiActuator {
 public:
  // Fails only when no generic netlink socket can be opened or the controller's answer is
  // malformed; a kernel lacking napi-set opens and reports it through available().
  static Result<std::unique_ptr<NapiNetlink>> open();

  Result<void> available() override;
  Result<std::vector<seam::Napi>> list(uint32_t ifindex) override;
  Result<seam::Napi> get(uint32_t napi_id) override;
  Result<seam::Napi> set(uint32_t napi_id, const seam::NapiConfig& req) override;

  uint16_t family_id() const { return family_; }

 private:
  NapiNetlink(NetlinkSocket sock, uint16_t family, std::optional<Error> unavailable)
      : sock_(std::move(sock)), family_(family), unavailable_(std::move(unavailable)) {}

  NetlinkSocket sock_;
  uint16_t family_;
  std::optional<Error> unavailable_;
};

}  // namespace dimctl::actuators
