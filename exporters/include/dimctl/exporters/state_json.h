// JSON rendering of ControllerState: the body of GET /api/v1/state, read back by `dimctl status`
// and `dimctl top`. Field names follow the model (and so the kernel's); enums are written as the
// names of dimctl/exporters/names.h. Optional values that are absent are left out (coalesce
// fields) or null (requested/applied/rdma_dim_enabled), never invented as 0. Both directions
// walk one field table per struct (state_fields.h): a key is written and read alike.
//
// Versioning: additive changes only; readers ignore unknown fields and default missing ones.
#pragma once

#include <nlohmann/json.hpp>

#include "dimctl/common/result.h"
#include "dimctl/seam/controller_state.h"

namespace dimctl::exporters {

nlohmann::json state_to_json(const seam::ControllerState& state);
nlohmann::json coalesce_to_json(const seam::Coalesce& c);
// One entry of the state's `cores` (what `dimctl trace costs --json` prints per CPU, with the
// same keys).
nlohmann::json core_to_json(const seam::CoreView& c);

// Inverse of state_to_json. Fails (code 0, context names the field) on wrong types or unknown
// enum names; missing fields keep their defaults.
Result<seam::ControllerState> state_from_json(const nlohmann::json& j);
Result<seam::ControllerState> state_from_json_text(std::string_view text);

}  // namespace dimctl::exporters
