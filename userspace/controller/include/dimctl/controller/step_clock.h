// StepClock: where a step stands in time. Counts the steps and the failed samples, and gives each
// snapshot its period against the last accepted one: the controller's rates and DIM windows use
// the snapshots' own times, and a snapshot older than the last (a clock that went backwards)
// starts the series again instead of giving a negative period. Also when the view was last
// published (ControllerOptions::publish_interval_ns).
#pragma once

#include <cstdint>
#include <optional>

namespace dimctl::controller {

class StepClock {
 public:
  // One snapshot's place against the last accepted one.
  struct Period {
    bool time_backwards = false;  // older than the last accepted snapshot
    double dt_s = 0;              // seconds since it; 0 for the first or after going backwards
    int64_t prev_time_ns = 0;     // its time; the snapshot's own when there is no period
  };

  // A step starts: its number (1 for the first).
  uint64_t start() { return ++steps_; }
  uint64_t count() const { return steps_; }

  // The period of a snapshot taken at `time_ns`; step_dt_ns() holds it in ns from now on.
  Period measure(int64_t time_ns) {
    Period p;
    p.time_backwards = have_prev_ && time_ns < prev_time_ns_;
    const bool continues = have_prev_ && !p.time_backwards;
    p.dt_s = continues ? static_cast<double>(time_ns - prev_time_ns_) / 1e9 : 0;
    p.prev_time_ns = continues ? prev_time_ns_ : time_ns;
    step_dt_ns_ = time_ns - p.prev_time_ns;
    return p;
  }
  // This step's period in ns (0: none, or time went backwards).
  int64_t step_dt_ns() const { return step_dt_ns_; }
  // The step's snapshot was used to the end: the next one's period is against it.
  void accept(int64_t time_ns) {
    prev_time_ns_ = time_ns;
    have_prev_ = true;
  }
  // Whether a snapshot was accepted before.
  bool have_prev() const { return have_prev_; }

  void sample_failed() { ++sample_errors_; }
  uint64_t sample_errors() const { return sample_errors_; }
  // A snapshot was fed through to the decisions (ControllerState::ready from then on).
  void set_ready() { ready_ = true; }
  bool ready() const { return ready_; }

  // Whether a view is due at `now_ns` when views are `interval_ns` apart (<= 0: every step).
  bool publish_due(int64_t now_ns, int64_t interval_ns) const {
    return !last_publish_ns_ || interval_ns <= 0 || now_ns - *last_publish_ns_ >= interval_ns;
  }
  void published(int64_t now_ns) { last_publish_ns_ = now_ns; }

 private:
  uint64_t steps_ = 0;
  uint64_t sample_errors_ = 0;
  int64_t prev_time_ns_ = 0;
  int64_t step_dt_ns_ = 0;
  std::optional<int64_t> last_publish_ns_;
  bool have_prev_ = false;
  bool ready_ = false;
};

}  // namespace dimctl::controller
