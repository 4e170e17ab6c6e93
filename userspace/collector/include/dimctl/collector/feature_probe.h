// FeatureProbe: what the running kernel offers to the collector (BTF, modules, tracepoints,
// BPF stats). Its own interface so tests can force answers; KernelFeatureProbe asks the kernel.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dimctl::collector {

class FeatureProbe {
 public:
  virtual ~FeatureProbe() = default;
  // vmlinux BTF is present (/sys/kernel/btf/vmlinux): CO-RE against the core kernel works.
  virtual bool vmlinux_btf() const = 0;
  // Module `module` is loaded (or built in).
  virtual bool module_loaded(std::string_view module) const = 0;
  // The module has BTF (/sys/kernel/btf/<module>): CO-RE against its types works.
  virtual bool module_btf(std::string_view module) const = 0;
  // BTF (vmlinux when module is empty, else the module's split BTF) describes tracepoint `tp`
  // (a `btf_trace_<tp>` typedef): tp_btf can attach to it.
  virtual bool btf_tracepoint(std::string_view module, std::string_view tp) const = 0;
  // The tracepoint exists in the running kernel (raw_tp can attach). Best effort: tracefs when
  // mounted, else BTF / module presence.
  virtual bool tracepoint_exists(std::string_view system, std::string_view tp) const = 0;
  // kernel.bpf_stats_enabled = 1 (run_time_ns / run_cnt are maintained).
  virtual bool bpf_stats_enabled() const = 0;
};

// The real kernel: /sys/kernel/btf, /sys/module, tracefs, /proc/sys/kernel/bpf_stats_enabled.
std::unique_ptr<FeatureProbe> make_kernel_feature_probe();

// Attach decision for one tracepoint.
enum class AttachKind { kNone, kTpBtf, kRawTp };
std::string_view attach_kind_name(AttachKind kind);

struct AttachChoice {
  AttachChoice() = default;
  // Most choices name no module: a constructor rather than an aggregate, so {kind, reason}
  // stays complete.
  AttachChoice(AttachKind k, std::string why, std::string module_not_loaded = {})
      : kind(k), reason(std::move(why)), missing_module(std::move(module_not_loaded)) {}

  AttachKind kind = AttachKind::kNone;
  std::string reason;          // why kNone (or why not the preferred kind)
  std::string missing_module;  // kNone because this module is not loaded ("" otherwise)
};

// Pure policy, unit-tested with a forced probe. `module` is "" for core-kernel tracepoints.
// prefer_raw_tp: skip tp_btf (fallback after a failed tp_btf load, or forced by options).
AttachChoice choose_attach(const FeatureProbe& probe, std::string_view module,
                           std::string_view system, std::string_view tp, bool prefer_raw_tp);

// What became of one tracepoint's program, for the start-up log.
struct AttachOutcome {
  std::string_view tracepoint;  // "system:tp"
  bool attached = false;
  std::string_view missing_module;  // not attached because this module is not loaded
  std::string_view reason;          // why not attached
};

// The start-up log's lines for the programs that did not attach: one line per missing module
// naming every tracepoint it leaves idle (a host without ib_core has seven, all for one cause),
// then one line per program that failed for any other reason. Empty when everything attached.
std::vector<std::string> unattached_report(std::span<const AttachOutcome> outcomes);

}  // namespace dimctl::collector
