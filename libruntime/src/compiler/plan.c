// SPDX-License-Identifier: MIT
/*
 * The arena planner: every intermediate gets an offset in one arena, and
 * buffers alive at the same time never overlap. Greedy by size (largest
 * first), each placed in the smallest gap between the already placed
 * buffers whose lifetimes intersect its own, or after the last of them.
 */
#include <stdlib.h>

#include "compiler.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int by_size_desc(const void *a, const void *b, void *arg)
{
	const struct vnpu_plan_buf *bufs = arg;
	const struct vnpu_plan_buf *x = &bufs[*(const uint32_t *)a];
	const struct vnpu_plan_buf *y = &bufs[*(const uint32_t *)b];

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int by_offset(const void *a, const void *b)
{
	const struct vnpu_plan_buf *x = *(const struct vnpu_plan_buf *const *)a;
	const struct vnpu_plan_buf *y = *(const struct vnpu_plan_buf *const *)b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Best-fit offset for @b among the @n placed buffers @live (sorted). */
static uint64_t best_fit(const struct vnpu_plan_buf *b, const struct vnpu_plan_buf **live,
			 uint32_t n, uint64_t align)
{
	uint64_t need = align_up(b->size, align), pos = 0, best = UINT64_MAX, best_gap = UINT64_MAX;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t start = live[i]->offset;

		if (start > pos && start - pos >= need && start - pos < best_gap) {
			best = pos;
			best_gap = start - pos;
		}
		if (start + align_up(live[i]->size, align) > pos)
			pos = start + align_up(live[i]->size, align);
	}
	return best != UINT64_MAX ? best : pos;
}

uint64_t vnpu_plan_arena(struct vnpu_plan_buf *bufs, uint32_t n, uint64_t align)
{
	const struct vnpu_plan_buf **live;
	uint32_t *order;
	bool *done;
	uint64_t arena = 0;

	if (!n)
		return 0;
	order = malloc(n * sizeof(*order));
	live = malloc(n * sizeof(*live));
	done = calloc(n, sizeof(*done));
	if (!order || !live || !done) {
		/* No memory to plan: one buffer after the other still works. */
		for (uint32_t i = 0; i < n; i++) {
			bufs[i].offset = arena;
			arena += align_up(bufs[i].size, align);
		}
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_size_desc, bufs);
	for (uint32_t k = 0; k < n; k++) {
		struct vnpu_plan_buf *b = &bufs[order[k]];
		uint32_t nl = 0;

		if (!b->size) {
			b->offset = 0;
			continue;
		}
		for (uint32_t j = 0; j < n; j++) {
			const struct vnpu_plan_buf *o = &bufs[j];

			if (done[j] && o->first <= b->last && b->first <= o->last)
				live[nl++] = o;
		}
		qsort(live, nl, sizeof(*live), by_offset);
		b->offset = best_fit(b, live, nl, align);
		done[order[k]] = true;
		if (b->offset + align_up(b->size, align) > arena)
			arena = b->offset + align_up(b->size, align);
	}
out:
	free(order);
	free(live);
	free(done);
	return arena;
}
