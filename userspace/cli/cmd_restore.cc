// dimctl restore [--state-file PATH] [--force]: write back the original settings recorded in
// the state file (ethtool coalescing, RDMA DIM switches, per-NAPI software moderation), after a
// crash or SIGKILL of the daemon (which restores by itself on a normal exit). Devices and NAPIs
// that no longer exist are reported and dropped; the file is deleted when everything is
// restored and kept (with what failed) otherwise.
//
// Exit 0 when restored or nothing to do, 1 on failures (kernel refused, read-back differs, the
// writer is still running), 2 on usage errors or a corrupt state file.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "dimctl/actuators/ethtool_netlink.h"
#include "dimctl/actuators/napi_netlink.h"
#include "dimctl/actuators/rdma_netlink.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/state/json_originals_store.h"

namespace dimctl::cli {
namespace {

struct Options {
  std::string state_file = state::kDefaultStatePath;
  bool force = false;
};

int run_restore(const Options& opt) {
  state::JsonOriginalsStore store(opt.state_file);
  if (auto l = store.load(); !l) {
    std::cerr << fmt::format("dimctl restore: {}\n", l.error().message());
    return l.error().code() == 0 ? kExitUsage : kExitFailure;
  }
  if (store.originals().empty()) {
    std::cout << fmt::format("nothing to restore ({} records no originals)\n", opt.state_file);
    return kExitOk;
  }
  if (const auto& w = store.writer();
      w && w->pid != getpid() && state::JsonOriginalsStore::writer_alive(*w) && !opt.force) {
    std::cerr << fmt::format(
        "dimctl restore: {} belongs to a running dimctl (pid {}, started {}); stop it (it "
        "restores on exit) or pass --force\n",
        opt.state_file, w->pid, w->start_time);
    return kExitFailure;
  }
  auto net = actuators::EthtoolNetlink::open();
  if (!net) {
    std::cerr << fmt::format("dimctl restore: {}\n", net.error().message());
    return kExitFailure;
  }
  actuators::RdmaNetlink rdma;
  // Opened only for a file with NAPI records: without it they fail and stay in the file.
  std::unique_ptr<actuators::NapiNetlink> napi;
  if (!store.originals().napi.empty()) {
    auto n = actuators::NapiNetlink::open();
    if (n) {
      napi = std::move(*n);
    } else {
      std::cerr << fmt::format("dimctl restore: {}\n", n.error().message());
    }
  }
  const state::RestoreReport rep = store.restore_all(**net, &rdma, napi.get());
  for (const auto& r : rep.results) {
    std::cout << fmt::format("{:<8} {}: {}\n", state::to_string(r.outcome), r.device, r.detail);
  }
  if (rep.file_error) {
    std::cerr << fmt::format("dimctl restore: {}\n", rep.file_error->message());
  }
  if (rep.file_removed) {
    std::cout << fmt::format("all originals restored; removed {}\n", opt.state_file);
  } else if (!rep.all_restored()) {
    std::cout << fmt::format("some originals were not restored; they are kept in {}\n",
                             opt.state_file);
  }
  return rep.all_restored() ? kExitOk : kExitFailure;
}

const Registrar registrar("restore", [](CLI::App& app, Runner& runner) {
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "restore",
      "Restore the original coalescing / RDMA DIM / NAPI settings recorded in the state file");
  sub->add_option("--state-file", opt->state_file, "State file written by the daemon")
      ->capture_default_str();
  sub->add_flag("--force", opt->force, "Restore even if the recorded writer is still running");
  runner = [opt] { return run_restore(*opt); };
  return sub;
});

}  // namespace
}  // namespace dimctl::cli
