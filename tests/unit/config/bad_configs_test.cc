// Every file in bad/ must be refused with the error its header announces:
//   # expect: <substring of the reason>        (required)
//   # expect-line: <line the error must name>  (required)
//   # expect-path: <key path the error names>  (optional)
//   # schema: reject                           (read by schema_check.py only)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dimctl/config/config.h"

namespace dimctl::config {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> bad_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(DIMCTL_CONFIG_TEST_DIR) / "bad"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Header {
  std::string expect;
  int line = -1;
  std::optional<std::string> path;
};

Header read_header(const std::string& file) {
  Header h;
  std::ifstream in(file);
  std::string l;
  while (std::getline(in, l) && l.rfind("# ", 0) == 0) {
    auto value = [&](std::string_view key) -> std::optional<std::string> {
      if (l.rfind(key, 0) != 0) return std::nullopt;
      return l.substr(key.size());
    };
    if (auto v = value("# expect: ")) h.expect = *v;
    if (auto v = value("# expect-line: ")) h.line = std::stoi(*v);
    if (auto v = value("# expect-path: ")) h.path = *v;
  }
  return h;
}

class BadConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(BadConfig, IsRefusedWithTheAnnouncedError) {
  const std::string file = GetParam();
  Header h = read_header(file);
  ASSERT_FALSE(h.expect.empty()) << file << ": missing '# expect:' header";
  ASSERT_GT(h.line, 0) << file << ": missing '# expect-line:' header";

  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  Config cfg;
  std::vector<Diagnostic> diags;
  ASSERT_FALSE(parse_config_diagnostics(text.str(), file, cfg, diags)) << file << " was accepted";
  ASSERT_FALSE(diags.empty());
  // One mistake, one error: a bad file that also trips unrelated checks would hide regressions.
  EXPECT_EQ(diags.size(), 1u) << diags[0].to_string() << "\n... and " << diags.size() - 1
                              << " more, last: " << diags.back().to_string();
  const Diagnostic& d = diags[0];
  EXPECT_NE(d.reason.find(h.expect), std::string::npos)
      << "expected '" << h.expect << "' in: " << d.to_string();
  EXPECT_EQ(d.line, h.line) << d.to_string();
  EXPECT_GT(d.column, 0) << d.to_string();
  if (h.path) {
    EXPECT_EQ(d.path, *h.path) << d.to_string();
  }

  // The Result API carries the same text, "file:line:column: path: reason".
  auto r = load_config(file);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), 0);
  const std::string prefix = fmt::format("{}:{}:{}: ", file, d.line, d.column);
  EXPECT_EQ(r.error().context().rfind(prefix, 0), 0u) << r.error().context();
  EXPECT_NE(r.error().context().find(h.expect), std::string::npos) << r.error().context();
}

INSTANTIATE_TEST_SUITE_P(Files, BadConfig, ::testing::ValuesIn(bad_files()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = fs::path(p.param).stem().string();
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(BadConfigCorpus, HasAtLeastThirtyDistinctCases) {
  auto files = bad_files();
  EXPECT_GE(files.size(), 30u);
  std::set<std::string> expectations;
  for (const auto& f : files)
    expectations.insert(read_header(f).expect + "@" + fs::path(f).stem().string());
  EXPECT_EQ(expectations.size(), files.size());
}

}  // namespace
}  // namespace dimctl::config
