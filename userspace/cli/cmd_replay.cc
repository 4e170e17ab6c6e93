// `dimctl replay [FILE]`: run net DIM or RDMA DIM over a recorded sample file (format in
// dimctl/replay/replay.h) and print the decision state after every sample.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <memory>

#include "command.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/replay/replay.h"

namespace dimctl::cli {
namespace {

struct ReplayArgs {
  std::string algo = "net";
  std::string mode = "eqe";
  std::string dir = "rx";
  int start_profile = 0;
  uint32_t apply_delay = 0;
  std::string file = "-";
  CLI::Option* mode_opt = nullptr;
  CLI::Option* dir_opt = nullptr;
  CLI::Option* start_opt = nullptr;
};

int run(const ReplayArgs& a) {
  replay::ReplayOptions opts;
  opts.algo = a.algo == "rdma" ? replay::Algo::kRdma : replay::Algo::kNet;
  if (opts.algo == replay::Algo::kRdma) {
    for (const CLI::Option* o : {a.mode_opt, a.dir_opt, a.start_opt}) {
      if (o->count() > 0) {
        std::cerr << "dimctl replay: " << o->get_name() << " applies to --algo net only\n";
        return kExitUsage;
      }
    }
  }
  opts.mode = a.mode == "cqe" ? dim::CqPeriodMode::kCqe : dim::CqPeriodMode::kEqe;
  opts.dir = a.dir == "tx" ? dim::Direction::kTx : dim::Direction::kRx;
  opts.start_profile = static_cast<uint8_t>(a.start_profile);
  opts.apply_delay = a.apply_delay;
  if (a.file == "-") {
    opts.source_name = "<stdin>";
    return replay::run_replay(std::cin, std::cout, std::cerr, opts);
  }
  std::ifstream in(a.file);
  if (!in) {
    std::cerr << "dimctl replay: cannot open " << a.file << "\n";
    return kExitUsage;
  }
  opts.source_name = a.file;
  return replay::run_replay(in, std::cout, std::cerr, opts);
}

const Registrar kReplay("replay", [](CLI::App& app, Runner& runner) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* sub = app.add_subcommand(
      "replay", "Run net DIM or RDMA DIM over a recorded sample file and print each decision");
  sub->add_option("--algo", args->algo, "net (net_dim per sample) or rdma (rdma_dim per event)")
      ->check(CLI::IsMember({"net", "rdma"}))
      ->capture_default_str();
  args->mode_opt = sub->add_option("--mode", args->mode, "net profile table: eqe or cqe")
                       ->check(CLI::IsMember({"eqe", "cqe"}))
                       ->capture_default_str();
  args->dir_opt = sub->add_option("--dir", args->dir, "net profile table: rx or tx")
                      ->check(CLI::IsMember({"rx", "tx"}))
                      ->capture_default_str();
  args->start_opt =
      sub->add_option("--start-profile", args->start_profile, "net: initial profile index")
          ->check(CLI::Range(0, 4))
          ->capture_default_str();
  sub->add_option("--apply-delay", args->apply_delay,
                  "samples a decided change stays pending before it is applied")
      ->capture_default_str();
  sub->add_option("file", args->file, "sample file ('-' = stdin)")->capture_default_str();
  runner = [args] { return run(*args); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
