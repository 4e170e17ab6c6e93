// The state JSON's one field table both ways (dimctl/exporters/state_fields.h): the document of a
// state with every field set is the one the separate reader and writer produced before the
// table (testdata/every_field_state.json, written at 13e57d2), every key written is read back
// into the field it came from, and nothing is read that is not written.
//
// A new field: one entry in state_fields.h, a value in every_field_state.h, and its key in
// testdata/every_field_state.json (DocumentIsTheFixture prints the new document).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dimctl/exporters/names.h"
#include "dimctl/exporters/state_fields.h"
#include "dimctl/exporters/state_json.h"
#include "json_reader.h"
#include "unit/exporters/every_field_state.h"

namespace dimctl::exporters {
namespace {

using nlohmann::json;

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every key of `j`, nested ones too, by its path as JsonReader names it ("$.queues[0].dim.ppms"),
// with its JSON pointer.
struct Key {
  std::string path;
  json::json_pointer pointer;
};
void keys_of(const json& j, const std::string& path, const json::json_pointer& pointer,
             std::vector<Key>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      Key key{path + "." + k, pointer / k};
      out.push_back(key);
      keys_of(v, key.path, key.pointer, out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      keys_of(j[i], path + "[" + std::to_string(i) + "]", pointer / i, out);
    }
  }
}
std::vector<Key> keys_of(const json& j) {
  std::vector<Key> out;
  keys_of(j, "$", json::json_pointer(), out);
  return out;
}

// Written only, computed from fields that are read (state_fields.h, v.derived).
bool derived(const std::string& path) {
  static const std::regex kDerived(
      R"(\$\.queues\[\d+\]\.(queue_label|events)|.*\.dim\.tune_state_name)");
  return std::regex_match(path, kDerived);
}

// Other values of the same type for `v`, the enums' names among them.
std::vector<json> other_values(const json& v) {
  if (v.is_boolean()) return {!v.get<bool>()};
  if (v.is_number_unsigned()) return {v.get<uint64_t>() + 1};
  if (v.is_number_integer()) return {v.get<int64_t>() + 1};
  if (v.is_number_float()) return {v.get<double>() + 0.5};
  if (!v.is_string()) return {};
  std::vector<json> out{v.get<std::string>() + "x"};
  for (int i = 0; i < 8; ++i) {
    const auto e = static_cast<uint8_t>(i);
    for (std::string_view name :
         {mode_name(static_cast<seam::Mode>(e)), algorithm_name(static_cast<seam::Algorithm>(e)),
          device_kind_name(static_cast<seam::DeviceKind>(e)),
          method_name(static_cast<seam::Method>(e)),
          poll_context_name(static_cast<seam::PollContext>(e)),
          cost_confidence_name(static_cast<dim::CostConfidence>(e)),
          objective_name(static_cast<dim::Objective>(e))}) {
      if (name != v.get<std::string>()) out.emplace_back(name);
    }
  }
  return out;
}

TEST(StateJsonTable, DocumentIsTheFixture) {
  const std::string text = state_to_json(testing::every_field_state()).dump(2) + "\n";
  EXPECT_EQ(text, read_file(DIMCTL_STATE_FIXTURE)) << "the document is now:\n" << text;
  EXPECT_EQ(state_to_json(seam::ControllerState{}).dump(),
            R"({"bpf_drops":[],"config_path":"","cores":[],"cqs":[],"default_mode":"shadow",)"
            R"("devices":[],"last_loop_seconds":0.0,"loops_total":0,)"
            R"("model_cost_tables_built_total":0,"programs":[],"queues":[],"ready":false,)"
            R"("sample_errors_total":0,"time_ns":0})");
}

TEST(StateJsonTable, EveryFieldRoundTrips) {
  const json j = state_to_json(testing::every_field_state());
  auto back = state_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(state_to_json(*back), j);
  EXPECT_EQ(back->queue_comparisons, testing::every_field_state().queue_comparisons);
  EXPECT_EQ(back->cq_comparisons, testing::every_field_state().cq_comparisons);
  EXPECT_EQ(back->devices[0].requested, testing::every_field_state().devices[0].requested);
  EXPECT_EQ(back->devices[1].applied, testing::every_field_state().devices[1].applied);
}

// One core alone (`dimctl trace costs --json`) is exactly its entry in the state's `cores`.
TEST(StateJsonTable, ACoreAloneIsItsEntryInTheState) {
  const seam::ControllerState s = testing::every_field_state();
  ASSERT_EQ(s.cores.size(), 1u);
  EXPECT_EQ(core_to_json(s.cores[0]), state_to_json(s)["cores"][0]);
  EXPECT_EQ(core_to_json(s.cores[0])["estimate"]["handler_ns"], s.cores[0].estimate.handler_ns);
}

// Written but not read: a key whose value, changed, does not come back changed.
TEST(StateJsonTable, EveryKeyWrittenIsReadIntoItsField) {
  const json j = state_to_json(testing::every_field_state());
  int values = 0;
  int mutated = 0;
  for (const Key& k : keys_of(j)) {
    const json& was = j[k.pointer];
    if (was.is_structured() || was.is_null() || derived(k.path)) continue;
    ++values;
    for (const json& value : other_values(was)) {
      json changed = j;
      changed[k.pointer] = value;
      auto back = state_from_json(changed);
      if (!back.ok()) continue;  // not a name of this key's enum
      EXPECT_EQ(state_to_json(*back)[k.pointer], value)
          << k.path << " is written but not read (back into it)";
      ++mutated;
      break;
    }
  }
  EXPECT_EQ(mutated, values) << "values no other value could replace";
  EXPECT_GT(values, 200);
}

// Derived keys are computed from the fields they derive from, whatever the document says.
TEST(StateJsonTable, DerivedKeysAreNotRead) {
  json j = state_to_json(testing::every_field_state());
  j["queues"][0]["queue_label"] = "napi1";
  j["queues"][0]["events"] = 1;
  j["cqs"][0]["dim"]["tune_state_name"] = "parking_tired";
  auto back = state_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(state_to_json(*back), state_to_json(testing::every_field_state()));
}

// Read but not written, and written but never looked up (nulls included). By key, whichever entry
// of an array: a coalesce parameter the driver lacks is left out of one device, not all.
TEST(StateJsonTable, ReaderLooksUpExactlyTheKeysWritten) {
  const json j = state_to_json(testing::every_field_state());
  std::vector<std::string> consulted;
  seam::ControllerState s;
  JsonReader reader(j, "$", &consulted);
  fields(reader, s);
  static const std::regex kIndex(R"(\[\d+\])");
  std::set<std::string> written;
  for (const Key& k : keys_of(j)) {
    if (!derived(k.path)) written.insert(std::regex_replace(k.path, kIndex, "[]"));
  }
  std::set<std::string> read;
  for (const std::string& path : consulted) read.insert(std::regex_replace(path, kIndex, "[]"));
  for (const std::string& path : read) {
    EXPECT_TRUE(written.count(path)) << path << " is read but not written";
  }
  for (const std::string& path : written) {
    EXPECT_TRUE(read.count(path)) << path << " is written but not read";
  }
  EXPECT_EQ(std::set<std::string>(consulted.begin(), consulted.end()).size(), consulted.size())
      << "a key looked up twice";
}

TEST(StateJsonTable, WrongTypesNameTheirPath) {
  const json j = state_to_json(testing::every_field_state());
  for (const char* pointer :
       {"/queues/0/dim/verdicts_total", "/devices/0/requested", "/cqs/0/compare"}) {
    json bad = j;
    bad[json::json_pointer(pointer)] = 3;
    auto r = state_from_json(bad);
    ASSERT_FALSE(r.ok()) << pointer;
    EXPECT_NE(r.error().message().find("not an object"), std::string::npos) << r.error().message();
  }
  json bad = j;
  bad["bpf_drops"] = json::object();
  auto r = state_from_json(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("$.bpf_drops: not an array"), std::string::npos)
      << r.error().message();
  bad = j;
  bad["cqs"][0]["poll_ctx"] = "interrupt";
  r = state_from_json(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("$.cqs[0].poll_ctx: unknown value \"interrupt\""),
            std::string::npos)
      << r.error().message();
  bad = j;
  bad["devices"][0]["applied"]["use_cqe_mode_tx"] = "yes";
  r = state_from_json(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("$.devices[0].applied.use_cqe_mode_tx"), std::string::npos)
      << r.error().message();
}

}  // namespace
}  // namespace dimctl::exporters
