#include "dimctl/controller/discontinuity.h"

namespace dimctl::controller {

bool is_discontinuity(const seam::CqCounters& prev, const seam::CqCounters& cur) {
  if (cur.events < prev.events || cur.completions < prev.completions ||
      cur.schedules < prev.schedules || cur.polls < prev.polls ||
      cur.budget_exhausted < prev.budget_exhausted) {
    return true;
  }
  return cur.ibdev != prev.ibdev || cur.nr_cqe != prev.nr_cqe ||
         cur.comp_vector != prev.comp_vector || cur.poll_ctx != prev.poll_ctx;
}

}  // namespace dimctl::controller
