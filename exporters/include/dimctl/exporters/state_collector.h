// StateCollector: a prometheus::Collectable that renders the latest published ControllerState
// at scrape time. It keeps no metric objects of its own: counters carry the absolute cumulative
// values the controller publishes, gauges the current values, so a scrape is a pure function
// of (state, options, series caps) plus the series-drop bookkeeping below.
//
// Cardinality: per-queue and per-CQ series are capped (CollectorOptions at start, then
// set_series_caps() on a config reload). Queues are ordered by (device, queue, direction) and
// CQs by (device, cq id) and the first N are exported, so the exported set is stable across
// scrapes. What is cut shows up as
//   dimctl_series_dropped{kind}        queues/CQs not exported at this scrape (gauge)
//   dimctl_series_dropped_total{kind}  times a queue/CQ went from exported (or new) to dropped,
//                                      as observed by successive scrapes (counter)
// Two entries with the same label set (which Prometheus would reject as duplicate series) are
// also dropped and counted: the first one wins.
//
// Thread-safety: Collect() may be called from several HTTP threads at once; the drop bookkeeping
// is under a mutex, everything else works on the immutable state. set_series_caps() may be
// called from any thread (the daemon's reload) while scrapes run.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dimctl/common/netlink_requests.h"
#include "dimctl/common/result.h"
#include "dimctl/seam/controller_state.h"

namespace dimctl::exporters {

// Returns the last published state, or nullptr before the first one.
using StateGetter = std::function<std::shared_ptr<const seam::ControllerState>()>;

struct CollectorOptions {
  // Initial caps (above UINT32_MAX counts as UINT32_MAX); set_series_caps() changes them later.
  std::size_t max_queue_series = 512;  // queues (device, queue, direction) exported per scrape
  std::size_t max_cq_series = 256;     // CQs (device, cq) exported per scrape
  std::string version;                 // dimctl_build_info{version}; "" = the built-in version
  // CLOCK_MONOTONIC now, for dimctl_state_age_seconds; unset = the real monotonic clock.
  std::function<int64_t()> now_ns;
  // The process's netlink requests so far, per NetlinkFamily, for
  // dimctl_netlink_requests_total; unset = not exported (the daemon sets it).
  std::function<std::array<uint64_t, kNetlinkFamilyCount>()> netlink_requests;
};

// One metric family dimctl can emit: the catalogue the renderer, docs/METRICS.md and the
// dashboard test share.
struct MetricSpec {
  const char* name;
  prometheus::MetricType type;
  const char* help;
  std::vector<const char*> labels;
};
const std::vector<MetricSpec>& metric_catalogue();

class StateCollector final : public prometheus::Collectable {
 public:
  // Validates every metric and label name of the catalogue (prometheus-cpp would otherwise
  // only notice a bad name when a server rejects the scrape).
  static Result<std::shared_ptr<StateCollector>> create(StateGetter state,
                                                        CollectorOptions options = {});

  std::vector<prometheus::MetricFamily> Collect() const override;

  // Replaces both series caps (config reload). Scrapes from the next one on select and report
  // the new pair; a scrape already running keeps the pair it started with.
  void set_series_caps(uint32_t queues, uint32_t cqs);

 private:
  StateCollector(StateGetter state, CollectorOptions options);

  StateGetter state_;
  CollectorOptions options_;  // its caps are only the initial ones: see caps_
  // Queue cap in the high half, CQ cap in the low half: one atomic, so a scrape never pairs a
  // new queue cap with an old CQ cap.
  std::atomic<uint64_t> caps_;
  // Series-drop bookkeeping ([0] queues, [1] CQs): label sets dropped at the previous scrape.
  mutable std::mutex mu_;
  mutable std::set<std::string> prev_dropped_[2];
  mutable uint64_t dropped_total_[2] = {0, 0};
};

// Text exposition format 0.0.4 of everything `collectables` return (expired ones are skipped).
std::string render_text(const std::vector<std::weak_ptr<prometheus::Collectable>>& collectables);
std::string render_text(const prometheus::Collectable& collectable);

// The version compiled into the library (the project version).
const char* built_in_version();

}  // namespace dimctl::exporters
