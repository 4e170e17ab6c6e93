#include "dimctl/collector/feature_probe.h"

#include <bpf/btf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <linux/btf.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

namespace dimctl::collector {
namespace {

bool path_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

struct BtfDeleter {
  void operator()(btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<btf, BtfDeleter>;

class KernelFeatureProbe final : public FeatureProbe {
 public:
  bool vmlinux_btf() const override { return vmlinux() != nullptr; }

  bool module_loaded(std::string_view module) const override {
    return path_exists(fmt::format("/sys/module/{}", module));
  }

  bool module_btf(std::string_view module) const override {
    return path_exists(fmt::format("/sys/kernel/btf/{}", module));
  }

  bool btf_tracepoint(std::string_view module, std::string_view tp) const override {
    const btf* b = module.empty() ? vmlinux() : module_btf_obj(std::string(module));
    if (b == nullptr) return false;
    const std::string name = fmt::format("btf_trace_{}", tp);
    return btf__find_by_name_kind(b, name.c_str(), BTF_KIND_TYPEDEF) > 0;
  }

  bool tracepoint_exists(std::string_view system, std::string_view tp) const override {
    for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
      if (path_exists(fmt::format("{}/events", root))) {
        return path_exists(fmt::format("{}/events/{}/{}", root, system, tp));
      }
    }
    // No tracefs mounted: BTF is the next best witness (tracepoints of the core kernel and of
    // loaded modules with BTF); otherwise let the attach decide.
    if (btf_tracepoint("", tp)) return true;
    if (system == "rdma_core") return module_loaded("ib_core");
    return true;
  }

  bool bpf_stats_enabled() const override {
    std::ifstream f("/proc/sys/kernel/bpf_stats_enabled");
    int v = 0;
    return (f >> v) && v == 1;
  }

 private:
  const btf* vmlinux() const {
    std::lock_guard lock(mu_);
    if (!vmlinux_tried_) {
      vmlinux_tried_ = true;
      btf* b = btf__load_vmlinux_btf();
      if (b != nullptr) vmlinux_.reset(b);
    }
    return vmlinux_.get();
  }

  const btf* module_btf_obj(const std::string& module) const {
    btf* base = const_cast<btf*>(vmlinux());
    std::lock_guard lock(mu_);
    auto it = modules_.find(module);
    if (it != modules_.end()) return it->second.get();
    BtfPtr mod;
    if (base != nullptr) {
      btf* b = btf__parse_split(fmt::format("/sys/kernel/btf/{}", module).c_str(), base);
      if (b != nullptr) mod.reset(b);
    }
    return modules_.emplace(module, std::move(mod)).first->second.get();
  }

  mutable std::mutex mu_;
  mutable bool vmlinux_tried_ = false;
  mutable BtfPtr vmlinux_;
  mutable std::map<std::string, BtfPtr> modules_;
};

}  // namespace

std::unique_ptr<FeatureProbe> make_kernel_feature_probe() {
  return std::make_unique<KernelFeatureProbe>();
}

std::string_view attach_kind_name(AttachKind kind) {
  switch (kind) {
    case AttachKind::kTpBtf:
      return "tp_btf";
    case AttachKind::kRawTp:
      return "raw_tp";
    case AttachKind::kNone:
      break;
  }
  return "";
}

AttachChoice choose_attach(const FeatureProbe& probe, std::string_view module,
                           std::string_view system, std::string_view tp, bool prefer_raw_tp) {
  // A "module" tracepoint may also be built into vmlinux (CONFIG_INFINIBAND=y).
  const bool builtin = !module.empty() && probe.btf_tracepoint("", tp);
  if (!module.empty() && !builtin && !probe.module_loaded(module)) {
    return {AttachKind::kNone,
            fmt::format("module {} not loaded: no {}:{} tracepoint", module, system, tp),
            std::string(module)};
  }
  const bool in_vmlinux = module.empty() || builtin;
  if (in_vmlinux && !probe.vmlinux_btf()) {
    return {AttachKind::kNone,
            "no vmlinux BTF (CONFIG_DEBUG_INFO_BTF=n): CO-RE relocations impossible"};
  }
  if (!in_vmlinux && !probe.module_btf(module)) {
    return {AttachKind::kNone,
            fmt::format("module {} has no BTF (CONFIG_DEBUG_INFO_BTF_MODULES=n): its types "
                        "cannot be read with CO-RE",
                        module)};
  }
  const std::string_view owner = in_vmlinux ? std::string_view{} : module;
  if (!prefer_raw_tp && probe.btf_tracepoint(owner, tp)) return {AttachKind::kTpBtf, ""};
  if (probe.tracepoint_exists(system, tp)) {
    return {AttachKind::kRawTp, prefer_raw_tp
                                    ? std::string("raw_tp preferred")
                                    : fmt::format("no btf_trace_{} in {} BTF: raw_tp fallback", tp,
                                                  in_vmlinux ? "vmlinux" : module)};
  }
  return {AttachKind::kNone,
          fmt::format("tracepoint {}:{} not present in this kernel", system, tp)};
}

std::vector<std::string> unattached_report(std::span<const AttachOutcome> outcomes) {
  std::vector<std::string> lines;
  std::vector<std::string_view> modules;  // in order of first appearance
  for (const auto& o : outcomes) {
    if (!o.attached && !o.missing_module.empty() &&
        std::find(modules.begin(), modules.end(), o.missing_module) == modules.end()) {
      modules.push_back(o.missing_module);
    }
  }
  for (std::string_view m : modules) {
    std::vector<std::string_view> idle;
    for (const auto& o : outcomes) {
      if (!o.attached && o.missing_module == m) idle.push_back(o.tracepoint);
    }
    lines.push_back(fmt::format("module {} not loaded: {} tracepoint program(s) idle ({})", m,
                                idle.size(), fmt::join(idle, ", ")));
  }
  for (const auto& o : outcomes) {
    if (!o.attached && o.missing_module.empty()) {
      lines.push_back(fmt::format("{} not attached: {}", o.tracepoint, o.reason));
    }
  }
  return lines;
}

}  // namespace dimctl::collector
