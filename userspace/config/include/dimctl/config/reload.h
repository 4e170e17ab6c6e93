// What a config reload (SIGHUP) can change in a running daemon, as a pure function of the
// running and the freshly loaded config: which keys take effect at once and which keep their
// running value until a restart. The daemon applies `next` and logs both lists; docs/CONFIG.md
// ("Reload (SIGHUP)") documents the split.
//
// Thread-safety: plain values, no shared state.
#pragma once

#include <string>
#include <vector>

#include "dimctl/config/config.h"

namespace dimctl::config {

// One key whose value differs between the running and the new config.
struct ReloadChange {
  std::string key;        // key path as written in the file: "interval", "metrics.listen"
  std::string old_value;  // the running value, formatted as in the file ("20ms", "[a, b]")
  std::string new_value;  // the value in the new file
};

struct ReloadDiff {
  // Keys that take effect at once: mode, interval, metrics.publish_interval,
  // metrics.max_queue_series / max_cq_series (the exporter's caps, from the next scrape on),
  // devices, and collectors.skb_bytes while it stays a non-empty list (the daemon re-selects the
  // devices).
  std::vector<ReloadChange> applied;
  // Keys that keep their running value until a restart: metrics.listen (the socket is bound at
  // start), state_file, collectors.napi / rdma (programs are loaded at start) and
  // collectors.skb_bytes to or from [] (attaching or detaching the per-packet program).
  std::vector<ReloadChange> needs_restart;
  // The config to run with after the reload: the new one, with every needs_restart key at its
  // running value (so the next reload compares against what really runs).
  Config next;

  bool empty() const { return applied.empty() && needs_restart.empty(); }
};

// Both configs must be valid (parse_config succeeded); command-line overrides (--state-file,
// --web.listen-address) should be applied to both first.
ReloadDiff diff_for_reload(const Config& running, const Config& fresh);

// Whether two rules are the same apart from where they are written (Rule::mark).
bool same_rule(const Rule& a, const Rule& b);

}  // namespace dimctl::config
