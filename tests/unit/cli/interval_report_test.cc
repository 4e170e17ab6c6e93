// `dimctl list`'s report (userspace/cli/interval_report.h): deltas over the interval, rates, a
// new incarnation counted from zero, and the JSON keys it shares with GET /api/v1/state.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dimctl/exporters/counters_json.h"
#include "interval_report.h"

namespace dimctl::cli {
namespace {

using collector::ProgramStatus;
using ::testing::HasSubstr;

// A queue of "va": device_ix 0 of a snapshot whose devices are {"va"}.
seam::QueueCounters queue(uint32_t napi, uint64_t polls, uint64_t packets, uint64_t exhausted) {
  seam::QueueCounters q;
  q.key = {3, napi};
  q.device_ix = 0;
  q.polls = polls;
  q.packets = packets;
  q.budget_exhausted = exhausted;
  return q;
}

TEST(IntervalReport, DeltasRatesAndJson) {
  seam::Snapshot a, b;
  a.time_ns = 1'000'000'000;
  b.time_ns = 3'000'000'000;
  a.queues = {queue(300, 10, 100, 1)};
  a.devices = {"va"};
  b.queues = {queue(300, 110, 2100, 11), queue(301, 4, 8, 0)};
  b.devices = {"va"};
  seam::CqCounters c0;
  c0.key = {0, 5};
  c0.ibdev = "rxe0";
  c0.events = 10;
  c0.completions = 40;
  c0.budget_exhausted = 3;
  seam::CqCounters c1 = c0;
  c1.events = 30;
  c1.completions = 120;
  c1.budget_exhausted = 7;
  c1.kernel_modifies = 2;
  a.cqs = {c0};
  b.cqs = {c1};
  ProgramStatus ps;
  ps.view = {"napi:napi_poll", true, "", 2000, 100};
  ps.attach_type = "tp_btf";
  auto r = make_interval_report(a, b, {ps});
  EXPECT_DOUBLE_EQ(r.interval_s, 2.0);
  ASSERT_EQ(r.queues.size(), 2u);
  EXPECT_EQ(r.queues[0].polls, 100u);
  EXPECT_EQ(r.queues[0].packets, 2000u);
  EXPECT_EQ(r.queues[0].events(), 90u);
  EXPECT_EQ(r.queues[1].packets, 8u);  // new key: from zero
  ASSERT_EQ(r.cqs.size(), 1u);
  EXPECT_EQ(r.cqs[0].events, 20u);
  EXPECT_EQ(r.cqs[0].completions, 80u);
  EXPECT_EQ(r.cqs[0].budget_exhausted, 4u);

  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_DOUBLE_EQ(j["interval_s"].get<double>(), 2.0);
  EXPECT_EQ(j["queues"][0]["packets"].get<uint64_t>(), 2000u);
  EXPECT_EQ(j["queues"][0]["events"].get<uint64_t>(), 90u);
  EXPECT_EQ(j["queues"][0]["budget_exhausted"].get<uint64_t>(), 10u);
  EXPECT_DOUBLE_EQ(j["queues"][0]["packets_per_second"].get<double>(), 1000.0);
  EXPECT_EQ(j["queues"][0]["has_bytes"], false);
  EXPECT_TRUE(j["queues"][0]["bytes"].is_null());  // unknown, not 0
  EXPECT_FALSE(j["queues"][0].contains("bytes_per_second"));
  EXPECT_EQ(j["cqs"][0]["completions"].get<uint64_t>(), 80u);
  EXPECT_EQ(j["cqs"][0]["budget_exhausted"].get<uint64_t>(), 4u);
  EXPECT_DOUBLE_EQ(j["cqs"][0]["completions_per_event"].get<double>(), 4.0);
  EXPECT_EQ(j["cqs"][0]["poll_ctx"], "direct");
  EXPECT_EQ(j["cqs"][0]["device"], "rxe0");
  EXPECT_EQ(j["cqs"][0]["cq"].get<uint32_t>(), 5u);
  EXPECT_EQ(j["programs"][0]["name"], "napi:napi_poll");
  EXPECT_DOUBLE_EQ(j["programs"][0]["ns_per_run"].get<double>(), 20.0);
  EXPECT_EQ(j["devices"][0]["queues"].get<int>(), 2);
  EXPECT_EQ(j["devices"][0]["name"], "va");
  EXPECT_EQ(j["queues"][1]["device"], "va");

  const std::string table = render_table(r);
  EXPECT_THAT(table, HasSubstr("va"));
  EXPECT_THAT(table, HasSubstr("rxe0"));
  EXPECT_THAT(table, HasSubstr("napi:napi_poll"));
}

// `dimctl list --json` and GET /api/v1/state render the same counter under the same key: every
// key of the shared rendering is in the list's objects, with the interval's value.
TEST(IntervalReport, JsonUsesTheStateApiKeys) {
  seam::Snapshot a, b;
  b.time_ns = 1'000'000'000;
  seam::QueueCounters q = queue(300, 10, 100, 1);
  q.has_bytes = true;
  q.bytes = 1500;
  q.cpu = 1;
  b.queues = {q};
  b.devices = {"va"};
  seam::CqCounters c;
  c.key = {1, 42};
  c.ibdev = "mlx5_0";
  c.poll_ctx = seam::PollContext::kWorkqueue;
  c.nr_cqe = 256;
  c.comp_vector = 3;
  c.schedules = 1;
  c.reschedules = 2;
  c.events = 3;
  c.polls = 4;
  c.completions = 5;
  c.poll_errors = 6;
  c.budget_exhausted = 10;
  c.kernel_modifies = 7;
  c.kernel_comps = 8;
  c.kernel_usec = 9;
  c.cpu = 2;
  b.cqs = {c};
  const auto j = nlohmann::json::parse(render_json(make_interval_report(a, b, {})));
  const auto jq = exporters::queue_counters_to_json(q, "va");
  const auto jc = exporters::cq_counters_to_json(c);
  EXPECT_EQ(jq.size(), 14u);
  EXPECT_EQ(j["queues"][0]["cpu"], 1);
  EXPECT_EQ(jc.size(), 17u);
  EXPECT_EQ(j["cqs"][0]["cpu"], 2);
  for (const auto& [key, value] : jq.items()) EXPECT_EQ(j["queues"][0][key], value) << key;
  for (const auto& [key, value] : jc.items()) EXPECT_EQ(j["cqs"][0][key], value) << key;
  EXPECT_EQ(j["queues"][0]["bytes"].get<uint64_t>(), 1500u);
  EXPECT_DOUBLE_EQ(j["queues"][0]["bytes_per_second"].get<double>(), 1500.0);
  EXPECT_EQ(j["cqs"][0]["cq"].get<uint32_t>(), 42u);
  EXPECT_EQ(j["cqs"][0]["device"], "mlx5_0");
  EXPECT_EQ(j["cqs"][0]["poll_ctx"], "workqueue");
  EXPECT_EQ(j["cqs"][0]["kernel_usec"].get<uint16_t>(), 9u);
  for (const char* old_key : {"ibdev", "cq_id"}) EXPECT_FALSE(j["cqs"][0].contains(old_key));
}

TEST(IntervalReport, CountersGoingBackwardsAreANewIncarnation) {
  seam::Snapshot a, b;
  a.time_ns = 0;
  b.time_ns = 1'000'000'000;
  a.queues = {queue(300, 100, 1000, 0)};
  b.queues = {queue(300, 5, 50, 0)};
  auto r = make_interval_report(a, b, {});
  ASSERT_EQ(r.queues.size(), 1u);
  EXPECT_EQ(r.queues[0].packets, 50u);
}

}  // namespace
}  // namespace dimctl::cli
