// The NAPI part of <linux/netdev.h> (netdev generic netlink family) that NapiNetlink uses.
// Debian 12's linux-libc-dev (6.1) predates it, so the values are restated from the kernel UAPI
// (include/uapi/linux/netdev.h, generated from Documentation/netlink/specs/netdev.yaml); they
// are ABI and never change. What differs is which kernel answers:
//   family "netdev" ............................................ v6.3
//   NAPI_GET (id, ifindex, irq, pid) ........................... v6.8
//   NAPI_SET; DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT in replies .... v6.13
//   IRQ_SUSPEND_TIMEOUT ........................................ v6.13
// The collector keeps its own subset (userspace/collector/src/netdev_uapi.h) for its read-only
// directory; the numbers are the same.
#pragma once

#include <cstdint>

namespace dimctl::actuators::netdev_uapi {

inline constexpr char kFamilyName[] = "netdev";
inline constexpr uint8_t kFamilyVersion = 1;  // NETDEV_FAMILY_VERSION

// enum netdev_cmd
inline constexpr uint8_t kCmdNapiGet = 11;  // NETDEV_CMD_NAPI_GET
inline constexpr uint8_t kCmdNapiSet = 14;  // NETDEV_CMD_NAPI_SET

// enum netdev_a_napi
inline constexpr uint16_t kANapiIfindex = 1;            // u32
inline constexpr uint16_t kANapiId = 2;                 // u32
inline constexpr uint16_t kANapiIrq = 3;                // u32
inline constexpr uint16_t kANapiPid = 4;                // u32, threaded NAPI's kthread
inline constexpr uint16_t kANapiDeferHardIrqs = 5;      // u32, at most INT32_MAX
inline constexpr uint16_t kANapiGroFlushTimeout = 6;    // uint (4 or 8 bytes), ns
inline constexpr uint16_t kANapiIrqSuspendTimeout = 7;  // uint (4 or 8 bytes), ns

// The kernel's policy for defer-hard-irqs (netdev_a_napi_defer_hard_irqs_range).
inline constexpr uint32_t kMaxDeferHardIrqs = 0x7fffffff;

}  // namespace dimctl::actuators::netdev_uapi
