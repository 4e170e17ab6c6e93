// restore_all(): every recorded original written back and read back; what is left stays in the
// file (json_originals_store.h).
#include <fmt/format.h>
#include <cerrno>

#include "dimctl/state/json_originals_store.h"
#include "state_format.h"

namespace dimctl::state {
namespace {

using format::join;
using format::mismatches;

bool is_gone(const Error& e) {
  return e.code() == ENODEV || e.code() == ENXIO;
}

// Reports one record's write-back (`r`: what the write read back, or its error) and returns its
// outcome: kGone when `gone` (the error says the device or NAPI no longer exists: "`gone_what`
// (error); `gone_then`"), kFailed for another error or a read-back that differs (`differs(value)`
// names the fields), else kRestored (`restored`: what was written).
template <typename T, typename Differs>
RestoreOutcome write_back(RestoreReport& rep, std::string name, const Result<T>& r, bool gone,
                          std::string_view gone_what, std::string_view gone_then, Differs differs,
                          std::string restored) {
  RestoreOutcome outcome = RestoreOutcome::kRestored;
  std::string detail;
  if (!r && gone) {
    outcome = RestoreOutcome::kGone;
    detail = fmt::format("{} ({}); {}", gone_what, r.error().message(), gone_then);
  } else if (!r) {
    outcome = RestoreOutcome::kFailed;
    detail = r.error().message();
  } else if (auto mm = differs(*r); !mm.empty()) {
    outcome = RestoreOutcome::kFailed;
    detail = "read-back differs: " + join(mm, "; ");
  } else {
    detail = std::move(restored);
  }
  rep.results.push_back({std::move(name), outcome, std::move(detail)});
  return outcome;
}

}  // namespace

bool RestoreReport::all_restored() const {
  if (file_error) return false;
  for (const auto& r : results) {
    if (r.outcome == RestoreOutcome::kFailed) return false;
  }
  return true;
}

RestoreReport JsonOriginalsStore::restore_all(seam::NetActuator& net, seam::RdmaDimSwitch* rdma,
                                              seam::NapiActuator* napi) {
  RestoreReport rep;
  if (auto l = ensure_loaded(); !l) {
    rep.file_error = std::move(l).error();
    return rep;
  }
  Originals remaining;
  constexpr std::string_view kDropped = "dropped";

  for (const auto& [dev, n] : data_.net) {
    if (n.device) {
      const seam::Coalesce& c = *n.device;
      auto r = net.set(dev, c);
      const RestoreOutcome o = write_back(
          rep, dev, r, !r && is_gone(r.error()), "device no longer exists", kDropped,
          [&](const seam::Coalesce& back) { return mismatches(c, back); }, describe(c));
      if (o == RestoreOutcome::kGone) continue;  // its queues went with it
      if (o == RestoreOutcome::kFailed) remaining.net[dev].device = c;
    }
    for (const auto& [q, queue_c] : n.queues) {
      // A named reference: clang before 16 cannot capture a structured binding in a lambda.
      const seam::Coalesce& c = queue_c;
      auto r = net.set_queue(dev, q, c);
      const RestoreOutcome o = write_back(
          rep, fmt::format("{} queue {}", dev, q), r, !r && is_gone(r.error()), "no longer exists",
          kDropped, [&](const seam::Coalesce& back) { return mismatches(c, back); }, describe(c));
      if (o == RestoreOutcome::kFailed) remaining.net[dev].queues[q] = c;
    }
  }

  for (const auto& [dev, dim] : data_.rdma) {
    const std::string name = "rdma " + dev;
    const std::string want = fmt::format("adaptive-moderation {}", dim ? "on" : "off");
    if (rdma == nullptr) {
      rep.results.push_back(
          {name, RestoreOutcome::kFailed, "no RDMA netlink available to restore " + want});
      remaining.rdma[dev] = dim;
      continue;
    }
    auto r = rdma->set_dim(dev, dim);
    const bool want_dim = dim;
    const RestoreOutcome o = write_back(
        rep, name, r, !r && is_gone(r.error()), "no longer exists", kDropped,
        [&](bool back) {
          std::vector<std::string> mm;
          if (back != want_dim)
            mm.push_back(
                fmt::format("recorded {}, reads {}", want_dim ? "on" : "off", back ? "on" : "off"));
          return mm;
        },
        want);
    if (o == RestoreOutcome::kFailed) remaining.rdma[dev] = dim;
  }

  for (const auto& [dev, ids] : data_.napi) {
    for (const auto& [id, napi_c] : ids) {
      const seam::NapiConfig& c = napi_c;
      const std::string name = fmt::format("{} napi {}", dev, id);
      if (napi == nullptr) {
        rep.results.push_back({name, RestoreOutcome::kFailed,
                               "no netdev netlink available to restore " + describe(c)});
        remaining.napi[dev][id] = c;
        continue;
      }
      auto r = napi->set(id, c);
      const RestoreOutcome o = write_back(
          rep, name, r, !r && r.error().code() == ENOENT, "no longer exists",
          "a NAPI that replaced it started from the device's defaults; dropped",
          [&](const seam::Napi& back) { return mismatches(c, back.config); }, describe(c));
      if (o == RestoreOutcome::kFailed) remaining.napi[dev][id] = c;
    }
  }

  const Originals before = data_;
  data_ = std::move(remaining);
  if (data_.empty()) {
    if (auto rm = remove_file(); !rm) {
      rep.file_error = std::move(rm).error();
    } else {
      rep.file_removed = true;
    }
  } else if (data_ != before) {
    if (auto p = persist(); !p) rep.file_error = std::move(p).error();
  }
  return rep;
}

}  // namespace dimctl::state
