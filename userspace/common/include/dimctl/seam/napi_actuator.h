// NapiActuator: per-NAPI software interrupt moderation (netdev generic netlink `napi-get` /
// `napi-set`, Linux >= 6.13). After a poll that found work the kernel keeps the interrupt
// masked and re-polls from a gro-flush-timeout timer, up to defer-hard-irqs times; it works on
// any driver's NAPI, including those without hardware coalescing (veth, virtio-net).
//
// The netdev family sends no notification when a NAPI's settings change, so drift (another
// writer) can only be seen by reading back: get() is cheap and is what a drift check calls.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dimctl/common/result.h"

namespace dimctl::seam {

// The writable settings of one NAPI. In a reply an absent field is one the kernel does not
// report; in a request it is a field not to write.
struct NapiConfig {
  std::optional<uint32_t> defer_hard_irqs;         // timer re-polls before the IRQ is re-armed
  std::optional<uint64_t> gro_flush_timeout_ns;    // the re-poll timer
  std::optional<uint64_t> irq_suspend_timeout_ns;  // only with epoll prefer-busy-poll users
  bool empty() const {
    return !defer_hard_irqs && !gro_flush_timeout_ns && !irq_suspend_timeout_ns;
  }
  bool operator==(const NapiConfig&) const = default;
};

struct Napi {
  uint32_t id = 0;
  uint32_t ifindex = 0;
  std::optional<uint32_t> irq;  // absent when the NAPI has no interrupt of its own (veth)
  NapiConfig config;
  bool operator==(const Napi&) const = default;
};

class NapiActuator {
 public:
  virtual ~NapiActuator() = default;
  // ok() when this kernel reads and writes per-NAPI moderation; otherwise an error naming the
  // requirement (EOPNOTSUPP: Linux >= 6.13), which every other call then returns too.
  virtual Result<void> available() = 0;
  // The NAPIs of one device (ENODEV when there is no such ifindex); empty when it has none
  // (veth without GRO or XDP).
  virtual Result<std::vector<Napi>> list(uint32_t ifindex) = 0;
  // One NAPI by id; ENOENT when no NAPI has that id (any more).
  virtual Result<Napi> get(uint32_t napi_id) = 0;
  // Writes the present fields of `req` only, then reads back and returns what the kernel holds.
  virtual Result<Napi> set(uint32_t napi_id, const NapiConfig& req) = 0;
};

}  // namespace dimctl::seam
