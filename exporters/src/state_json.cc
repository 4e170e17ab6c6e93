#include "dimctl/exporters/state_json.h"

#include <string>

#include "dimctl/exporters/state_fields.h"
#include "json_reader.h"
#include "json_writer.h"

namespace dimctl::exporters {

using nlohmann::json;

json coalesce_to_json(const seam::Coalesce& c) {
  json j = json::object();
  JsonWriter w(j);
  fields(w, c);
  return j;
}

json core_to_json(const seam::CoreView& c) {
  json j = json::object();
  JsonWriter w(j);
  fields(w, c);
  return j;
}

json state_to_json(const seam::ControllerState& s) {
  json j = json::object();
  JsonWriter w(j);
  fields(w, s);
  return j;
}

Result<seam::ControllerState> state_from_json(const json& j) {
  try {
    if (!j.is_object()) throw JsonReadError{"$", "state is not a JSON object"};
    seam::ControllerState s;
    JsonReader r(j, "$");
    fields(r, s);
    return s;
  } catch (const JsonReadError& e) {
    return DIMCTL_FAIL(0, "state JSON: {}: {}", e.where, e.what);
  }
}

Result<seam::ControllerState> state_from_json_text(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DIMCTL_FAIL(0, "state JSON: not valid JSON");
  return state_from_json(j);
}

}  // namespace dimctl::exporters
