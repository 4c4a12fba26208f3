// SPDX-License-Identifier: MIT
/* The compiler's working state: values, ops, commands and tensor views. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgraph.h"
#include "error.h"

void cs_strlcpy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

vnpu_status cs_fail(struct cstate *s, vnpu_status st, const char *fmt, ...)
{
	struct cop *op = s->cur_op < s->num_ops ? &s->ops[s->cur_op] : NULL;
	char msg[512];
	va_list ap;

	/*
	 * fmt is never NULL; saying so keeps gcc's -Wformat-truncation quiet
	 * under -fsanitize=undefined, whose null check of vsnprintf()'s
	 * format leaves a NULL path behind.
	 */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt ? fmt : "?", ap);
	va_end(ap);
	if (op && op->node) {
		cs_strlcpy(op->reason, sizeof(op->reason), msg);
		return vnpu_node_error(st, op->node, "%s", msg);
	}
	return vnpu_error(st, "%s", msg);
}

/*
 * With VNPU_DEBUG_CS_MOVE=1 in the environment (a debugging aid the tests
 * use), every add moves its table to a new block and fills the old one
 * with 0xa5, so a pointer into a table kept across an add (see lower.h)
 * reads garbage in any build and is a use after free under
 * AddressSanitizer, where a realloc that happens not to move would hide
 * it. The old block is freed only CS_RETIRED moves later: freed at once,
 * the next move's malloc() of the same size would hand it back, and a
 * pointer kept across two adds would read the table again. With
 * VNPU_DEBUG_CS_MOVE_MAX=N (bytes) only a table of at most N bytes moves
 * so, a larger one where it grows: a compile of n values costs O(n^2)
 * copies otherwise, too slow for a fuzzer's per-input timeout.
 */
static bool cs_debug_move(size_t bytes)
{
	const char *e = getenv("VNPU_DEBUG_CS_MOVE"), *max;

	if (!e || !e[0] || !strcmp(e, "0"))
		return false;
	max = getenv("VNPU_DEBUG_CS_MOVE_MAX");
	return !max || !max[0] || bytes <= strtoull(max, NULL, 10);
}

/* Keep @old (poisoned) until CS_RETIRED more moves have happened. */
static void retire(struct cstate *s, void *old, size_t bytes)
{
	if (!old)
		return;
	memset(old, 0xa5, bytes);
	free(s->retired[s->next_retired]);
	s->retired[s->next_retired] = old;
	s->next_retired = (s->next_retired + 1) % CS_RETIRED;
}

void cs_free_retired(struct cstate *s)
{
	for (uint32_t i = 0; i < CS_RETIRED; i++) {
		free(s->retired[i]);
		s->retired[i] = NULL;
	}
}

static vnpu_status grow(struct cstate *s, void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	bool move = cs_debug_move((size_t)*cap * elem);
	uint32_t c;
	void *p;

	if (need <= *cap && !move)
		return VNPU_OK;
	c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	if (move) {
		p = malloc((size_t)c * elem);
		if (!p)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		if (*arr)
			memcpy(p, *arr, (size_t)*cap * elem);
		retire(s, *arr, (size_t)*cap * elem);
	} else {
		p = realloc(*arr, (size_t)c * elem);
		if (!p)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	*arr = p;
	*cap = c;
	return VNPU_OK;
}

static vnpu_status add_val(struct cstate *s, vnpu_element_type type, int32_t rank,
			   const int64_t *dims, int32_t *out)
{
	struct cval *v;
	int64_t d0[VNPU_MAX_RANK];
	vnpu_status st;

	/* @dims may lie in the table that grow() moves: copy them first. */
	if (rank > VNPU_MAX_RANK)
		return vnpu_error(VNPU_UNSUPPORTED, "a value of rank %d", rank);
	for (int32_t d = 0; d < rank; d++)
		d0[d] = dims[d];
	dims = d0;
	st = grow(s, (void **)&s->vals, &s->cap_vals, s->num_vals + 1, sizeof(*s->vals));
	if (st)
		return st;
	v = &s->vals[s->num_vals];
	memset(v, 0, sizeof(*v));
	v->name = "";
	v->alias = -1;
	v->out_index = -1;
	v->info.type = type;
	v->info.rank = rank;
	for (int32_t d = 0; d < rank; d++)
		v->info.dims[d] = dims[d];
	*out = (int32_t)s->num_vals++;
	return VNPU_OK;
}

vnpu_status cs_add_temp(struct cstate *s, vnpu_element_type type, int32_t rank,
			const int64_t *dims, int32_t *out)
{
	return add_val(s, type, rank, dims, out);
}

/*
 * A constant made by the compiler; takes ownership of @data (freed on
 * failure): a block of the weights arena stays the arena's.
 */
vnpu_status cs_add_const(struct cstate *s, vnpu_element_type type, int32_t rank,
			 const int64_t *dims, void *data, int32_t *out)
{
	vnpu_status st = add_val(s, type, rank, dims, out);

	if (st) {
		cs_weights_free(s, data);
		return st;
	}
	s->vals[*out].info.data = data;
	s->vals[*out].info.owns_data = !cs_in_arena(s, data);
	return VNPU_OK;
}

/* Constants from this many bytes on are made in the weights arena. */
#define CS_ARENA_MIN (64u << 10)

static uint64_t arena_align(uint64_t v)
{
	return (v + VNPU_COMPILE_ALIGN - 1) & ~(uint64_t)(VNPU_COMPILE_ALIGN - 1);
}

/*
 * Reserve the arena: room for every constant of the model four times over
 * (Winograd's U of a 3x3 kernel takes 36/9 of its floats, the packings
 * some padding) and 256 MiB. Address space only: a block that does not
 * fit comes from calloc() and is copied as placement finds it. With
 * VNPU_DEBUG_CS_ARENA=N in the environment (a debugging aid the tests
 * use) the arena is at most N bytes, rounded up to a page (less than
 * VNPU_ENG_HOST_HUGE is no arena), so that blocks stop fitting where a
 * model's never do.
 */
static bool arena_reserve(struct cstate *s)
{
	const char *cap = getenv("VNPU_DEBUG_CS_ARENA");
	uint64_t sum = 0;

	for (uint32_t v = 0; v < s->num_vals; v++) {
		const struct vnpu_tinfo *t = &s->vals[v].info;

		if (t->data && t->rank >= 0 && vnpu_tinfo_elems(t) > 0)
			sum += (uint64_t)vnpu_tinfo_elems(t) * vnpu_element_type_size(t->type);
	}
	s->wcap = (sum < (1ull << 40) ? sum * 4 : 1ull << 42) + (256ull << 20);
	if (cap && cap[0] && strtoull(cap, NULL, 10) < s->wcap)
		s->wcap = strtoull(cap, NULL, 10);
	s->wcap = (s->wcap + 4095) & ~4095ull;
	s->wbase = vnpu_program_weights_reserve(s->wcap);
	s->no_arena = !s->wbase;
	return s->wbase;
}

bool cs_in_arena(const struct cstate *s, const void *p)
{
	return s->wbase && (uintptr_t)p - (uintptr_t)s->wbase < s->wtop;
}

void *cs_weights_alloc(struct cstate *s, uint64_t bytes)
{
	uint64_t at;

	if (bytes < CS_ARENA_MIN || s->query || s->no_arena || (!s->wbase && !arena_reserve(s)) ||
	    bytes > s->wcap || arena_align(s->wtop) > s->wcap - bytes)
		return bytes <= SIZE_MAX - 1 ? calloc(1, (size_t)bytes + 1) : NULL;
	at = arena_align(s->wtop);
	s->wlast = at;
	s->wtop = at + bytes;
	return s->wbase + at;
}

void cs_weights_free(struct cstate *s, void *p)
{
	if (!cs_in_arena(s, p)) {
		free(p);
		return;
	}
	/* The last block goes back; one below it stays a hole. */
	cs_weights_shrink(s, p, 0);
}

void *cs_weights_shrink(struct cstate *s, void *p, uint64_t bytes)
{
	uint8_t *b = p;

	if (!cs_in_arena(s, p)) {
		void *q = realloc(p, bytes ? (size_t)bytes : 1);

		return q ? q : p;
	}
	/* Only the last block shrinks; the arena hands out zeros. */
	if (b == s->wbase + s->wlast && s->wlast + bytes < s->wtop) {
		memset(b + bytes, 0, s->wtop - s->wlast - bytes);
		s->wtop = s->wlast + bytes;
	}
	return p;
}

vnpu_status cs_add_op(struct cstate *s, struct cop **out)
{
	struct cop *op;
	vnpu_status st = grow(s, (void **)&s->ops, &s->cap_ops, s->num_ops + 1, sizeof(*s->ops));

	if (st)
		return st;
	op = &s->ops[s->num_ops++];
	memset(op, 0, sizeof(*op));
	op->fused_into = -1;
	op->bias = -1;
	op->residual = -1;
	op->up_input = -1;
	for (uint32_t i = 0; i < COP_MAX_IO; i++)
		op->in[i] = op->out[i] = -1;
	*out = op;
	return VNPU_OK;
}

vnpu_status cs_add_synth(struct cstate *s, const char *op, const struct vnpu_node *like,
			 uint32_t ni, uint32_t no, struct vnpu_node **out)
{
	struct vnpu_node *n;
	vnpu_status st = grow(s, (void **)&s->synth, &s->cap_synth, s->num_synth + 1,
			      sizeof(*s->synth));

	if (st)
		return st;
	n = calloc(1, sizeof(*n));
	if (!n)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	s->synth[s->num_synth++] = n;
	n->name = strdup(like->name);
	n->op = strdup(op);
	n->domain = strdup("");
	n->inputs = malloc((ni + 1) * sizeof(int32_t));
	n->outputs = malloc((no + 1) * sizeof(int32_t));
	n->attrs = calloc(2, sizeof(*n->attrs));
	if (!n->name || !n->op || !n->domain || !n->inputs || !n->outputs || !n->attrs)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	/* Ops read their values from the cop; the node gives type and attributes. */
	for (uint32_t i = 0; i < ni; i++)
		n->inputs[i] = VNPU_NO_VALUE;
	for (uint32_t i = 0; i < no; i++)
		n->outputs[i] = VNPU_NO_VALUE;
	n->num_inputs = ni;
	n->num_outputs = no;
	*out = n;
	return VNPU_OK;
}

void cs_free_synth(struct cstate *s)
{
	for (uint32_t i = 0; i < s->num_synth; i++) {
		vnpu_node_fini(s->synth[i]);
		free(s->synth[i]);
	}
	free(s->synth);
	s->synth = NULL;
	s->num_synth = s->cap_synth = 0;
}

/* The tensors live apart from the commands: most commands have two or
 * three, and a table of the most any has made a command 2.7 KB. */
struct ccmd *cs_add_cmd(struct cstate *s, uint32_t opcode, uint32_t num_tensors)
{
	struct ccmd *c;

	/* (One more: the table exists even for commands without tensors.) */
	if (num_tensors >= UINT32_MAX - s->num_tensors ||
	    grow(s, (void **)&s->tensors, &s->cap_tensors, s->num_tensors + num_tensors + 1,
		 sizeof(*s->tensors)) ||
	    grow(s, (void **)&s->cmds, &s->cap_cmds, s->num_cmds + 1, sizeof(*s->cmds)))
		return NULL;
	c = &s->cmds[s->num_cmds++];
	memset(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->op = s->cur_op;
	c->num_tensors = num_tensors;
	c->first_tensor = s->num_tensors;
	memset(&s->tensors[s->num_tensors], 0, num_tensors * sizeof(*s->tensors));
	s->num_tensors += num_tensors;
	return c;
}

struct ctensor *cs_cmd_tensors(const struct cstate *s, const struct ccmd *c)
{
	return &s->tensors[c->first_tensor];
}

const struct vnpu_tinfo *cs_info(const struct cstate *s, int32_t val)
{
	return &s->vals[val].info;
}

bool cs_is_const(const struct cstate *s, int32_t val)
{
	return val >= 0 && s->vals[val].info.data != NULL;
}

void ct_dense_strides(struct ctensor *t)
{
	int64_t st = 1;

	for (int32_t d = (int32_t)t->rank - 1; d >= 0; d--) {
		t->strides[d] = st;
		st *= t->dims[d];
	}
}

struct ctensor ct_shaped(const struct cstate *s, int32_t val, int32_t rank, const int64_t *dims)
{
	struct ctensor t = { .val = val, .type = s->vals[val].info.type, .rank = (uint32_t)rank };

	for (int32_t d = 0; d < rank; d++)
		t.dims[d] = dims[d];
	ct_dense_strides(&t);
	return t;
}

struct ctensor ct_dense(const struct cstate *s, int32_t val)
{
	const struct vnpu_tinfo *i = &s->vals[val].info;

	return ct_shaped(s, val, i->rank, i->dims);
}

struct ctensor ct_broadcast(struct ctensor t, int32_t rank, const int64_t *dims)
{
	struct ctensor o = t;
	int32_t shift = rank - (int32_t)t.rank;

	o.rank = (uint32_t)rank;
	for (int32_t d = 0; d < rank; d++) {
		int32_t sd = d - shift;

		o.dims[d] = dims[d];
		o.strides[d] = sd >= 0 && t.dims[sd] != 1 ? t.strides[sd] : 0;
	}
	return o;
}

uint32_t f32_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}
