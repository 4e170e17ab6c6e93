// JsonOriginalsStore: seam::OriginalsStore persisted as a JSON file (default
// /run/dimctl/state.json), so that originals survive a crash or SIGKILL of the writer and can be
// restored by `dimctl restore` or the next start.
//
// File format (version 1; only recorded fields appear; unknown keys are rejected):
//   {
//     "version": 1,
//     "writer": {"pid": 1234, "start_ticks": 5678, "start_time": "2026-01-01T00:00:00Z",
//                "boot_id": "...", "written_at": "2026-01-01T00:00:05Z"},
//     "net":  {"eth1": {"device": {"rx_usecs": 8, "use_adaptive_rx": true},
//                       "queues": {"0": {"rx_usecs": 8}}}},
//     "rdma": {"mlx5_0": {"dim": true}},
//     "napi": {"veth1": {"8193": {"defer_hard_irqs": 0, "gro_flush_timeout_ns": 0,
//                                 "irq_suspend_timeout_ns": 0}}}
//   }
// "napi" (per device name, per NAPI id) came later within version 1: files without it read as
// before, and an older dimctl refuses a file with it (unknown key "napi") instead of silently
// leaving NAPIs unrestored. The key is only written when a NAPI is recorded.
// `start_ticks` is field 22 of /proc/<pid>/stat (clock ticks after boot): with pid and boot_id
// it identifies the writer process even after pid reuse (writer_alive()).
//
// Durability: every record_* writes the whole file atomically (temp file in the same directory,
// fsync, rename, fsync of the directory) before returning OK. The directory is created 0700,
// the file 0600. The temp file is `.NAME.PID.XXXXXX`: one left by a writer killed before its
// rename is removed by the next write or removal of the file once PID is gone.
// Idempotence: the first recorded value of a field wins (per device, per queue, per field);
// recording again never overwrites an original.
// Not thread-safe; one writer process at a time (the daemon).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/napi_actuator.h"
#include "dimctl/seam/net_actuator.h"
#include "dimctl/seam/originals_store.h"
#include "dimctl/seam/rdma_actuator.h"

namespace dimctl::state {

inline constexpr const char* kDefaultStatePath = "/run/dimctl/state.json";

struct NetOriginals {
  std::optional<seam::Coalesce> device;       // device-wide settings
  std::map<uint32_t, seam::Coalesce> queues;  // per queue (ETHTOOL_PERQUEUE)
  bool operator==(const NetOriginals&) const = default;
};

struct WriterInfo {
  int64_t pid = 0;
  uint64_t start_ticks = 0;
  std::string start_time;  // ISO 8601 UTC, derived from start_ticks
  std::string boot_id;
  std::string written_at;  // ISO 8601 UTC
};

struct Originals {
  std::map<std::string, NetOriginals> net;
  std::map<std::string, bool> rdma;  // IB device -> kernel DIM switch
  // Device name -> NAPI id -> its software moderation (netdev napi-set).
  std::map<std::string, std::map<uint32_t, seam::NapiConfig>> napi;
  bool empty() const { return net.empty() && rdma.empty() && napi.empty(); }
  bool operator==(const Originals&) const = default;
};

enum class RestoreOutcome : uint8_t {
  kRestored,  // written back and read back as recorded; dropped from the file
  kGone,      // the device no longer exists; reported and dropped from the file
  kFailed,    // kept in the file for a later attempt
};

// "restored", "gone", "FAILED": how `dimctl restore` and `dimctl run` report each device.
constexpr std::string_view to_string(RestoreOutcome o) {
  switch (o) {
    case RestoreOutcome::kRestored:
      return "restored";
    case RestoreOutcome::kGone:
      return "gone";
    case RestoreOutcome::kFailed:
      return "FAILED";
  }
  return "?";
}

struct RestoreResult {
  std::string device;  // "eth1", "eth1 queue 3", "rdma mlx5_0", "veth1 napi 8193"
  RestoreOutcome outcome = RestoreOutcome::kRestored;
  std::string detail;  // what was written, or why it failed
};

struct RestoreReport {
  std::vector<RestoreResult> results;
  bool file_removed = false;        // everything restored (or gone): the file was deleted
  std::optional<Error> file_error;  // rewriting or deleting the file failed
  bool all_restored() const;        // no kFailed result and no file error
};

class JsonOriginalsStore final : public seam::OriginalsStore {
 public:
  explicit JsonOriginalsStore(std::string path = kDefaultStatePath);

  const std::string& path() const { return path_; }

  // Reads and validates the file; a missing file is an empty store. Errors name the file and
  // the problem: code 0 for a corrupt or invalid file (bad input), an errno for I/O failures.
  // record_* call it first when it has not run, so recorded originals of a crashed run are
  // never overwritten.
  Result<void> load();
  bool loaded() const { return loaded_; }

  const Originals& originals() const { return data_; }
  // The writer recorded in the loaded file (nullopt before load() or for a new file).
  const std::optional<WriterInfo>& writer() const { return writer_; }

  Result<void> record_net(const std::string& dev, const seam::Coalesce& original) override;
  Result<void> record_net_queue(const std::string& dev, uint32_t queue,
                                const seam::Coalesce& original) override;
  Result<void> record_rdma_dim(const std::string& ibdev, bool original) override;
  Result<void> record_napi(const std::string& dev, uint32_t napi_id,
                           const seam::NapiConfig& original) override;

  // Writes every original back: per net device the device-wide settings first (adaptive
  // flags included, so adaptive moderation is turned back on if it was on), then its queues;
  // then the RDMA DIM switches (rdma may be null: such records then fail), then the NAPIs (napi
  // may be null: such records then fail). Read-back is compared with the original (values
  // under adaptive moderation are not compared). Restored and vanished devices are dropped: a
  // NAPI whose id no longer exists (ENOENT: veth re-creates its NAPI when GRO toggles, a device
  // deleted or re-created takes its NAPIs along) is reported as gone, since the NAPI that
  // replaced it started from the device's defaults. The file is deleted when nothing is left,
  // otherwise rewritten with what failed.
  RestoreReport restore_all(seam::NetActuator& net, seam::RdmaDimSwitch* rdma,
                            seam::NapiActuator* napi = nullptr);
  // Drops every record of `device` (net, NAPI or RDMA) and persists; the file goes away when
  // nothing is left. For a device someone else changed after us (drift): its current value is
  // theirs, and neither exit nor a later `dimctl restore` may put our "original" back over it.
  Result<void> forget(const std::string& device);
  // The net or the RDMA records of a device only (the controller hands a device back).
  Result<void> forget_net(const std::string& dev) override;
  Result<void> forget_rdma(const std::string& ibdev) override;
  // One NAPI's record (the controller handed it back).
  Result<void> forget_napi(const std::string& dev, uint32_t napi_id) override;
  // One atomic rewrite of the file: a crash leaves every record under its old or its new name.
  Result<void> rename_net(const std::vector<std::pair<std::string, std::string>>& renames) override;

  // Serialisation, exposed for tests and `dimctl restore --dry-run` style tooling.
  static std::string to_json(const Originals& o, const WriterInfo& w);
  // `source` names the input in errors (the file path).
  static Result<Originals> from_json(const std::string& text, const std::string& source,
                                     WriterInfo* writer = nullptr);

  // Information about the current process, as written into the file.
  static WriterInfo current_writer();
  // Whether `w` is a live process (same boot, pid exists with the same start time).
  static bool writer_alive(const WriterInfo& w);

 private:
  Result<void> ensure_loaded();
  Result<void> forget_records(const std::string& device, bool net, bool rdma);
  Result<void> persist();  // atomic write of data_ (deletes nothing)
  Result<void> remove_file();
  // After a change of data_ from `before`: the file rewritten (removed when nothing is left), or
  // data_ back to `before` and the error wrapped in `what`.
  Result<void> save_or_undo(const Originals& before, const std::string& what);

  std::string path_;
  bool loaded_ = false;
  Originals data_;
  std::optional<WriterInfo> writer_;
};

// Field names used in the JSON file and in messages.
std::string describe(const seam::Coalesce& c);
std::string describe(const seam::NapiConfig& c);

}  // namespace dimctl::state
