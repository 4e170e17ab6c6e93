// `dimctl trace show FILE...`: a trace file (docs/TRACE.md) as text — the header of each file,
// per frame the per-queue and per-CQ deltas (quiet queues counted, not listed), and totals with
// rates. Several files, or --rotation-set, are read in order as one trace. A truncated last frame
// is a warning on stderr; a corrupt or unreadable file exits 2 after the totals of what was read.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "dimctl/common/exit_codes.h"
#include "dimctl/trace/rotation.h"
#include "dimctl/trace/trace_reader.h"
#include "dimctl/trace/trace_text.h"

namespace dimctl::cli {
namespace {

struct ShowArgs {
  std::vector<std::string> files;
  bool summary = false;
  bool rotation_set = false;
};

int run_show(const ShowArgs& a) {
  std::vector<std::string> files;
  for (const auto& f : a.files) {
    if (!a.rotation_set) {
      files.push_back(f);
      continue;
    }
    auto set = trace::rotation_set(f);
    if (!set) {
      std::cerr << "dimctl trace show: " << set.error().message() << "\n";
      return kExitUsage;
    }
    files.insert(files.end(), set->begin(), set->end());
  }
  trace::TraceShow show(trace::ShowOptions{.frames = !a.summary});
  std::string out;
  int rc = kExitOk;
  for (const auto& f : files) {
    auto r = trace::TraceReader::open(f);
    if (!r) {
      std::cerr << "dimctl trace show: " << r.error().message() << "\n";
      rc = kExitUsage;
      break;
    }
    std::cout << trace::TraceShow::header_text(r->header(), f, r->size());
    for (;;) {
      auto frame = r->next();
      if (!frame) {
        std::cout << std::flush;
        std::cerr << "dimctl trace show: " << frame.error().message() << "\n";
        rc = kExitUsage;
        break;
      }
      if (!frame->has_value()) break;
      out.clear();
      show.frame(**frame, out);
      std::cout << out;
    }
    if (r->warning()) std::cerr << "dimctl trace show: warning: " << *r->warning() << "\n";
    if (rc != kExitOk) break;
  }
  std::cout << show.summary();
  return rc;
}

const Registrar kRegisterTrace{
    "trace", [](CLI::App& app, Runner& run) {
      auto a = std::make_shared<ShowArgs>();
      CLI::App* sub = app.add_subcommand("trace", "Inspect trace files written by dimctl record");
      sub->require_subcommand(1);
      CLI::App* show = sub->add_subcommand(
          "show", "Print a trace: header, per-frame per-queue deltas, totals and rates");
      show->add_option("FILE", a->files, "Trace file(s), read in order as one trace")->required();
      show->add_flag("--summary", a->summary, "Header and totals only, no per-frame lines");
      show->add_flag("--rotation-set", a->rotation_set,
                     "Read FILE's whole rotation set, oldest first (FILE.N .. FILE.1, FILE)");
      run = [a] { return run_show(*a); };
      return sub;
    }};

}  // namespace
}  // namespace dimctl::cli
