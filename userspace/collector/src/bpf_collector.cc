#include "dimctl/collector/bpf_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <array>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <mutex>

#include "bpf_maps.h"
#include "cpu_time.skel.h"
#include "dimctl/collector/aggregator.h"
#include "dimctl/collector/byte_filter.h"
#include "dimctl/collector/cpu_times.h"
#include "dimctl/collector/slot_table.h"
#include "dimctl/seam/clock.h"
#include "napi.skel.h"
#include "rdma.skel.h"
#include "shared/dimctl_bpf.h"

namespace dimctl::collector {

// ---- The BPF <-> C++ contract, checked (bpf/include/shared/dimctl_bpf.h) --------------------
static_assert(sizeof(dimctl_napi_key) == 8 && offsetof(dimctl_napi_key, napi_id) == 4);
static_assert(sizeof(dimctl_napi_value) == 48 && offsetof(dimctl_napi_value, bytes) == 32 &&
              offsetof(dimctl_napi_value, skbs) == 40);
static_assert(sizeof(dimctl_napi_slot) == 64 && offsetof(dimctl_napi_slot, v) == 8);
static_assert((DIMCTL_NAPI_SLOTS & (DIMCTL_NAPI_SLOTS - 1)) == 0);
static_assert(DIMCTL_NAPI_SLOT_COUNT == DIMCTL_NAPI_SLOTS + DIMCTL_NAPI_OVERFLOW);
static_assert(sizeof(dimctl_cq_slot) == 192 && offsetof(dimctl_cq_slot, state) == 8 &&
              offsetof(dimctl_cq_slot, cpu) == 12 && offsetof(dimctl_cq_slot, key) == 16 &&
              offsetof(dimctl_cq_slot, schedules) == 24 &&
              offsetof(dimctl_cq_slot, modifies) == 72 &&
              offsetof(dimctl_cq_slot, last_modify) == 80 &&
              offsetof(dimctl_cq_slot, exhausted) == 88 && offsetof(dimctl_cq_slot, info) == 104);
static_assert(DIMCTL_SKB_BYTES_MAX_DEVICES > 0);
static_assert(sizeof(dimctl_cq_key) == 8 && offsetof(dimctl_cq_key, cq_id) == 4);
static_assert(sizeof(dimctl_cq_value) == 88 && offsetof(dimctl_cq_value, cpu) == 72 &&
              offsetof(dimctl_cq_value, exhausted) == 80 &&
              offsetof(dimctl_cq_value, modifies) == 48 &&
              offsetof(dimctl_cq_value, last_modify_ns) == 56 &&
              offsetof(dimctl_cq_value, last_comps) == 64 &&
              offsetof(dimctl_cq_value, last_usec) == 68);
static_assert(sizeof(dimctl_cq_info) == 24 + DIMCTL_IBDEV_NAME_LEN &&
              offsetof(dimctl_cq_info, comp_vector) == 12 &&
              offsetof(dimctl_cq_info, poll_ctx) == 16 && offsetof(dimctl_cq_info, ibdev) == 24);
static_assert(sizeof(dimctl_cq_event) == 16 + sizeof(dimctl_cq_info) &&
              offsetof(dimctl_cq_event, time_ns) == 8 && offsetof(dimctl_cq_event, info) == 16);
static_assert(DIMCTL_POLL_DIRECT == static_cast<int>(seam::PollContext::kDirect) &&
              DIMCTL_POLL_SOFTIRQ == static_cast<int>(seam::PollContext::kSoftirq) &&
              DIMCTL_POLL_WORKQUEUE == static_cast<int>(seam::PollContext::kWorkqueue) &&
              DIMCTL_POLL_UNBOUND_WORKQUEUE ==
                  static_cast<int>(seam::PollContext::kUnboundWorkqueue));

namespace {

int libbpf_log(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG && !spdlog::should_log(spdlog::level::trace)) return 0;
  char buf[1024];
  int n = std::vsnprintf(buf, sizeof(buf), fmt, args);
  std::string_view msg(buf, n > 0 ? std::min(static_cast<size_t>(n), sizeof(buf) - 1) : 0);
  while (!msg.empty() && msg.back() == '\n') msg.remove_suffix(1);
  spdlog::debug("libbpf: {}", msg);
  return n;
}

struct LinkDeleter {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

struct RingDeleter {
  void operator()(ring_buffer* r) const { ring_buffer__free(r); }
};
using RingPtr = std::unique_ptr<ring_buffer, RingDeleter>;

// RAII over a bpftool-generated skeleton: open -> (configure) -> load -> destroy.
template <typename S, S* (*OpenFn)(const bpf_object_open_opts*), int (*LoadFn)(S*),
          void (*DestroyFn)(S*)>
class Skeleton {
 public:
  static Result<std::unique_ptr<Skeleton>> open(const char* what) {
    S* s = OpenFn(nullptr);
    if (s == nullptr) return DIMCTL_FAIL(errno, "open BPF skeleton {}", what);
    return std::unique_ptr<Skeleton>(new Skeleton(s));
  }
  ~Skeleton() { DestroyFn(skel_); }
  Skeleton(const Skeleton&) = delete;
  Skeleton& operator=(const Skeleton&) = delete;
  Result<void> load(const char* what) {
    if (int rc = LoadFn(skel_); rc != 0) return DIMCTL_FAIL(-rc, "load BPF object {}", what);
    return ok();
  }
  S* operator->() const { return skel_; }
  S* get() const { return skel_; }

 private:
  explicit Skeleton(S* s) : skel_(s) {}
  S* skel_;
};

using NapiSkel = Skeleton<napi_bpf, napi_bpf__open_opts, napi_bpf__load, napi_bpf__destroy>;
using RdmaSkel = Skeleton<rdma_bpf, rdma_bpf__open_opts, rdma_bpf__load, rdma_bpf__destroy>;
using CpuTimeSkel =
    Skeleton<cpu_time_bpf, cpu_time_bpf__open_opts, cpu_time_bpf__load, cpu_time_bpf__destroy>;

// One tracepoint and its twin programs.
struct Slot {
  std::string system;
  std::string tp;
  std::string module;  // "" = core kernel
  bpf_program* btf = nullptr;
  bpf_program* raw = nullptr;
  bool enabled = true;
  std::string disabled_reason;
  AttachChoice choice;
  bpf_program* chosen = nullptr;
  LinkPtr link;
  std::string reason;  // final reason when not attached

  std::string name() const { return system + ":" + tp; }
};

Slot make_slot(std::string system, std::string tp, std::string module, bpf_program* btf,
               bpf_program* raw) {
  Slot s;
  s.system = std::move(system);
  s.tp = std::move(tp);
  s.module = std::move(module);
  s.btf = btf;
  s.raw = raw;
  return s;
}

// Decide for every slot, set autoload on both twins. Returns true when anything will load.
bool plan(std::vector<Slot>& slots, const FeatureProbe& probe, bool prefer_raw) {
  bool any = false;
  for (auto& s : slots) {
    s.chosen = nullptr;
    if (!s.enabled) {
      s.choice = {AttachKind::kNone, s.disabled_reason};
    } else {
      s.choice = choose_attach(probe, s.module, s.system, s.tp, prefer_raw && s.raw != nullptr);
      if (s.choice.kind == AttachKind::kRawTp && s.raw == nullptr) {
        s.choice = {AttachKind::kNone, "tp_btf not available and no raw_tp variant"};
      }
    }
    if (s.choice.kind == AttachKind::kTpBtf) s.chosen = s.btf;
    if (s.choice.kind == AttachKind::kRawTp) s.chosen = s.raw;
    if (s.btf != nullptr) bpf_program__set_autoload(s.btf, s.chosen == s.btf);
    if (s.raw != nullptr) bpf_program__set_autoload(s.raw, s.chosen == s.raw);
    any = any || s.chosen != nullptr;
  }
  return any;
}

bool uses_tp_btf(const std::vector<Slot>& slots) {
  for (const auto& s : slots) {
    if (s.chosen != nullptr && s.chosen == s.btf) return true;
  }
  return false;
}

// Slots that will not attach take the reason of their choice.
void settle_unattached(std::vector<Slot>& slots) {
  for (auto& s : slots) {
    if (!s.link) s.reason = s.choice.reason;
  }
}

void attach_all(std::vector<Slot>& slots) {
  for (auto& s : slots) {
    if (s.chosen == nullptr) {
      s.reason = s.choice.reason;
      continue;
    }
    bpf_link* l = bpf_program__attach(s.chosen);
    if (l == nullptr) {
      const int err = errno;
      s.reason =
          fmt::format("{} attach failed: {}", attach_kind_name(s.choice.kind), std::strerror(err));
      continue;
    }
    s.link.reset(l);
    s.reason.clear();
  }
}

uint32_t own_netns_inode() {
  struct stat st {};
  if (::stat("/proc/self/ns/net", &st) != 0) return 0;
  return static_cast<uint32_t>(st.st_ino);
}

// Per entry of a per-CPU u64 array, summed over CPUs.
std::vector<uint64_t> sum_percpu_entries(int fd, uint32_t entries, int ncpus) {
  std::vector<uint64_t> out(entries, 0);
  std::vector<uint64_t> vals(static_cast<size_t>(ncpus));
  for (uint32_t i = 0; i < entries; ++i) {
    if (bpf_map_lookup_elem(fd, &i, vals.data()) != 0) continue;
    for (uint64_t v : vals) out[i] += v;
  }
  return out;
}

}  // namespace

struct BpfCollector::Impl {
  CollectorOptions options;
  std::shared_ptr<const FeatureProbe> probe;
  std::shared_ptr<NetdevDirectory> directory;
  int ncpus = 1;
  seam::MonotonicClock clock;

  // The skeletons first: the mappings and tables below point into their maps (and .bss).
  std::unique_ptr<NapiSkel> napi;
  std::vector<Slot> napi_slots;
  std::optional<MappedArray> napi_memory;
  std::unique_ptr<BpfSlotDirectory<dimctl_napi_key>> napi_directory;
  std::unique_ptr<BpfFreeSlots> napi_free;
  std::unique_ptr<NapiSlotTable> napi_map;
  // Byte counter device filter (count_bytes_devices): only while the skb program is attached.
  std::unique_ptr<BpfIfindexSet> bytes_set;
  std::unique_ptr<SkbBytesFilter> bytes_filter;
  size_t bytes_over_capacity = 0;
  std::string bytes_filter_error;  // last filter sync error warned about ("" = none)

  std::unique_ptr<RdmaSkel> rdma;
  std::vector<Slot> rdma_slots;
  std::optional<MappedArray> cq_memory;
  std::unique_ptr<BpfSlotDirectory<dimctl_cq_key>> cq_directory;
  std::unique_ptr<BpfFreeSlots> cq_free;
  std::unique_ptr<CqSlotTable> cq_map;
  RingPtr ring;
  std::vector<dimctl_cq_event> pending_events;

  std::unique_ptr<CpuTimeSkel> cpu_time;
  std::vector<Slot> cpu_slots;
  std::optional<MappedArray> cpu_memory;
  std::optional<MappedArray> irq_memory;

  std::unique_ptr<CounterAggregator> aggregator;

  // Every program slot, for the status and the start-up log.
  std::array<const std::vector<Slot>*, 3> all_slots() const {
    return {&napi_slots, &rdma_slots, &cpu_slots};
  }

  static int on_cq_event(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Impl*>(ctx);
    if (size < sizeof(dimctl_cq_event)) return 0;
    dimctl_cq_event ev{};
    std::memcpy(&ev, data, sizeof(ev));
    self->pending_events.push_back(ev);
    return 0;
  }

  Result<void> open_napi() {
    auto make_slots = [&](NapiSkel& s) {
      napi_slots.clear();
      napi_slots.push_back(make_slot("napi", "napi_poll", "", s->progs.dimctl_napi_poll_btf,
                                     s->progs.dimctl_napi_poll_raw));
      Slot bytes =
          make_slot("net", "netif_receive_skb", "", s->progs.dimctl_napi_skb_bytes, nullptr);
      bytes.enabled = options.count_bytes;
      bytes.disabled_reason = "disabled: per-packet byte counter (--count-bytes)";
      napi_slots.push_back(std::move(bytes));
    };
    const bool filtered = options.count_bytes && !options.count_bytes_devices.empty();
    for (bool prefer_raw : {options.force_raw_tp, true}) {
      auto s = NapiSkel::open("napi");
      if (!s) return std::move(s).error();
      make_slots(**s);
      (**s)->rodata->targ_netns_ino = options.own_netns_only ? own_netns_inode() : 0;
      (**s)->rodata->targ_bytes_filter = filtered;
      if (!plan(napi_slots, *probe, prefer_raw)) {  // nothing attachable
        settle_unattached(napi_slots);
        return ok();
      }
      auto loaded = (*s)->load("napi.bpf.o");
      if (!loaded) {
        if (!prefer_raw && uses_tp_btf(napi_slots)) {
          spdlog::warn("collector: {}; retrying with raw_tp", loaded.error().message());
          continue;
        }
        for (auto& slot : napi_slots) {
          if (slot.chosen != nullptr) slot.choice = {AttachKind::kNone, loaded.error().message()};
          slot.chosen = nullptr;
        }
        settle_unattached(napi_slots);
        return ok();
      }
      napi = std::move(*s);
      break;
    }
    if (!napi) return ok();
    const Slot& bytes = *bytes_slot();
    if (filtered && bytes.chosen != nullptr) {
      // Fill the filter before the skb program is attached: it never counts an unselected
      // device, not even for the first packets.
      bytes_set = std::make_unique<BpfIfindexSet>(bpf_map__fd(napi->get()->maps.skb_bytes_ifidx));
      bytes_filter = std::make_unique<SkbBytesFilter>(options.count_bytes_devices, *bytes_set,
                                                      DIMCTL_SKB_BYTES_MAX_DEVICES);
      if (auto r = sync_bytes_filter(true); !r) return r;
    }
    attach_all(napi_slots);
    if (!bytes.link) {
      bytes_filter.reset();
      bytes_set.reset();
    }
    auto& maps = napi->get()->maps;
    auto memory = MappedArray::map(bpf_map__fd(maps.napi_slots), "napi_slots",
                                   sizeof(dimctl_napi_slot), DIMCTL_NAPI_SLOT_COUNT);
    if (!memory) return std::move(memory).error();
    napi_memory.emplace(std::move(*memory));
    napi_directory = std::make_unique<BpfSlotDirectory<dimctl_napi_key>>(
        bpf_map__fd(maps.napi_stats), "napi_stats");
    napi_free = std::make_unique<BpfFreeSlots>(bpf_map__fd(maps.napi_free), "napi_free");
    napi_map =
        std::make_unique<NapiSlotTable>(napi_memory->words(), &napi->get()->bss->napi_overflow_next,
                                        *napi_directory, *napi_free, clock);
    return ok();
  }

  Result<void> open_rdma() {
    auto make_slots = [&](RdmaSkel& s) {
      auto& p = s->progs;
      rdma_slots.clear();
      auto add = [&](const char* tp, bpf_program* b, bpf_program* r) {
        rdma_slots.push_back(make_slot("rdma_core", tp, "ib_core", b, r));
      };
      add("cq_schedule", p.dimctl_cq_schedule_btf, p.dimctl_cq_schedule_raw);
      add("cq_reschedule", p.dimctl_cq_reschedule_btf, p.dimctl_cq_reschedule_raw);
      add("cq_process", p.dimctl_cq_process_btf, p.dimctl_cq_process_raw);
      add("cq_poll", p.dimctl_cq_poll_btf, p.dimctl_cq_poll_raw);
      add("cq_modify", p.dimctl_cq_modify_btf, p.dimctl_cq_modify_raw);
      add("cq_alloc", p.dimctl_cq_alloc_btf, p.dimctl_cq_alloc_raw);
      add("cq_free", p.dimctl_cq_free_btf, p.dimctl_cq_free_raw);
    };
    for (bool prefer_raw : {options.force_raw_tp, true}) {
      auto s = RdmaSkel::open("rdma");
      if (!s) return std::move(s).error();
      make_slots(**s);
      if (!plan(rdma_slots, *probe, prefer_raw)) {
        settle_unattached(rdma_slots);
        return ok();
      }
      auto loaded = (*s)->load("rdma.bpf.o");
      if (!loaded) {
        if (!prefer_raw && uses_tp_btf(rdma_slots)) {
          spdlog::warn("collector: {}; retrying with raw_tp", loaded.error().message());
          continue;
        }
        for (auto& slot : rdma_slots) {
          if (slot.chosen != nullptr) slot.choice = {AttachKind::kNone, loaded.error().message()};
          slot.chosen = nullptr;
        }
        settle_unattached(rdma_slots);
        return ok();
      }
      rdma = std::move(*s);
      break;
    }
    if (!rdma) return ok();
    attach_all(rdma_slots);
    auto& maps = rdma->get()->maps;
    auto memory = MappedArray::map(bpf_map__fd(maps.cq_slots), "cq_slots", sizeof(dimctl_cq_slot),
                                   DIMCTL_CQ_SLOTS);
    if (!memory) return std::move(memory).error();
    cq_memory.emplace(std::move(*memory));
    cq_directory =
        std::make_unique<BpfSlotDirectory<dimctl_cq_key>>(bpf_map__fd(maps.cq_index), "cq_index");
    cq_free = std::make_unique<BpfFreeSlots>(bpf_map__fd(maps.cq_free), "cq_free");
    cq_map = std::make_unique<CqSlotTable>(cq_memory->words(), &rdma->get()->bss->cq_next,
                                           *cq_directory, *cq_free, clock);
    ring_buffer* rb =
        ring_buffer__new(bpf_map__fd(maps.cq_events), &Impl::on_cq_event, this, nullptr);
    if (rb == nullptr) return DIMCTL_FAIL(errno, "ring buffer cq_events");
    ring.reset(rb);
    return ok();
  }

  Result<void> open_cpu_times() {
    const uint32_t one_in = options.cpu_times_time_one_in;
    if (one_in == 0 || (one_in & (one_in - 1)) != 0) {
      return DIMCTL_FAIL(EINVAL, "cpu_times_time_one_in {} is not a power of two", one_in);
    }
    auto make_slots = [&](CpuTimeSkel& s) {
      auto& p = s->progs;
      cpu_slots.clear();
      auto add = [&](const char* tp, bpf_program* b, bpf_program* r) {
        cpu_slots.push_back(make_slot("irq", tp, "", b, r));
      };
      add("irq_handler_entry", p.dimctl_irq_entry_btf, p.dimctl_irq_entry_raw);
      add("irq_handler_exit", p.dimctl_irq_exit_btf, p.dimctl_irq_exit_raw);
      add("softirq_entry", p.dimctl_softirq_entry_btf, p.dimctl_softirq_entry_raw);
      add("softirq_exit", p.dimctl_softirq_exit_btf, p.dimctl_softirq_exit_raw);
      cpu_slots.push_back(make_slot("sched", "sched_switch", "", p.dimctl_sched_switch_btf,
                                    p.dimctl_sched_switch_raw));
    };
    for (bool prefer_raw : {options.force_raw_tp, true}) {
      auto s = CpuTimeSkel::open("cpu_time");
      if (!s) return std::move(s).error();
      make_slots(**s);
      (**s)->rodata->targ_time_mask = one_in - 1;
      if (int rc = bpf_map__set_max_entries((**s)->maps.cpu_times, static_cast<uint32_t>(ncpus));
          rc != 0) {
        return DIMCTL_FAIL(-rc, "cpu_times: max_entries {}", ncpus);
      }
      if (!plan(cpu_slots, *probe, prefer_raw)) {
        settle_unattached(cpu_slots);
        return ok();
      }
      auto loaded = (*s)->load("cpu_time.bpf.o");
      if (!loaded) {
        if (!prefer_raw && uses_tp_btf(cpu_slots)) {
          spdlog::warn("collector: {}; retrying with raw_tp", loaded.error().message());
          continue;
        }
        for (auto& slot : cpu_slots) {
          if (slot.chosen != nullptr) slot.choice = {AttachKind::kNone, loaded.error().message()};
          slot.chosen = nullptr;
        }
        settle_unattached(cpu_slots);
        return ok();
      }
      cpu_time = std::move(*s);
      break;
    }
    if (!cpu_time) return ok();
    // Mapped before the programs attach: a mapping failure leaves nothing running unread.
    auto& maps = cpu_time->get()->maps;
    auto cpus = MappedArray::map(bpf_map__fd(maps.cpu_times), "cpu_times", sizeof(dimctl_cpu_slot),
                                 static_cast<uint32_t>(ncpus));
    if (!cpus) return std::move(cpus).error();
    cpu_memory.emplace(std::move(*cpus));
    auto irqs = MappedArray::map(bpf_map__fd(maps.irq_times), "irq_times", sizeof(dimctl_irq_slot),
                                 DIMCTL_IRQ_SLOTS);
    if (!irqs) return std::move(irqs).error();
    irq_memory.emplace(std::move(*irqs));
    attach_all(cpu_slots);
    return ok();
  }

  // The optional per-skb byte program's slot (always made by open_napi's make_slots).
  const Slot* bytes_slot() const {
    for (const auto& s : napi_slots) {
      if (s.tp == "netif_receive_skb") return &s;
    }
    return nullptr;
  }

  // Re-resolves the byte counter's device globs; the map is written only when the set changed.
  Result<void> sync_bytes_filter(bool initial) {
    auto devs = directory->devices();
    if (!devs) return std::move(devs).error().wrap("skb byte counter filter");
    auto change = bytes_filter->sync(*devs);
    // Also after a failed write: the selection is what the map holds.
    if (aggregator && (!change || change->changed())) {
      aggregator->set_byte_devices(bytes_filter->selection());
    }
    if (!change) return std::move(change).error().wrap("skb byte counter filter");
    if (change->over_capacity != bytes_over_capacity) {
      bytes_over_capacity = change->over_capacity;
      if (bytes_over_capacity > 0) {
        spdlog::warn(
            "collector: per-skb byte counter: {} more devices match {} than the filter holds "
            "({}): the highest ifindexes get no byte counter",
            bytes_over_capacity, fmt::join(bytes_filter->globs(), ","),
            DIMCTL_SKB_BYTES_MAX_DEVICES);
      }
    }
    if (initial) {
      spdlog::debug("collector: per-skb byte counter on [{}] (globs {})",
                    fmt::join(bytes_filter->names(), ", "), fmt::join(bytes_filter->globs(), ","));
    } else if (change->changed()) {
      for (const auto& d : change->added) spdlog::info("collector: per-skb byte counter on {}", d);
      for (const auto& d : change->removed) {
        spdlog::info("collector: per-skb byte counter off {}", d);
      }
    }
    return ok();
  }

  void log_unattached() const {
    std::vector<std::string> names;
    std::vector<AttachOutcome> outcomes;
    for (const auto* slots : all_slots()) {
      for (const auto& s : *slots) names.push_back(s.name());
    }
    size_t i = 0;
    for (const auto* slots : all_slots()) {
      for (const auto& s : *slots) {
        if (s.link) {
          spdlog::debug("collector: {} attached ({})", s.name(), attach_kind_name(s.choice.kind));
        }
        outcomes.push_back({names[i++], s.link != nullptr,
                            s.chosen == nullptr ? s.choice.missing_module : std::string_view{},
                            s.reason});
      }
    }
    for (const auto& line : unattached_report(outcomes)) spdlog::info("collector: {}", line);
  }
};

BpfCollector::BpfCollector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfCollector::~BpfCollector() = default;

Result<std::unique_ptr<BpfCollector>> BpfCollector::open(const CollectorOptions& options) {
  static std::once_flag log_once;
  std::call_once(log_once, [] { libbpf_set_print(libbpf_log); });

  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->probe = options.probe ? options.probe
                              : std::shared_ptr<const FeatureProbe>(make_kernel_feature_probe());
  impl->directory =
      options.directory ? options.directory : std::make_shared<NetlinkNetdevDirectory>();
  impl->ncpus = libbpf_num_possible_cpus();
  if (impl->ncpus <= 0) return DIMCTL_FAIL(-impl->ncpus, "libbpf_num_possible_cpus");

  if (options.enable_napi) {
    if (auto r = impl->open_napi(); !r) return std::move(r).error().wrap("collector napi");
  }
  if (options.enable_rdma) {
    if (auto r = impl->open_rdma(); !r) return std::move(r).error().wrap("collector rdma");
  }
  if (options.enable_cpu_times) {
    if (auto r = impl->open_cpu_times(); !r) {
      return std::move(r).error().wrap("collector cpu_time");
    }
  }
  // Map bytes only when the skb program really runs: has_bytes must not claim a counter that
  // failed to attach.
  const Slot* bytes = impl->bytes_slot();
  const bool bytes_attached = bytes != nullptr && bytes->link != nullptr;
  impl->aggregator = std::make_unique<CounterAggregator>(*impl->directory, bytes_attached);
  if (impl->bytes_filter) impl->aggregator->set_byte_devices(impl->bytes_filter->selection());
  impl->log_unattached();
  return std::unique_ptr<BpfCollector>(new BpfCollector(std::move(impl)));
}

Result<seam::Snapshot> BpfCollector::sample() {
  seam::Snapshot snap;
  if (auto r = sample_into(snap); !r) return std::move(r).error();
  return snap;
}

Result<void> BpfCollector::sample_into(seam::Snapshot& out) {
  if (impl_->napi_map) {
    if (auto r = impl_->directory->refresh(); !r)
      return std::move(r).error().wrap("netdev directory");
    if (impl_->bytes_filter) {
      // A failed filter update costs the bytes of the devices that changed, not the sample
      // (which DIM needs for every queue): warned once per distinct error, retried next sample.
      if (auto r = impl_->sync_bytes_filter(false); !r) {
        if (r.error().message() != impl_->bytes_filter_error) {
          impl_->bytes_filter_error = r.error().message();
          spdlog::warn("{} (kept the previous device selection; retrying every sample)",
                       impl_->bytes_filter_error);
        }
      } else {
        impl_->bytes_filter_error.clear();
      }
    }
    if (auto r = impl_->aggregator->queues(*impl_->napi_map, out); !r) return r;
  } else {
    out.queues.clear();
    out.devices.clear();
  }
  if (impl_->cq_map) {
    impl_->pending_events.clear();
    if (int rc = ring_buffer__consume(impl_->ring.get()); rc < 0) {
      return DIMCTL_FAIL(-rc, "ring buffer cq_events: consume");
    }
    if (auto r = impl_->aggregator->cqs(impl_->cq_map->stats(), impl_->cq_map->info(),
                                        impl_->pending_events, out.cqs);
        !r)
      return r;
  } else {
    out.cqs.clear();
  }
  out.time_ns = impl_->clock.now_ns();
  if (impl_->cpu_memory) {
    read_cpu_times(impl_->cpu_memory->words(), out.time_ns, out.cpus);
    read_irq_times(impl_->irq_memory->words(), out.irqs);
  } else {
    out.cpus.clear();
    out.irqs.clear();
  }
  return ok();
}

std::vector<ProgramStatus> BpfCollector::program_status() const {
  std::vector<ProgramStatus> out;
  const bool stats = impl_->probe->bpf_stats_enabled();
  for (const auto* slots : impl_->all_slots()) {
    for (const auto& s : *slots) {
      ProgramStatus st;
      st.view.name = s.name();
      st.view.attached = s.link != nullptr;
      st.view.reason = s.link ? "" : s.reason;
      if (s.link) {
        st.attach_type = std::string(attach_kind_name(s.choice.kind));
        st.bpf_name = bpf_program__name(s.chosen);
        st.prog_fd = bpf_program__fd(s.chosen);
        bpf_prog_info info{};
        uint32_t len = sizeof(info);
        if (bpf_obj_get_info_by_fd(st.prog_fd, &info, &len) == 0) {
          st.view.recursion_misses = info.recursion_misses;
          if (stats) {
            st.view.run_time_ns = info.run_time_ns;
            st.view.run_count = info.run_cnt;
          }
        }
      }
      out.push_back(std::move(st));
    }
  }
  return out;
}

std::vector<seam::ProgramView> BpfCollector::programs() const {
  std::vector<seam::ProgramView> out;
  for (auto& st : program_status()) out.push_back(std::move(st.view));
  return out;
}

uint64_t BpfCollector::drops() const {
  uint64_t total = 0;
  for (const auto& d : drops_by_reason()) total += d.total;
  return total;
}

std::vector<seam::BpfDropView> BpfCollector::drops_by_reason() const {
  static_assert(DIMCTL_DROP_NAPI_MAP_FULL == 0 && DIMCTL_DROP_CQ_MAP_FULL == 1 &&
                DIMCTL_DROP_RINGBUF_FULL == 2 && DIMCTL_DROP_MAX == 3);
  std::vector<seam::BpfDropView> out = {
      {"napi_map_full", 0}, {"cq_map_full", 0}, {"ringbuf_full", 0}};
  auto add = [&](int fd) {
    const auto sums = sum_percpu_entries(fd, DIMCTL_DROP_MAX, impl_->ncpus);
    for (size_t i = 0; i < out.size(); ++i) out[i].total += sums[i];
  };
  if (impl_->napi) add(bpf_map__fd(impl_->napi->get()->maps.napi_drops));
  if (impl_->rdma) add(bpf_map__fd(impl_->rdma->get()->maps.rdma_drops));
  return out;
}

std::optional<std::vector<std::string>> BpfCollector::byte_counter_devices() const {
  if (!impl_->bytes_filter) return std::nullopt;
  return impl_->bytes_filter->names();
}

Result<void> BpfCollector::set_byte_counter_devices(std::vector<std::string> globs) {
  Impl& im = *impl_;
  if (!im.bytes_filter) {
    return DIMCTL_FAIL(0, "the per-skb byte counter is not attached with a device filter");
  }
  if (globs.empty()) return DIMCTL_FAIL(0, "an empty list would detach the per-skb byte counter");
  auto devs = im.directory->devices();
  if (!devs) return std::move(devs).error().wrap("skb byte counter filter");
  const std::set<uint32_t> before = im.bytes_filter->selection();
  const std::set<uint32_t> named = match_devices(*devs, globs);
  Result<void> result = ok();
  auto keep_first_error = [&](Result<void> r) {
    if (!r && result) result = std::move(r);
  };
  // Room first (the map has a fixed capacity), then the new selection (a device selected
  // before and after is re-added in place, never absent), then what it left out.
  for (uint32_t ifindex : before)
    if (named.count(ifindex) == 0) keep_first_error(im.bytes_set->remove(ifindex));
  auto next = std::make_unique<SkbBytesFilter>(std::move(globs), *im.bytes_set,
                                               DIMCTL_SKB_BYTES_MAX_DEVICES);
  if (auto change = next->sync(*devs); !change) {
    keep_first_error(std::move(change).error().wrap("skb byte counter filter"));
  }
  for (uint32_t ifindex : before)
    if (named.count(ifindex) != 0 && !next->selected(ifindex))
      keep_first_error(im.bytes_set->remove(ifindex));
  im.bytes_filter = std::move(next);
  im.bytes_over_capacity = 0;  // the next sample warns again if the new globs overflow
  im.bytes_filter_error.clear();
  if (im.aggregator) im.aggregator->set_byte_devices(im.bytes_filter->selection());
  return result;
}

}  // namespace dimctl::collector
