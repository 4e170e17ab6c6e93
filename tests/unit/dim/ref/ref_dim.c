/* See ref_dim.h. Written from dim-spec sections 3-5, not from the C++ library. */
#include "ref_dim.h"

#include <stdlib.h>

#define REF_BIT_GAP(bits, end, start) \
	((((end) - (start)) + (1ULL << (bits))) & ((1ULL << (bits)) - 1))

/* The kernel builds with -fno-strict-overflow; do the int wrap explicitly for the host. */
static int ref_wrap_sub(int a, int b)
{
	return (int)(u32)((u32)a - (u32)b);
}

static int ref_abs(int x)
{
	return x < 0 ? (int)(0U - (u32)x) : x;
}

static int ref_is_significant_diff(int val, int ref)
{
	if (ref == 0)
		return 0;
	return (100UL * (unsigned long)(long)ref_abs(ref_wrap_sub(val, ref))) /
		       (unsigned long)(long)ref > 10;
}

void ref_net_dim_init(struct ref_dim *dim, u8 ix)
{
	struct ref_dim zero = { 0 };

	*dim = zero;
	dim->state = REF_DIM_START_MEASURE;
	dim->tune_state = REF_DIM_PARKING_ON_TOP;
	dim->profile_ix = ix;
}

void ref_rdma_dim_init(struct ref_dim *dim)
{
	struct ref_dim zero = { 0 };

	*dim = zero;
	dim->state = REF_DIM_START_MEASURE;
	dim->tune_state = REF_DIM_GOING_RIGHT;
	dim->profile_ix = 0;
}

void ref_dim_work_done(struct ref_dim *dim)
{
	dim->state = REF_DIM_START_MEASURE;
}

int ref_dim_calc_stats(const struct ref_dim_sample *start, const struct ref_dim_sample *end,
		       struct ref_dim_stats *curr_stats)
{
	u32 delta_us = (u32)((end->time - start->time) / 1000);
	u32 npkts = (u32)REF_BIT_GAP(32, end->pkt_ctr, start->pkt_ctr);
	u32 nbytes = (u32)REF_BIT_GAP(32, end->byte_ctr, start->byte_ctr);
	u32 ncomps = (u32)REF_BIT_GAP(32, end->comp_ctr, start->comp_ctr);

	if (!delta_us)
		return 0;

	curr_stats->ppms = (int)(((u64)npkts * 1000 + delta_us - 1) / delta_us);
	curr_stats->bpms = (int)(((u64)nbytes * 1000 + delta_us - 1) / delta_us);
	curr_stats->epms = (int)(((u64)REF_DIM_NEVENTS * 1000 + delta_us - 1) / delta_us);
	curr_stats->cpms = (int)(((u64)ncomps * 1000 + delta_us - 1) / delta_us);
	if (curr_stats->epms != 0)
		curr_stats->cpe_ratio =
			(int)(((u64)(s64)curr_stats->cpms * 100) / (u32)curr_stats->epms);
	else
		curr_stats->cpe_ratio = 0;
	return 1;
}

/* ---- lib/dim/dim.c ---- */

static void ref_dim_turn(struct ref_dim *dim)
{
	switch (dim->tune_state) {
	case REF_DIM_PARKING_ON_TOP:
	case REF_DIM_PARKING_TIRED:
		break;
	case REF_DIM_GOING_RIGHT:
		dim->tune_state = REF_DIM_GOING_LEFT;
		dim->steps_left = 0;
		break;
	case REF_DIM_GOING_LEFT:
		dim->tune_state = REF_DIM_GOING_RIGHT;
		dim->steps_right = 0;
		break;
	}
}

static int ref_dim_on_top(struct ref_dim *dim)
{
	switch (dim->tune_state) {
	case REF_DIM_PARKING_ON_TOP:
	case REF_DIM_PARKING_TIRED:
		return 1;
	case REF_DIM_GOING_RIGHT:
		return (dim->steps_left > 1) && (dim->steps_right == 1);
	default: /* REF_DIM_GOING_LEFT */
		return (dim->steps_right > 1) && (dim->steps_left == 1);
	}
}

static void ref_dim_park_on_top(struct ref_dim *dim)
{
	dim->steps_right = 0;
	dim->steps_left = 0;
	dim->tired = 0;
	dim->tune_state = REF_DIM_PARKING_ON_TOP;
}

static void ref_dim_park_tired(struct ref_dim *dim)
{
	dim->steps_right = 0;
	dim->steps_left = 0;
	dim->tune_state = REF_DIM_PARKING_TIRED;
}

/* ---- lib/dim/net_dim.c ---- */

static int ref_net_dim_step(struct ref_dim *dim)
{
	if (dim->tired == (REF_NET_DIM_PARAMS_NUM_PROFILES * 2))
		return REF_DIM_TOO_TIRED;

	switch (dim->tune_state) {
	case REF_DIM_PARKING_ON_TOP:
	case REF_DIM_PARKING_TIRED:
		break;
	case REF_DIM_GOING_RIGHT:
		if (dim->profile_ix == (REF_NET_DIM_PARAMS_NUM_PROFILES - 1))
			return REF_DIM_ON_EDGE;
		dim->profile_ix++;
		dim->steps_right++;
		break;
	case REF_DIM_GOING_LEFT:
		if (dim->profile_ix == 0)
			return REF_DIM_ON_EDGE;
		dim->profile_ix--;
		dim->steps_left++;
		break;
	}

	dim->tired++;
	return REF_DIM_STEPPED;
}

static void ref_net_dim_exit_parking(struct ref_dim *dim)
{
	dim->tune_state = dim->profile_ix ? REF_DIM_GOING_LEFT : REF_DIM_GOING_RIGHT;
	ref_net_dim_step(dim);
}

static int ref_net_dim_stats_compare(const struct ref_dim_stats *curr,
				     const struct ref_dim_stats *prev)
{
	if (!prev->bpms)
		return curr->bpms ? REF_DIM_STATS_BETTER : REF_DIM_STATS_SAME;

	if (ref_is_significant_diff(curr->bpms, prev->bpms))
		return (curr->bpms > prev->bpms) ? REF_DIM_STATS_BETTER : REF_DIM_STATS_WORSE;

	if (!prev->ppms)
		return curr->ppms ? REF_DIM_STATS_BETTER : REF_DIM_STATS_SAME;

	if (ref_is_significant_diff(curr->ppms, prev->ppms))
		return (curr->ppms > prev->ppms) ? REF_DIM_STATS_BETTER : REF_DIM_STATS_WORSE;

	if (!prev->epms)
		return REF_DIM_STATS_SAME;

	if (ref_is_significant_diff(curr->epms, prev->epms))
		return (curr->epms < prev->epms) ? REF_DIM_STATS_BETTER : REF_DIM_STATS_WORSE;

	return REF_DIM_STATS_SAME;
}

static int ref_net_dim_decision(const struct ref_dim_stats *curr_stats, struct ref_dim *dim)
{
	int prev_state = dim->tune_state;
	int prev_ix = dim->profile_ix;
	int stats_res;
	int step_res;

	switch (dim->tune_state) {
	case REF_DIM_PARKING_ON_TOP:
		stats_res = ref_net_dim_stats_compare(curr_stats, &dim->prev_stats);
		if (stats_res != REF_DIM_STATS_SAME)
			ref_net_dim_exit_parking(dim);
		break;

	case REF_DIM_PARKING_TIRED:
		dim->tired--;
		if (!dim->tired)
			ref_net_dim_exit_parking(dim);
		break;

	case REF_DIM_GOING_RIGHT:
	case REF_DIM_GOING_LEFT:
		stats_res = ref_net_dim_stats_compare(curr_stats, &dim->prev_stats);
		if (stats_res != REF_DIM_STATS_BETTER)
			ref_dim_turn(dim);

		if (ref_dim_on_top(dim)) {
			ref_dim_park_on_top(dim);
			break;
		}

		step_res = ref_net_dim_step(dim);
		switch (step_res) {
		case REF_DIM_ON_EDGE:
			ref_dim_park_on_top(dim);
			break;
		case REF_DIM_TOO_TIRED:
			ref_dim_park_tired(dim);
			break;
		}
		break;
	}

	if (prev_state != REF_DIM_PARKING_ON_TOP || dim->tune_state != REF_DIM_PARKING_ON_TOP)
		dim->prev_stats = *curr_stats;

	return dim->profile_ix != prev_ix;
}

int ref_net_dim(struct ref_dim *dim, const struct ref_dim_sample *end_sample)
{
	struct ref_dim_stats curr_stats;
	u16 nevents;

	switch (dim->state) {
	case REF_DIM_MEASURE_IN_PROGRESS:
		nevents = (u16)REF_BIT_GAP(16, end_sample->event_ctr, dim->start_sample.event_ctr);
		if (nevents < REF_DIM_NEVENTS)
			break;
		if (!ref_dim_calc_stats(&dim->start_sample, end_sample, &curr_stats))
			break;
		if (ref_net_dim_decision(&curr_stats, dim)) {
			dim->state = REF_DIM_APPLY_NEW_PROFILE;
			return 1;
		}
		/* fallthrough */
	case REF_DIM_START_MEASURE:
		dim->start_sample.time = end_sample->time;
		dim->start_sample.pkt_ctr = end_sample->pkt_ctr;
		dim->start_sample.byte_ctr = end_sample->byte_ctr;
		dim->start_sample.event_ctr = end_sample->event_ctr;
		dim->state = REF_DIM_MEASURE_IN_PROGRESS;
		break;
	case REF_DIM_APPLY_NEW_PROFILE:
		break;
	}
	return 0;
}

/* ---- lib/dim/rdma_dim.c ---- */

static int ref_rdma_dim_step(struct ref_dim *dim)
{
	if (dim->tune_state == REF_DIM_GOING_RIGHT) {
		if (dim->profile_ix == (REF_RDMA_DIM_PARAMS_NUM_PROFILES - 1))
			return REF_DIM_ON_EDGE;
		dim->profile_ix++;
		dim->steps_right++;
	}
	if (dim->tune_state == REF_DIM_GOING_LEFT) {
		if (dim->profile_ix == 0)
			return REF_DIM_ON_EDGE;
		dim->profile_ix--;
		dim->steps_left++;
	}
	return REF_DIM_STEPPED;
}

static int ref_rdma_dim_stats_compare(const struct ref_dim_stats *curr,
				      const struct ref_dim_stats *prev)
{
	if (!prev->cpms)
		return REF_DIM_STATS_SAME;

	if (ref_is_significant_diff(curr->cpms, prev->cpms))
		return (curr->cpms > prev->cpms) ? REF_DIM_STATS_BETTER : REF_DIM_STATS_WORSE;

	if (ref_is_significant_diff(curr->cpe_ratio, prev->cpe_ratio))
		return (curr->cpe_ratio > prev->cpe_ratio) ? REF_DIM_STATS_BETTER :
							     REF_DIM_STATS_WORSE;

	return REF_DIM_STATS_SAME;
}

static int ref_rdma_dim_decision(const struct ref_dim_stats *curr_stats, struct ref_dim *dim)
{
	int prev_ix = dim->profile_ix;
	u8 state = dim->tune_state;

	if (state != REF_DIM_PARKING_ON_TOP && state != REF_DIM_PARKING_TIRED) {
		switch (ref_rdma_dim_stats_compare(curr_stats, &dim->prev_stats)) {
		case REF_DIM_STATS_SAME:
			if (curr_stats->cpe_ratio <= 50 * prev_ix)
				dim->profile_ix = 0;
			break;
		case REF_DIM_STATS_WORSE:
			ref_dim_turn(dim);
			/* fallthrough */
		case REF_DIM_STATS_BETTER:
			if (ref_rdma_dim_step(dim) == REF_DIM_ON_EDGE)
				ref_dim_turn(dim);
			break;
		}
	}

	dim->prev_stats = *curr_stats;

	return dim->profile_ix != prev_ix;
}

int ref_rdma_dim(struct ref_dim *dim, u64 completions, s64 now)
{
	struct ref_dim_sample *curr_sample = &dim->measuring_sample;
	struct ref_dim_stats curr_stats;
	u32 nevents;

	curr_sample->event_ctr = (u16)(curr_sample->event_ctr + 1);
	curr_sample->comp_ctr = (u32)(curr_sample->comp_ctr + completions);
	curr_sample->pkt_ctr = 0;
	curr_sample->byte_ctr = 0;
	curr_sample->time = now;

	switch (dim->state) {
	case REF_DIM_MEASURE_IN_PROGRESS:
		nevents = (u32)((int)curr_sample->event_ctr - (int)dim->start_sample.event_ctr);
		if (nevents < REF_DIM_NEVENTS)
			break;
		if (!ref_dim_calc_stats(&dim->start_sample, curr_sample, &curr_stats))
			break;
		if (ref_rdma_dim_decision(&curr_stats, dim)) {
			dim->state = REF_DIM_APPLY_NEW_PROFILE;
			return 1;
		}
		/* fallthrough */
	case REF_DIM_START_MEASURE:
		dim->state = REF_DIM_MEASURE_IN_PROGRESS;
		dim->start_sample.event_ctr = curr_sample->event_ctr;
		dim->start_sample.comp_ctr = curr_sample->comp_ctr;
		dim->start_sample.pkt_ctr = 0;
		dim->start_sample.byte_ctr = 0;
		dim->start_sample.time = now;
		break;
	case REF_DIM_APPLY_NEW_PROFILE:
		break;
	}
	return 0;
}
