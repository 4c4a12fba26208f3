// SPDX-License-Identifier: MIT
/*
 * A deep copy of a model: a compiled model with dynamic inputs keeps its
 * own, to reshape and compile again for every new input shape long after
 * the caller freed the model it compiled.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ir.h"

static vnpu_status oom(void)
{
	return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory copying a model");
}

/* A copy of @n items of @size bytes at @src (NULL stays NULL). */
static vnpu_status dup_array(void **dst, const void *src, size_t n, size_t size)
{
	*dst = NULL;
	if (!src)
		return VNPU_OK;
	*dst = malloc(n ? n * size : 1);
	if (!*dst)
		return oom();
	if (n)
		memcpy(*dst, src, n * size);
	return VNPU_OK;
}

static vnpu_status dup_str(char **dst, const char *src)
{
	return dup_array((void **)dst, src, src ? strlen(src) + 1 : 0, 1);
}

static vnpu_status graph_copy(struct vnpu_graph *dst, const struct vnpu_graph *src);

static vnpu_status attr_copy(struct vnpu_attr *dst, const struct vnpu_attr *src)
{
	vnpu_status st;

	*dst = *src;
	dst->name = dst->s = NULL;
	dst->floats = NULL;
	dst->ints = NULL;
	dst->strings = NULL;
	dst->g = NULL;
	memset(&dst->t, 0, sizeof(dst->t));
	dst->t.rank = -1;
	st = dup_str(&dst->name, src->name) ?: dup_str(&dst->s, src->s) ?:
	     dup_array((void **)&dst->floats, src->floats, src->n, sizeof(float)) ?:
	     dup_array((void **)&dst->ints, src->ints, src->n, sizeof(int64_t));
	if (!st && src->strings) {
		dst->strings = calloc(src->n ? src->n : 1, sizeof(char *));
		if (!dst->strings)
			return oom();
		for (size_t i = 0; !st && i < src->n; i++)
			st = dup_str(&dst->strings[i], src->strings[i]);
	}
	if (!st && src->type == VNPU_ATTR_TENSOR)
		st = vnpu_tinfo_copy(&dst->t, &src->t);
	if (!st && src->g) {
		dst->g = calloc(1, sizeof(*dst->g));
		st = dst->g ? graph_copy(dst->g, src->g) : oom();
	}
	return st;
}

static vnpu_status node_copy(struct vnpu_node *dst, const struct vnpu_node *src)
{
	vnpu_status st;

	*dst = *src;
	dst->name = dst->op = dst->domain = NULL;
	dst->inputs = dst->outputs = NULL;
	dst->attrs = NULL;
	st = dup_str(&dst->name, src->name) ?: dup_str(&dst->op, src->op) ?:
	     dup_str(&dst->domain, src->domain) ?:
	     dup_array((void **)&dst->inputs, src->inputs, src->num_inputs, sizeof(int32_t)) ?:
	     dup_array((void **)&dst->outputs, src->outputs, src->num_outputs, sizeof(int32_t));
	if (st)
		return st;
	dst->attrs = calloc(src->num_attrs ? src->num_attrs : 1, sizeof(*dst->attrs));
	if (!dst->attrs)
		return oom();
	for (uint32_t i = 0; !st && i < src->num_attrs; i++)
		st = attr_copy(&dst->attrs[i], &src->attrs[i]);
	return st;
}

/* On failure @dst holds what was copied, for vnpu_graph_fini(). */
static vnpu_status graph_copy(struct vnpu_graph *dst, const struct vnpu_graph *src)
{
	vnpu_status st;

	*dst = *src;
	dst->nodes = NULL;
	dst->inputs = dst->outputs = NULL;
	st = dup_array((void **)&dst->inputs, src->inputs, src->num_inputs, sizeof(int32_t)) ?:
	     dup_array((void **)&dst->outputs, src->outputs, src->num_outputs, sizeof(int32_t));
	if (st)
		return st;
	dst->nodes = calloc(src->num_nodes ? src->num_nodes : 1, sizeof(*dst->nodes));
	if (!dst->nodes)
		return oom();
	for (uint32_t i = 0; !st && i < src->num_nodes; i++)
		st = node_copy(&dst->nodes[i], &src->nodes[i]);
	return st;
}

vnpu_status vnpu_model_copy(const struct vnpu_model *src, struct vnpu_model **out)
{
	struct vnpu_model *m = calloc(1, sizeof(*m));
	vnpu_status st;

	if (!m)
		return oom();
	*m = *src;
	m->dir = NULL;
	memset(&m->main, 0, sizeof(m->main));
	m->num_values = 0;
	m->values = calloc(src->num_values ? src->num_values : 1, sizeof(*m->values));
	st = m->values ? dup_str(&m->dir, src->dir) : oom();
	for (uint32_t v = 0; !st && v < src->num_values; v++) {
		struct vnpu_value *d = &m->values[v];

		*d = src->values[v];
		d->name = NULL;
		memset(&d->info, 0, sizeof(d->info));
		m->num_values++;
		st = dup_str(&d->name, src->values[v].name) ?:
		     vnpu_tinfo_copy(&d->info, &src->values[v].info);
	}
	m->cap_values = src->num_values;
	if (!st)
		st = graph_copy(&m->main, &src->main);
	if (st) {
		vnpu_model_free(m);
		return st;
	}
	*out = m;
	return VNPU_OK;
}
