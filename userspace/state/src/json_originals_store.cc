#include "dimctl/state/json_originals_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dimctl/common/fd.h"

namespace dimctl::state {
namespace {

using nlohmann::json;

constexpr int kVersion = 1;
constexpr size_t kMaxNetName = 15;    // IFNAMSIZ - 1
constexpr size_t kMaxIbName = 63;     // IB_DEVICE_NAME_MAX - 1
constexpr uint32_t kMaxQueue = 4095;  // ETHTOOL_PERQUEUE (MAX_NUM_QUEUE - 1)

struct U32Field {
  std::optional<uint32_t> model::Coalesce::*field;
  const char* name;
};
struct BoolField {
  std::optional<bool> model::Coalesce::*field;
  const char* name;
};
constexpr std::array<U32Field, 4> kU32{{{&model::Coalesce::rx_usecs, "rx_usecs"},
                                        {&model::Coalesce::rx_max_frames, "rx_max_frames"},
                                        {&model::Coalesce::tx_usecs, "tx_usecs"},
                                        {&model::Coalesce::tx_max_frames, "tx_max_frames"}}};
constexpr std::array<BoolField, 4> kBool{{{&model::Coalesce::use_adaptive_rx, "use_adaptive_rx"},
                                          {&model::Coalesce::use_adaptive_tx, "use_adaptive_tx"},
                                          {&model::Coalesce::use_cqe_mode_rx, "use_cqe_mode_rx"},
                                          {&model::Coalesce::use_cqe_mode_tx, "use_cqe_mode_tx"}}};

// The NAPI settings as the file names them (model::NapiConfig; the netdev spec's names with
// underscores and the unit of the timeouts).
struct NapiField {
  std::optional<uint64_t> model::NapiConfig::*u64;  // timeouts (ns)
  const char* name;
};
constexpr const char* kDeferName = "defer_hard_irqs";
constexpr std::array<NapiField, 2> kNapiTimeouts{
    {{&model::NapiConfig::gro_flush_timeout_ns, "gro_flush_timeout_ns"},
     {&model::NapiConfig::irq_suspend_timeout_ns, "irq_suspend_timeout_ns"}}};

const char* json_type(const json& v) {
  return v.type_name();
}

Failure bad(const std::string& src, const std::string& where, const std::string& problem) {
  return DIMCTL_FAIL(0, "state file {}: {}: {}", src, where, problem);
}

json coalesce_to_json(const model::Coalesce& c) {
  json j = json::object();
  for (const auto& f : kU32) {
    if (c.*f.field) j[f.name] = *(c.*f.field);
  }
  for (const auto& f : kBool) {
    if (c.*f.field) j[f.name] = *(c.*f.field);
  }
  return j;
}

Result<model::Coalesce> coalesce_from_json(const json& j, const std::string& src,
                                           const std::string& where) {
  if (!j.is_object())
    return bad(src, where, fmt::format("expected an object, got {}", json_type(j)));
  model::Coalesce c;
  for (const auto& [key, v] : j.items()) {
    bool known = false;
    for (const auto& f : kU32) {
      if (key != f.name) continue;
      known = true;
      if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) {
        return bad(
            src, where + "." + key,
            fmt::format("expected an unsigned 32-bit integer, got {} {}", json_type(v), v.dump()));
      }
      c.*f.field = static_cast<uint32_t>(v.get<uint64_t>());
    }
    for (const auto& f : kBool) {
      if (key != f.name) continue;
      known = true;
      if (!v.is_boolean()) {
        return bad(src, where + "." + key,
                   fmt::format("expected true or false, got {} {}", json_type(v), v.dump()));
      }
      c.*f.field = v.get<bool>();
    }
    if (!known) return bad(src, where, fmt::format("unknown field \"{}\"", key));
  }
  if (c.empty()) return bad(src, where, "records no field");
  return c;
}

json napi_to_json(const model::NapiConfig& c) {
  json j = json::object();
  if (c.defer_hard_irqs) j[kDeferName] = *c.defer_hard_irqs;
  for (const auto& f : kNapiTimeouts) {
    if (c.*f.u64) j[f.name] = *(c.*f.u64);
  }
  return j;
}

Result<model::NapiConfig> napi_from_json(const json& j, const std::string& src,
                                         const std::string& where) {
  if (!j.is_object())
    return bad(src, where, fmt::format("expected an object, got {}", json_type(j)));
  model::NapiConfig c;
  for (const auto& [key, v] : j.items()) {
    if (key == kDeferName) {
      if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) {
        return bad(
            src, where + "." + key,
            fmt::format("expected an unsigned 32-bit integer, got {} {}", json_type(v), v.dump()));
      }
      c.defer_hard_irqs = static_cast<uint32_t>(v.get<uint64_t>());
      continue;
    }
    bool known = false;
    for (const auto& f : kNapiTimeouts) {
      if (key != f.name) continue;
      known = true;
      if (!v.is_number_unsigned()) {
        return bad(
            src, where + "." + key,
            fmt::format("expected an unsigned integer (ns), got {} {}", json_type(v), v.dump()));
      }
      c.*f.u64 = v.get<uint64_t>();
    }
    if (!known) return bad(src, where, fmt::format("unknown field \"{}\"", key));
  }
  if (c.empty()) return bad(src, where, "records no field");
  return c;
}

model::NapiConfig merge_first_wins(const model::NapiConfig& existing,
                                   const model::NapiConfig& add) {
  model::NapiConfig out = existing;
  if (!out.defer_hard_irqs) out.defer_hard_irqs = add.defer_hard_irqs;
  for (const auto& f : kNapiTimeouts) {
    if (!(out.*f.u64)) out.*f.u64 = add.*f.u64;
  }
  return out;
}

std::vector<std::string> mismatches(const model::NapiConfig& orig, const model::NapiConfig& back) {
  std::vector<std::string> out;
  auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("n/a"); };
  if (orig.defer_hard_irqs && back.defer_hard_irqs != orig.defer_hard_irqs) {
    out.push_back(fmt::format("{}: recorded {}, reads {}", kDeferName, *orig.defer_hard_irqs,
                              opt(back.defer_hard_irqs)));
  }
  for (const auto& f : kNapiTimeouts) {
    if (orig.*f.u64 && back.*f.u64 != orig.*f.u64) {
      out.push_back(
          fmt::format("{}: recorded {}, reads {}", f.name, *(orig.*f.u64), opt(back.*f.u64)));
    }
  }
  return out;
}

// First value wins per field.
model::Coalesce merge_first_wins(const model::Coalesce& existing, const model::Coalesce& add) {
  model::Coalesce out = existing;
  for (const auto& f : kU32) {
    if (!(out.*f.field)) out.*f.field = add.*f.field;
  }
  for (const auto& f : kBool) {
    if (!(out.*f.field)) out.*f.field = add.*f.field;
  }
  return out;
}

std::string iso_utc(time_t t) {
  tm tmv{};
  gmtime_r(&t, &tmv);
  std::array<char, 32> buf{};
  strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tmv);
  return buf.data();
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Field 22 (starttime) of /proc/<pid>/stat; nullopt when the process does not exist.
std::optional<uint64_t> proc_start_ticks(const std::string& pid) {
  std::string stat = read_small_file("/proc/" + pid + "/stat");
  auto rp = stat.rfind(')');
  if (rp == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(rp + 1));
  std::string tok;
  for (int field = 3; rest >> tok; ++field) {
    if (field == 22) {
      try {
        return std::stoull(tok);
      } catch (...) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

std::string boot_id() {
  std::string id = read_small_file("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

bool is_gone(const Error& e) {
  return e.code() == ENODEV || e.code() == ENXIO;
}

// Fields whose read-back differs from the original. Values under adaptive moderation are not
// compared: the driver's own DIM moves them.
std::vector<std::string> mismatches(const model::Coalesce& orig, const model::Coalesce& back) {
  std::vector<std::string> out;
  const bool arx = orig.use_adaptive_rx.value_or(false);
  const bool atx = orig.use_adaptive_tx.value_or(false);
  for (const auto& f : kU32) {
    const auto& want = orig.*f.field;
    if (!want) continue;
    const std::string_view name = f.name;
    if (arx && name.substr(0, 3) == "rx_") continue;
    if (atx && name.substr(0, 3) == "tx_") continue;
    const auto& got = back.*f.field;
    if (got != want) {
      out.push_back(fmt::format("{}: recorded {}, reads {}", name, *want,
                                got ? std::to_string(*got) : std::string("n/a")));
    }
  }
  for (const auto& f : kBool) {
    const auto& want = orig.*f.field;
    if (!want) continue;
    const auto& got = back.*f.field;
    if (got != want) {
      out.push_back(fmt::format("{}: recorded {}, reads {}", f.name, *want ? "on" : "off",
                                got ? (*got ? "on" : "off") : "n/a"));
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i != 0) out += sep;
    out += v[i];
  }
  return out;
}

Result<void> mkdir_0700(const std::filesystem::path& dir) {
  if (dir.empty()) return ok();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return DIMCTL_FAIL(ENOTDIR, "state directory {}", dir.string());
    return ok();
  }
  if (errno != ENOENT) return DIMCTL_ERRNO("state directory {}", dir.string());
  if (auto p = mkdir_0700(dir.parent_path()); !p) return p;
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) {
    return DIMCTL_ERRNO("create state directory {}", dir.string());
  }
  return ok();
}

// Removes `.NAME.PID.XXXXXX` files in `dir` (persist()'s temporary files) whose writer PID is no
// longer running: a writer killed between mkostemp and rename leaves one behind. Files of live
// writers (this process included) and anything else are left alone; failures are ignored (the
// next writer tries again).
void remove_stale_temporaries(const std::filesystem::path& dir, const std::string& name) {
  const std::string prefix = fmt::format(".{}.", name);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() <= prefix.size() + 7 || f.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = f.substr(prefix.size());  // "PID.XXXXXX"
    const auto dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.size() - dot - 1 != 6 ||
        rest.find_first_not_of("0123456789") != dot || dot > 10) {
      continue;
    }
    const long long pid = std::stoll(rest.substr(0, dot));
    if (pid <= 0 || pid > INT_MAX || pid == getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or EPERM)
    ::unlink(e.path().c_str());
  }
}

}  // namespace

bool RestoreReport::all_restored() const {
  if (file_error) return false;
  for (const auto& r : results) {
    if (r.outcome == RestoreOutcome::kFailed) return false;
  }
  return true;
}

std::string describe(const model::Coalesce& c) {
  std::vector<std::string> parts;
  for (const auto& f : kU32) {
    if (c.*f.field) parts.push_back(fmt::format("{}={}", f.name, *(c.*f.field)));
  }
  for (const auto& f : kBool) {
    if (c.*f.field) parts.push_back(fmt::format("{}={}", f.name, *(c.*f.field) ? "on" : "off"));
  }
  return parts.empty() ? std::string("(nothing)") : join(parts, " ");
}

std::string describe(const model::NapiConfig& c) {
  std::vector<std::string> parts;
  if (c.defer_hard_irqs) parts.push_back(fmt::format("{}={}", kDeferName, *c.defer_hard_irqs));
  for (const auto& f : kNapiTimeouts) {
    if (c.*f.u64) parts.push_back(fmt::format("{}={}", f.name, *(c.*f.u64)));
  }
  return parts.empty() ? std::string("(nothing)") : join(parts, " ");
}

JsonOriginalsStore::JsonOriginalsStore(std::string path) : path_(std::move(path)) {}

WriterInfo JsonOriginalsStore::current_writer() {
  WriterInfo w;
  w.pid = getpid();
  w.start_ticks = proc_start_ticks("self").value_or(0);
  const long hz = sysconf(_SC_CLK_TCK);
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  if (hz > 0) {
    const auto start = real.tv_sec - boot.tv_sec + static_cast<time_t>(w.start_ticks / hz);
    w.start_time = iso_utc(start);
  }
  w.boot_id = boot_id();
  w.written_at = iso_utc(real.tv_sec);
  return w;
}

bool JsonOriginalsStore::writer_alive(const WriterInfo& w) {
  if (w.pid <= 0) return false;
  if (!w.boot_id.empty() && w.boot_id != boot_id()) return false;
  auto ticks = proc_start_ticks(std::to_string(w.pid));
  return ticks && *ticks == w.start_ticks;
}

std::string JsonOriginalsStore::to_json(const Originals& o, const WriterInfo& w) {
  json j = json::object();
  j["version"] = kVersion;
  j["writer"] = {{"pid", w.pid},
                 {"start_ticks", w.start_ticks},
                 {"start_time", w.start_time},
                 {"boot_id", w.boot_id},
                 {"written_at", w.written_at}};
  json net = json::object();
  for (const auto& [dev, n] : o.net) {
    json e = json::object();
    if (n.device) e["device"] = coalesce_to_json(*n.device);
    if (!n.queues.empty()) {
      json q = json::object();
      for (const auto& [idx, c] : n.queues) q[std::to_string(idx)] = coalesce_to_json(c);
      e["queues"] = q;
    }
    net[dev] = e;
  }
  j["net"] = net;
  json rdma = json::object();
  for (const auto& [dev, dim] : o.rdma) rdma[dev] = {{"dim", dim}};
  j["rdma"] = rdma;
  if (!o.napi.empty()) {  // absent otherwise: such files stay readable by an older dimctl
    json napi = json::object();
    for (const auto& [dev, ids] : o.napi) {
      json e = json::object();
      for (const auto& [id, c] : ids) e[std::to_string(id)] = napi_to_json(c);
      napi[dev] = e;
    }
    j["napi"] = napi;
  }
  return j.dump(2) + "\n";
}

Result<Originals> JsonOriginalsStore::from_json(const std::string& text, const std::string& src,
                                                WriterInfo* writer) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, or out_of_range for a number too large for a double ("1e400").
    // e.what(): "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return DIMCTL_FAIL(0, "state file {}: not valid JSON: {}", src, what);
  }
  if (!j.is_object())
    return bad(src, "top level", fmt::format("expected an object, got {}", json_type(j)));
  for (const auto& [key, v] : j.items()) {
    if (key != "version" && key != "writer" && key != "net" && key != "rdma" && key != "napi") {
      return bad(src, "top level", fmt::format("unknown key \"{}\"", key));
    }
    (void)v;
  }
  if (!j.contains("version")) return bad(src, "version", "missing");
  if (!j["version"].is_number_integer() || j["version"].get<int64_t>() != kVersion) {
    return bad(src, "version",
               fmt::format("unsupported version {} (this dimctl reads version {})",
                           j["version"].dump(), kVersion));
  }
  WriterInfo w;
  if (j.contains("writer")) {
    const json& wj = j["writer"];
    if (!wj.is_object()) return bad(src, "writer", "expected an object");
    for (const auto& [key, v] : wj.items()) {
      if (key == "pid") {
        if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > INT_MAX) {
          return bad(src, "writer.pid", fmt::format("expected a positive pid, got {}", v.dump()));
        }
        w.pid = v.get<int64_t>();
      } else if (key == "start_ticks") {
        if (!v.is_number_unsigned()) {
          return bad(src, "writer.start_ticks",
                     fmt::format("expected an unsigned integer, got {}", v.dump()));
        }
        w.start_ticks = v.get<uint64_t>();
      } else if (key == "start_time" || key == "boot_id" || key == "written_at") {
        if (!v.is_string()) {
          return bad(src, "writer." + key, fmt::format("expected a string, got {}", v.dump()));
        }
        (key == "start_time" ? w.start_time
         : key == "boot_id"  ? w.boot_id
                             : w.written_at) = v.get<std::string>();
      } else {
        return bad(src, "writer", fmt::format("unknown key \"{}\"", key));
      }
    }
  }
  Originals o;
  if (j.contains("net")) {
    const json& nj = j["net"];
    if (!nj.is_object())
      return bad(src, "net", fmt::format("expected an object, got {}", json_type(nj)));
    for (const auto& [dev, e] : nj.items()) {
      const std::string where = "net." + dev;
      if (dev.empty() || dev.size() > kMaxNetName || dev.find('/') != std::string::npos) {
        return bad(src, where, "invalid network device name");
      }
      if (!e.is_object())
        return bad(src, where, fmt::format("expected an object, got {}", json_type(e)));
      NetOriginals n;
      for (const auto& [key, v] : e.items()) {
        if (key == "device") {
          auto c = coalesce_from_json(v, src, where + ".device");
          if (!c) return std::move(c).error();
          n.device = *c;
        } else if (key == "queues") {
          if (!v.is_object()) return bad(src, where + ".queues", "expected an object");
          for (const auto& [qs, qv] : v.items()) {
            const std::string qwhere = where + ".queues." + qs;
            if (qs.empty() || qs.size() > 4 ||
                qs.find_first_not_of("0123456789") != std::string::npos ||
                std::stoul(qs) > kMaxQueue) {
              return bad(src, qwhere,
                         fmt::format("queue key must be a decimal queue index 0..{}", kMaxQueue));
            }
            auto c = coalesce_from_json(qv, src, qwhere);
            if (!c) return std::move(c).error();
            n.queues[static_cast<uint32_t>(std::stoul(qs))] = *c;
          }
        } else {
          return bad(src, where, fmt::format("unknown key \"{}\"", key));
        }
      }
      if (!n.device && n.queues.empty()) return bad(src, where, "records nothing");
      o.net[dev] = std::move(n);
    }
  }
  if (j.contains("rdma")) {
    const json& rj = j["rdma"];
    if (!rj.is_object())
      return bad(src, "rdma", fmt::format("expected an object, got {}", json_type(rj)));
    for (const auto& [dev, e] : rj.items()) {
      const std::string where = "rdma." + dev;
      if (dev.empty() || dev.size() > kMaxIbName)
        return bad(src, where, "invalid RDMA device name");
      if (!e.is_object() || e.size() != 1 || !e.contains("dim") || !e["dim"].is_boolean()) {
        return bad(src, where, fmt::format("expected {{\"dim\": true|false}}, got {}", e.dump()));
      }
      o.rdma[dev] = e["dim"].get<bool>();
    }
  }
  if (j.contains("napi")) {
    const json& aj = j["napi"];
    if (!aj.is_object())
      return bad(src, "napi", fmt::format("expected an object, got {}", json_type(aj)));
    for (const auto& [dev, e] : aj.items()) {
      const std::string where = "napi." + dev;
      if (dev.empty() || dev.size() > kMaxNetName || dev.find('/') != std::string::npos) {
        return bad(src, where, "invalid network device name");
      }
      if (!e.is_object())
        return bad(src, where, fmt::format("expected an object, got {}", json_type(e)));
      if (e.empty()) return bad(src, where, "records nothing");
      auto& ids = o.napi[dev];
      for (const auto& [ks, v] : e.items()) {
        const std::string iwhere = where + "." + ks;
        if (ks.empty() || ks.size() > 10 ||
            ks.find_first_not_of("0123456789") != std::string::npos || std::stoull(ks) == 0 ||
            std::stoull(ks) > UINT32_MAX) {
          return bad(src, iwhere, "NAPI key must be a decimal NAPI id 1..4294967295");
        }
        auto c = napi_from_json(v, src, iwhere);
        if (!c) return std::move(c).error();
        ids[static_cast<uint32_t>(std::stoull(ks))] = *c;
      }
    }
  }
  if (writer != nullptr) *writer = w;
  return o;
}

Result<void> JsonOriginalsStore::load() {
  Fd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) {
      data_ = {};
      writer_.reset();
      loaded_ = true;
      return ok();
    }
    return DIMCTL_ERRNO("state file {}: open", path_);
  }
  std::string text;
  std::array<char, 8192> buf{};
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return DIMCTL_ERRNO("state file {}: read", path_);
    }
    if (n == 0) break;
    text.append(buf.data(), static_cast<size_t>(n));
    if (text.size() > (16U << 20))
      return DIMCTL_FAIL(0, "state file {}: larger than 16 MiB", path_);
  }
  WriterInfo w;
  auto o = from_json(text, path_, &w);
  if (!o) return std::move(o).error();
  data_ = std::move(*o);
  writer_ = w;
  loaded_ = true;
  return ok();
}

Result<void> JsonOriginalsStore::ensure_loaded() {
  if (loaded_) return ok();
  return load();
}

Result<void> JsonOriginalsStore::persist() {
  namespace fs = std::filesystem;
  const fs::path target(path_);
  fs::path dir = target.parent_path();
  if (auto d = mkdir_0700(dir); !d) return d;
  if (dir.empty()) dir = ".";
  // The writer's pid in the name: a temporary file left by a writer that died between create and
  // rename (SIGKILL, power loss) is recognised and removed by the next writer.
  remove_stale_temporaries(dir, target.filename().string());
  // fmt::format, not "." + std::string: GCC 12 -O3 reports a false -Wrestrict in the inlined
  // string insert of `const char* + std::string&&` (GCC bugs 105329, 105651).
  std::string tmpl =
      (dir / fmt::format(".{}.{}.XXXXXX", target.filename().string(), getpid())).string();
  Fd fd(mkostemp(tmpl.data(), O_CLOEXEC));
  if (!fd.valid())
    return DIMCTL_ERRNO("state file {}: create temporary file in {}", path_, dir.string());
  auto fail_tmp = [&](Error e) -> Result<void> {
    ::unlink(tmpl.c_str());
    return fail(std::move(e));
  };
  const WriterInfo w = current_writer();
  const std::string text = to_json(data_, w);
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      // The directory, not the temporary file's random name: the same failure gives the same
      // message, which the controller then reports once, not every period.
      return fail_tmp(
          DIMCTL_ERRNO("state file {}: write a temporary file in {}", path_, dir.string()));
    }
    off += static_cast<size_t>(n);
  }
  if (::fchmod(fd.get(), 0600) < 0) return fail_tmp(DIMCTL_ERRNO("state file {}: fchmod", path_));
  if (::fsync(fd.get()) < 0) return fail_tmp(DIMCTL_ERRNO("state file {}: fsync", path_));
  fd.reset();
  if (::rename(tmpl.c_str(), path_.c_str()) < 0) {
    return fail_tmp(
        DIMCTL_ERRNO("state file {}: rename its temporary file in {}", path_, dir.string()));
  }
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd.valid() || ::fsync(dfd.get()) < 0) {
    return DIMCTL_ERRNO("state file {}: fsync directory {}", path_, dir.string());
  }
  writer_ = w;
  return ok();
}

Result<void> JsonOriginalsStore::remove_file() {
  if (::unlink(path_.c_str()) < 0 && errno != ENOENT) {
    return DIMCTL_ERRNO("state file {}: unlink", path_);
  }
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  remove_stale_temporaries(dir.empty() ? "." : dir,
                           std::filesystem::path(path_).filename().string());
  Fd dfd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.valid()) (void)::fsync(dfd.get());
  writer_.reset();
  return ok();
}

Result<void> JsonOriginalsStore::record_net(const std::string& dev,
                                            const model::Coalesce& original) {
  if (auto l = ensure_loaded(); !l) return l;
  if (dev.empty() || dev.size() > kMaxNetName) {
    return DIMCTL_FAIL(EINVAL, "record originals: invalid network device name \"{}\"", dev);
  }
  if (original.empty()) return ok();
  const Originals before = data_;
  auto& n = data_.net[dev];
  const model::Coalesce merged = n.device ? merge_first_wins(*n.device, original) : original;
  if (n.device && merged == *n.device) return ok();  // already recorded
  n.device = merged;
  if (auto p = persist(); !p) {
    data_ = before;
    return std::move(p).error().wrap(fmt::format("record originals of {}", dev));
  }
  return ok();
}

Result<void> JsonOriginalsStore::record_net_queue(const std::string& dev, uint32_t queue,
                                                  const model::Coalesce& original) {
  if (auto l = ensure_loaded(); !l) return l;
  if (dev.empty() || dev.size() > kMaxNetName) {
    return DIMCTL_FAIL(EINVAL, "record originals: invalid network device name \"{}\"", dev);
  }
  if (queue > kMaxQueue) {
    return DIMCTL_FAIL(EINVAL, "record originals of {} queue {}: queue index above {}", dev, queue,
                       kMaxQueue);
  }
  if (original.empty()) return ok();
  const Originals before = data_;
  auto& n = data_.net[dev];
  auto it = n.queues.find(queue);
  if (it != n.queues.end()) {
    const model::Coalesce merged = merge_first_wins(it->second, original);
    if (merged == it->second) return ok();
    it->second = merged;
  } else {
    n.queues[queue] = original;
  }
  if (auto p = persist(); !p) {
    data_ = before;
    return std::move(p).error().wrap(fmt::format("record originals of {} queue {}", dev, queue));
  }
  return ok();
}

Result<void> JsonOriginalsStore::record_rdma_dim(const std::string& ibdev, bool original) {
  if (auto l = ensure_loaded(); !l) return l;
  if (ibdev.empty() || ibdev.size() > kMaxIbName) {
    return DIMCTL_FAIL(EINVAL, "record originals: invalid RDMA device name \"{}\"", ibdev);
  }
  if (data_.rdma.count(ibdev) != 0) return ok();  // first value wins
  data_.rdma[ibdev] = original;
  if (auto p = persist(); !p) {
    data_.rdma.erase(ibdev);
    return std::move(p).error().wrap(fmt::format("record RDMA DIM original of {}", ibdev));
  }
  return ok();
}

Result<void> JsonOriginalsStore::record_napi(const std::string& dev, uint32_t napi_id,
                                             const model::NapiConfig& original) {
  if (auto l = ensure_loaded(); !l) return l;
  if (dev.empty() || dev.size() > kMaxNetName) {
    return DIMCTL_FAIL(EINVAL, "record originals: invalid network device name \"{}\"", dev);
  }
  if (napi_id == 0) return DIMCTL_FAIL(EINVAL, "record originals of {}: NAPI id 0", dev);
  if (original.empty()) return ok();
  const Originals before = data_;
  auto& ids = data_.napi[dev];
  auto it = ids.find(napi_id);
  if (it != ids.end()) {
    const model::NapiConfig merged = merge_first_wins(it->second, original);
    if (merged == it->second) return ok();  // already recorded
    it->second = merged;
  } else {
    ids[napi_id] = original;
  }
  if (auto p = persist(); !p) {
    data_ = before;
    return std::move(p).error().wrap(fmt::format("record originals of {} napi {}", dev, napi_id));
  }
  return ok();
}

Result<void> JsonOriginalsStore::forget(const std::string& device) {
  return forget_records(device, true, true);
}
Result<void> JsonOriginalsStore::forget_net(const std::string& dev) {
  return forget_records(dev, true, false);
}
Result<void> JsonOriginalsStore::forget_rdma(const std::string& ibdev) {
  return forget_records(ibdev, false, true);
}
Result<void> JsonOriginalsStore::forget_napi(const std::string& dev, uint32_t napi_id) {
  if (auto l = ensure_loaded(); !l) return l;
  auto it = data_.napi.find(dev);
  if (it == data_.napi.end() || it->second.count(napi_id) == 0) return ok();
  const Originals before = data_;
  it->second.erase(napi_id);
  if (it->second.empty()) data_.napi.erase(it);
  auto written = data_.empty() ? remove_file() : persist();
  if (!written) {
    data_ = before;
    return std::move(written).error().wrap(
        fmt::format("forget the originals of {} napi {}", dev, napi_id));
  }
  return ok();
}

Result<void> JsonOriginalsStore::rename_net(
    const std::vector<std::pair<std::string, std::string>>& renames) {
  if (auto l = ensure_loaded(); !l) return l;
  Originals next = data_;
  // Every record leaves its old name before any lands on a new one: a swap loses nothing.
  std::map<std::string, NetOriginals> moving;
  std::map<std::string, std::map<uint32_t, model::NapiConfig>> moving_napi;
  for (const auto& [from, to] : renames) {
    if (to.empty() || to.size() > kMaxNetName) {
      return DIMCTL_FAIL(EINVAL, "move originals of {}: invalid network device name \"{}\"", from,
                         to);
    }
    if (auto a = next.napi.find(from); a != next.napi.end()) {
      moving_napi[to] = std::move(a->second);
      next.napi.erase(a);
    }
    auto it = next.net.find(from);
    if (it == next.net.end()) continue;
    moving[to] = std::move(it->second);
    next.net.erase(it);
  }
  for (auto& [to, n] : moving) next.net[to] = std::move(n);
  for (auto& [to, a] : moving_napi) next.napi[to] = std::move(a);
  if (next == data_) return ok();
  const Originals before = std::exchange(data_, std::move(next));
  if (auto p = persist(); !p) {
    data_ = before;
    return std::move(p).error().wrap(
        fmt::format("move the originals of {} renamed device(s)", renames.size()));
  }
  return ok();
}

Result<void> JsonOriginalsStore::forget_records(const std::string& device, bool net, bool rdma) {
  if (auto l = ensure_loaded(); !l) return l;
  const Originals before = data_;
  if (net) data_.net.erase(device);
  if (net && rdma) data_.napi.erase(device);  // forget(): every record of the device
  if (rdma) data_.rdma.erase(device);
  if (data_ == before) return ok();
  auto written = data_.empty() ? remove_file() : persist();
  if (!written) {
    data_ = before;
    return std::move(written).error().wrap(fmt::format("forget the originals of {}", device));
  }
  return ok();
}

RestoreReport JsonOriginalsStore::restore_all(model::NetActuator& net, model::RdmaDimSwitch* rdma,
                                              model::NapiActuator* napi) {
  RestoreReport rep;
  if (auto l = ensure_loaded(); !l) {
    rep.file_error = std::move(l).error();
    return rep;
  }
  Originals remaining;
  auto add = [&](std::string device, RestoreOutcome outcome, std::string detail) {
    rep.results.push_back({std::move(device), outcome, std::move(detail)});
  };

  for (const auto& [dev, n] : data_.net) {
    if (n.device) {
      auto r = net.set(dev, *n.device);
      if (!r && is_gone(r.error())) {
        add(dev, RestoreOutcome::kGone,
            fmt::format("device no longer exists ({}); dropped", r.error().message()));
        continue;  // its queues went with it
      }
      if (!r) {
        add(dev, RestoreOutcome::kFailed, r.error().message());
        remaining.net[dev].device = *n.device;
      } else if (auto mm = mismatches(*n.device, *r); !mm.empty()) {
        add(dev, RestoreOutcome::kFailed, "read-back differs: " + join(mm, "; "));
        remaining.net[dev].device = *n.device;
      } else {
        add(dev, RestoreOutcome::kRestored, describe(*n.device));
      }
    }
    for (const auto& [q, c] : n.queues) {
      const std::string name = fmt::format("{} queue {}", dev, q);
      auto r = net.set_queue(dev, q, c);
      if (!r && is_gone(r.error())) {
        add(name, RestoreOutcome::kGone,
            fmt::format("no longer exists ({}); dropped", r.error().message()));
      } else if (!r) {
        add(name, RestoreOutcome::kFailed, r.error().message());
        remaining.net[dev].queues[q] = c;
      } else if (auto mm = mismatches(c, *r); !mm.empty()) {
        add(name, RestoreOutcome::kFailed, "read-back differs: " + join(mm, "; "));
        remaining.net[dev].queues[q] = c;
      } else {
        add(name, RestoreOutcome::kRestored, describe(c));
      }
    }
  }

  for (const auto& [dev, dim] : data_.rdma) {
    const std::string name = "rdma " + dev;
    const std::string want = fmt::format("adaptive-moderation {}", dim ? "on" : "off");
    if (rdma == nullptr) {
      add(name, RestoreOutcome::kFailed, "no RDMA netlink available to restore " + want);
      remaining.rdma[dev] = dim;
      continue;
    }
    auto r = rdma->set_dim(dev, dim);
    if (!r && is_gone(r.error())) {
      add(name, RestoreOutcome::kGone,
          fmt::format("no longer exists ({}); dropped", r.error().message()));
    } else if (!r) {
      add(name, RestoreOutcome::kFailed, r.error().message());
      remaining.rdma[dev] = dim;
    } else if (*r != dim) {
      add(name, RestoreOutcome::kFailed,
          fmt::format("read-back differs: recorded {}, reads {}", dim ? "on" : "off",
                      *r ? "on" : "off"));
      remaining.rdma[dev] = dim;
    } else {
      add(name, RestoreOutcome::kRestored, want);
    }
  }

  for (const auto& [dev, ids] : data_.napi) {
    for (const auto& [id, c] : ids) {
      const std::string name = fmt::format("{} napi {}", dev, id);
      if (napi == nullptr) {
        add(name, RestoreOutcome::kFailed, "no netdev netlink available to restore " + describe(c));
        remaining.napi[dev][id] = c;
        continue;
      }
      auto r = napi->set(id, c);
      if (!r && r.error().code() == ENOENT) {
        add(name, RestoreOutcome::kGone,
            fmt::format("no longer exists ({}); a NAPI that replaced it started from the "
                        "device's defaults; dropped",
                        r.error().message()));
      } else if (!r) {
        add(name, RestoreOutcome::kFailed, r.error().message());
        remaining.napi[dev][id] = c;
      } else if (auto mm = mismatches(c, r->config); !mm.empty()) {
        add(name, RestoreOutcome::kFailed, "read-back differs: " + join(mm, "; "));
        remaining.napi[dev][id] = c;
      } else {
        add(name, RestoreOutcome::kRestored, describe(c));
      }
    }
  }

  const Originals before = data_;
  data_ = std::move(remaining);
  if (data_.empty()) {
    if (auto rm = remove_file(); !rm) {
      rep.file_error = std::move(rm).error();
    } else {
      rep.file_removed = true;
    }
  } else if (data_ != before) {
    if (auto p = persist(); !p) rep.file_error = std::move(p).error();
  }
  return rep;
}

}  // namespace dimctl::state
