// Moderation profiles: the kernel's constant tables (lib/dim/net_dim.c, drivers/infiniband/core
// cq.c; dim-spec section 6) and the DIM constants of dim-spec section 1.
#pragma once

#include <array>
#include <cstdint>

namespace dim {

// One profile level: what a driver programs into the CQ / IRQ moderation for an index.
struct Profile {
  uint16_t usec = 0;   // interrupt timer (CQ period), microseconds
  uint16_t pkts = 0;   // packet (CQE) count threshold, net profiles
  uint16_t comps = 0;  // completion count threshold, RDMA profiles
  bool operator==(const Profile&) const = default;
};

// Numeric values are the kernel's (enum dim_cq_period_mode).
enum class CqPeriodMode : uint8_t { kEqe = 0, kCqe = 1 };
enum class Direction : uint8_t { kRx, kTx };

inline constexpr int kNetNumProfiles = 5;
inline constexpr int kRdmaNumProfiles = 9;
// Events per decision window, and the constant that epms is computed from (dim-spec 3.3).
inline constexpr int kNEvents = 64;
// Net steps allowed between two park-on-top before parking tired.
inline constexpr int kNetTiredLimit = 2 * kNetNumProfiles;
// Default ("def") net moderation index drivers program statically; not DIM's start index.
inline constexpr int kNetDefaultProfile = 1;

using NetProfiles = std::array<Profile, kNetNumProfiles>;
using RdmaProfiles = std::array<Profile, kRdmaNumProfiles>;

inline constexpr NetProfiles kNetRxEqeProfiles{
    {{1, 256, 0}, {8, 256, 0}, {64, 256, 0}, {128, 256, 0}, {256, 256, 0}}};
inline constexpr NetProfiles kNetRxCqeProfiles{
    {{2, 256, 0}, {8, 128, 0}, {16, 64, 0}, {32, 64, 0}, {64, 64, 0}}};
inline constexpr NetProfiles kNetTxEqeProfiles{
    {{1, 128, 0}, {8, 128, 0}, {32, 128, 0}, {64, 128, 0}, {128, 128, 0}}};
inline constexpr NetProfiles kNetTxCqeProfiles{
    {{5, 128, 0}, {8, 64, 0}, {16, 32, 0}, {32, 32, 0}, {64, 32, 0}}};
// rdma_dim_prof: usec is written as cq_period, comps as cq_count.
inline constexpr RdmaProfiles kRdmaProfiles{{{1, 0, 1},
                                             {1, 0, 4},
                                             {2, 0, 4},
                                             {2, 0, 8},
                                             {4, 0, 8},
                                             {16, 0, 8},
                                             {16, 0, 16},
                                             {32, 0, 16},
                                             {32, 0, 32}}};

constexpr const NetProfiles& net_profiles(CqPeriodMode mode, Direction dir) {
  if (dir == Direction::kRx) {
    return mode == CqPeriodMode::kCqe ? kNetRxCqeProfiles : kNetRxEqeProfiles;
  }
  return mode == CqPeriodMode::kCqe ? kNetTxCqeProfiles : kNetTxEqeProfiles;
}

constexpr const RdmaProfiles& rdma_profiles() {
  return kRdmaProfiles;
}

}  // namespace dim
