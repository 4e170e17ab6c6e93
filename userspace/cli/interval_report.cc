#include "interval_report.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "dimctl/exporters/counters_json.h"
#include "dimctl/exporters/names.h"

namespace dimctl::cli {
namespace {

uint64_t sub(uint64_t after, uint64_t before) {
  return after >= before ? after - before : after;
}

double per_s(uint64_t v, double s) {
  return s > 0 ? static_cast<double>(v) / s : 0.0;
}
double ratio(uint64_t a, uint64_t b) {
  return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

}  // namespace

IntervalReport make_interval_report(const seam::Snapshot& before, const seam::Snapshot& after,
                                    std::vector<collector::ProgramStatus> programs,
                                    uint64_t drops) {
  IntervalReport r;
  r.interval_s = static_cast<double>(after.time_ns - before.time_ns) / 1e9;
  r.programs = std::move(programs);
  r.drops = drops;
  r.devices = after.devices;
  std::map<seam::QueueKey, const seam::QueueCounters*> qb;
  for (const auto& q : before.queues) qb[q.key] = &q;
  for (const auto& a : after.queues) {
    seam::QueueCounters d = a;
    if (auto it = qb.find(a.key); it != qb.end()) {
      const auto& b = *it->second;
      // Counters going backwards mean a new incarnation: report it from zero.
      const bool reset = a.polls < b.polls || a.packets < b.packets;
      if (!reset) {
        d.polls = a.polls - b.polls;
        d.packets = a.packets - b.packets;
        d.budget_exhausted = sub(a.budget_exhausted, b.budget_exhausted);
        d.empty_polls = sub(a.empty_polls, b.empty_polls);
        d.has_bytes = a.has_bytes && b.has_bytes;
        d.bytes = d.has_bytes ? sub(a.bytes, b.bytes) : 0;
      }
    }
    r.queues.push_back(std::move(d));
  }
  std::map<seam::CqKey, const seam::CqCounters*> cb;
  for (const auto& c : before.cqs) cb[c.key] = &c;
  for (const auto& a : after.cqs) {
    seam::CqCounters d = a;
    if (auto it = cb.find(a.key); it != cb.end()) {
      const auto& b = *it->second;
      if (a.events >= b.events && a.polls >= b.polls) {
        d.schedules = sub(a.schedules, b.schedules);
        d.reschedules = sub(a.reschedules, b.reschedules);
        d.events = a.events - b.events;
        d.polls = a.polls - b.polls;
        d.completions = sub(a.completions, b.completions);
        d.poll_errors = sub(a.poll_errors, b.poll_errors);
        d.budget_exhausted = sub(a.budget_exhausted, b.budget_exhausted);
        d.kernel_modifies = sub(a.kernel_modifies, b.kernel_modifies);
      }
    }
    r.cqs.push_back(std::move(d));
  }
  return r;
}

std::string render_json(const IntervalReport& r) {
  using nlohmann::json;
  json j;
  j["interval_s"] = r.interval_s;
  j["drops"] = r.drops;
  json progs = json::array();
  for (const auto& p : r.programs) {
    json o{{"name", p.view.name},           {"attached", p.view.attached},
           {"reason", p.view.reason},       {"attach_type", p.attach_type},
           {"bpf_name", p.bpf_name},        {"run_time_ns", p.view.run_time_ns},
           {"run_count", p.view.run_count}, {"recursion_misses", p.view.recursion_misses}};
    if (p.view.run_count > 0) o["ns_per_run"] = ratio(p.view.run_time_ns, p.view.run_count);
    progs.push_back(std::move(o));
  }
  j["programs"] = std::move(progs);

  std::map<std::string, json> devices;
  json queues = json::array();
  for (const auto& q : r.queues) {
    const uint64_t events = q.events();
    const std::string& device = r.device_of(q);
    json o = exporters::queue_counters_to_json(q, device);  // the keys of GET /api/v1/state
    o["polls_per_second"] = per_s(q.polls, r.interval_s);
    o["packets_per_second"] = per_s(q.packets, r.interval_s);
    o["events_per_second"] = per_s(events, r.interval_s);
    o["packets_per_event"] = ratio(q.packets, events);
    if (q.has_bytes) o["bytes_per_second"] = per_s(q.bytes, r.interval_s);
    queues.push_back(std::move(o));
    json& d = devices[device];
    if (d.is_null())
      d = json{{"name", device},
               {"ifindex", q.key.ifindex},
               {"queues", 0},
               {"packets", 0},
               {"polls", 0}};
    d["queues"] = d["queues"].get<uint64_t>() + 1;
    d["packets"] = d["packets"].get<uint64_t>() + q.packets;
    d["polls"] = d["polls"].get<uint64_t>() + q.polls;
  }
  json devs = json::array();
  for (auto& [name, d] : devices) devs.push_back(std::move(d));
  j["devices"] = std::move(devs);
  j["queues"] = std::move(queues);

  json cqs = json::array();
  for (const auto& c : r.cqs) {
    json o = exporters::cq_counters_to_json(c);  // the keys of GET /api/v1/state
    o["events_per_second"] = per_s(c.events, r.interval_s);
    o["completions_per_second"] = per_s(c.completions, r.interval_s);
    o["completions_per_event"] = ratio(c.completions, c.events);
    cqs.push_back(std::move(o));
  }
  j["cqs"] = std::move(cqs);
  return j.dump(2);
}

std::string render_table(const IntervalReport& r) {
  std::string out = fmt::format("interval {:.3f} s\n\n", r.interval_s);
  out +=
      fmt::format("{:<16} {:>5} {:>8} {:>5} {:>10} {:>12} {:>10} {:>8} {:>12}\n", "DEVICE", "QUEUE",
                  "NAPI", "IRQ", "POLLS/s", "PACKETS/s", "EVENTS/s", "PKT/EV", "BYTES/s");
  for (const auto& q : r.queues) {
    out += fmt::format("{:<16} {:>5} {:>8} {:>5} {:>10.1f} {:>12.1f} {:>10.1f} {:>8.2f} {:>12}\n",
                       r.device_of(q), q.queue >= 0 ? fmt::format("{}", q.queue) : "-",
                       q.key.napi_id, q.irq >= 0 ? fmt::format("{}", q.irq) : "-",
                       per_s(q.polls, r.interval_s), per_s(q.packets, r.interval_s),
                       per_s(q.events(), r.interval_s), ratio(q.packets, q.events()),
                       q.has_bytes ? fmt::format("{:.1f}", per_s(q.bytes, r.interval_s)) : "-");
  }
  if (r.queues.empty()) out += "(no NAPI polled in this network namespace during the interval)\n";
  out += fmt::format("\n{:<12} {:>6} {:>18} {:>6} {:>5} {:>10} {:>14} {:>8}\n", "IBDEV", "CQ",
                     "POLL_CTX", "CQE", "VEC", "EVENTS/s", "COMPLETIONS/s", "CMP/EV");
  for (const auto& c : r.cqs) {
    out += fmt::format("{:<12} {:>6} {:>18} {:>6} {:>5} {:>10.1f} {:>14.1f} {:>8.2f}\n",
                       c.ibdev.empty() ? fmt::format("#{}", c.key.dev_index) : c.ibdev, c.key.cq_id,
                       exporters::poll_context_name(c.poll_ctx), c.nr_cqe, c.comp_vector,
                       per_s(c.events, r.interval_s), per_s(c.completions, r.interval_s),
                       ratio(c.completions, c.events));
  }
  if (r.cqs.empty()) out += "(no kernel CQ activity)\n";
  out += fmt::format("\n{:<26} {:<9} {:<8} {}\n", "PROGRAM", "ATTACHED", "TYPE",
                     "REASON / ns per run");
  for (const auto& p : r.programs) {
    std::string extra = p.view.reason;
    if (p.view.attached && p.view.run_count > 0) {
      extra = fmt::format("{:.1f} ns/run ({} runs)", ratio(p.view.run_time_ns, p.view.run_count),
                          p.view.run_count);
    }
    out += fmt::format("{:<26} {:<9} {:<8} {}\n", p.view.name, p.view.attached ? "yes" : "no",
                       p.attach_type.empty() ? "-" : p.attach_type, extra);
  }
  if (r.drops > 0)
    out += fmt::format("\nWARNING: {} events not recorded (BPF map/ring full)\n", r.drops);
  return out;
}

}  // namespace dimctl::cli
