// dashboards/dimctl.json may only query what the exporter emits: every dimctl_ name in a panel,
// variable or annotation must be a family a render of the full fake state produces, label
// matchers must use that family's labels, counters only appear under rate()/increase() and
// every range is $__rate_interval. Also the Grafana conventions we promise (stable uid, tags,
// datasource variable). The example alert rules get the same metric check plus promtool, and
// docs/METRICS.md must list every metric of the catalogue.
#include <gtest/gtest.h>

#include <unistd.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "dimctl/exporters/state_collector.h"
#include "unit/exporters/fake_state.h"

#if !defined(DIMCTL_DASHBOARD) || !defined(DIMCTL_METRICS_MD) || !defined(DIMCTL_ALERTS)
#error "DIMCTL_DASHBOARD, DIMCTL_METRICS_MD and DIMCTL_ALERTS must name the checked files"
#endif

namespace dimctl::exporters {
namespace {

using nlohmann::json;

struct Family {
  prometheus::MetricType type;
  std::set<std::string> labels;
};

// What the exporter really emits, taken from a render (not from the catalogue alone).
std::map<std::string, Family> emitted() {
  auto state = std::make_shared<const seam::ControllerState>(testing::full_fake_state());
  auto c = StateCollector::create([state] { return state; });
  EXPECT_TRUE(c.ok());
  std::map<std::string, Family> out;
  for (const auto& f : (*c)->Collect()) {
    Family fam{f.type, {"instance", "job"}};  // added by Prometheus at scrape time
    for (const auto& m : f.metric) {
      for (const auto& l : m.label) fam.labels.insert(l.name);
    }
    out[f.name] = fam;
  }
  return out;
}

// Every PromQL string of the dashboard with a description of where it is.
void collect_queries(const json& j, const std::string& where,
                     std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string here = where + "." + it.key();
      if ((it.key() == "expr" || it.key() == "definition") && it->is_string()) {
        out.emplace_back(here, it->get<std::string>());
      } else if (it.key() == "query" && it->is_string() && j.value("type", "") != "datasource") {
        out.emplace_back(here, it->get<std::string>());
      } else {
        collect_queries(*it, here, out);
      }
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      collect_queries(j[i], where + "[" + std::to_string(i) + "]", out);
    }
  }
}

// `grafana`: ranges must be $__rate_interval (alert rules have no such variable).
std::vector<std::string> problems(const json& dash, const std::map<std::string, Family>& fams,
                                  bool grafana = true) {
  std::vector<std::string> out;
  std::vector<std::pair<std::string, std::string>> queries;
  collect_queries(dash, "$", queries);
  if (queries.empty()) out.push_back("no queries found");
  static const std::regex name_re(R"(\bdimctl_[a-zA-Z0-9_]+)");
  static const std::regex range_re(R"(\[([^\]]*)\])");
  for (const auto& [where, q] : queries) {
    bool any = false;
    for (auto it = std::sregex_iterator(q.begin(), q.end(), name_re); it != std::sregex_iterator();
         ++it) {
      any = true;
      const std::string name = it->str();
      auto f = fams.find(name);
      if (f == fams.end()) {
        out.push_back(where + ": " + name + " is not emitted by the exporter");
        continue;
      }
      // Function applied directly to this selector: "rate(" / "increase(" right before it.
      const std::string before = q.substr(0, static_cast<std::size_t>(it->position()));
      // label_values(selector, label) in variables only lists series: any type is fine there.
      const bool ranged =
          std::regex_search(before, std::regex(R"((rate|increase|changes|label_values)\(\s*$)"));
      const bool counter_fn = std::regex_search(before, std::regex(R"((rate|increase)\(\s*$)"));
      if (f->second.type == prometheus::MetricType::Counter && !ranged) {
        out.push_back(where + ": counter " + name + " used without rate()/increase()");
      }
      if (f->second.type != prometheus::MetricType::Counter && counter_fn) {
        out.push_back(where + ": rate()/increase() on gauge " + name);
      }
      // Label matchers right after the name: name{a="x",b=~"y"}.
      std::size_t end = static_cast<std::size_t>(it->position() + it->length());
      if (end < q.size() && q[end] == '{') {
        std::size_t close = q.find('}', end);
        std::string matchers = q.substr(end + 1, close - end - 1);
        static const std::regex label_re(R"(([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=))");
        for (auto m = std::sregex_iterator(matchers.begin(), matchers.end(), label_re);
             m != std::sregex_iterator(); ++m) {
          if (f->second.labels.count((*m)[1].str()) == 0) {
            out.push_back(where + ": " + name + " has no label " + (*m)[1].str());
          }
        }
      }
    }
    if (!any && where.find(".definition") == std::string::npos) {
      out.push_back(where + ": query references no dimctl_ metric: " + q);
    }
    for (auto r = std::sregex_iterator(q.begin(), q.end(), range_re); r != std::sregex_iterator();
         ++r) {
      if (grafana && (*r)[1].str() != "$__rate_interval") {
        out.push_back(where + ": range [" + (*r)[1].str() + "] instead of [$__rate_interval]");
      }
    }
  }
  return out;
}

json load_dashboard() {
  std::ifstream in(DIMCTL_DASHBOARD);
  EXPECT_TRUE(in.good()) << DIMCTL_DASHBOARD;
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "  " + x + "\n";
  return s;
}

TEST(Dashboard, QueriesOnlyWhatTheExporterEmits) {
  auto p = problems(load_dashboard(), emitted());
  EXPECT_TRUE(p.empty()) << join(p);
}

TEST(Dashboard, CheckerCatchesDrift) {
  json bad = {{"panels",
               {{{"targets",
                  {{{"expr", "rate(dimctl_napi_pakets_total[5m])"}},
                   {{"expr", "dimctl_napi_packets_total{device=~\"$device\",nic=\"x\"}"}},
                   {{"expr", "rate(dimctl_dim_profile_index[$__rate_interval])"}}}}}}}};
  auto p = problems(bad, emitted());
  const std::string all = join(p);
  EXPECT_NE(all.find("dimctl_napi_pakets_total is not emitted"), std::string::npos) << all;
  EXPECT_NE(all.find("range [5m]"), std::string::npos) << all;
  EXPECT_NE(all.find("counter dimctl_napi_packets_total used without rate"), std::string::npos)
      << all;
  EXPECT_NE(all.find("has no label nic"), std::string::npos) << all;
  EXPECT_NE(all.find("rate()/increase() on gauge dimctl_dim_profile_index"), std::string::npos)
      << all;
}

TEST(Dashboard, GrafanaConventions) {
  json d = load_dashboard();
  EXPECT_EQ(d["uid"], "dimctl-overview");  // stable: links and provisioning depend on it
  EXPECT_NE(std::find(d["tags"].begin(), d["tags"].end(), "dimctl"), d["tags"].end());
  std::map<std::string, json> vars;
  for (const auto& v : d["templating"]["list"]) vars[v["name"]] = v;
  ASSERT_TRUE(vars.count("datasource"));
  EXPECT_EQ(vars["datasource"]["type"], "datasource");
  EXPECT_EQ(vars["datasource"]["query"], "prometheus");
  for (const char* v : {"instance", "device", "queue"}) EXPECT_TRUE(vars.count(v)) << v;
  std::set<int> ids;
  std::size_t with_targets = 0;
  for (const auto& p : d["panels"]) {
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate panel id " << p["id"];
    if (p["type"] == "row") continue;
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << p["title"];
    ASSERT_FALSE(p["targets"].empty()) << p["title"];
    for (const auto& t : p["targets"]) EXPECT_EQ(t["datasource"]["uid"], "${datasource}");
    ++with_targets;
  }
  EXPECT_GE(with_targets, 15u);
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The example alerting rules: promtool accepts them and they query only emitted metrics.
TEST(Alerts, RulesQueryOnlyWhatTheExporterEmits) {
  const std::string text = read_file(DIMCTL_ALERTS);
  json exprs = json::array();
  static const std::regex expr_re(R"(^\s*expr:\s*(.+)$)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, expr_re)) exprs.push_back({{"expr", m[1].str()}});
  }
  ASSERT_GE(exprs.size(), 5u);
  auto p = problems(json{{"rules", exprs}}, emitted(), /*grafana=*/false);
  EXPECT_TRUE(p.empty()) << join(p);

  const char* promtool = "/usr/bin/promtool";
  if (access(promtool, X_OK) != 0) GTEST_SKIP() << "promtool not installed at " << promtool;
  std::string cmd = std::string(promtool) + " check rules " + DIMCTL_ALERTS + " >/dev/null 2>&1";
  EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
}

TEST(MetricsDoc, ListsEveryMetric) {
  std::ifstream in(DIMCTL_METRICS_MD);
  ASSERT_TRUE(in.good()) << DIMCTL_METRICS_MD;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& spec : metric_catalogue()) {
    EXPECT_NE(doc.find(std::string("| `") + spec.name + "` |"), std::string::npos)
        << spec.name << " is not documented in docs/METRICS.md";
  }
}

}  // namespace
}  // namespace dimctl::exporters
