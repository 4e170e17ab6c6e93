// calc_stats() and its rate helper are inline (dim/stats.h): they run once per evaluated DIM
// window. This unit keeps the header compiled on its own.
#include "dim/stats.h"
