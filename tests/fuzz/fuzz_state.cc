// libFuzzer harness: the state-file loader (JsonOriginalsStore::from_json, what load() and
// `dimctl restore` run on the file's bytes). What it accepts must survive a write and a re-read
// unchanged: that is what a crash between two runs relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dimctl/state/json_originals_store.h"

using dimctl::state::JsonOriginalsStore;
using dimctl::state::WriterInfo;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  WriterInfo w;
  auto o = JsonOriginalsStore::from_json(text, "fuzz.json", &w);
  if (!o) {
    if (o.error().message().empty()) std::abort();
    return 0;
  }
  // The daemon always writes itself as the writer (a positive pid); a file without one reads as 0.
  if (w.pid == 0) w.pid = 1;
  WriterInfo w2;
  auto again = JsonOriginalsStore::from_json(JsonOriginalsStore::to_json(*o, w), "again", &w2);
  if (!again || *again != *o) std::abort();
  if (w2.pid != w.pid || w2.start_ticks != w.start_ticks || w2.boot_id != w.boot_id ||
      w2.start_time != w.start_time || w2.written_at != w.written_at) {
    std::abort();
  }
  return 0;
}
