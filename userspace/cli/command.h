// Sub-command registry for the dimctl executable.
//
// Each cmd_<name>.cc defines one sub-command and registers it with a static Registrar, so
// commands are added without editing main.cc. The registrar's setup function adds the
// sub-command to CLI11 and returns the function that runs it after parsing; that function
// returns the process exit code (dimctl/common/exit_codes.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dimctl::cli {

using Runner = std::function<int()>;
// Adds the sub-command to `app` and returns it; `run` is set to what executes the command.
using Setup = std::function<CLI::App*(CLI::App& app, Runner& run)>;

struct CommandEntry {
  std::string name;
  Setup setup;
};

std::vector<CommandEntry>& command_registry();

struct Registrar {
  Registrar(std::string name, Setup setup) {
    command_registry().push_back({std::move(name), std::move(setup)});
  }
};

}  // namespace dimctl::cli
