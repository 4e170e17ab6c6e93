// Helpers shared by `dimctl status` and `dimctl top`: fetch the daemon's published state over
// HTTP and lay out plain-text tables. Header-only because the CLI compiles cmd_*.cc only.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/exporters/http_client.h"
#include "dimctl/exporters/http_server.h"
#include "dimctl/exporters/names.h"
#include "dimctl/exporters/state_json.h"
#include "dimctl/seam/controller_state.h"
#include "endpoint_flags.h"

namespace dimctl::cli {

struct FetchedState {
  std::string body;  // raw JSON as served
  seam::ControllerState state;
};

// GET /api/v1/state. Errors say what to check: unreachable daemon, TLS, credentials, HTTP
// error, bad JSON.
inline Result<FetchedState> fetch_state(const Endpoint& endpoint) {
  const std::string& address = endpoint.address;
  auto res = exporters::http_get(address, "/api/v1/state", endpoint.client);
  if (!res) {
    return DIMCTL_FAIL(0,
                       "cannot reach the dimctl daemon at {} ({}); is `dimctl run` running and "
                       "serving on that address{}?",
                       address, res.error().message(),
                       endpoint.client.tls ? "" : ", over plain HTTP (else pass --tls)");
  }
  if (res->status == 401) {
    return DIMCTL_FAIL(0, "dimctl daemon at {} answered HTTP 401 Unauthorized: {}", address,
                       endpoint.client.user.empty()
                           ? "it needs credentials (--basic-auth.username and "
                             "--basic-auth.password-file)"
                           : "wrong user name or password for " + endpoint.client.user);
  }
  if (res->status != 200) {
    std::string body = res->body;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    return DIMCTL_FAIL(0, "dimctl daemon at {} answered HTTP {} for /api/v1/state: {}", address,
                       res->status, body);
  }
  auto state = exporters::state_from_json_text(res->body);
  if (!state) {
    return DIMCTL_FAIL(0, "dimctl daemon at {}: {}", address, state.error().message());
  }
  return FetchedState{std::move(res->body), std::move(*state)};
}

// Left-aligned text columns sized to their widest cell, two spaces apart.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::size_t size() const { return rows_.size() - 1; }
  std::string str() const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_) {
      if (w.size() < r.size()) w.resize(r.size(), 0);
      for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
    }
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t i = 0; i < r.size(); ++i) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// 1234567 -> "1.23M": rates at a glance, three significant digits.
inline std::string human(double v) {
  if (!std::isfinite(v)) return "-";
  const char* suffix[] = {"", "k", "M", "G", "T"};
  int i = 0;
  double a = std::fabs(v);
  while (a >= 1000 && i < 4) {
    a /= 1000;
    v /= 1000;
    ++i;
  }
  if (i == 0)
    return a >= 100 || a == std::floor(a) ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
  return fmt::format("{:.{}f}{}", v, a >= 100 ? 0 : (a >= 10 ? 1 : 2), suffix[i]);
}

template <typename T>
std::string opt_str(const std::optional<T>& v) {
  if (!v) return "-";
  if constexpr (std::is_same_v<T, bool>) {
    return *v ? "on" : "off";
  } else {
    return std::to_string(*v);
  }
}

inline const seam::DeviceView* find_device(const seam::ControllerState& s, std::string_view name) {
  for (const auto& d : s.devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// The per-core measured costs and saturation (state `cores`, present while CPU times are
// measured): the cores that carry model queues, have an estimate or are busy. Empty string when
// none.
inline std::string cores_table(const seam::ControllerState& s) {
  Table t({"CPU", "BUSY", "IRQ/S", "COMPS/S", "BATCH", "ESTIMATE irq/comp ns", "USED irq/comp ns",
           "CONFIDENCE", "SATURATED", "EPISODES"});
  for (const auto& c : s.cores) {
    if (c.model_queues == 0 && c.estimate.periods == 0 && c.busy < 0.01) continue;
    const bool measured = c.used_interrupt_ns > 0;
    t.add({std::to_string(c.cpu), fmt::format("{:.0f}%", c.busy * 100), human(c.interrupts_per_s),
           human(c.completions_per_s),
           c.estimate.batch > 0 ? fmt::format("{:.1f}", c.estimate.batch) : "-",
           fmt::format("{:.0f}/{:.0f}", c.estimate.interrupt_ns, c.estimate.completion_ns),
           measured ? fmt::format("{:.0f}/{:.0f}", c.used_interrupt_ns, c.used_completion_ns)
                    : "defaults",
           fmt::format("{} ({}/{} periods)", exporters::cost_confidence_name(c.confidence),
                       c.estimate.kept, c.estimate.periods),
           c.saturated ? fmt::format("yes (profile {})", c.saturation_profile) : "no",
           std::to_string(c.saturation_episodes)});
  }
  return t.size() ? t.str() : std::string();
}

}  // namespace dimctl::cli
