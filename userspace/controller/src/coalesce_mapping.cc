#include "dimctl/controller/coalesce_mapping.h"

#include <algorithm>

namespace dimctl::controller {

namespace {

// Applies `fn(field pointer-to-member)` to every Coalesce field, so the helpers below cannot
// forget one when the struct grows.
template <typename Fn>
void for_each_field(Fn&& fn) {
  fn(&seam::Coalesce::rx_usecs);
  fn(&seam::Coalesce::rx_max_frames);
  fn(&seam::Coalesce::tx_usecs);
  fn(&seam::Coalesce::tx_max_frames);
  fn(&seam::Coalesce::use_adaptive_rx);
  fn(&seam::Coalesce::use_adaptive_tx);
  fn(&seam::Coalesce::use_cqe_mode_rx);
  fn(&seam::Coalesce::use_cqe_mode_tx);
}

}  // namespace

uint8_t clamp_profile(uint8_t ix, const seam::DevicePolicy& policy, uint8_t num_profiles) {
  const auto last = static_cast<uint8_t>(num_profiles == 0 ? 0 : num_profiles - 1);
  const uint8_t hi = std::min(policy.max_profile, last);
  const uint8_t lo = std::min(policy.min_profile, hi);
  return std::clamp(ix, lo, hi);
}

uint32_t driver_rx_usecs(uint32_t usec, std::string_view driver) {
  constexpr uint32_t kIgbMinFixedUsecs = 10;  // IGB_MIN_ITR_USECS
  if (driver == "igb" && usec > 0 && usec < kIgbMinFixedUsecs) {
    return 2 * usec < kIgbMinFixedUsecs ? 0 : kIgbMinFixedUsecs;
  }
  return usec;
}

seam::Coalesce net_target(const dim::Profile& profile, bool cqe_mode,
                          const seam::Coalesce& reported, std::string_view driver) {
  seam::Coalesce t;
  if (reported.rx_usecs) t.rx_usecs = driver_rx_usecs(profile.usec, driver);
  if (reported.rx_max_frames) t.rx_max_frames = profile.pkts;
  if (reported.use_cqe_mode_rx) t.use_cqe_mode_rx = cqe_mode;
  return t;
}

seam::Coalesce net_request(const seam::Coalesce& target, const seam::Coalesce& current,
                           bool take_over_adaptive) {
  seam::Coalesce r;
  r.rx_usecs = target.rx_usecs;
  r.rx_max_frames = target.rx_max_frames;
  if (target.use_cqe_mode_rx && current.use_cqe_mode_rx != target.use_cqe_mode_rx) {
    r.use_cqe_mode_rx = target.use_cqe_mode_rx;
  }
  if (take_over_adaptive && current.use_adaptive_rx.value_or(false)) r.use_adaptive_rx = false;
  return r;
}

seam::Coalesce only_fields(const seam::Coalesce& values, const seam::Coalesce& mask) {
  seam::Coalesce out;
  for_each_field([&](auto field) {
    if ((mask.*field).has_value()) out.*field = values.*field;
  });
  return out;
}

void mark_fields(seam::Coalesce& mask, const seam::Coalesce& sent) {
  for_each_field([&](auto field) {
    if ((sent.*field).has_value() && !(mask.*field).has_value()) mask.*field = sent.*field;
  });
}

void overlay(seam::Coalesce& into, const seam::Coalesce& from) {
  for_each_field([&](auto field) {
    if ((from.*field).has_value()) into.*field = from.*field;
  });
}

bool agrees(const seam::Coalesce& a, const seam::Coalesce& b, const seam::Coalesce& mask) {
  bool same = true;
  for_each_field([&](auto field) {
    if ((mask.*field).has_value() && (a.*field).has_value() && (b.*field).has_value() &&
        a.*field != b.*field) {
      same = false;
    }
  });
  return same;
}

}  // namespace dimctl::controller
