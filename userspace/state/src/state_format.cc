// The state file's format (json_originals_store.h): JSON to Originals and back, with every
// field checked, and the per-field rules of state_format.h.
#include <fmt/format.h>
#include <array>
#include <climits>
#include <nlohmann/json.hpp>

#include "dimctl/state/json_originals_store.h"
#include "state_format.h"

namespace dimctl::state {
namespace {

using format::kMaxIbName;
using format::kMaxNetName;
using format::kMaxQueue;
using format::kVersion;
using nlohmann::json;

struct U32Field {
  std::optional<uint32_t> seam::Coalesce::*field;
  const char* name;
};
struct BoolField {
  std::optional<bool> seam::Coalesce::*field;
  const char* name;
};
constexpr std::array<U32Field, 4> kU32{{{&seam::Coalesce::rx_usecs, "rx_usecs"},
                                        {&seam::Coalesce::rx_max_frames, "rx_max_frames"},
                                        {&seam::Coalesce::tx_usecs, "tx_usecs"},
                                        {&seam::Coalesce::tx_max_frames, "tx_max_frames"}}};
constexpr std::array<BoolField, 4> kBool{{{&seam::Coalesce::use_adaptive_rx, "use_adaptive_rx"},
                                          {&seam::Coalesce::use_adaptive_tx, "use_adaptive_tx"},
                                          {&seam::Coalesce::use_cqe_mode_rx, "use_cqe_mode_rx"},
                                          {&seam::Coalesce::use_cqe_mode_tx, "use_cqe_mode_tx"}}};

// The NAPI settings as the file names them (seam::NapiConfig; the netdev spec's names with
// underscores and the unit of the timeouts).
struct NapiField {
  std::optional<uint64_t> seam::NapiConfig::*u64;  // timeouts (ns)
  const char* name;
};
constexpr const char* kDeferName = "defer_hard_irqs";
constexpr std::array<NapiField, 2> kNapiTimeouts{
    {{&seam::NapiConfig::gro_flush_timeout_ns, "gro_flush_timeout_ns"},
     {&seam::NapiConfig::irq_suspend_timeout_ns, "irq_suspend_timeout_ns"}}};

const char* json_type(const json& v) {
  return v.type_name();
}

Failure bad(const std::string& src, const std::string& where, const std::string& problem) {
  return DIMCTL_FAIL(0, "state file {}: {}: {}", src, where, problem);
}

json coalesce_to_json(const seam::Coalesce& c) {
  json j = json::object();
  for (const auto& f : kU32) {
    if (c.*f.field) j[f.name] = *(c.*f.field);
  }
  for (const auto& f : kBool) {
    if (c.*f.field) j[f.name] = *(c.*f.field);
  }
  return j;
}

Result<seam::Coalesce> coalesce_from_json(const json& j, const std::string& src,
                                          const std::string& where) {
  if (!j.is_object())
    return bad(src, where, fmt::format("expected an object, got {}", json_type(j)));
  seam::Coalesce c;
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

json napi_to_json(const seam::NapiConfig& c) {
  json j = json::object();
  if (c.defer_hard_irqs) j[kDeferName] = *c.defer_hard_irqs;
  for (const auto& f : kNapiTimeouts) {
    if (c.*f.u64) j[f.name] = *(c.*f.u64);
  }
  return j;
}

Result<seam::NapiConfig> napi_from_json(const json& j, const std::string& src,
                                        const std::string& where) {
  if (!j.is_object())
    return bad(src, where, fmt::format("expected an object, got {}", json_type(j)));
  seam::NapiConfig c;
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

}  // namespace

namespace format {

seam::Coalesce merge_first_wins(const seam::Coalesce& existing, const seam::Coalesce& add) {
  seam::Coalesce out = existing;
  for (const auto& f : kU32) {
    if (!(out.*f.field)) out.*f.field = add.*f.field;
  }
  for (const auto& f : kBool) {
    if (!(out.*f.field)) out.*f.field = add.*f.field;
  }
  return out;
}

seam::NapiConfig merge_first_wins(const seam::NapiConfig& existing, const seam::NapiConfig& add) {
  seam::NapiConfig out = existing;
  if (!out.defer_hard_irqs) out.defer_hard_irqs = add.defer_hard_irqs;
  for (const auto& f : kNapiTimeouts) {
    if (!(out.*f.u64)) out.*f.u64 = add.*f.u64;
  }
  return out;
}

std::vector<std::string> mismatches(const seam::Coalesce& orig, const seam::Coalesce& back) {
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

std::vector<std::string> mismatches(const seam::NapiConfig& orig, const seam::NapiConfig& back) {
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

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i != 0) out += sep;
    out += v[i];
  }
  return out;
}

}  // namespace format

std::string describe(const seam::Coalesce& c) {
  std::vector<std::string> parts;
  for (const auto& f : kU32) {
    if (c.*f.field) parts.push_back(fmt::format("{}={}", f.name, *(c.*f.field)));
  }
  for (const auto& f : kBool) {
    if (c.*f.field) parts.push_back(fmt::format("{}={}", f.name, *(c.*f.field) ? "on" : "off"));
  }
  return parts.empty() ? std::string("(nothing)") : format::join(parts, " ");
}

std::string describe(const seam::NapiConfig& c) {
  std::vector<std::string> parts;
  if (c.defer_hard_irqs) parts.push_back(fmt::format("{}={}", kDeferName, *c.defer_hard_irqs));
  for (const auto& f : kNapiTimeouts) {
    if (c.*f.u64) parts.push_back(fmt::format("{}={}", f.name, *(c.*f.u64)));
  }
  return parts.empty() ? std::string("(nothing)") : format::join(parts, " ");
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

}  // namespace dimctl::state
