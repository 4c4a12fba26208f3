// SPDX-License-Identifier: GPL-2.0 OR MIT
/**
 * DOC: command-stream validation and execution
 *
 * The one place that knows how to walk a command stream. vnpu.ko validates
 * every stream here before a job is queued and its tile threads run the
 * parts of each command here; the runtime's CPU device links the same file,
 * so a stream means the same thing on both devices.
 *
 * Freestanding C: no libc and no kernel headers beyond the uAPI. All size
 * arithmetic is overflow-checked with the compiler's builtins.
 */
#include "vnpu_exec.h"

#define EINVAL_RET (-22)

/*
 * Work one part of a command has at least: a COPY's or FILL's elements, a
 * layer's element operations (vnpu_eng_layer_part_cost(): a layer on the
 * AVX512-BF16 kernels counts half its f32 work). Handing a part to
 * another tile and waiting for it costs microseconds (more where the
 * tile's vCPU has halted), so a command shorter than a few microseconds
 * runs in one part: oww_melspectrogram's small copies and element-wise
 * layers, split in two, made it slower on 2 CPUs than on 1.
 */
#define MIN_ELEMS_PER_PART (1ULL << 16)
#define MIN_COST_PER_PART (1ULL << 20)
/*
 * The engine's baseline path (SSE2 and a software fma, no
 * %VNPU_ENG_F_AVX2_FMA) takes 4 to 400 times as long as the FMA paths for
 * a layer's element operation: its layers count 2^BASE_COST_SHIFT times
 * their cost, so their parts do that much less. A part is an FPU section
 * in vnpu.ko and the step of a job's progress (vnpu_sched.c): under QEMU's
 * TCG, oww_melspectrogram's STFT convolution ran 4 ms parts natively that
 * took seconds each, next to the 5 s no-progress timeout.
 */
#define BASE_COST_SHIFT 2

/* Number of elements, or 0 with *ok cleared when the product overflows. */
static __u64 tensor_elems(const struct vnpu_cmd_tensor *t, int *ok)
{
	__u64 n = 1;
	__u32 d;

	for (d = 0; d < t->rank; d++) {
		if (__builtin_mul_overflow(n, t->dims[d], &n)) {
			*ok = 0;
			return 0;
		}
	}
	return n;
}

__u64 vnpu_tensor_size(const struct vnpu_cmd_tensor *t)
{
	__u64 last = 0;
	__u32 d;

	for (d = 0; d < t->rank; d++) {
		if (!t->dims[d])
			return 0;
		last += (t->dims[d] - 1) * (__u64)t->strides[d];
	}
	return (last + 1) * vnpu_eng_dtype_size(t->dtype);
}

/*
 * Check one tensor descriptor against the slot table; on success *end is
 * the first byte past what it can reach.
 */
static int tensor_check(const struct vnpu_cmd_tensor *t,
			const struct vnpu_slot_info *slots, __u32 num_slots,
			int write, __u64 *end)
{
	__u32 esize = vnpu_eng_dtype_size(t->dtype);
	__u64 last = 0, bytes;
	int empty = 0;
	__u32 d;

	if (t->slot >= num_slots || !esize || t->flags ||
	    t->rank > VNPU_MAX_DIMS || t->offset % esize)
		return EINVAL_RET;
	if (write && !(slots[t->slot].flags & VNPU_SLOT_INFO_WRITE))
		return EINVAL_RET;

	for (d = 0; d < VNPU_MAX_DIMS; d++) {
		__u64 step;

		if (d >= t->rank) {
			if (t->dims[d] || t->strides[d])
				return EINVAL_RET;
			continue;
		}
		/* Even where it is never stepped: strides times sizes must not overflow. */
		if (t->strides[d] < 0 || t->strides[d] > VNPU_MAX_STRIDE)
			return EINVAL_RET;
		if (!t->dims[d]) {
			empty = 1;
			continue;
		}
		if (__builtin_mul_overflow(t->dims[d] - 1, (__u64)t->strides[d], &step) ||
		    __builtin_add_overflow(last, step, &last))
			return EINVAL_RET;
	}

	if (empty) {
		bytes = 0;
	} else if (__builtin_add_overflow(last, 1, &bytes) ||
		   __builtin_mul_overflow(bytes, esize, &bytes)) {
		return EINVAL_RET;
	}
	if (__builtin_add_overflow(t->offset, bytes, end) ||
	    *end > slots[t->slot].size)
		return EINVAL_RET;
	return 0;
}

/*
 * A destination must not reach one element twice, or parts running in
 * parallel would race on it. Sufficient test: ordering the dims by stride,
 * each stride is larger than the span of all smaller ones.
 */
static int tensor_is_injective(const struct vnpu_cmd_tensor *t)
{
	__u32 order[VNPU_MAX_DIMS], n = 0, i, j;
	__u64 span = 0;

	for (i = 0; i < t->rank; i++) {
		if (!t->dims[i])
			return 1;
		if (t->dims[i] > 1)
			order[n++] = i;
	}
	for (i = 1; i < n; i++) {
		__u32 k = order[i];

		for (j = i; j > 0 && t->strides[order[j - 1]] > t->strides[k]; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	for (i = 0; i < n; i++) {
		__u64 s = t->strides[order[i]];

		if (s <= span)
			return 0;
		span += (t->dims[order[i]] - 1) * s;
	}
	return 1;
}

static int ranges_overlap(const struct vnpu_cmd_tensor *a, __u64 a_end,
			  const struct vnpu_cmd_tensor *b, __u64 b_end,
			  const struct vnpu_slot_info *slots)
{
	if (slots[a->slot].id != slots[b->slot].id)
		return 0;
	if (a_end == a->offset || b_end == b->offset)
		return 0;
	return a->offset < b_end && b->offset < a_end;
}

static int check_fill(const struct vnpu_cmd_fill *c,
		      const struct vnpu_slot_info *slots, __u32 num_slots)
{
	int ok = 1;
	__u32 esize;
	__u64 end;

	/* Nothing past the header is read before its size is known. */
	if (c->hdr.size != sizeof(*c))
		return EINVAL_RET;
	esize = vnpu_eng_dtype_size(c->dst.dtype);
	if (tensor_check(&c->dst, slots, num_slots, 1, &end))
		return EINVAL_RET;
	tensor_elems(&c->dst, &ok);
	if (!ok || !tensor_is_injective(&c->dst))
		return EINVAL_RET;
	if (esize < 8 && (c->value >> (esize * 8)))
		return EINVAL_RET;
	return 0;
}

static int check_copy(const struct vnpu_cmd_copy *c,
		      const struct vnpu_slot_info *slots, __u32 num_slots)
{
	__u64 dst_end, src_end;
	int ok = 1;
	__u32 d;

	if (c->hdr.size != sizeof(*c))
		return EINVAL_RET;
	if (tensor_check(&c->dst, slots, num_slots, 1, &dst_end) ||
	    tensor_check(&c->src, slots, num_slots, 0, &src_end))
		return EINVAL_RET;
	if (c->dst.rank != c->src.rank ||
	    vnpu_eng_dtype_size(c->dst.dtype) != vnpu_eng_dtype_size(c->src.dtype))
		return EINVAL_RET;
	for (d = 0; d < c->dst.rank; d++)
		if (c->dst.dims[d] != c->src.dims[d])
			return EINVAL_RET;
	tensor_elems(&c->dst, &ok);
	if (!ok || !tensor_is_injective(&c->dst))
		return EINVAL_RET;
	if (ranges_overlap(&c->dst, dst_end, &c->src, src_end, slots))
		return EINVAL_RET;
	return 0;
}

static __u64 layer_size(__u32 num_tensors, __u32 attr_size)
{
	return sizeof(struct vnpu_cmd_layer) +
	       (__u64)num_tensors * sizeof(struct vnpu_cmd_tensor) +
	       (((__u64)attr_size + 7) & ~7ULL);
}

static const void *layer_attrs(const struct vnpu_cmd_layer *c)
{
	return &c->tensors[c->num_tensors];
}

/*
 * Whether output @out of layer @c takes input @in's place exactly: a
 * QLINEAR_CONV's Y over its residual R (%VNPU_LAYER_F_RESIDUAL), whose
 * epilogue reads each element of R before it writes Y's at that place.
 */
static int replaces_residual(const struct vnpu_cmd_layer *c, __u32 out, __u32 in)
{
	const struct vnpu_cmd_tensor *y = &c->tensors[out], *r = &c->tensors[in];
	const struct vnpu_layer_conv *a = layer_attrs(c);
	__u32 d;

	if (c->op != VNPU_LAYER_QLINEAR_CONV || c->attr_size < sizeof(*a) ||
	    !(a->flags & VNPU_LAYER_F_RESIDUAL) || out != c->num_tensors - 1 ||
	    c->num_tensors < 6 || in != c->num_tensors - 6)
		return 0;
	if (y->slot != r->slot || y->offset != r->offset || y->dtype != r->dtype ||
	    y->rank != r->rank)
		return 0;
	for (d = 0; d < y->rank; d++)
		if (y->dims[d] != r->dims[d] || y->strides[d] != r->strides[d])
			return 0;
	return 1;
}

static int check_layer(const struct vnpu_cmd_layer *c,
		       const struct vnpu_slot_info *slots, __u32 num_slots)
{
	const unsigned char *attrs;
	__u64 ends[VNPU_LAYER_MAX_TENSORS];
	__u32 i, j, first_out;

	if (c->hdr.size < sizeof(*c) || c->flags || c->pad)
		return EINVAL_RET;
	if (!c->num_tensors || c->num_tensors > VNPU_LAYER_MAX_TENSORS ||
	    !c->num_outputs || c->num_outputs > c->num_tensors ||
	    c->attr_size > VNPU_LAYER_MAX_ATTR_SIZE)
		return EINVAL_RET;
	if (c->hdr.size != layer_size(c->num_tensors, c->attr_size))
		return EINVAL_RET;

	attrs = layer_attrs(c);
	for (i = c->attr_size; i < ((c->attr_size + 7) & ~7U); i++)
		if (attrs[i])
			return EINVAL_RET;

	first_out = c->num_tensors - c->num_outputs;
	for (i = 0; i < c->num_tensors; i++) {
		int ok = 1;

		if (tensor_check(&c->tensors[i], slots, num_slots,
				 i >= first_out, &ends[i]))
			return EINVAL_RET;
		tensor_elems(&c->tensors[i], &ok);
		if (!ok)
			return EINVAL_RET;
	}
	/*
	 * An output may neither alias itself nor any other tensor, but
	 * for a QLINEAR_CONV's Y exactly over its residual R.
	 */
	for (i = first_out; i < c->num_tensors; i++) {
		if (!tensor_is_injective(&c->tensors[i]))
			return EINVAL_RET;
		for (j = 0; j < c->num_tensors; j++)
			if (j != i && ranges_overlap(&c->tensors[i], ends[i],
						     &c->tensors[j], ends[j], slots) &&
			    !replaces_residual(c, i, j))
				return EINVAL_RET;
	}

	if (c->num_outputs < vnpu_eng_layer_outputs(c->op))
		return EINVAL_RET;
	if (vnpu_eng_layer_check(c->op, c->tensors, c->num_tensors, attrs,
				 c->attr_size))
		return EINVAL_RET;
	return 0;
}

static int check_cmd(const struct vnpu_cmd_header *h,
		     const struct vnpu_slot_info *slots, __u32 num_slots)
{
	switch (h->opcode) {
	case VNPU_CMD_NOP:
	case VNPU_CMD_SPIN:
		return h->size == sizeof(*h) ? 0 : EINVAL_RET;
	case VNPU_CMD_FILL:
		return check_fill((const struct vnpu_cmd_fill *)h, slots, num_slots);
	case VNPU_CMD_COPY:
		return check_copy((const struct vnpu_cmd_copy *)h, slots, num_slots);
	case VNPU_CMD_LAYER:
		return check_layer((const struct vnpu_cmd_layer *)h, slots, num_slots);
	}
	return EINVAL_RET;
}

int vnpu_stream_validate(const void *stream, __u64 size,
			 const struct vnpu_slot_info *slots, __u32 num_slots,
			 __u32 *num_cmds)
{
	const unsigned char *p = stream;
	__u64 pos = 0;
	__u32 n = 0;

	*num_cmds = 0;
	if (size % 8 || ((unsigned long)stream & 7))
		return EINVAL_RET;

	while (pos < size) {
		const struct vnpu_cmd_header *h = (const void *)(p + pos);

		if (size - pos < sizeof(*h) || h->size < sizeof(*h) ||
		    h->size % 8 || h->size > size - pos) {
			*num_cmds = n;
			return EINVAL_RET;
		}
		if (check_cmd(h, slots, num_slots)) {
			*num_cmds = n;
			return EINVAL_RET;
		}
		pos += h->size;
		n++;
	}
	*num_cmds = n;
	return 0;
}

const struct vnpu_cmd_header *vnpu_stream_next(const void *stream, __u64 size,
					       const struct vnpu_cmd_header *cmd)
{
	const unsigned char *base = stream;
	__u64 pos;

	pos = cmd ? (__u64)((const unsigned char *)cmd - base) + cmd->size : 0;
	if (pos >= size)
		return (const struct vnpu_cmd_header *)0;
	return (const struct vnpu_cmd_header *)(base + pos);
}

static __u64 cmd_elems(const struct vnpu_cmd_header *cmd)
{
	int ok = 1;

	if (cmd->opcode == VNPU_CMD_FILL)
		return tensor_elems(&((const struct vnpu_cmd_fill *)cmd)->dst, &ok);
	return tensor_elems(&((const struct vnpu_cmd_copy *)cmd)->dst, &ok);
}

/*
 * How a validated command may split: its cost (element operations, or a
 * COPY's or FILL's elements), the parts its least work per part allows
 * (MIN_*_PER_PART, 2^@shift times less) and the most parts its units
 * allow. False for a command that never splits.
 */
static int split_work(const struct vnpu_cmd_header *cmd, __u32 shift, __u32 features,
		      __u64 *cost, __u64 *by_work, __u64 *max_parts)
{
	const struct vnpu_cmd_layer *l = (const void *)cmd;

	switch (cmd->opcode) {
	case VNPU_CMD_FILL:
	case VNPU_CMD_COPY:
		*cost = cmd_elems(cmd);
		*by_work = *cost / (MIN_ELEMS_PER_PART >> shift);
		*max_parts = *cost;
		return 1;
	case VNPU_CMD_LAYER:
		*cost = vnpu_eng_layer_part_cost(l->op, l->tensors,
						 l->num_tensors, layer_attrs(l),
						 features);
		if (!(features & VNPU_ENG_F_AVX2_FMA))
			*cost = *cost > ~0ULL >> BASE_COST_SHIFT ? ~0ULL :
				*cost << BASE_COST_SHIFT;
		*by_work = *cost / (MIN_COST_PER_PART >> shift);
		*max_parts = vnpu_eng_layer_max_parts(l->op, l->tensors,
						      l->num_tensors, layer_attrs(l),
						      features);
		return 1;
	default:
		return 0;
	}
}

/*
 * vnpu_exec_parts(), with parts of at least 2^@shift times less work
 * than MIN_*_PER_PART; where that work limits the parts, a multiple of
 * @tiles of them.
 */
static __u32 exec_parts(const struct vnpu_cmd_header *cmd, __u32 tiles,
			__u64 chunk_cost, __u32 shift, __u32 features)
{
	__u64 cost, max_parts, by_work, parts;

	if (!tiles)
		tiles = 1;
	if (!split_work(cmd, shift, features, &cost, &by_work, &max_parts))
		return 1;
	/*
	 * A multiple of the tiles where the work allows: three parts on two
	 * tiles take as long as four (mobilenetv3_large_qdq's int8
	 * depthwise layers of 3.6-4.1 million, 130-200 us on one CPU, ran
	 * in 3 parts, two of them on one tile). Fine parts, where the work
	 * would keep the command whole: one a tile (where there are the
	 * units); whether such a split pays is the caller's to measure.
	 */
	if (by_work >= tiles)
		by_work -= by_work % tiles;
	else if (shift && by_work < 2)
		by_work = tiles;
	if (max_parts > by_work)
		max_parts = by_work;

	parts = tiles;
	if (chunk_cost && cost / chunk_cost >= parts) {
		parts = cost / chunk_cost + 1;
		parts = (parts + tiles - 1) / tiles * tiles;
	}
	if (parts > max_parts)
		parts = max_parts;
	if (parts > 0xffffffffULL)
		parts = 0xffffffffULL;
	return parts ? (__u32)parts : 1;
}

__u32 vnpu_exec_parts(const struct vnpu_cmd_header *cmd, __u32 tiles,
		      __u64 chunk_cost, __u32 features)
{
	return exec_parts(cmd, tiles, chunk_cost, 0, features);
}

__u32 vnpu_exec_parts_fine(const struct vnpu_cmd_header *cmd, __u32 tiles,
			   __u64 chunk_cost, __u32 features)
{
	return exec_parts(cmd, tiles, chunk_cost, VNPU_EXEC_FINE_SHIFT, features);
}

__u64 vnpu_exec_cost(const struct vnpu_cmd_header *cmd, __u32 features)
{
	__u64 cost, by_work, max_parts;

	if (!split_work(cmd, 0, features, &cost, &by_work, &max_parts))
		return 0;
	if (cmd->opcode != VNPU_CMD_LAYER)
		cost = cost > ~0ULL / (MIN_COST_PER_PART / MIN_ELEMS_PER_PART) ? ~0ULL :
		       cost * (MIN_COST_PER_PART / MIN_ELEMS_PER_PART);
	return cost;
}

__u64 vnpu_exec_scratch(const struct vnpu_cmd_header *cmd, __u32 num_parts,
			__u32 features)
{
	const struct vnpu_cmd_layer *l = (const void *)cmd;

	if (cmd->opcode != VNPU_CMD_LAYER)
		return 0;
	return vnpu_eng_layer_scratch(l->op, l->tensors, l->num_tensors,
				      layer_attrs(l), num_parts, features);
}

/*
 * Element operations of a validated command; more than a short job may
 * have for a SPIN and a layer that needs scratch memory.
 */
static __u64 cmd_cost(const struct vnpu_cmd_header *cmd)
{
	const struct vnpu_cmd_layer *l = (const void *)cmd;

	switch (cmd->opcode) {
	case VNPU_CMD_NOP:
		return 0;
	case VNPU_CMD_FILL:
	case VNPU_CMD_COPY:
		return cmd_elems(cmd);
	case VNPU_CMD_LAYER:
		/* The same layers need scratch on every path. */
		if (vnpu_exec_scratch(cmd, 1, 0))
			return VNPU_EXEC_SHORT_MAX_COST + 1;
		return vnpu_eng_layer_cost(l->op, l->tensors, l->num_tensors,
					   &l->tensors[l->num_tensors]);
	default:
		return VNPU_EXEC_SHORT_MAX_COST + 1;
	}
}

int vnpu_exec_stream_is_short(const void *stream, __u64 size)
{
	const struct vnpu_cmd_header *cmd = (const struct vnpu_cmd_header *)0;
	__u64 cost = 0, c;
	__u32 n = 0;

	while ((cmd = vnpu_stream_next(stream, size, cmd))) {
		c = cmd_cost(cmd);
		if (++n > VNPU_EXEC_SHORT_MAX_CMDS || c > VNPU_EXEC_SHORT_MAX_COST - cost)
			return 0;
		cost += c;
	}
	return 1;
}

/*
 * Walks elements [first, last) of a tensor shape in row-major order,
 * keeping the element offsets of up to two tensors of that shape.
 */
struct walker {
	__u32 rank;
	__u64 dims[VNPU_MAX_DIMS];
	__u64 idx[VNPU_MAX_DIMS];
	__s64 strides[2][VNPU_MAX_DIMS];
	__u64 off[2];
};

static void walker_init(struct walker *w, const struct vnpu_cmd_tensor *a,
			const struct vnpu_cmd_tensor *b, __u64 first)
{
	int d;

	w->rank = a->rank;
	w->off[0] = 0;
	w->off[1] = 0;
	for (d = (int)a->rank - 1; d >= 0; d--) {
		w->dims[d] = a->dims[d];
		w->strides[0][d] = a->strides[d];
		w->strides[1][d] = b ? b->strides[d] : 0;
		w->idx[d] = first % a->dims[d];
		first /= a->dims[d];
		w->off[0] += w->idx[d] * (__u64)w->strides[0][d];
		w->off[1] += w->idx[d] * (__u64)w->strides[1][d];
	}
}

/*
 * Advance to the start of the next row; the offsets still point where the
 * walk of the innermost dim began (at idx[rank - 1]).
 */
static void walker_next_row(struct walker *w)
{
	int d = (int)w->rank - 1;

	w->off[0] -= w->idx[d] * (__u64)w->strides[0][d];
	w->off[1] -= w->idx[d] * (__u64)w->strides[1][d];
	w->idx[d] = 0;
	for (d--; d >= 0; d--) {
		w->idx[d]++;
		w->off[0] += w->strides[0][d];
		w->off[1] += w->strides[1][d];
		if (w->idx[d] < w->dims[d])
			return;
		w->off[0] -= w->dims[d] * (__u64)w->strides[0][d];
		w->off[1] -= w->dims[d] * (__u64)w->strides[1][d];
		w->idx[d] = 0;
	}
}

/*
 * @dt and @st (NULL for a FILL) with their dims of one left out and each
 * dim merged into the one before where both step through the pair as
 * through one dim: the same elements in the same row-major order, in
 * rows as long as the layouts allow (a dense copy is one row).
 */
/* Whether @outer is @n times @inner (no overflow: strides are hostile). */
static int steps_as_one(__s64 outer, __s64 inner, __u64 n)
{
	__u64 p;

	return !__builtin_mul_overflow((__u64)inner, n, &p) && p == (__u64)outer;
}

static void merge_dims(struct vnpu_cmd_tensor *dt, struct vnpu_cmd_tensor *st)
{
	__u32 d, r = 0;

	for (d = 0; d < dt->rank; d++) {
		if (dt->dims[d] == 1)
			continue;
		if (r && steps_as_one(dt->strides[r - 1], dt->strides[d], dt->dims[d]) &&
		    (!st || steps_as_one(st->strides[r - 1], st->strides[d],
					 dt->dims[d]))) {
			dt->dims[r - 1] *= dt->dims[d];
			dt->strides[r - 1] = dt->strides[d];
			if (st)
				st->strides[r - 1] = st->strides[d];
			continue;
		}
		dt->dims[r] = dt->dims[d];
		dt->strides[r] = dt->strides[d];
		if (st)
			st->strides[r] = st->strides[d];
		r++;
	}
	if (!r) {
		dt->dims[0] = 1;
		dt->strides[0] = 1;
		if (st)
			st->strides[0] = 1;
		r = 1;
	}
	dt->rank = r;
	if (st) {
		st->rank = r;
		for (d = 0; d < r; d++)
			st->dims[d] = dt->dims[d];
	}
}

/*
 * @count elements of @esize bytes, @ds and @ss bytes apart; inlined with a
 * constant @esize, so that each is one load and one store.
 */
static inline void move_strided(unsigned char *d, __s64 ds,
				const unsigned char *s, __s64 ss, __u64 count,
				__u32 esize)
{
	__u64 i;

	for (i = 0; i < count; i++, d += ds, s += ss)
		__builtin_memcpy(d, s, esize);
}

/*
 * @count elements of @esize bytes from @s to @d, @ss and @ds elements
 * apart (@ss 0: the one value at @s): whole runs as one memcpy().
 */
static void move_row(unsigned char *d, __s64 ds, const unsigned char *s,
		     __s64 ss, __u64 count, __u32 esize)
{
	if (ds == 1 && ss == 1) {
		__builtin_memcpy(d, s, count * esize);
		return;
	}
	ds *= esize;
	ss *= esize;
	switch (esize) {
	case 1:
		move_strided(d, ds, s, ss, count, 1);
		break;
	case 2:
		move_strided(d, ds, s, ss, count, 2);
		break;
	case 4:
		move_strided(d, ds, s, ss, count, 4);
		break;
	default:
		move_strided(d, ds, s, ss, count, 8);
		break;
	}
}

/*
 * Whether the walker's next two rows (the two of the next dim out, from
 * its first element, each dense in the source) go into one dense
 * destination row, interleaved: the destination steps 2 along the rows
 * and 1 between the two (a 2x2 stride-2 ConvTranspose's phases into
 * their places, lower_nn.c).
 */
static int pair_rows(const struct walker *w, __u32 esize, __u64 left)
{
	__u32 in = w->rank - 1;

	return esize == 4 && w->rank >= 2 && !w->idx[in] && !w->idx[in - 1] &&
	       w->dims[in - 1] == 2 && w->strides[0][in] == 2 &&
	       w->strides[0][in - 1] == 1 && w->strides[1][in] == 1 &&
	       left >= 2 * w->dims[in];
}

#ifndef __KERNEL__
/* Four 4-byte elements (moved with __builtin_memcpy(): any alignment). */
typedef __u32 v4u32 __attribute__((vector_size(16)));
#endif

/*
 * @count 4-byte elements of rows @s0 and @s1 into @d alternately: one
 * dense row, not two of stride 2 an element at a time (DBNet's 2x2
 * stride-2 heads: a quarter less time in the copies on one CPU). Outside
 * the kernel (whose build has no vector registers here) four pairs go at
 * a time, two loads, two shuffles and two stores: gcc's -O2 left the
 * loop scalar, a pair an iteration, and the copy of DBNet's binarize
 * conv2 (6.5 MB) took as long as its convolution under bf16.
 */
static void move_pairs(unsigned char *__restrict d,
		       const unsigned char *__restrict s0,
		       const unsigned char *__restrict s1, __u64 count)
{
	__u32 *__restrict d32 = (__u32 *)d;
	const __u32 *a = (const __u32 *)s0, *b = (const __u32 *)s1;
	__u64 i = 0;

#ifndef __KERNEL__
	for (; i + 4 <= count; i += 4) {
		v4u32 x, y, lo, hi;

		__builtin_memcpy(&x, a + i, sizeof(x));
		__builtin_memcpy(&y, b + i, sizeof(y));
		lo = __builtin_shufflevector(x, y, 0, 4, 1, 5);
		hi = __builtin_shufflevector(x, y, 2, 6, 3, 7);
		__builtin_memcpy(d32 + 2 * i, &lo, sizeof(lo));
		__builtin_memcpy(d32 + 2 * i + 4, &hi, sizeof(hi));
	}
#endif
	for (; i < count; i++) {
		d32[2 * i] = a[i];
		d32[2 * i + 1] = b[i];
	}
}

/* Rows a transposing COPY moves at once (vnpu_eng_transpose32()). */
#define TRANSPOSE_ROWS 64ULL

/*
 * Rows of a COPY whose destination is dense along its rows and whose
 * source is dense down its columns (the next dim out), or the other way
 * round (@*scatter: a GEMM's rows of output channels to an NCHW output),
 * from the walker's position, in one block of up to TRANSPOSE_ROWS rows
 * for the engine's tiled transposition; 0 when the layouts or the range
 * allow none.
 */
static __u64 transpose_rows(const struct walker *w, __u32 esize, __u64 left,
			    int *scatter)
{
	__u32 in = w->rank - 1;
	__u64 rows;

	if (esize != 4 || w->rank < 2 || w->idx[in] || w->dims[in] < 8)
		return 0;
	*scatter = w->strides[1][in] == 1;
	if (!*scatter && (w->strides[0][in] != 1 ||
			  w->strides[1][in - 1] != 1))
		return 0;
	if (*scatter && (w->strides[0][in - 1] != 1 ||
			 w->strides[0][in] == 1))
		return 0;
	rows = w->dims[in - 1] - w->idx[in - 1];
	if (rows > TRANSPOSE_ROWS)
		rows = TRANSPOSE_ROWS;
	if (rows > left / w->dims[in])
		rows = left / w->dims[in];
	return rows >= 8 ? rows : 0;
}

/* Steps the walker @rows rows on, within one pass of the next dim out. */
static void walker_skip_rows(struct walker *w, __u64 rows)
{
	__u32 in = w->rank - 1;

	w->idx[in - 1] += rows - 1;
	w->off[0] += (rows - 1) * (__u64)w->strides[0][in - 1];
	w->off[1] += (rows - 1) * (__u64)w->strides[1][in - 1];
	walker_next_row(w);
}

/*
 * Copy (src != NULL) or fill (from the value at @val) elements
 * [first, last) of @dt's shape: row by row in the merged dims, with
 * memcpy() where both sides are dense, the engine's tiled transposition
 * where the source runs across the rows, and two rows at a time where
 * they interleave into one (pair_rows()).
 */
static void move_elems(unsigned char *dbase, const struct vnpu_cmd_tensor *dt,
		       const unsigned char *sbase, const struct vnpu_cmd_tensor *st,
		       const unsigned char *val, __u64 first, __u64 last,
		       __u32 features)
{
	__u32 esize = vnpu_eng_dtype_size(dt->dtype), in;
	struct vnpu_cmd_tensor dm = *dt, sm;
	struct walker w;
	__u64 n = first, rows;
	int scatter = 0;

	/* Nothing to move; an empty tensor's zero dim must not reach the walker. */
	if (first >= last)
		return;
	if (!dt->rank) {
		move_row(dbase, 1, sbase ? sbase : val, 0, 1, esize);
		return;
	}
	if (sbase)
		sm = *st;
	merge_dims(&dm, sbase ? &sm : (struct vnpu_cmd_tensor *)0);
	walker_init(&w, &dm, sbase ? &sm : (const struct vnpu_cmd_tensor *)0, first);
	in = w.rank - 1;
	while (n < last) {
		__u64 count = w.dims[in] - w.idx[in];
		unsigned char *d = dbase + w.off[0] * esize;
		const unsigned char *s = sbase ? sbase + w.off[1] * esize : val;

		if (sbase && pair_rows(&w, esize, last - n)) {
			move_pairs(d, s, s + w.strides[1][in - 1] * esize,
				   count);
			n += 2 * count;
			if (n < last)
				walker_skip_rows(&w, 2);
			continue;
		}
		rows = sbase ? transpose_rows(&w, esize, last - n, &scatter) : 0;
		if (rows) {
			struct vnpu_eng_transpose t = {
				.dst = d, .src = s, .rows = rows,
				.cols = w.dims[in],
				.dst_row = w.strides[0][in - 1],
				.src_col = w.strides[1][in],
			};

			/* The rows' elements run down the destination. */
			if (scatter) {
				t.rows = w.dims[in];
				t.cols = rows;
				t.dst_row = w.strides[0][in];
				t.src_col = w.strides[1][in - 1];
			}
			vnpu_eng_transpose32(&t, features);
			n += rows * w.dims[in];
			if (n < last)
				walker_skip_rows(&w, rows);
			continue;
		}
		if (count > last - n)
			count = last - n;
		move_row(d, w.strides[0][in], s, sbase ? w.strides[1][in] : 0,
			 count, esize);
		n += count;
		if (n < last)
			walker_next_row(&w);
	}
}

int vnpu_exec_part(const struct vnpu_cmd_header *cmd, void *const *slot_base,
		   __u32 part, __u32 num_parts, const struct vnpu_eng_ctx *ctx)
{
	const struct vnpu_cmd_layer *l = (const void *)cmd;
	const struct vnpu_cmd_fill *f = (const void *)cmd;
	const struct vnpu_cmd_copy *c = (const void *)cmd;
	void *data[VNPU_LAYER_MAX_TENSORS];
	__u64 n, first, last;
	__u32 i;

	if (!num_parts || part >= num_parts)
		return EINVAL_RET;

	switch (cmd->opcode) {
	case VNPU_CMD_NOP:
		return 0;
	case VNPU_CMD_FILL:
	case VNPU_CMD_COPY:
		n = cmd_elems(cmd);
		first = n / num_parts * part + (n % num_parts < part ? n % num_parts : part);
		last = first + n / num_parts + (part < n % num_parts);
		if (cmd->opcode == VNPU_CMD_FILL)
			move_elems((unsigned char *)slot_base[f->dst.slot] + f->dst.offset,
				   &f->dst, (const unsigned char *)0,
				   (const struct vnpu_cmd_tensor *)0,
				   (const unsigned char *)&f->value, first, last,
				   ctx->features);
		else
			move_elems((unsigned char *)slot_base[c->dst.slot] + c->dst.offset,
				   &c->dst,
				   (const unsigned char *)slot_base[c->src.slot] + c->src.offset,
				   &c->src, (const unsigned char *)0, first, last,
				   ctx->features);
		return 0;
	case VNPU_CMD_LAYER:
		for (i = 0; i < l->num_tensors; i++)
			data[i] = (unsigned char *)slot_base[l->tensors[i].slot] +
				  l->tensors[i].offset;
		return vnpu_eng_layer_run(l->op, l->tensors, data, l->num_tensors,
					  layer_attrs(l), part, num_parts, ctx);
	}
	return EINVAL_RET;
}
