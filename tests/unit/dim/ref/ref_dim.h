/*
 * ref_dim: an independent plain-C reference of the kernel's net DIM and RDMA DIM, written
 * from the pseudo-code of dim-spec sections 3-5 in the kernel's own shape (struct dim,
 * switch statements, u8/u16/u32 fields). It is the oracle of the differential tests and the
 * baseline of the benchmark; it shares no code with the C++ library on purpose.
 *
 * schedule_work() is modelled by the return value of ref_net_dim()/ref_rdma_dim() (1 when a
 * new profile was decided); ref_dim_work_done() is what the driver's work does last.
 */
#ifndef DIMCTL_TESTS_REF_DIM_H
#define DIMCTL_TESTS_REF_DIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define REF_DIM_NEVENTS 64
#define REF_NET_DIM_PARAMS_NUM_PROFILES 5
#define REF_RDMA_DIM_PARAMS_NUM_PROFILES 9

enum ref_dim_state {
  REF_DIM_START_MEASURE,
  REF_DIM_MEASURE_IN_PROGRESS,
  REF_DIM_APPLY_NEW_PROFILE
};
enum ref_dim_tune_state {
  REF_DIM_PARKING_ON_TOP,
  REF_DIM_PARKING_TIRED,
  REF_DIM_GOING_RIGHT,
  REF_DIM_GOING_LEFT,
};
enum ref_dim_stats_state { REF_DIM_STATS_WORSE, REF_DIM_STATS_SAME, REF_DIM_STATS_BETTER };
enum ref_dim_step_result { REF_DIM_STEPPED, REF_DIM_TOO_TIRED, REF_DIM_ON_EDGE };

struct ref_dim_sample {
  s64 time;
  u32 pkt_ctr;
  u32 byte_ctr;
  u16 event_ctr;
  u32 comp_ctr;
};

struct ref_dim_stats {
  int ppms;
  int bpms;
  int epms;
  int cpms;
  int cpe_ratio;
};

struct ref_dim {
  u8 state;
  struct ref_dim_stats prev_stats;
  struct ref_dim_sample start_sample;
  struct ref_dim_sample measuring_sample;
  u8 profile_ix;
  u8 tune_state;
  u8 steps_right;
  u8 steps_left;
  u8 tired;
};

/* Zeroed instance; net at index ix (PARKING_ON_TOP), RDMA at 0 GOING_RIGHT. */
void ref_net_dim_init(struct ref_dim* dim, u8 ix);
void ref_rdma_dim_init(struct ref_dim* dim);

int ref_dim_calc_stats(const struct ref_dim_sample* start, const struct ref_dim_sample* end,
                       struct ref_dim_stats* curr_stats);

/* One net_dim() call; returns 1 when the work was scheduled. */
int ref_net_dim(struct ref_dim* dim, const struct ref_dim_sample* end_sample);
/* One rdma_dim() call at time `now`; returns 1 when the work was scheduled. */
int ref_rdma_dim(struct ref_dim* dim, u64 completions, s64 now);
/* The deferred work ran. */
void ref_dim_work_done(struct ref_dim* dim);

#ifdef __cplusplus
}
#endif

#endif /* DIMCTL_TESTS_REF_DIM_H */
