// SPDX-License-Identifier: MIT
/*
 * The arena planner: every intermediate gets an offset in one arena, and
 * buffers alive at the same time never overlap. Greedy by size (largest
 * first), each placed in the smallest gap between the already placed
 * buffers whose lifetimes intersect its own, or after the last of them.
 *
 * Those buffers are found without looking at every placed one: a segment
 * tree over the steps keeps, per node, the bytes taken by the buffers
 * whose lifetime covers the node's steps (and its parent's do not), and
 * the bytes taken anywhere below it, each as a sorted list of disjoint
 * byte ranges. A lifetime is O(log steps) nodes; the buffers meeting it
 * are those below these nodes and those of their ancestors. Only the
 * gaps between the ranges matter to the placement, so the lists of a few
 * nodes, merged in order, answer it, however many buffers they hold: a
 * buffer costs O(log steps) plus the ranges it meets, not a look at every
 * buffer placed before it and a sort of those it meets.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Bytes [start, end). */
struct span {
	uint64_t start, end;
};

/* Sorted, disjoint and not touching. */
struct span_set {
	struct span *s;
	uint32_t n, cap;
};

struct tree {
	uint32_t *steps;		/* every buffer's first and last step, sorted */
	uint32_t num_steps;
	uint32_t leaves;		/* a power of two, at least num_steps */
	struct span_set *own;		/* per node (1 .. 2 * leaves - 1) */
	struct span_set *below;		/* per node: its own and its subtree's */
	uint32_t *stamp;		/* per node: the last walk that passed it */
	uint32_t walk;
};

/* The rest of one sorted span list, for a merge of several. */
struct cursor {
	const struct span *next, *end;
};

/* Cursors of the lists a lifetime meets: its nodes (at most 64) and
 * their ancestors (at most 64 more). */
#define MAX_CURSORS 128

/* Add [start, end) to @set, merging what it meets or touches. */
static bool set_add(struct span_set *set, uint64_t start, uint64_t end)
{
	uint32_t lo = 0, hi = set->n, j;

	/* The first span ending at or after @start. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (set->s[mid].end < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < set->n && set->s[j].start <= end; j++) {
		if (set->s[j].start < start)
			start = set->s[j].start;
		if (set->s[j].end > end)
			end = set->s[j].end;
	}
	if (j == lo) {
		if (set->n == set->cap) {
			uint32_t cap = set->cap ? set->cap * 2 : 2;
			struct span *s = realloc(set->s, cap * sizeof(*s));

			if (!s)
				return false;
			set->s = s;
			set->cap = cap;
		}
		memmove(&set->s[lo + 1], &set->s[lo], (set->n - lo) * sizeof(*set->s));
		set->n++;
	} else if (j > lo + 1) {
		memmove(&set->s[lo + 1], &set->s[j], (set->n - j) * sizeof(*set->s));
		set->n -= j - lo - 1;
	}
	set->s[lo] = (struct span){ start, end };
	return true;
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A lifetime ends at its last step; one that says it ends before its
 * first step lives that step only. */
static uint32_t buf_last(const struct vnpu_plan_buf *b)
{
	return b->last > b->first ? b->last : b->first;
}

/* Leaves are the distinct steps that begin or end a lifetime: two
 * lifetimes meet in those exactly when they meet in steps. */
static bool tree_init(struct tree *t, const struct vnpu_plan_buf *bufs, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->steps = malloc(2 * (size_t)n * sizeof(*t->steps));
	if (!t->steps)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		t->steps[2 * i] = bufs[i].first;
		t->steps[2 * i + 1] = buf_last(&bufs[i]);
	}
	qsort(t->steps, 2 * (size_t)n, sizeof(*t->steps), by_value);
	for (size_t i = 0; i < 2 * (size_t)n; i++)
		if (!t->num_steps || t->steps[t->num_steps - 1] != t->steps[i])
			t->steps[t->num_steps++] = t->steps[i];
	if (t->num_steps > (1u << 30))
		return false;	/* no room for the tree anyway */
	t->leaves = 1;
	while (t->leaves < t->num_steps)
		t->leaves *= 2;
	t->own = calloc(2 * (size_t)t->leaves, sizeof(*t->own));
	t->below = calloc(2 * (size_t)t->leaves, sizeof(*t->below));
	t->stamp = calloc(2 * (size_t)t->leaves, sizeof(*t->stamp));
	return t->own && t->below && t->stamp;
}

/* The leaf of step @step (one of t->steps). */
static uint32_t leaf_of(const struct tree *t, uint32_t step)
{
	uint32_t lo = 0, hi = t->num_steps - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->steps[mid] < step)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void tree_fini(struct tree *t)
{
	for (size_t i = 0; t->own && i < 2 * (size_t)t->leaves; i++)
		free(t->own[i].s);
	for (size_t i = 0; t->below && i < 2 * (size_t)t->leaves; i++)
		free(t->below[i].s);
	free(t->steps);
	free(t->own);
	free(t->below);
	free(t->stamp);
}

/* The nodes covering @b's lifetime exactly, in @nodes (at most 64 of
 * them); returns how many. */
static uint32_t cover(const struct tree *t, const struct vnpu_plan_buf *b, uint32_t *nodes)
{
	uint64_t lo = (uint64_t)leaf_of(t, b->first) + t->leaves;
	uint64_t hi = (uint64_t)leaf_of(t, buf_last(b)) + t->leaves + 1;
	uint32_t n = 0;

	for (; lo < hi; lo /= 2, hi /= 2) {
		if (lo & 1)
			nodes[n++] = (uint32_t)lo++;
		if (hi & 1)
			nodes[n++] = (uint32_t)--hi;
	}
	return n;
}

/* Record @b's bytes [start, end) over its lifetime. */
static bool tree_add(struct tree *t, const struct vnpu_plan_buf *b, uint64_t start, uint64_t end)
{
	uint32_t nodes[64], n = cover(t, b, nodes);

	t->walk++;
	for (uint32_t i = 0; i < n; i++) {
		if (!set_add(&t->own[nodes[i]], start, end) ||
		    !set_add(&t->below[nodes[i]], start, end))
			return false;
		for (uint32_t a = nodes[i] / 2; a && t->stamp[a] != t->walk; a /= 2) {
			t->stamp[a] = t->walk;
			if (!set_add(&t->below[a], start, end))
				return false;
		}
	}
	return true;
}

static void add_cursor(struct cursor *c, uint32_t *n, const struct span_set *set)
{
	if (set->n)
		c[(*n)++] = (struct cursor){ set->s, set->s + set->n };
}

/* The lists of bytes taken by the placed buffers whose lifetimes meet
 * @b's, in @c; returns how many. */
static uint32_t tree_meeting(struct tree *t, const struct vnpu_plan_buf *b, struct cursor *c)
{
	uint32_t nodes[64], n = cover(t, b, nodes), num = 0;

	t->walk++;
	for (uint32_t i = 0; i < n; i++) {
		add_cursor(c, &num, &t->below[nodes[i]]);
		for (uint32_t a = nodes[i] / 2; a && t->stamp[a] != t->walk; a /= 2) {
			t->stamp[a] = t->walk;
			add_cursor(c, &num, &t->own[a]);
		}
	}
	return num;
}

/* Restore the min-heap of cursors @c (by next start) below @i. */
static void sift_down(struct cursor *c, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t least = i, l = 2 * i + 1, r = l + 1;
		struct cursor tmp;

		if (l < n && c[l].next->start < c[least].next->start)
			least = l;
		if (r < n && c[r].next->start < c[least].next->start)
			least = r;
		if (least == i)
			return;
		tmp = c[i];
		c[i] = c[least];
		c[least] = tmp;
		i = least;
	}
}

/*
 * Best-fit offset for @need bytes among the taken ranges of the @n sorted
 * lists @c, visited in order of start (a merge): the smallest gap that
 * fits, the lowest of equal ones, else the end of the last range.
 */
static uint64_t best_fit(uint64_t need, struct cursor *c, uint32_t n)
{
	uint64_t pos = 0, best = UINT64_MAX, best_gap = UINT64_MAX;

	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(c, n, i);
	while (n) {
		const struct span *taken = c[0].next++;

		if (taken->start > pos && taken->start - pos >= need &&
		    taken->start - pos < best_gap) {
			best = pos;
			best_gap = taken->start - pos;
		}
		if (taken->end > pos)
			pos = taken->end;
		if (c[0].next == c[0].end)
			c[0] = c[--n];
		sift_down(c, n, 0);
	}
	return best != UINT64_MAX ? best : pos;
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

/* The greedy placement; false when out of memory. */
static bool place(struct vnpu_plan_buf *bufs, uint32_t n, uint64_t align, uint64_t *arena)
{
	uint32_t *order = malloc(n * sizeof(*order)), num;
	struct cursor cursors[MAX_CURSORS];
	struct tree t;
	bool ok = tree_init(&t, bufs, n) && order;

	for (uint32_t i = 0; ok && i < n; i++)
		order[i] = i;
	if (ok)
		qsort_r(order, n, sizeof(*order), by_size_desc, bufs);
	for (uint32_t k = 0; ok && k < n; k++) {
		struct vnpu_plan_buf *b = &bufs[order[k]];
		uint64_t need = align_up(b->size, align);

		b->offset = 0;
		if (!b->size)
			continue;
		num = tree_meeting(&t, b, cursors);
		b->offset = best_fit(need, cursors, num);
		ok = tree_add(&t, b, b->offset, b->offset + need);
		if (b->offset + need > *arena)
			*arena = b->offset + need;
	}
	tree_fini(&t);
	free(order);
	return ok;
}

uint64_t vnpu_plan_arena(struct vnpu_plan_buf *bufs, uint32_t n, uint64_t align)
{
	uint64_t arena = 0;

	if (!n || place(bufs, n, align, &arena))
		return arena;
	/* No memory to plan: one buffer after the other still works. */
	arena = 0;
	for (uint32_t i = 0; i < n; i++) {
		bufs[i].offset = arena;
		arena += align_up(bufs[i].size, align);
	}
	return arena;
}
