#include "dimctl/exporters/counters_json.h"

#include "dimctl/exporters/state_fields.h"
#include "json_writer.h"

namespace dimctl::exporters {

using nlohmann::json;

json queue_counters_to_json(const seam::QueueCounters& c, const std::string& device) {
  json o = json::object();
  JsonWriter w(o);
  fields(w, c, device);
  return o;
}

json cq_counters_to_json(const seam::CqCounters& c) {
  json o = json::object();
  JsonWriter w(o);
  fields(w, c);
  return o;
}

}  // namespace dimctl::exporters
