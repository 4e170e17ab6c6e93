#include "arrival_schedule.h"

#include <algorithm>

namespace dimctl::sim {

ArrivalSchedule::ArrivalSchedule(std::vector<std::vector<Interval>> per_queue, uint64_t seed)
    : per_queue_(std::move(per_queue)), cursors_(per_queue_.size()) {
  for (size_t q = 0; q < per_queue_.size(); ++q) {
    rng_.push_back(Rng::stream(seed, 0x7ace, q + 1));
    if (!per_queue_[q].empty()) duration_ns_ = std::max(duration_ns_, per_queue_[q].back().end_ns);
  }
}

void ArrivalSchedule::load(uint32_t queue) {
  Cursor& c = cursors_[queue];
  const Interval& iv = per_queue_[queue][c.interval];
  c.times.resize(iv.count);
  const auto span = static_cast<double>(iv.end_ns - iv.start_ns);
  for (int64_t& t : c.times) {
    t = iv.start_ns + 1 + static_cast<int64_t>(rng_[queue].uniform() * std::max(span - 1, 0.0));
  }
  std::sort(c.times.begin(), c.times.end());
  c.pos = 0;
  c.loaded = true;
}

int64_t ArrivalSchedule::next(uint32_t queue, int64_t from) {
  if (queue >= per_queue_.size()) return -1;
  Cursor& c = cursors_[queue];
  const auto& ivs = per_queue_[queue];
  while (c.interval < ivs.size()) {
    if (!c.loaded) load(queue);
    while (c.pos < c.times.size()) {
      const int64_t t = c.times[c.pos++];
      if (t >= from) return t;
    }
    ++c.interval;
    c.loaded = false;
  }
  return -1;
}

}  // namespace dimctl::sim
