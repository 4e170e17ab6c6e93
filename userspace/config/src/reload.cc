#include "dimctl/config/reload.h"

#include <fmt/format.h>

#include <tuple>

#include "dimctl/common/duration.h"

namespace dimctl::config {
namespace {

std::string list(const std::vector<std::string>& items) {
  return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string boolean(bool b) {
  return b ? "true" : "false";
}

std::vector<std::string> rule_names(const std::vector<Rule>& rules) {
  std::vector<std::string> out;
  out.reserve(rules.size());
  for (const auto& r : rules) out.push_back(r.name);
  return out;
}

// "" when the rules are the same (order included), else the new value: the rule names, plus
// which of them are new or edited, or that only the order changed (it decides which rule a
// device reports).
std::string rules_change(const std::vector<Rule>& running, const std::vector<Rule>& fresh) {
  bool same = running.size() == fresh.size();
  for (size_t i = 0; same && i < fresh.size(); ++i) same = same_rule(running[i], fresh[i]);
  if (same) return "";
  std::vector<std::string> changed;
  for (const auto& r : fresh) {
    bool kept = false;
    for (const auto& o : running) {
      if (o.name == r.name) {
        kept = same_rule(o, r);
        break;
      }
    }
    if (!kept) changed.push_back(r.name);
  }
  std::string value = list(rule_names(fresh));
  if (!changed.empty())
    return fmt::format("{}, new or edited: {}", value, fmt::join(changed, ", "));
  if (running.size() == fresh.size()) return value + ", order changed";
  return value;
}

}  // namespace

bool same_rule(const Rule& a, const Rule& b) {
  auto fields = [](const Rule& r) {
    return std::tie(r.name, r.match.interface, r.match.driver, r.match.rdma_device, r.mode,
                    r.algorithm, r.static_index, r.min_profile, r.max_profile, r.rx_profile,
                    r.tx_profile, r.rate_limit_ns, r.combine, r.take_over_adaptive, r.kernel_dim,
                    r.compare, r.model, r.method, r.software_profiles);
  };
  return fields(a) == fields(b);
}

ReloadDiff diff_for_reload(const Config& running, const Config& fresh) {
  ReloadDiff d;
  d.next = fresh;
  auto change = [](std::vector<ReloadChange>& to, std::string key, std::string old_value,
                   std::string new_value) {
    to.push_back({std::move(key), std::move(old_value), std::move(new_value)});
  };

  // Applied live.
  if (running.mode != fresh.mode)
    change(d.applied, "mode", std::string(mode_name(running.mode)),
           std::string(mode_name(fresh.mode)));
  if (running.interval_ns != fresh.interval_ns)
    change(d.applied, "interval", format_duration(running.interval_ns),
           format_duration(fresh.interval_ns));
  if (running.metrics.publish_interval_ns != fresh.metrics.publish_interval_ns)
    change(d.applied, "metrics.publish_interval",
           format_duration(running.metrics.publish_interval_ns),
           format_duration(fresh.metrics.publish_interval_ns));
  if (running.metrics.max_queue_series != fresh.metrics.max_queue_series)
    change(d.applied, "metrics.max_queue_series", std::to_string(running.metrics.max_queue_series),
           std::to_string(fresh.metrics.max_queue_series));
  if (running.metrics.max_cq_series != fresh.metrics.max_cq_series)
    change(d.applied, "metrics.max_cq_series", std::to_string(running.metrics.max_cq_series),
           std::to_string(fresh.metrics.max_cq_series));
  if (auto rules = rules_change(running.rules, fresh.rules); !rules.empty())
    change(d.applied, "devices", list(rule_names(running.rules)), std::move(rules));

  // collectors.skb_bytes: the device selection of an attached counter changes live; attaching
  // or detaching the per-packet program (and its filter, fixed at load) needs a restart.
  const auto& old_bytes = running.collectors.skb_bytes;
  const auto& new_bytes = fresh.collectors.skb_bytes;
  if (old_bytes != new_bytes) {
    if (!old_bytes.empty() && !new_bytes.empty()) {
      change(d.applied, "collectors.skb_bytes", list(old_bytes), list(new_bytes));
    } else {
      change(d.needs_restart, "collectors.skb_bytes", list(old_bytes), list(new_bytes));
      d.next.collectors.skb_bytes = old_bytes;
    }
  }

  // Kept until a restart.
  if (running.collectors.napi != fresh.collectors.napi) {
    change(d.needs_restart, "collectors.napi", boolean(running.collectors.napi),
           boolean(fresh.collectors.napi));
    d.next.collectors.napi = running.collectors.napi;
  }
  if (running.collectors.rdma != fresh.collectors.rdma) {
    change(d.needs_restart, "collectors.rdma", boolean(running.collectors.rdma),
           boolean(fresh.collectors.rdma));
    d.next.collectors.rdma = running.collectors.rdma;
  }
  if (running.metrics.listen != fresh.metrics.listen) {
    change(d.needs_restart, "metrics.listen", running.metrics.listen.to_string(),
           fresh.metrics.listen.to_string());
    d.next.metrics.listen = running.metrics.listen;
  }
  if (running.metrics.web_config != fresh.metrics.web_config) {
    // The certificate and key it names are re-read when they change, without a restart.
    change(d.needs_restart, "metrics.web_config", running.metrics.web_config,
           fresh.metrics.web_config);
    d.next.metrics.web_config = running.metrics.web_config;
  }
  if (running.state_file != fresh.state_file) {
    change(d.needs_restart, "state_file", running.state_file, fresh.state_file);
    d.next.state_file = running.state_file;
  }
  return d;
}

}  // namespace dimctl::config
