// The subset of <linux/netdev.h> (netdev generic netlink family) the collector uses. Debian 12's
// linux-libc-dev (6.1) predates these commands, so the values are restated here from the
// kernel UAPI (include/uapi/linux/netdev.h, generated from Documentation/netlink/specs/
// netdev.yaml). The values are ABI and never change; what differs is which kernel answers:
//   family "netdev" + DEV_GET ......... v6.3
//   QUEUE_GET, NAPI_GET (napi-id, irq)  v6.8
//   QSTATS_GET (per-queue rx-bytes) ... v6.9 (and only drivers implementing netdev_stat_ops)
#pragma once

namespace dimctl::collector::netdev_uapi {

inline constexpr char kFamilyName[] = "netdev";
inline constexpr int kFamilyVersion = 1;

inline constexpr int kCmdQueueGet = 10;
inline constexpr int kCmdNapiGet = 11;
inline constexpr int kCmdQstatsGet = 12;

inline constexpr int kQueueTypeRx = 0;
inline constexpr int kQstatsScopeQueue = 1;

inline constexpr int kANapiIfindex = 1;
inline constexpr int kANapiId = 2;
inline constexpr int kANapiIrq = 3;
inline constexpr int kANapiMax = 3;

inline constexpr int kAQueueId = 1;
inline constexpr int kAQueueIfindex = 2;
inline constexpr int kAQueueType = 3;
inline constexpr int kAQueueNapiId = 4;
inline constexpr int kAQueueMax = 4;

inline constexpr int kAQstatsIfindex = 1;
inline constexpr int kAQstatsQueueType = 2;
inline constexpr int kAQstatsQueueId = 3;
inline constexpr int kAQstatsScope = 4;
inline constexpr int kAQstatsRxBytes = 9;
inline constexpr int kAQstatsMax = 9;

}  // namespace dimctl::collector::netdev_uapi
