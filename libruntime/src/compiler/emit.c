// SPDX-License-Identifier: MIT
/*
 * The end of the pipeline: targets, liveness and arena planning, the
 * weights blob, command-stream emission into segments, and the two entry
 * points vnpu_compile() and vnpu_query_model().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cgraph.h"
#include "engine/vnpu_engine.h"
#include "error.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int32_t cs_storage(const struct cstate *s, int32_t v, uint64_t *offset)
{
	*offset = 0;
	for (uint32_t guard = 0; s->vals[v].alias >= 0 && guard < s->num_vals; guard++) {
		*offset += s->vals[v].alias_offset;
		v = s->vals[v].alias;
	}
	return v;
}

static int32_t root_of(const struct cstate *s, int32_t v)
{
	uint64_t unused;

	return cs_storage(s, v, &unused);
}

static uint64_t val_bytes(const struct cstate *s, int32_t v)
{
	const struct vnpu_tinfo *t = &s->vals[v].info;

	return (uint64_t)vnpu_tinfo_elems(t) * vnpu_element_type_size(t->type);
}

static void state_fini(struct cstate *s)
{
	for (uint32_t v = 0; v < s->num_vals; v++)
		vnpu_tinfo_clear(&s->vals[v].info);
	free(s->vals);
	free(s->ops);
	free(s->cmds);
	free(s->tensors);
	cs_free_synth(s);
	cs_free_retired(s);
	for (uint32_t i = 0; i < s->num_outs; i++)
		free(s->out_names[i]);
	free(s->out_names);
	free(s->out_vals);
	free(s->in_vals);
	for (uint32_t i = 0; i < s->num_groups; i++)
		free(s->groups[i].name);
	free(s->groups);
	vnpu_program_weights_release(s->wbase, s->wcap);
	s->wbase = NULL;
}

static vnpu_status check_options(const struct vnpu_compile_options *o)
{
	switch (o->inference_precision) {
	case VNPU_TYPE_UNDEFINED:
	case VNPU_TYPE_F32:
	case VNPU_TYPE_F16:
	case VNPU_TYPE_BF16:
		break;
	default:
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "inference precision %s is none of f32, f16, bf16",
				  vnpu_element_type_str(o->inference_precision));
	}
	return VNPU_OK;
}

/* Does the primary device take every command of @op? Why not, in @why. */
static bool primary_takes(const struct cstate *s, const struct cop *op, char *why, size_t len)
{
	for (uint32_t c = op->first_cmd; c < op->first_cmd + op->num_cmds; c++) {
		const struct ccmd *cmd = &s->cmds[c];

		if (cmd->opcode == VNPU_CMD_LAYER && s->opt.primary_layer_ops &&
		    !(s->opt.primary_layer_ops >> cmd->layer & 1)) {
			snprintf(why, len, "the device does not take layer op %u", cmd->layer);
			return false;
		}
		for (uint32_t i = 0; s->opt.primary_dtypes && i < cmd->num_tensors; i++) {
			if (!(s->opt.primary_dtypes >> cs_cmd_tensors(s, cmd)[i].type & 1)) {
				snprintf(why, len, "the device does not take %s tensors",
					 vnpu_element_type_str(cs_cmd_tensors(s, cmd)[i].type));
				return false;
			}
		}
	}
	return true;
}

/* Lower every live op and choose its target; in query mode failures are
 * recorded in the op and the walk goes on. */
static vnpu_status lower_all(struct cstate *s)
{
	for (uint32_t i = 0; i < s->num_ops; i++) {
		struct cop *op = &s->ops[i];
		vnpu_status st;

		if (op->dead)
			continue;
		s->cur_op = i;
		st = cs_lower_op(s, op);
		if (st) {
			if (!s->query)
				return st;
			op->num_cmds = 0;
			op->target = (enum vnpu_prog_target)-1;
			/* Shapes left dynamic: answer by op type. */
			if (op->kind == COP_NODE && !s->static_inputs && cl_has_lowering(op->node->op) &&
			    strstr(op->reason, "not known at compile time")) {
				op->target = VNPU_TARGET_PRIMARY;
				cs_strlcpy(op->reason, sizeof(op->reason),
					   "taken by op type; shapes are known after reshape");
			}
			continue;
		}
		op->target = VNPU_TARGET_PRIMARY;
		if (primary_takes(s, op, op->reason, sizeof(op->reason)))
			continue;
		if (s->query)
			op->target = s->opt.allow_fallback ? VNPU_TARGET_FALLBACK : (enum vnpu_prog_target)-1;
		else if (s->opt.allow_fallback && !s->opt.strict)
			op->target = VNPU_TARGET_FALLBACK;
		else
			return cs_fail(s, VNPU_UNSUPPORTED, "%s%s", op->reason,
				       s->opt.allow_fallback ? " (fallback forbidden by the strict option)" : "");
	}
	return VNPU_OK;
}

/* Where every value lives: weights, I/O slots, or the planned arena. */
static vnpu_status place_values(struct cstate *s, struct vnpu_program *p)
{
	struct vnpu_plan_buf *bufs = NULL;
	int32_t *buf_val = NULL;
	uint32_t nbufs = 0, step = 0;
	uint64_t wsize = 0, copied_at;
	uint8_t *arena = s->wbase;
	bool in_place;

	for (uint32_t i = 0; i < s->num_ins; i++) {
		struct cval *v = &s->vals[s->in_vals[i]];

		v->storage = CV_IO;
		v->slot = VNPU_SLOT_FIRST_IO + i;
	}
	for (uint32_t v = 0; v < s->num_vals; v++) {
		if (s->vals[v].out_index >= 0) {
			s->vals[v].storage = CV_IO;
			s->vals[v].slot = VNPU_SLOT_FIRST_IO + s->num_ins +
					  (uint32_t)s->vals[v].out_index;
		}
	}
	/* Liveness over commands (each runs after the one before), and the
	 * weights not in the arena in order of first use. */
	for (uint32_t i = 0; i < s->num_ops; i++) {
		const struct cop *op = &s->ops[i];

		if (op->dead || !op->num_cmds)
			continue;
		for (uint32_t c = op->first_cmd; c < op->first_cmd + op->num_cmds; c++) {
			for (uint32_t t = 0; t < s->cmds[c].num_tensors; t++) {
				const struct ctensor *ct = &cs_cmd_tensors(s, &s->cmds[c])[t];
				struct cval *v = &s->vals[root_of(s, ct->val)];

				if (v->storage == CV_NONE && v->info.data) {
					v->storage = CV_WEIGHT;
					v->slot = VNPU_SLOT_WEIGHTS;
					/* Where in the weights the arena's blocks are. */
					if (cs_in_arena(s, v->info.data))
						continue;
					v->offset = wsize;
					wsize = align_up(wsize + val_bytes(s, (int32_t)(v - s->vals)),
							 VNPU_COMPILE_ALIGN);
				}
				if (v->storage != CV_NONE && v->storage != CV_ARENA)
					continue;
				if (v->storage == CV_NONE) {
					v->storage = CV_ARENA;
					v->slot = VNPU_SLOT_ARENA;
					v->first = step;
				}
				v->last = step;
			}
			step++;
		}
	}
	for (uint32_t v = 0; v < s->num_vals; v++)
		nbufs += s->vals[v].storage == CV_ARENA;
	/*
	 * The weights: the arena's blocks where they are, the other
	 * constants copied after them, in order of first use. The arena
	 * becomes the weights where they fit in it and take a huge page;
	 * else all is copied.
	 */
	copied_at = align_up(s->wtop, VNPU_COMPILE_ALIGN);
	in_place = s->wbase && wsize <= s->wcap - copied_at &&
		   copied_at + wsize >= VNPU_ENG_HOST_HUGE;
	bufs = calloc(nbufs ? nbufs : 1, sizeof(*bufs));
	buf_val = calloc(nbufs ? nbufs : 1, sizeof(*buf_val));
	p->weights = in_place ? s->wbase : vnpu_program_weights_alloc(copied_at + wsize);
	p->weights_size = copied_at + wsize;	/* vnpu_program_free() frees by it */
	if (!bufs || !buf_val || !p->weights) {
		if (in_place)
			p->weights = NULL;
		free(bufs);
		free(buf_val);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	}
	if (in_place) {
		vnpu_program_weights_keep(s->wbase, s->wcap, p->weights_size);
		s->wbase = NULL;	/* the program's now */
	} else if (s->wtop) {
		memcpy(p->weights, s->wbase, s->wtop);
	}
	nbufs = 0;
	for (uint32_t v = 0; v < s->num_vals; v++) {
		struct cval *cv = &s->vals[v];

		if (cv->storage == CV_WEIGHT && arena &&
		    (uintptr_t)cv->info.data - (uintptr_t)arena < s->wtop) {
			cv->offset = (uint64_t)((uint8_t *)cv->info.data - arena);
			cv->info.data = (char *)p->weights + cv->offset;
		} else if (cv->storage == CV_WEIGHT) {
			cv->offset += copied_at;
			memcpy((char *)p->weights + cv->offset, cv->info.data, val_bytes(s, (int32_t)v));
			/*
			 * The compiler's own constants (packed, folded) go as
			 * they are copied: held to the end, they doubled the
			 * memory a compile peaks at. The value reads its
			 * bytes from the weights from now on.
			 */
			if (cv->info.owns_data && !cv->info.elems) {
				free(cv->info.data);
				cv->info.data = (char *)p->weights + cv->offset;
				cv->info.owns_data = false;
			}
		}
		if (cv->storage != CV_ARENA)
			continue;
		bufs[nbufs] = (struct vnpu_plan_buf){ .size = val_bytes(s, (int32_t)v),
						      .first = cv->first, .last = cv->last };
		p->intermediates_size += align_up(bufs[nbufs].size, VNPU_COMPILE_ALIGN);
		buf_val[nbufs++] = (int32_t)v;
	}
	p->arena_size = vnpu_plan_arena(bufs, nbufs, VNPU_COMPILE_ALIGN);
	for (uint32_t b = 0; b < nbufs; b++) {
		s->vals[buf_val[b]].offset = bufs[b].offset;
		/* The own-bytes plan: one after another, each on its own pages. */
		s->vals[buf_val[b]].own_offset = p->own_arena_size;
		p->own_arena_size = align_up(p->own_arena_size + bufs[b].size, VNPU_OWN_ALIGN);
	}
	free(bufs);
	free(buf_val);
	return VNPU_OK;
}

static void to_tensor(const struct cstate *s, const struct ctensor *ct, struct vnpu_cmd_tensor *t)
{
	uint64_t at;
	const struct cval *v = &s->vals[cs_storage(s, ct->val, &at)];
	uint64_t offset = s->emit_own && v->storage == CV_ARENA ? v->own_offset : v->offset;

	memset(t, 0, sizeof(*t));
	t->slot = v->slot;
	t->dtype = (uint32_t)ct->type;
	t->offset = offset + at + (uint64_t)ct->off * vnpu_element_type_size(ct->type);
	t->rank = ct->rank;
	for (uint32_t d = 0; d < ct->rank; d++) {
		t->dims[d] = (uint64_t)ct->dims[d];
		t->strides[d] = ct->strides[d];
		/* Never stepped: a stride made from a value past the device's
		 * range (STFT's one frame of step INT64_MAX) is none. */
		if (ct->dims[d] <= 1 && (ct->strides[d] < 0 || ct->strides[d] > VNPU_MAX_STRIDE))
			t->strides[d] = 0;
	}
}

static uint32_t cmd_bytes(const struct ccmd *c)
{
	switch (c->opcode) {
	case VNPU_CMD_FILL:
		return sizeof(struct vnpu_cmd_fill);
	case VNPU_CMD_COPY:
		return sizeof(struct vnpu_cmd_copy);
	default:
		return (uint32_t)(sizeof(struct vnpu_cmd_layer) +
				  c->num_tensors * sizeof(struct vnpu_cmd_tensor) +
				  align_up(c->attr_size, 8));
	}
}

static void write_cmd(const struct cstate *s, const struct ccmd *c, uint8_t *dst)
{
	uint32_t size = cmd_bytes(c);

	memset(dst, 0, size);
	if (c->opcode == VNPU_CMD_FILL) {
		struct vnpu_cmd_fill *f = (struct vnpu_cmd_fill *)dst;

		f->hdr = (struct vnpu_cmd_header){ VNPU_CMD_FILL, size };
		to_tensor(s, &cs_cmd_tensors(s, c)[0], &f->dst);
		f->value = c->fill_value;
	} else if (c->opcode == VNPU_CMD_COPY) {
		struct vnpu_cmd_copy *cp = (struct vnpu_cmd_copy *)dst;

		cp->hdr = (struct vnpu_cmd_header){ VNPU_CMD_COPY, size };
		to_tensor(s, &cs_cmd_tensors(s, c)[0], &cp->dst);
		to_tensor(s, &cs_cmd_tensors(s, c)[1], &cp->src);
	} else {
		struct vnpu_cmd_layer *l = (struct vnpu_cmd_layer *)dst;

		l->hdr = (struct vnpu_cmd_header){ VNPU_CMD_LAYER, size };
		l->op = c->layer;
		l->num_tensors = c->num_tensors;
		l->num_outputs = vnpu_eng_layer_outputs(c->layer);
		l->attr_size = c->attr_size;
		for (uint32_t i = 0; i < c->num_tensors; i++)
			to_tensor(s, &cs_cmd_tensors(s, c)[i], &l->tensors[i]);
		memcpy((uint8_t *)&l->tensors[c->num_tensors], c->attrs, c->attr_size);
	}
}

static const char *layer_name(const struct cstate *s, const struct cop *op)
{
	if (op->kind == COP_OUTPUT)
		return s->out_names[op->out[0]];
	if (op->node->name[0])
		return op->node->name;
	return op->num_out && op->out[0] >= 0 ? s->vals[op->out[0]].name : op->node->op;
}

/*
 * Every command writes the arena or an output's slot: the weights and the
 * inputs are read only (the device refuses such a stream at load). A
 * compiler bug if not, said here rather than by the device.
 */
static vnpu_status check_writes(const struct cstate *s)
{
	for (uint32_t i = 0; i < s->num_ops; i++) {
		const struct cop *op = &s->ops[i];

		for (uint32_t c = op->first_cmd; !op->dead && c < op->first_cmd + op->num_cmds; c++) {
			const struct ccmd *cmd = &s->cmds[c];
			const struct ctensor *w;
			const struct cval *v;

			if (!cmd->num_tensors)
				continue;
			/* A layer writes its last tensor, a copy or fill its first. */
			w = &cs_cmd_tensors(s, cmd)[cmd->opcode == VNPU_CMD_LAYER ?
						    cmd->num_tensors - 1 : 0];
			v = &s->vals[root_of(s, w->val)];
			if (v->storage == CV_ARENA ||
			    (v->storage == CV_IO && v->slot >= VNPU_SLOT_FIRST_IO + s->num_ins))
				continue;
			return vnpu_error(VNPU_GENERAL_ERROR,
					  "compiler: %s layer '%s' writes %s '%s', which is read only",
					  op->type, layer_name(s, op),
					  v->storage == CV_WEIGHT ? "constant" : "input", v->name);
		}
	}
	return VNPU_OK;
}

/* Segments (runs of ops with one target) and their layers. */
static vnpu_status emit_segments(struct cstate *s, struct vnpu_program *p)
{
	uint64_t cap = 0;	/* bytes allocated for the last segment's stream */
	uint32_t nlayers = 0;

	for (uint32_t i = 0; i < s->num_ops; i++)
		nlayers += !s->ops[i].dead && s->ops[i].num_cmds;
	p->layers = calloc(nlayers ? nlayers : 1, sizeof(*p->layers));
	p->segments = calloc(nlayers ? nlayers : 1, sizeof(*p->segments));
	if (!p->layers || !p->segments)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	for (uint32_t i = 0; i < s->num_ops; i++) {
		const struct cop *op = &s->ops[i];
		struct vnpu_prog_segment *seg;
		struct vnpu_prog_layer *l;
		uint64_t bytes = 0;
		uint8_t *buf;

		if (op->dead || !op->num_cmds)
			continue;
		seg = p->num_segments ? &p->segments[p->num_segments - 1] : NULL;
		if (!seg || seg->target != op->target) {
			seg = &p->segments[p->num_segments++];
			seg->target = op->target;
			seg->first_layer = p->num_layers;
			cap = 0;
		}
		for (uint32_t c = op->first_cmd; c < op->first_cmd + op->num_cmds; c++)
			bytes += cmd_bytes(&s->cmds[c]);
		if (seg->cmd_size + bytes > cap) {
			/* Doubling: appending op by op stays linear. */
			cap = cap * 2 > seg->cmd_size + bytes ? cap * 2 : seg->cmd_size + bytes;
			buf = realloc(seg->cmd, cap);
			if (!buf)
				return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
			seg->cmd = buf;
		}
		buf = seg->cmd;
		l = &p->layers[p->num_layers++];
		l->name = strdup(layer_name(s, op));
		l->type = strdup(op->type);
		if (!l->name || !l->type)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		l->segment = p->num_segments - 1;
		l->first_cmd = seg->num_cmds;
		l->num_cmds = op->num_cmds;
		for (uint32_t c = op->first_cmd; c < op->first_cmd + op->num_cmds; c++) {
			write_cmd(s, &s->cmds[c], buf + seg->cmd_size);
			seg->cmd_size += cmd_bytes(&s->cmds[c]);
			seg->num_cmds++;
		}
		seg->num_layers++;
	}
	if (!p->num_segments) {
		/* Nothing to compute (empty tensors only): one NOP, so every
		 * program has a segment to run. */
		struct vnpu_prog_segment *seg = &p->segments[p->num_segments++];
		struct vnpu_cmd_header nop = { VNPU_CMD_NOP, sizeof(nop) };

		seg->cmd = malloc(sizeof(nop));
		if (!seg->cmd)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		memcpy(seg->cmd, &nop, sizeof(nop));
		seg->cmd_size = sizeof(nop);
		seg->num_cmds = 1;
		seg->target = VNPU_TARGET_PRIMARY;
	}
	return VNPU_OK;
}

/*
 * The one segment's commands again with the own-bytes plan's offsets
 * (compiler.h's @own_plan), when asked for and within the bound; else the
 * program has none (and own_arena_size 0).
 */
static vnpu_status emit_own(struct cstate *s, struct vnpu_program *p)
{
	const struct vnpu_prog_segment *seg = &p->segments[0];
	uint64_t size = 0;
	uint8_t *buf;

	if (!s->opt.own_plan || p->num_segments != 1 || seg->target != VNPU_TARGET_PRIMARY ||
	    p->own_arena_size <= p->arena_size || p->own_arena_size > VNPU_OWN_ARENA_MAX ||
	    (p->own_arena_size > VNPU_OWN_ARENA_RATIO * p->arena_size &&
	     p->own_arena_size > VNPU_OWN_ARENA_SMALL)) {
		p->own_arena_size = 0;
		return VNPU_OK;
	}
	buf = malloc(seg->cmd_size ? seg->cmd_size : 8);
	if (!buf)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	s->emit_own = true;
	for (uint32_t i = 0; i < s->num_ops; i++) {
		const struct cop *op = &s->ops[i];

		for (uint32_t c = op->first_cmd; !op->dead && c < op->first_cmd + op->num_cmds; c++) {
			write_cmd(s, &s->cmds[c], buf + size);
			size += cmd_bytes(&s->cmds[c]);
		}
	}
	s->emit_own = false;
	p->own_cmd = buf;
	p->own_cmd_size = size;
	return VNPU_OK;
}

/* The ports (model inputs, then the output ports cs_build listed) and the
 * groups of the outputs that are not tensors. */
static vnpu_status make_ports(struct cstate *s, struct vnpu_program *p)
{
	p->inputs = calloc(s->num_ins ? s->num_ins : 1, sizeof(*p->inputs));
	p->outputs = calloc(s->num_outs ? s->num_outs : 1, sizeof(*p->outputs));
	if (!p->inputs || !p->outputs)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	p->groups = s->groups;
	p->num_groups = s->num_groups;
	s->groups = NULL;
	s->num_groups = 0;
	for (uint32_t k = 0; k < s->num_ins + s->num_outs; k++) {
		bool in = k < s->num_ins;
		uint32_t i = in ? k : k - s->num_ins;
		int32_t v = in ? s->in_vals[i] : s->out_vals[i];
		struct vnpu_prog_port *port = in ? &p->inputs[i] : &p->outputs[i];
		const struct vnpu_tinfo *t = &s->vals[v].info;
		const char *name = in ? s->m->values[v].name : s->out_names[i];

		if (!vnpu_tinfo_static(t) || t->rank > VNPU_MAX_RANK)
			return vnpu_error(VNPU_UNSUPPORTED, "%s '%s': shape not known at compile time",
					  in ? "input" : "output", name);
		/* Declared so (a model's input), though no node multiplies it out. */
		if (vnpu_tinfo_elems(t) < 0)
			return vnpu_error(VNPU_INVALID_ARGUMENT, "%s '%s': more than 2^40 elements",
					  in ? "input" : "output", name);
		port->name = strdup(name);
		if (!port->name)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
		port->type = t->type;
		vnpu_tinfo_shape(t, &port->shape);
		port->slot = VNPU_SLOT_FIRST_IO + k;
		port->size = val_bytes(s, v);
		if (in)
			p->num_inputs++;
		else
			p->num_outputs++;
	}
	return VNPU_OK;
}

static vnpu_status pipeline(struct cstate *s, const struct vnpu_model *m,
			    const struct vnpu_compile_options *o, bool query)
{
	static const struct vnpu_compile_options defaults;
	vnpu_status st;

	memset(s, 0, sizeof(*s));
	s->m = m;
	s->opt = o ? *o : defaults;
	s->query = query;
	s->cur_op = UINT32_MAX;
	s->static_inputs = true;
	st = check_options(&s->opt);
	for (uint32_t i = 0; i < m->main.num_inputs; i++)
		s->static_inputs &= vnpu_tinfo_static(&m->values[m->main.inputs[i]].info);
	if (!st)
		st = cs_build(s);
	if (!st)
		st = cs_fuse(s);
	if (!st)
		st = lower_all(s);
	return st;
}

vnpu_status vnpu_compile(const struct vnpu_model *m, const struct vnpu_compile_options *o,
			 struct vnpu_program **out)
{
	struct vnpu_program *p;
	struct cstate s;
	vnpu_status st;

	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "compile: NULL argument");
	p = calloc(1, sizeof(*p));
	if (!p)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory compiling");
	st = pipeline(&s, m, o, false);
	if (!st)
		st = make_ports(&s, p);
	if (!st)
		st = place_values(&s, p);
	if (!st)
		st = check_writes(&s);
	if (!st)
		st = emit_segments(&s, p);
	if (!st)
		st = emit_own(&s, p);
	state_fini(&s);
#ifdef __GLIBC__
	/*
	 * A compile frees as many bytes as the model's weights in blocks
	 * glibc keeps in its heap (the packed constants): hand the pages back.
	 */
	malloc_trim(0);
#endif
	if (st) {
		vnpu_program_free(p);
		return st;
	}
	*out = p;
	return VNPU_OK;
}

void vnpu_query_result_free(struct vnpu_query_result *r)
{
	if (!r)
		return;
	free(r->nodes);
	free(r);
}

/* The place of op @i, following fusion to the op that runs it. */
static enum vnpu_query_place op_place(const struct cstate *s, uint32_t i, const char **why)
{
	const struct cop *op = &s->ops[i];

	for (uint32_t guard = 0; op->dead && op->fused_into >= 0 && guard < s->num_ops; guard++)
		op = &s->ops[op->fused_into];
	*why = op->reason;
	if (op->dead)
		return VNPU_QUERY_FOLDED;
	if ((int)op->target < 0)
		return VNPU_QUERY_NONE;
	return op->target == VNPU_TARGET_FALLBACK ? VNPU_QUERY_FALLBACK : VNPU_QUERY_PRIMARY;
}

static int place_severity(enum vnpu_query_place p)
{
	switch (p) {
	case VNPU_QUERY_FOLDED: return 0;
	case VNPU_QUERY_PRIMARY: return 1;
	case VNPU_QUERY_FALLBACK: return 2;
	default: return 3;
	}
}

/* The main-graph node op @i answers for, as an index, or -1 (an output copy). */
static int64_t op_main_node(const struct cstate *s, uint32_t i)
{
	const struct cop *op = &s->ops[i];
	uintptr_t n = (uintptr_t)(op->root ? op->root : op->node);
	uintptr_t first = (uintptr_t)s->m->main.nodes;

	if (op->kind == COP_OUTPUT || n < first ||
	    n >= first + s->m->main.num_nodes * sizeof(*s->m->main.nodes))
		return -1;
	return (int64_t)((n - first) / sizeof(*s->m->main.nodes));
}

/* Each node's place: the most severe of its ops' (the first such op's reason). */
static vnpu_status query_places(const struct cstate *s, struct vnpu_query_result *r)
{
	bool *found = calloc(r->num_nodes ? r->num_nodes : 1, sizeof(*found));

	if (!found)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	for (uint32_t i = 0; i < s->num_ops; i++) {
		int64_t n = op_main_node(s, i);
		enum vnpu_query_place place;
		struct vnpu_query_node *q;
		const char *why;

		if (n < 0)
			continue;
		q = &r->nodes[n];
		place = op_place(s, i, &why);
		if (place_severity(place) > place_severity(q->place) || !found[n]) {
			q->place = place;
			cs_strlcpy(q->reason, sizeof(q->reason), place == VNPU_QUERY_PRIMARY ? "" : why);
		}
		found[n] = true;
	}
	free(found);
	return VNPU_OK;
}

vnpu_status vnpu_query_model(const struct vnpu_model *m, const struct vnpu_compile_options *o,
			     struct vnpu_query_result **out)
{
	struct vnpu_query_result *r;
	struct cstate s;
	vnpu_status st;

	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "query: NULL argument");
	r = calloc(1, sizeof(*r));
	if (r)
		r->nodes = calloc(m->main.num_nodes ? m->main.num_nodes : 1, sizeof(*r->nodes));
	if (!r || !r->nodes) {
		vnpu_query_result_free(r);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	}
	st = pipeline(&s, m, o, true);
	r->num_nodes = m->main.num_nodes;
	for (uint32_t n = 0; n < r->num_nodes; n++) {
		r->nodes[n].name = m->main.nodes[n].name;
		r->nodes[n].op = m->main.nodes[n].op;
		r->nodes[n].place = VNPU_QUERY_FOLDED;
	}
	if (!st)
		st = query_places(&s, r);
	state_fini(&s);
	if (st) {
		vnpu_query_result_free(r);
		return vnpu_error_prefix(st, "query");
	}
	for (uint32_t n = 0; n < r->num_nodes; n++)
		if (r->nodes[n].place == VNPU_QUERY_FOLDED)
			cs_strlcpy(r->nodes[n].reason, sizeof(r->nodes[n].reason),
				   "computed at compile time, fused or a view");
	*out = r;
	return VNPU_OK;
}
