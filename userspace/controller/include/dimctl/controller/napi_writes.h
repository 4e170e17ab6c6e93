// NapiWrites: the NAPIs of devices written with method napi (netdev napi-set, software
// moderation), each a write target of its own: its original recorded durably before the first
// write, what was written, what it holds. The netdev family sends no notifications, so drift and
// NAPIs that are gone are found by reading back (check(), check_all()).
//
// The device side of a write (the mode gate, the rate limit, the device's counters and error)
// stays with the Controller (napi_write.cc), which calls these per NAPI.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dimctl/common/result.h"
#include "dimctl/seam/napi_actuator.h"
#include "dimctl/seam/originals_store.h"
#include "dimctl/seam/policy.h"
#include "dimctl/seam/snapshot.h"

namespace dimctl::controller {

// One NAPI of a device written with method napi.
struct NapiRecord {
  std::string device;  // its device's name now (follows renames)
  uint32_t ifindex = 0;
  // The two fields we write, as read right before our first write (also in the OriginalsStore).
  std::optional<seam::NapiConfig> original;
  std::optional<seam::NapiConfig> current;      // as last read (napi-get, set read-back)
  std::optional<seam::NapiConfig> applied;      // read-back of our last write
  std::optional<seam::SoftwareProfile> target;  // what we last wrote successfully
  int64_t checked_ns = 0;                       // last read-back (drift compare) or write
  // Since when napi-get has answered ENOENT. The record is kept for forget_gone_ns: since Linux
  // 6.13 a driver that registers its NAPIs with a config slot (igb, mlx5, ...) re-creates them
  // after link down/up with the same id and the same settings, ours included.
  std::optional<int64_t> gone_since_ns;
};

class NapiWrites {
 public:
  // A read-back found a value we did not write on a NAPI of `device`.
  using DriftFn = std::function<void(const std::string& device, uint32_t napi_id)>;

  // `napi` may be null (no netdev netlink). `forget_gone_ns`: how long a gone NAPI's record is
  // kept; `check_interval_ns`: how often every NAPI is read back (check_due()).
  NapiWrites(seam::NapiActuator* napi, seam::OriginalsStore& originals, int64_t forget_gone_ns,
             int64_t check_interval_ns, DriftFn on_drift);

  // napi-set can be written (an actuator whose kernel has it).
  bool available() const { return available_; }
  // Why a device with method napi is not written while !available().
  std::string unavailable_reason() const;

  // NAPI key.napi_id's record, created on first use (then read once for the view), under
  // `device` unless its original is recorded under another name (a rename not followed yet).
  NapiRecord& record(const seam::QueueKey& key, const std::string& device);
  // The NAPI's settings as last read (the view); nullopt when unknown.
  std::optional<seam::NapiConfig> current(uint32_t napi_id) const;

  // Reads one NAPI back. False when it is gone or unreadable; a value we did not write is drift
  // (on_drift). A gone NAPI's record is kept for forget_gone_ns, then forgotten here and in the
  // OriginalsStore; a NAPI never written is forgotten at once.
  bool check(uint32_t napi_id, NapiRecord& rec, int64_t now_ns);
  // Whether the periodic read-back of every NAPI is due, and that read-back.
  bool check_due(int64_t now_ns) const;
  void check_all(int64_t now_ns);

  // Before the first write: the NAPI's settings read and its original recorded durably under
  // `device` (`where` names the NAPI in errors, which are the device's error text).
  Result<void> record_original(const std::string& device, uint32_t napi_id, NapiRecord& rec,
                               const std::string& where);
  // The write and its read-back (`where` as above).
  Result<void> write(uint32_t napi_id, NapiRecord& rec, const seam::SoftwareProfile& want,
                     int64_t now_ns, const std::string& where);

  // Names and ifindexes of the devices with a recorded NAPI original.
  void add_names_with_originals(std::vector<std::string>& names) const;
  bool has_originals(const std::string& device) const;
  uint32_t recorded_ifindex(const std::string& device) const;  // 0: none known
  // Devices renamed (old name -> new name): their records follow.
  void rename(const std::map<std::string, std::string>& to_of);

  // The device's NAPIs get their originals back (a NAPI that is gone is skipped and its record
  // forgotten); each failure counts in `failures`, the first is returned.
  Result<void> release(const std::string& device, size_t& failures);
  // The device's records dropped, here and in the OriginalsStore: the next write records afresh.
  Result<void> forget(const std::string& device);

 private:
  seam::NapiActuator* napi_;
  bool available_;
  seam::OriginalsStore& originals_;
  int64_t forget_gone_ns_;
  int64_t check_interval_ns_;
  DriftFn on_drift_;
  // By NAPI id (ids are never reused).
  std::map<uint32_t, NapiRecord> records_;
  std::optional<int64_t> last_check_ns_;
};

}  // namespace dimctl::controller
