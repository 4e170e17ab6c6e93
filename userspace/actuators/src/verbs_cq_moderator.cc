#include "dimctl/actuators/verbs_cq_moderator.h"

#include <algorithm>
#include <cerrno>

namespace dimctl::actuators {

Result<VerbsCqModerator> VerbsCqModerator::create(ibv_context* ctx, ibv_cq* cq) {
  if (ctx == nullptr || cq == nullptr) {
    return DIMCTL_FAIL(EINVAL, "VerbsCqModerator: null {}", ctx == nullptr ? "context" : "CQ");
  }
  const char* dev_name = ibv_get_device_name(ctx->device);
  std::string device = dev_name != nullptr ? dev_name : "?";
  if (cq->context != ctx) {
    return DIMCTL_FAIL(EINVAL, "VerbsCqModerator: the CQ does not belong to the {} context",
                       device);
  }
  ibv_device_attr_ex attr{};
  if (int rc = ibv_query_device_ex(ctx, nullptr, &attr); rc != 0) {
    return DIMCTL_FAIL(rc, "{}: ibv_query_device_ex", device);
  }
  Caps caps;
  caps.max_count = attr.cq_mod_caps.max_cq_count;
  caps.max_period_us = attr.cq_mod_caps.max_cq_period;
  return VerbsCqModerator(cq, std::move(device), caps);
}

Result<void> VerbsCqModerator::check() const {
  if (!caps_.supported()) {
    return DIMCTL_FAIL(EOPNOTSUPP,
                       "moderation not supported by {} (cq_mod_caps zero: max_cq_count={}, "
                       "max_cq_period={})",
                       device_, caps_.max_count, caps_.max_period_us);
  }
  return ok();
}

Result<void> VerbsCqModerator::apply(uint16_t count, uint16_t period_us) {
  ibv_modify_cq_attr attr{};
  attr.attr_mask = IBV_CQ_ATTR_MODERATE;
  attr.moderate.cq_count = count;
  attr.moderate.cq_period = period_us;
  // Returns 0 or a positive errno (not -1/errno).
  if (int rc = ibv_modify_cq(cq_, &attr); rc != 0) {
    if (rc == EOPNOTSUPP) {
      return DIMCTL_FAIL(rc, "moderation not supported by the {} driver (ibv_modify_cq)", device_);
    }
    return DIMCTL_FAIL(rc, "{}: ibv_modify_cq(cq_count={}, cq_period={}us)", device_, count,
                       period_us);
  }
  return ok();
}

Result<void> VerbsCqModerator::moderate(uint16_t count, uint16_t period_us) {
  if (auto c = check(); !c) return c;
  if (count > caps_.max_count || period_us > caps_.max_period_us) {
    return DIMCTL_FAIL(ERANGE,
                       "{}: refusing CQ moderation cq_count={} cq_period={}us above the device "
                       "caps (max_cq_count={}, max_cq_period={}us); nothing was sent",
                       device_, count, period_us, caps_.max_count, caps_.max_period_us);
  }
  return apply(count, period_us);
}

Result<VerbsCqModerator::Moderation> VerbsCqModerator::moderate_clamped(uint16_t count,
                                                                        uint16_t period_us) {
  if (auto c = check(); !c) return std::move(c).error();
  Moderation m{std::min(count, caps_.max_count), std::min(period_us, caps_.max_period_us)};
  if (auto r = apply(m.count, m.period_us); !r) return std::move(r).error();
  return m;
}

Result<std::vector<std::string>> VerbsContext::device_names() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr && errno == ENOSYS) return std::vector<std::string>{};  // no uverbs
  if (list == nullptr) return DIMCTL_ERRNO("ibv_get_device_list");
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.emplace_back(ibv_get_device_name(list[i]));
  ibv_free_device_list(list);
  return out;
}

Result<VerbsContext> VerbsContext::open(const std::string& name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr && errno == ENOSYS) {
    return DIMCTL_FAIL(ENODEV, "no verbs device \"{}\" (this kernel has no RDMA user verbs)", name);
  }
  if (list == nullptr) return DIMCTL_ERRNO("ibv_get_device_list");
  ibv_context* ctx = nullptr;
  bool found = false;
  int err = 0;
  for (int i = 0; i < n; ++i) {
    if (name != ibv_get_device_name(list[i])) continue;
    found = true;
    ctx = ibv_open_device(list[i]);
    if (ctx == nullptr) err = errno != 0 ? errno : EIO;
    break;
  }
  ibv_free_device_list(list);
  if (!found) {
    return DIMCTL_FAIL(ENODEV, "no verbs device \"{}\" ({} verbs device(s) present)", name, n);
  }
  if (ctx == nullptr) return DIMCTL_FAIL(err, "{}: ibv_open_device", name);
  return VerbsContext(ctx, name);
}

Result<VerbsCq> VerbsCq::create(const VerbsContext& ctx, int cqe) {
  ibv_cq* cq = ibv_create_cq(ctx.get(), cqe, nullptr, nullptr, 0);
  if (cq == nullptr) return DIMCTL_ERRNO("{}: ibv_create_cq(cqe={})", ctx.name(), cqe);
  return VerbsCq(cq);
}

}  // namespace dimctl::actuators
