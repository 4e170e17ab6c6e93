#include "dimctl/state/json_originals_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "dimctl/common/fd.h"
#include "state_format.h"

namespace dimctl::state {
namespace {

using format::kMaxIbName;
using format::kMaxNetName;
using format::kMaxQueue;
using format::merge_first_wins;

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

JsonOriginalsStore::JsonOriginalsStore(std::string path) : path_(std::move(path)) {}

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
                                            const seam::Coalesce& original) {
  if (auto l = ensure_loaded(); !l) return l;
  if (dev.empty() || dev.size() > kMaxNetName) {
    return DIMCTL_FAIL(EINVAL, "record originals: invalid network device name \"{}\"", dev);
  }
  if (original.empty()) return ok();
  const Originals before = data_;
  auto& n = data_.net[dev];
  const seam::Coalesce merged = n.device ? merge_first_wins(*n.device, original) : original;
  if (n.device && merged == *n.device) return ok();  // already recorded
  n.device = merged;
  return save_or_undo(before, fmt::format("record originals of {}", dev));
}

Result<void> JsonOriginalsStore::record_net_queue(const std::string& dev, uint32_t queue,
                                                  const seam::Coalesce& original) {
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
    const seam::Coalesce merged = merge_first_wins(it->second, original);
    if (merged == it->second) return ok();
    it->second = merged;
  } else {
    n.queues[queue] = original;
  }
  return save_or_undo(before, fmt::format("record originals of {} queue {}", dev, queue));
}

Result<void> JsonOriginalsStore::record_rdma_dim(const std::string& ibdev, bool original) {
  if (auto l = ensure_loaded(); !l) return l;
  if (ibdev.empty() || ibdev.size() > kMaxIbName) {
    return DIMCTL_FAIL(EINVAL, "record originals: invalid RDMA device name \"{}\"", ibdev);
  }
  if (data_.rdma.count(ibdev) != 0) return ok();  // first value wins
  const Originals before = data_;
  data_.rdma[ibdev] = original;
  return save_or_undo(before, fmt::format("record RDMA DIM original of {}", ibdev));
}

Result<void> JsonOriginalsStore::record_napi(const std::string& dev, uint32_t napi_id,
                                             const seam::NapiConfig& original) {
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
    const seam::NapiConfig merged = merge_first_wins(it->second, original);
    if (merged == it->second) return ok();  // already recorded
    it->second = merged;
  } else {
    ids[napi_id] = original;
  }
  return save_or_undo(before, fmt::format("record originals of {} napi {}", dev, napi_id));
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
  return save_or_undo(before, fmt::format("forget the originals of {} napi {}", dev, napi_id));
}

Result<void> JsonOriginalsStore::rename_net(
    const std::vector<std::pair<std::string, std::string>>& renames) {
  if (auto l = ensure_loaded(); !l) return l;
  Originals next = data_;
  // Every record leaves its old name before any lands on a new one: a swap loses nothing.
  std::map<std::string, NetOriginals> moving;
  std::map<std::string, std::map<uint32_t, seam::NapiConfig>> moving_napi;
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
  return save_or_undo(before,
                      fmt::format("move the originals of {} renamed device(s)", renames.size()));
}

Result<void> JsonOriginalsStore::forget_records(const std::string& device, bool net, bool rdma) {
  if (auto l = ensure_loaded(); !l) return l;
  const Originals before = data_;
  if (net) data_.net.erase(device);
  if (net && rdma) data_.napi.erase(device);  // forget(): every record of the device
  if (rdma) data_.rdma.erase(device);
  if (data_ == before) return ok();
  return save_or_undo(before, fmt::format("forget the originals of {}", device));
}

Result<void> JsonOriginalsStore::save_or_undo(const Originals& before, const std::string& what) {
  auto written = data_.empty() ? remove_file() : persist();
  if (!written) {
    data_ = before;
    return std::move(written).error().wrap(what);
  }
  return ok();
}

}  // namespace dimctl::state
