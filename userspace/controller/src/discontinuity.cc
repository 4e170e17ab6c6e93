#include "dimctl/controller/discontinuity.h"

namespace dimctl::controller {

bool is_discontinuity(const QueueContinuity& prev, const model::QueueCounters& cur) {
  if (cur.polls < prev.polls || cur.packets < prev.packets ||
      cur.budget_exhausted < prev.budget_exhausted || cur.empty_polls < prev.empty_polls ||
      cur.events() < prev.events()) {
    return true;
  }
  if (prev.has_bytes && cur.has_bytes && cur.bytes < prev.bytes) return true;
  // Bytes appearing or disappearing changes what DIM compares (bpms), so it is a new series.
  if (prev.has_bytes != cur.has_bytes) return true;
  return cur.queue != prev.queue || cur.irq != prev.irq;
}

bool is_discontinuity(const model::CqCounters& prev, const model::CqCounters& cur) {
  if (cur.events < prev.events || cur.completions < prev.completions ||
      cur.schedules < prev.schedules || cur.polls < prev.polls) {
    return true;
  }
  return cur.ibdev != prev.ibdev || cur.nr_cqe != prev.nr_cqe ||
         cur.comp_vector != prev.comp_vector || cur.poll_ctx != prev.poll_ctx;
}

}  // namespace dimctl::controller
