// dimctl: observable, controllable interrupt moderation. Dispatches to the registered
// sub-commands (see command.h). Usage errors exit 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "command.h"
#include "dimctl/common/exit_codes.h"

namespace dimctl::cli {
std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}
}  // namespace dimctl::cli

int main(int argc, char** argv) {
  using namespace dimctl;
  CLI::App app{
      "dimctl: see and steer interrupt moderation (net DIM, RDMA DIM) per queue and per CQ"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(DIMCTL_VERSION));

  auto& registry = cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, cli::Runner>> commands;
  commands.reserve(registry.size());
  for (auto& entry : registry) {
    cli::Runner run;
    CLI::App* sub = entry.setup(app, run);
    commands.emplace_back(sub, std::move(run));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  for (auto& [sub, run] : commands) {
    if (sub->parsed()) return run();
  }
  return kExitUsage;
}
