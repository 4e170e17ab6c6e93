// The writer of a state file, and whether that process still runs (json_originals_store.h:
// `start_ticks` with pid and boot_id identify it across pid reuse).
#include <time.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <optional>
#include <sstream>

#include "dimctl/state/json_originals_store.h"

namespace dimctl::state {
namespace {

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

}  // namespace

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

}  // namespace dimctl::state
