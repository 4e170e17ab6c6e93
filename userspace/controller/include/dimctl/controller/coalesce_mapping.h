// How a DIM profile becomes ethtool coalesce values, and the field bookkeeping the controller
// needs around a write (what to send, what to restore, whether a notification is ours).
//
// Mapping (dim-spec 4.6, 8.3): RX_USECS = usec, RX_MAX_FRAMES = pkts, USE_CQE_MODE_RX = the
// table's period mode. Only fields the device reported in its GET are ever sent: the kernel
// rejects a SET naming an unsupported parameter (EINVAL), so an unreported field is simply
// not ours to manage.
//
// Pure functions over plain values.
#pragma once

#include <cstdint>
#include <string_view>

#include "dim/profile.h"
#include "dimctl/seam/coalesce.h"
#include "dimctl/seam/policy.h"

namespace dimctl::controller {

// The index policy allows for a table of `num_profiles` entries: clamp into
// [min_profile, max_profile], both capped at the last index (min wins if the bounds cross).
uint8_t clamp_profile(uint8_t ix, const seam::DevicePolicy& policy, uint8_t num_profiles);

// The rx-usecs a profile's `usec` becomes on `driver` (the kernel driver's name). Most drivers
// take a time as a time. igb does not (igb_set_coalesce): 0 = no throttling, 1 and 3 = its own
// dynamic ITR modes, 2 and 4..9 refused with EINVAL, 10..10000 a fixed interval. A profile's usec
// is a time, so on igb 1..9 become the nearest value that is one (0 or 10, a tie to 10): the
// default tables' 1 us profile means no throttling and 8 us the shortest fixed interval, never a
// dynamic mode the driver would then run instead of dimctl (tests/lab/net scenario e checks it
// on the real driver).
uint32_t driver_rx_usecs(uint32_t usec, std::string_view driver);

// What the device should hold for `profile`: the RX fields `reported` has, set from the
// profile (rx-usecs through driver_rx_usecs); use_cqe_mode_rx = cqe_mode when reported.
// Everything else absent.
seam::Coalesce net_target(const dim::Profile& profile, bool cqe_mode,
                          const seam::Coalesce& reported, std::string_view driver = {});

// The request that moves a device from `current` to `target`: the value fields always (cheap
// and idempotent), mode fields only when they change (a mode change makes the kernel call the
// driver twice and some drivers pause traffic while switching), plus use_adaptive_rx = false
// when the driver's own DIM is on and `take_over_adaptive` (else its work would overwrite us).
seam::Coalesce net_request(const seam::Coalesce& target, const seam::Coalesce& current,
                           bool take_over_adaptive);

// `values` restricted to the fields present in `mask`.
seam::Coalesce only_fields(const seam::Coalesce& values, const seam::Coalesce& mask);

// Marks in `mask` every field present in `sent` (the mask's values are meaningless).
void mark_fields(seam::Coalesce& mask, const seam::Coalesce& sent);

// Copies every field present in `from` into `into` (a notification onto what we knew).
void overlay(seam::Coalesce& into, const seam::Coalesce& from);

// True when every field present in `mask` and in both `a` and `b` is equal in `a` and `b`.
bool agrees(const seam::Coalesce& a, const seam::Coalesce& b, const seam::Coalesce& mask);

}  // namespace dimctl::controller
