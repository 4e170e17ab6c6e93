#include "dimctl/exporters/counters_json.h"

#include "dimctl/exporters/names.h"

namespace dimctl::exporters {

using nlohmann::json;

json queue_counters_to_json(const model::QueueCounters& c, const std::string& device) {
  return json{
      {"device", device},
      {"queue", c.queue},
      {"queue_label", queue_label(c)},
      {"ifindex", c.key.ifindex},
      {"napi_id", c.key.napi_id},
      {"irq", c.irq},
      {"cpu", c.cpu != model::QueueCounters::kNoCpu ? json(c.cpu) : json(nullptr)},
      {"polls", c.polls},
      {"events", c.events()},
      {"packets", c.packets},
      {"budget_exhausted", c.budget_exhausted},
      {"empty_polls", c.empty_polls},
      {"has_bytes", c.has_bytes},
      {"bytes", c.has_bytes ? json(c.bytes) : json(nullptr)},
  };
}

json cq_counters_to_json(const model::CqCounters& c) {
  return json{
      {"device", c.ibdev},
      {"dev_index", c.key.dev_index},
      {"cq", c.key.cq_id},
      {"poll_ctx", poll_context_name(c.poll_ctx)},
      {"nr_cqe", c.nr_cqe},
      {"comp_vector", c.comp_vector},
      {"schedules", c.schedules},
      {"reschedules", c.reschedules},
      {"events", c.events},
      {"polls", c.polls},
      {"completions", c.completions},
      {"poll_errors", c.poll_errors},
      {"kernel_modifies", c.kernel_modifies},
      {"kernel_comps", c.kernel_comps},
      {"kernel_usec", c.kernel_usec},
  };
}

}  // namespace dimctl::exporters
