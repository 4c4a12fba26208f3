// SPDX-License-Identifier: MIT
/* The graph IR: lifetime, attribute lookup, and the public model API. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "ir.h"

/* Elements computed at read time to learn shapes (e.g. Shape -> Reshape). */
#define READ_FOLD_LIMIT 4096

void vnpu_tinfo_clear(struct vnpu_tinfo *t)
{
	if (t->owns_data) {
		free(t->data);
		free(t->elems);
	}
	memset(t, 0, sizeof(*t));
	t->rank = -1;
}

void vnpu_attr_fini(struct vnpu_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->floats);
	free(a->ints);
	for (size_t i = 0; a->strings && i < a->n; i++)
		free(a->strings[i]);
	free(a->strings);
	vnpu_tinfo_clear(&a->t);
	if (a->g) {
		vnpu_graph_fini(a->g);
		free(a->g);
	}
}

vnpu_status vnpu_tinfo_copy(struct vnpu_tinfo *dst, const struct vnpu_tinfo *src)
{
	int64_t n = vnpu_tinfo_elems(src);
	size_t bytes = n > 0 ? (size_t)n * vnpu_element_type_size(src->type) : 0;

	vnpu_tinfo_clear(dst);
	*dst = *src;
	dst->data = NULL;
	dst->elems = NULL;
	dst->owns_data = false;
	if (src->elems) {
		dst->elems = malloc(((size_t)src->num_elems + 1) * sizeof(int32_t));
		if (!dst->elems)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory copying a sequence");
		memcpy(dst->elems, src->elems, (size_t)src->num_elems * sizeof(int32_t));
		dst->owns_data = true;
	}
	if (!src->data || n < 0)
		return VNPU_OK;
	dst->data = malloc(bytes ? bytes : 1);
	if (!dst->data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory copying a tensor");
	if (bytes)
		memcpy(dst->data, src->data, bytes);
	dst->owns_data = true;
	return VNPU_OK;
}

void vnpu_node_fini(struct vnpu_node *n)
{
	free(n->name);
	free(n->op);
	free(n->domain);
	free(n->inputs);
	free(n->outputs);
	for (uint32_t a = 0; n->attrs && a < n->num_attrs; a++)
		vnpu_attr_fini(&n->attrs[a]);
	free(n->attrs);
}

void vnpu_graph_fini(struct vnpu_graph *g)
{
	for (uint32_t i = 0; g->nodes && i < g->num_nodes; i++)
		vnpu_node_fini(&g->nodes[i]);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	memset(g, 0, sizeof(*g));
}

void vnpu_model_free(vnpu_model *m)
{
	if (!m)
		return;
	vnpu_graph_fini(&m->main);
	for (uint32_t v = 0; v < m->num_values; v++) {
		free(m->values[v].name);
		vnpu_tinfo_clear(&m->values[v].info);
	}
	free(m->values);
	free(m->dir);
	free(m);
}

const struct vnpu_attr *vnpu_node_attr(const struct vnpu_node *n, const char *name)
{
	for (uint32_t i = 0; i < n->num_attrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t vnpu_attr_int(const struct vnpu_node *n, const char *name, int64_t dflt)
{
	const struct vnpu_attr *a = vnpu_node_attr(n, name);

	return a && a->type == VNPU_ATTR_INT ? a->i : dflt;
}

float vnpu_attr_float(const struct vnpu_node *n, const char *name, float dflt)
{
	const struct vnpu_attr *a = vnpu_node_attr(n, name);

	if (a && a->type == VNPU_ATTR_FLOAT)
		return a->f;
	if (a && a->type == VNPU_ATTR_INT)
		return (float)a->i;
	return dflt;
}

const char *vnpu_attr_str(const struct vnpu_node *n, const char *name, const char *dflt)
{
	const struct vnpu_attr *a = vnpu_node_attr(n, name);

	return a && a->type == VNPU_ATTR_STRING ? a->s : dflt;
}

vnpu_status vnpu_work_charge(struct vnpu_work *w, const struct vnpu_node *n, int64_t count)
{
	if (!w->over && count <= VNPU_MAX_NODE_VISITS - w->visits) {
		w->visits += count;
		return VNPU_OK;
	}
	w->over = true;
	return vnpu_node_error(VNPU_UNSUPPORTED, n,
			       "visits more than %d nodes, inferred or unrolled (loops nested in loops?)",
			       VNPU_MAX_NODE_VISITS);
}

bool vnpu_tinfo_static(const struct vnpu_tinfo *t)
{
	if (t->rank < 0 || t->type == VNPU_TYPE_UNDEFINED)
		return false;
	for (int32_t d = 0; d < t->rank; d++)
		if (t->dims[d] < 0)
			return false;
	return true;
}

int64_t vnpu_tinfo_elems(const struct vnpu_tinfo *t)
{
	bool empty = false;
	int64_t n = 1;

	if (t->rank < 0)
		return -1;
	for (int32_t d = 0; d < t->rank; d++) {
		if (t->dims[d] < 0 || t->dims[d] > VNPU_MAX_ELEMS)
			return -1;
		empty |= !t->dims[d];
		/* Zeros aside: an empty tensor's strides are products too. */
		if (t->dims[d] && n > VNPU_MAX_ELEMS / t->dims[d])
			return -1;	/* too large to be a tensor */
		if (t->dims[d])
			n *= t->dims[d];
	}
	return empty ? 0 : n;
}

void vnpu_tinfo_shape(const struct vnpu_tinfo *t, vnpu_shape *out)
{
	memset(out, 0, sizeof(*out));
	out->rank = t->rank < 0 ? 0 : (uint32_t)t->rank;
	for (uint32_t d = 0; d < out->rank; d++)
		out->dims[d] = t->dims[d];
}

const char *vnpu_tinfo_str(const struct vnpu_tinfo *t, char *buf, size_t size)
{
	size_t len;

	len = (size_t)snprintf(buf, size, "%s", vnpu_element_type_str(t->type));
	if (t->rank < 0) {
		snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, "[?rank]");
		return buf;
	}
	for (int32_t d = 0; d < t->rank && len < size; d++) {
		if (t->dims[d] < 0)
			len += (size_t)snprintf(buf + len, size - len, "%s?", d ? "," : "[");
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "," : "[",
						(long long)t->dims[d]);
	}
	if (len < size)
		snprintf(buf + len, size - len, t->rank ? "]" : "[]");
	return buf;
}

/*
 * A table of infos for a fresh inference over @m: the model's inputs,
 * initializers and constants as views of their infos (not owning their
 * data), node outputs unknown. NULL when out of memory; free() it.
 */
struct vnpu_tinfo *vnpu_model_seed_infos(const struct vnpu_model *m)
{
	struct vnpu_tinfo *infos = calloc(m->num_values ? m->num_values : 1, sizeof(*infos));

	if (!infos)
		return NULL;
	for (uint32_t v = 0; v < m->num_values; v++) {
		infos[v].rank = -1;
		if (m->values[v].kind == VNPU_VALUE_NODE)
			continue;
		infos[v] = m->values[v].info;
		infos[v].owns_data = false;
	}
	return infos;
}

/*
 * Reset what inference computed and run it again over the main graph;
 * after a @reshape, a node the new shapes take past a device limit fails
 * it (vnpu_graph_reinfer()).
 */
static vnpu_status model_infer(struct vnpu_model *m, bool reshape)
{
	struct vnpu_tinfo *infos = vnpu_model_seed_infos(m);
	vnpu_status st;

	if (!infos)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory inferring shapes");
	st = reshape ? vnpu_graph_reinfer(m, infos, READ_FOLD_LIMIT) :
		       vnpu_graph_infer(m, &m->main, infos, READ_FOLD_LIMIT, false, NULL);
	if (st) {
		for (uint32_t v = 0; v < m->num_values; v++)
			if (m->values[v].kind == VNPU_VALUE_NODE)
				vnpu_tinfo_clear(&infos[v]);
		free(infos);
		return st;
	}
	for (uint32_t v = 0; v < m->num_values; v++) {
		if (m->values[v].kind != VNPU_VALUE_NODE)
			continue;
		vnpu_tinfo_clear(&m->values[v].info);
		m->values[v].info = infos[v];
	}
	free(infos);
	return VNPU_OK;
}

vnpu_status vnpu_model_infer(struct vnpu_model *m)
{
	return model_infer(m, false);
}

/*
 * Infer @m again after a call of @verb gave input @name a new shape or
 * value (a reshape, a freeze, a sequence's shapes). The model was well
 * formed before, so what a node refuses now is the caller's: a shape or
 * value its op does not define is VNPU_INVALID_ARGUMENT (inference says
 * VNPU_PARSE_ERROR), a node that took the previous shapes and is now past
 * a device limit VNPU_UNSUPPORTED. The values inferred before are kept on
 * failure; the caller puts its own change back.
 */
static vnpu_status reinfer(struct vnpu_model *m, const char *verb, const char *name)
{
	vnpu_status st = model_infer(m, true);

	if (!st)
		return VNPU_OK;
	return vnpu_error_prefix(st == VNPU_PARSE_ERROR ? VNPU_INVALID_ARGUMENT : st, "%s '%s'",
				 verb, name);
}

const char *vnpu_node_label(const struct vnpu_node *n, char *buf, size_t size)
{
	if (n->name[0])
		snprintf(buf, size, "node '%s' (%s)", n->name, n->op);
	else
		snprintf(buf, size, "%s node", n->op);
	return buf;
}

vnpu_status vnpu_node_prefix(vnpu_status st, const struct vnpu_node *n)
{
	char label[256];

	return vnpu_error_prefix(st, "%s", vnpu_node_label(n, label, sizeof(label)));
}

vnpu_status vnpu_node_verror(vnpu_status st, const struct vnpu_node *n, const char *fmt,
			     va_list ap)
{
	char msg[512], label[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return vnpu_error(st, "%s: %s", vnpu_node_label(n, label, sizeof(label)), msg);
}

vnpu_status vnpu_node_error(vnpu_status st, const struct vnpu_node *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	st = vnpu_node_verror(st, n, fmt, ap);
	va_end(ap);
	return st;
}

/* ---- public API ---- */

vnpu_status vnpu_model_read_memory(const void *data, size_t size, vnpu_model **out)
{
	struct vnpu_onnx_src src = { .fd = -1, .mem = data, .size = size };

	if (!data || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "read_model: NULL argument");
	return vnpu_onnx_parse(&src, NULL, out);
}

/*
 * Regular file @path opened into *@fd, of *@size bytes. It is opened
 * without blocking (a FIFO) and must be a regular file of at most
 * VNPU_ONNX_MAX_BYTES; the reader reads it with pread().
 */
static vnpu_status open_model_file(const char *path, int *fd, uint64_t *size)
{
	struct stat sb;

	*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return vnpu_error(errno == ENOENT ? VNPU_NOT_FOUND : VNPU_INVALID_ARGUMENT,
				  "%s: %s", path, strerror(errno));
	if (fstat(*fd, &sb)) {
		close(*fd);
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: %s", path, strerror(errno));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(*fd);
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: %s, not a regular file", path,
				  S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO" :
				  "a device or socket");
	}
	if ((uint64_t)sb.st_size > VNPU_ONNX_MAX_BYTES) {
		close(*fd);
		return vnpu_error(VNPU_UNSUPPORTED, "%s: %lld bytes, above the limit of %llu", path,
				  (long long)sb.st_size, (unsigned long long)VNPU_ONNX_MAX_BYTES);
	}
	*size = (uint64_t)sb.st_size;
	return VNPU_OK;
}

vnpu_status vnpu_model_read_file(const char *path, vnpu_model **out)
{
	struct vnpu_onnx_src src = { .fd = -1 };
	char *copy, *dir;
	vnpu_status st;

	if (!path || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "read_model: NULL argument");
	st = open_model_file(path, &src.fd, &src.size);
	if (st)
		return st;
	copy = strdup(path);
	if (!copy) {
		close(src.fd);
		return vnpu_error(VNPU_OUT_OF_MEMORY, "%s: out of memory", path);
	}
	dir = dirname(copy);
	st = vnpu_onnx_parse(&src, dir, out);
	free(copy);
	close(src.fd);
	if (st)
		return vnpu_error_prefix(st, "%s", path);
	return VNPU_OK;
}

static vnpu_status check_port(const vnpu_model *m, size_t index, bool input, const void *out)
{
	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	if (index >= (input ? m->main.num_inputs : m->main.num_outputs))
		return vnpu_error(VNPU_NOT_FOUND, "model has no %s %zu (it has %u)",
				  input ? "input" : "output", index,
				  input ? m->main.num_inputs : m->main.num_outputs);
	return VNPU_OK;
}

static const struct vnpu_value *port(const vnpu_model *m, size_t index, bool input)
{
	return &m->values[input ? m->main.inputs[index] : m->main.outputs[index]];
}

/* The inferred type, else the declared one (a sequence's elements'). */
static vnpu_element_type port_type(const struct vnpu_value *v)
{
	return v->info.type != VNPU_TYPE_UNDEFINED ? v->info.type : v->port_type;
}

vnpu_status vnpu_model_get_inputs_size(const vnpu_model *m, size_t *out)
{
	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	*out = m->main.num_inputs;
	return VNPU_OK;
}

vnpu_status vnpu_model_get_outputs_size(const vnpu_model *m, size_t *out)
{
	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	*out = m->main.num_outputs;
	return VNPU_OK;
}

vnpu_status vnpu_model_input_name(const vnpu_model *m, size_t index, const char **out)
{
	vnpu_status st = check_port(m, index, true, out);

	if (!st)
		*out = port(m, index, true)->name;
	return st;
}

vnpu_status vnpu_model_output_name(const vnpu_model *m, size_t index, const char **out)
{
	vnpu_status st = check_port(m, index, false, out);

	if (!st)
		*out = port(m, index, false)->name;
	return st;
}

static vnpu_status find_port(const vnpu_model *m, const char *name, bool input, size_t *out)
{
	uint32_t n;

	if (!m || !name || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	n = input ? m->main.num_inputs : m->main.num_outputs;
	for (uint32_t i = 0; i < n; i++) {
		if (!strcmp(port(m, i, input)->name, name)) {
			*out = i;
			return VNPU_OK;
		}
	}
	return vnpu_error(VNPU_NOT_FOUND, "model has no %s called '%s'",
			  input ? "input" : "output", name);
}

vnpu_status vnpu_model_input_index(const vnpu_model *m, const char *name, size_t *out)
{
	return find_port(m, name, true, out);
}

vnpu_status vnpu_model_output_index(const vnpu_model *m, const char *name, size_t *out)
{
	return find_port(m, name, false, out);
}

vnpu_status vnpu_model_input_type(const vnpu_model *m, size_t index, vnpu_element_type *out)
{
	vnpu_status st = check_port(m, index, true, out);

	if (!st)
		*out = port_type(port(m, index, true));
	return st;
}

vnpu_status vnpu_model_output_type(const vnpu_model *m, size_t index, vnpu_element_type *out)
{
	vnpu_status st = check_port(m, index, false, out);

	if (!st)
		*out = port_type(port(m, index, false));
	return st;
}

static vnpu_status port_kind(const vnpu_model *m, size_t index, bool input, vnpu_port_kind *out)
{
	vnpu_status st = check_port(m, index, input, out);

	if (!st)
		*out = port(m, index, input)->port_kind;
	return st;
}

vnpu_status vnpu_model_input_kind(const vnpu_model *m, size_t index, vnpu_port_kind *out)
{
	return port_kind(m, index, true, out);
}

vnpu_status vnpu_model_output_kind(const vnpu_model *m, size_t index, vnpu_port_kind *out)
{
	return port_kind(m, index, false, out);
}

static vnpu_status port_shape(const vnpu_model *m, size_t index, bool input, vnpu_shape *out)
{
	vnpu_status st = check_port(m, index, input, out);
	const struct vnpu_value *v;

	if (st)
		return st;
	v = port(m, index, input);
	if (v->info.kind != VNPU_TK_TENSOR)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "'%s' is a sequence or an optional without a value: it has no shape",
				  v->name);
	if (v->info.rank < 0)
		return vnpu_error(VNPU_UNSUPPORTED, "the rank of '%s' is not known", v->name);
	vnpu_tinfo_shape(&v->info, out);
	return VNPU_OK;
}

vnpu_status vnpu_model_input_shape(const vnpu_model *m, size_t index, vnpu_shape *out)
{
	return port_shape(m, index, true, out);
}

vnpu_status vnpu_model_output_shape(const vnpu_model *m, size_t index, vnpu_shape *out)
{
	return port_shape(m, index, false, out);
}

/*
 * Whether the known dimensions of @shape (VNPU_DIM_DYNAMIC ones aside) hold
 * more elements than a tensor may, as vnpu_tinfo_elems() counts them (zero
 * ones aside too): a model input of such a shape would have a size or
 * strides past 64 bits even when no node multiplies its dimensions out.
 */
static bool shape_too_large(const vnpu_shape *shape)
{
	int64_t n = 1;

	for (uint32_t d = 0; d < shape->rank; d++) {
		int64_t e = shape->dims[d];

		if (e == VNPU_DIM_DYNAMIC || !e)
			continue;
		if (e > VNPU_MAX_ELEMS || n > VNPU_MAX_ELEMS / e)
			return true;
		n *= e;
	}
	return false;
}

/*
 * The rule for every shape a caller gives an input (a reshape, a frozen
 * tensor, a sequence's elements): VNPU_INVALID_ARGUMENT, said without a
 * prefix, for a rank above VNPU_MAX_RANK, a negative dimension (other than
 * VNPU_DIM_DYNAMIC where @dynamic) or known dimensions of more than 2^40
 * elements. Such a shape is no tensor at all, whatever the nodes say.
 */
static vnpu_status check_shape(const vnpu_shape *shape, bool dynamic)
{
	if (shape->rank > VNPU_MAX_RANK)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "rank %u above %d", shape->rank,
				  VNPU_MAX_RANK);
	for (uint32_t d = 0; d < shape->rank; d++) {
		int64_t e = shape->dims[d];

		if (e == VNPU_DIM_DYNAMIC && !dynamic)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "dimension %u is dynamic: the shape must be static", d);
		if (e < 0 && e != VNPU_DIM_DYNAMIC)
			return vnpu_error(VNPU_INVALID_ARGUMENT, "dimension %u is %lld", d,
					  (long long)e);
		if (e > VNPU_MAX_ELEMS)
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "dimension %u is %lld: more than 2^40 elements", d,
					  (long long)e);
	}
	if (shape_too_large(shape))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "more than 2^40 elements");
	return VNPU_OK;
}

/* check_shape() of element @i of the sequence @seq (static), said for @verb. */
static vnpu_status check_element(const char *verb, const char *seq, size_t i,
				 const vnpu_shape *shape)
{
	vnpu_status st = check_shape(shape, false);

	return st ? vnpu_error_prefix(st, "%s '%s': element %zu", verb, seq, i) : VNPU_OK;
}

vnpu_status vnpu_model_reshape(vnpu_model *m, const char *name, const vnpu_shape *shape)
{
	struct vnpu_tinfo old;
	struct vnpu_value *v;
	vnpu_status st;
	size_t index;

	if (!m || !name || !shape)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "reshape: NULL argument");
	st = find_port(m, name, true, &index);
	if (st)
		return st;
	v = &m->values[m->main.inputs[index]];
	if (v->info.kind != VNPU_TK_TENSOR)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "reshape '%s': a sequence input (vnpu_model_reshape_sequence)", name);
	st = check_shape(shape, true);
	if (st)
		return vnpu_error_prefix(st, "reshape '%s'", name);
	old = v->info;
	v->info.rank = (int32_t)shape->rank;
	for (uint32_t d = 0; d < shape->rank; d++)
		v->info.dims[d] = shape->dims[d];
	st = reinfer(m, "reshape", name);
	/*
	 * A failed inference left every other value as it was; inferring again
	 * would only speak over the message (of an op it skips).
	 */
	if (st)
		v->info = old;
	return st;
}

/*
 * Whether @type and the static @shape fit input @v (its type, and its
 * shape as declared or last reshaped: a dynamic dimension takes any size)
 * and @size bytes hold them.
 */
static vnpu_status check_freeze(const struct vnpu_value *v, vnpu_element_type type,
				const vnpu_shape *shape, size_t size)
{
	const struct vnpu_tinfo *in = &v->info;
	uint64_t elems = 1;
	char want[192];
	vnpu_status st;

	if (type != in->type)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze '%s': type %s, the input is %s",
				  v->name, vnpu_element_type_str(type),
				  vnpu_element_type_str(in->type));
	st = check_shape(shape, false);
	if (st)
		return vnpu_error_prefix(st, "freeze '%s'", v->name);
	if (in->rank >= 0 && (int32_t)shape->rank != in->rank)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze '%s': rank %u, the input is %s",
				  v->name, shape->rank, vnpu_tinfo_str(in, want, sizeof(want)));
	for (uint32_t d = 0; d < shape->rank; d++) {
		if (in->rank >= 0 && in->dims[d] >= 0 && in->dims[d] != shape->dims[d])
			return vnpu_error(VNPU_INVALID_ARGUMENT,
					  "freeze '%s': dimension %u is %lld, the input is %s",
					  v->name, d, (long long)shape->dims[d],
					  vnpu_tinfo_str(in, want, sizeof(want)));
		elems *= (uint64_t)shape->dims[d];	/* at most 2^40: check_shape() */
	}
	/* No string is a constant: the host runs models of strings as they come. */
	if (type == VNPU_TYPE_STRING)
		return vnpu_error(VNPU_UNSUPPORTED, "freeze '%s': a string input cannot be frozen",
				  v->name);
	if (elems * vnpu_element_type_size(type) != size)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "freeze '%s': %zu bytes of data for %llu elements of %s", v->name,
				  size, (unsigned long long)elems, vnpu_element_type_str(type));
	return VNPU_OK;
}

/* Drop the values past the first @keep (elements a refused call added). */
static void drop_values(struct vnpu_model *m, uint32_t keep)
{
	while (m->num_values > keep) {
		struct vnpu_value *e = &m->values[--m->num_values];

		free(e->name);
		vnpu_tinfo_clear(&e->info);
	}
}

/*
 * Input @index becomes a constant of @info (taken over), the values after
 * @first_added (the elements of a frozen sequence) constants with it. On
 * failure all is as before, @info and the added values freed.
 */
static vnpu_status freeze(vnpu_model *m, size_t index, struct vnpu_tinfo *info,
			  uint32_t first_added)
{
	int32_t idx = m->main.inputs[index];
	struct vnpu_value *v = &m->values[idx];
	struct vnpu_tinfo old = v->info;
	vnpu_status st;

	v->info = *info;
	v->kind = VNPU_VALUE_CONST;
	memmove(&m->main.inputs[index], &m->main.inputs[index + 1],
		(m->main.num_inputs - index - 1) * sizeof(int32_t));
	m->main.num_inputs--;
	/* As a reshape: the data a node refuses, or takes past a device limit. */
	st = reinfer(m, "freeze", v->name);
	if (!st) {
		vnpu_tinfo_clear(&old);
		return VNPU_OK;
	}
	memmove(&m->main.inputs[index + 1], &m->main.inputs[index],
		(m->main.num_inputs - index) * sizeof(int32_t));
	m->main.inputs[index] = idx;
	m->main.num_inputs++;
	vnpu_tinfo_clear(&v->info);
	v->info = old;
	v->kind = VNPU_VALUE_INPUT;
	drop_values(m, first_added);
	return st;
}

vnpu_status vnpu_model_freeze_input(vnpu_model *m, const char *name, vnpu_element_type type,
				    const vnpu_shape *shape, const void *data, size_t size)
{
	struct vnpu_tinfo info;
	struct vnpu_value *v;
	size_t index;
	vnpu_status st;

	if (!m || !name || !shape || (!data && size))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze: NULL argument");
	st = find_port(m, name, true, &index);
	if (st)
		return st;
	v = &m->values[m->main.inputs[index]];
	if (v->info.kind != VNPU_TK_TENSOR)
		return vnpu_error(VNPU_INVALID_ARGUMENT,
				  "freeze '%s': a sequence input (vnpu_model_freeze_sequence)", name);
	st = check_freeze(v, type, shape, size);
	if (st)
		return st;
	info = v->info;
	info.data = malloc(size ? size : 1);
	if (!info.data)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "freeze: out of memory");
	if (size)
		memcpy(info.data, data, size);
	info.owns_data = true;
	info.rank = (int32_t)shape->rank;
	for (uint32_t d = 0; d < shape->rank; d++)
		info.dims[d] = shape->dims[d];
	return freeze(m, index, &info, m->num_values);
}

/* A new constant value named "<seq>[<i>]": a copy of @t. */
static vnpu_status add_element(vnpu_model *m, const char *seq, size_t i,
			       const struct vnpu_tinfo *t, int32_t *out)
{
	struct vnpu_value *v;
	char name[64];
	vnpu_status st;

	if (m->num_values == m->cap_values) {
		uint32_t cap = m->cap_values ? m->cap_values * 2 : 64;
		struct vnpu_value *vals = realloc(m->values, cap * sizeof(*vals));

		if (!vals)
			return vnpu_error(VNPU_OUT_OF_MEMORY, "freeze: out of memory");
		m->values = vals;
		m->cap_values = cap;
	}
	v = &m->values[m->num_values];
	memset(v, 0, sizeof(*v));
	snprintf(name, sizeof(name), "[%zu]", i);
	v->name = malloc(strlen(seq) + strlen(name) + 1);
	if (!v->name)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "freeze: out of memory");
	strcat(strcpy(v->name, seq), name);
	v->info.rank = -1;
	st = vnpu_tinfo_copy(&v->info, t);
	if (st) {
		free(v->name);
		return st;
	}
	v->kind = VNPU_VALUE_CONST;
	*out = (int32_t)m->num_values++;
	return VNPU_OK;
}

/*
 * The input called @name, of a kind in @kinds (a bit per vnpu_port_kind),
 * for @verb: "not @what input" otherwise.
 */
static vnpu_status find_input_of(const vnpu_model *m, const char *name, unsigned kinds,
				 const char *verb, const char *what, size_t *index)
{
	vnpu_status st = find_port(m, name, true, index);

	if (st)
		return st;
	if (!(kinds >> m->values[m->main.inputs[*index]].port_kind & 1))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s '%s': not %s input", verb, name, what);
	return VNPU_OK;
}

#define SEQUENCE_KINDS (1u << VNPU_PORT_SEQUENCE | 1u << VNPU_PORT_OPTIONAL_SEQUENCE)
#define MAX_FROZEN_ELEMS 65536

vnpu_status vnpu_model_freeze_elems(vnpu_model *m, const char *name,
				    const struct vnpu_tinfo *elems, size_t count)
{
	uint32_t first;
	struct vnpu_tinfo info;
	struct vnpu_value *v;
	size_t index;
	vnpu_status st;

	st = find_input_of(m, name, SEQUENCE_KINDS, "freeze", "a sequence", &index);
	if (st)
		return st;
	v = &m->values[m->main.inputs[index]];
	if (count > MAX_FROZEN_ELEMS)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze '%s': %zu elements, at most %d",
				  name, count, MAX_FROZEN_ELEMS);
	for (size_t i = 0; i < count; i++) {
		vnpu_shape shape;

		if (elems[i].type != v->port_type)
			return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze '%s': element %zu is %s, the sequence holds %s",
					  name, i, vnpu_element_type_str(elems[i].type),
					  vnpu_element_type_str(v->port_type));
		vnpu_tinfo_shape(&elems[i], &shape);
		st = check_element("freeze", name, i, &shape);
		if (st)
			return st;
	}
	info = (struct vnpu_tinfo){ .type = v->port_type, .rank = -1, .kind = VNPU_TK_SEQUENCE,
				    .num_elems = (int32_t)count, .owns_data = true };
	info.elems = malloc((count + 1) * sizeof(int32_t));
	if (!info.elems)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "freeze: out of memory");
	first = m->num_values;
	for (size_t i = 0; !st && i < count; i++)
		st = add_element(m, name, i, &elems[i], &info.elems[i]);
	if (st) {
		drop_values(m, first);
		free(info.elems);
		return st;
	}
	return freeze(m, index, &info, first);
}

/* @t: an input element of sequence @seq, of the static @shape (checked). */
static void element_info(const struct vnpu_value *seq, const vnpu_shape *shape,
			 struct vnpu_tinfo *t)
{
	memset(t, 0, sizeof(*t));
	t->type = seq->port_type;
	t->rank = (int32_t)shape->rank;
	for (uint32_t d = 0; d < shape->rank; d++)
		t->dims[d] = shape->dims[d];
}

/* The elements of sequence input @index, of a fixed length, take @shapes. */
static vnpu_status sequence_set_shapes(vnpu_model *m, size_t index, const vnpu_shape *shapes)
{
	const struct vnpu_value *v = &m->values[m->main.inputs[index]];
	size_t count = (size_t)v->info.num_elems;
	struct vnpu_tinfo *old = calloc(count + 1, sizeof(*old));
	vnpu_status st;

	if (!old)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "reshape: out of memory");
	for (size_t i = 0; i < count; i++) {
		struct vnpu_tinfo *t = &m->values[v->info.elems[i]].info;

		old[i] = *t;
		element_info(v, &shapes[i], t);
	}
	st = reinfer(m, "reshape", v->name);
	for (size_t i = 0; st && i < count; i++)
		m->values[v->info.elems[i]].info = old[i];
	free(old);
	return st;
}

/*
 * Sequence input @index, of no length yet, gets @count elements of @shapes:
 * new input values "<name>[<i>]", which the compile makes ports.
 */
static vnpu_status sequence_add_elements(vnpu_model *m, size_t index, const vnpu_shape *shapes,
					 size_t count)
{
	int32_t *elems = malloc((count + 1) * sizeof(int32_t));
	uint32_t first = m->num_values;
	struct vnpu_tinfo old;
	struct vnpu_value *v;
	vnpu_status st = elems ? VNPU_OK : vnpu_error(VNPU_OUT_OF_MEMORY, "reshape: out of memory");

	for (size_t i = 0; !st && i < count; i++) {
		struct vnpu_tinfo t;

		v = &m->values[m->main.inputs[index]];	/* add_element moves it */
		element_info(v, &shapes[i], &t);
		st = add_element(m, v->name, i, &t, &elems[i]);
		if (!st)
			m->values[elems[i]].kind = VNPU_VALUE_INPUT;
	}
	v = &m->values[m->main.inputs[index]];
	old = v->info;
	if (!st) {
		v->info.num_elems = (int32_t)count;
		v->info.elems = elems;
		v->info.owns_data = true;
		st = reinfer(m, "reshape", v->name);
		if (st)
			v->info = old;
		else
			elems = NULL;
	}
	if (st)
		drop_values(m, first);
	free(elems);
	return st;
}

vnpu_status vnpu_model_reshape_sequence(vnpu_model *m, const char *name, size_t count,
					const vnpu_shape *shapes)
{
	const struct vnpu_value *v;
	size_t index;
	vnpu_status st;

	if (!m || !name || (!shapes && count))
		return vnpu_error(VNPU_INVALID_ARGUMENT, "reshape: NULL argument");
	st = find_input_of(m, name, SEQUENCE_KINDS, "reshape", "a sequence", &index);
	if (st)
		return st;
	v = &m->values[m->main.inputs[index]];
	if (v->info.num_elems >= 0 && (size_t)v->info.num_elems != count)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "reshape '%s': its length is fixed at %d, not %zu",
				  name, v->info.num_elems, count);
	if (count > MAX_FROZEN_ELEMS)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "reshape '%s': %zu elements, at most %d",
				  name, count, MAX_FROZEN_ELEMS);
	for (size_t i = 0; i < count; i++) {
		st = check_element("reshape", name, i, &shapes[i]);
		if (st)
			return st;
	}
	if (v->info.num_elems >= 0)
		return sequence_set_shapes(m, index, shapes);
	return sequence_add_elements(m, index, shapes, count);
}

vnpu_status vnpu_model_freeze_none(vnpu_model *m, const char *name)
{
	struct vnpu_tinfo info = { .rank = -1, .kind = VNPU_TK_NONE };
	size_t index;
	vnpu_status st;

	if (!m || !name)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "freeze: NULL argument");
	st = find_input_of(m, name, 1u << VNPU_PORT_OPTIONAL | 1u << VNPU_PORT_OPTIONAL_SEQUENCE,
			   "freeze", "an optional", &index);
	if (st)
		return st;
	info.type = m->values[m->main.inputs[index]].port_type;
	return freeze(m, index, &info, m->num_values);
}

vnpu_status vnpu_model_get_ops_size(const vnpu_model *m, size_t *out)
{
	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	*out = m->main.num_nodes;
	return VNPU_OK;
}

vnpu_status vnpu_model_op(const vnpu_model *m, size_t index, const char **out_type,
			  const char **out_name)
{
	if (!m || !out_type || !out_name)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	if (index >= m->main.num_nodes)
		return vnpu_error(VNPU_NOT_FOUND, "model has no op %zu (it has %u)", index,
				  m->main.num_nodes);
	*out_type = m->main.nodes[index].op;
	*out_name = m->main.nodes[index].name;
	return VNPU_OK;
}

vnpu_status vnpu_model_get_opset(const vnpu_model *m, int64_t *out)
{
	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	*out = m->opset;
	return VNPU_OK;
}
