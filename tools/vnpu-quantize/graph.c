// SPDX-License-Identifier: MIT
/*
 * The model as protobuf-c decodes it, and the edits the quantizer makes.
 *
 * The file is hostile: its bytes are read once and given whole to libvnpu's
 * reader first (vnpu_core_read_model_from_memory(), which bounds nesting,
 * message count and decoded size before anything is unpacked, and checks
 * every tensor and node), so protobuf-c only ever unpacks bytes that reader
 * took. A model with external data has no folder there and is refused.
 *
 * Edits never free a string the index may point to: a replaced string is
 * kept until qm_fini(), so the index stays valid until qm_index() rebuilds
 * it. Everything added is malloc'd, as protobuf-c's free_unpacked expects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "quantize.h"
#include "tensor_file.h"

/* libvnpu's reader takes models of at most 2 GiB. */
#define MAX_MODEL_BYTES (1ull << 31)
/* QDQ with per-channel (axis) DequantizeLinear. */
#define MIN_OPSET 13

int qm_oom(void)
{
	fprintf(stderr, TOOL ": out of memory\n");
	return 1;
}

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

int32_t qm_find(const struct qmodel *qm, const char *name)
{
	uint32_t mask = qm->map.cap - 1;

	if (!qm->map.cap || !name)
		return -1;
	for (uint32_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
		int32_t v = qm->map.slots[i];

		if (v < 0 || !strcmp(qm->t[v].name, name))
			return v;
	}
}

static int map_grow(struct qmodel *qm)
{
	uint32_t cap = qm->map.cap ? qm->map.cap * 2 : 1024;
	int32_t *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return qm_oom();
	memset(slots, 0xff, cap * sizeof(*slots));
	for (uint32_t v = 0; v < qm->num_t; v++) {
		uint32_t i = hash_name(qm->t[v].name) & (cap - 1);

		while (slots[i] >= 0)
			i = (i + 1) & (cap - 1);
		slots[i] = (int32_t)v;
	}
	free(qm->map.slots);
	qm->map.slots = slots;
	qm->map.cap = cap;
	return 0;
}

/* The index of @name, added (nothing known of it) when new; -1 on failure. */
static int32_t map_add(struct qmodel *qm, const char *name)
{
	int32_t v = qm_find(qm, name);
	uint32_t i;

	if (v >= 0)
		return v;
	if (qm->num_t >= INT32_MAX / 4)
		return -1;
	if (qm->num_t == qm->cap_t) {
		uint32_t cap = qm->cap_t ? qm->cap_t * 2 : 256;
		struct qtensor *t = realloc(qm->t, cap * sizeof(*t));

		if (!t)
			return -1;
		qm->t = t;
		qm->cap_t = cap;
	}
	if ((qm->num_t + 1) * 2 > qm->map.cap && map_grow(qm))
		return -1;
	memset(&qm->t[qm->num_t], 0, sizeof(qm->t[0]));
	qm->t[qm->num_t] = (struct qtensor){ .name = name, .producer = -1, .init = -1,
					     .share = -1, .reader = -1, .weight_axis = -1 };
	for (i = hash_name(name) & (qm->map.cap - 1); qm->map.slots[i] >= 0;
	     i = (i + 1) & (qm->map.cap - 1))
		;
	qm->map.slots[i] = (int32_t)qm->num_t;
	return (int32_t)qm->num_t++;
}

static void stats_free(struct qmodel *qm)
{
	for (uint32_t i = 0; i < qm->num_t; i++) {
		free(qm->t[i].stats.hist);
		free(qm->t[i].scale_name);
		free(qm->t[i].zp_name);
		free(qm->t[i].dq_name);
	}
}

/* Keep @s (malloc'd) until qm_fini(). */
static int retire(struct qmodel *qm, char *s)
{
	if (qm->num_owned == qm->cap_owned) {
		size_t cap = qm->cap_owned ? qm->cap_owned * 2 : 64;
		char **owned = realloc(qm->owned, cap * sizeof(*owned));

		if (!owned) {
			free(s);
			return qm_oom();
		}
		qm->owned = owned;
		qm->cap_owned = cap;
	}
	qm->owned[qm->num_owned++] = s;
	return 0;
}

int qm_set_name(struct qmodel *qm, char **field, const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return qm_oom();
	if (*field && retire(qm, *field)) {
		free(copy);
		return 1;
	}
	*field = copy;
	return 0;
}

/* The graph's inputs or outputs into the index. */
static int index_ports(struct qmodel *qm, Onnx__ValueInfoProto **ports, size_t n, bool output)
{
	for (size_t i = 0; i < n; i++) {
		int32_t v = ports[i]->name ? map_add(qm, ports[i]->name) : 0;

		if (v < 0)
			return qm_oom();
		if (!ports[i]->name)
			continue;
		if (output)
			qm->t[v].graph_output = true;
		else
			qm->t[v].graph_input = true;
	}
	return 0;
}

int qm_index(struct qmodel *qm)
{
	const Onnx__GraphProto *g = qm->g;
	int32_t v;

	stats_free(qm);
	qm->num_t = 0;
	free(qm->map.slots);
	qm->map.slots = NULL;
	qm->map.cap = 0;
	if (index_ports(qm, g->input, g->n_input, false))
		return 1;
	for (size_t i = 0; i < g->n_initializer; i++) {
		if (!g->initializer[i]->name)
			continue;
		if ((v = map_add(qm, g->initializer[i]->name)) < 0)
			goto fail;
		qm->t[v].init = (int32_t)i;
		qm->t[v].graph_input = false;
	}
	for (size_t n = 0; n < g->n_node; n++) {
		const Onnx__NodeProto *node = g->node[n];

		for (size_t i = 0; i < node->n_output; i++) {
			if (!node->output[i][0])
				continue;
			if ((v = map_add(qm, node->output[i])) < 0)
				goto fail;
			qm->t[v].producer = (int32_t)n;
		}
		for (size_t i = 0; i < node->n_input; i++) {
			if (!node->input[i][0])
				continue;
			if ((v = map_add(qm, node->input[i])) < 0)
				goto fail;
			qm->t[v].readers++;
			qm->t[v].reader = (int32_t)n;
		}
	}
	return index_ports(qm, g->output, g->n_output, true);
fail:
	return qm_oom();
}

const char *qm_unique(struct qmodel *qm, const char *base, const char *suffix)
{
	size_t len = strlen(base) + strlen(suffix) + 24;
	char *name = malloc(len);
	int32_t v;

	if (!name)
		return NULL;
	snprintf(name, len, "%s%s", base, suffix);
	for (unsigned long k = 1; qm_find(qm, name) >= 0; k++)
		snprintf(name, len, "%s%s_%lu", base, suffix, k);
	if (retire(qm, name))
		return NULL;
	v = map_add(qm, name);
	return v < 0 ? NULL : qm->t[v].name;
}

/* The opset of the default domain. */
static int64_t opset(const Onnx__ModelProto *p)
{
	for (size_t i = 0; i < p->n_opset_import; i++) {
		const char *d = p->opset_import[i]->domain;

		if (!d || !d[0] || !strcmp(d, "ai.onnx"))
			return p->opset_import[i]->version;
	}
	return 0;
}

int qm_read(const char *path, vnpu_core *core, struct qmodel *qm, vnpu_model **f32)
{
	struct stat sb;
	vnpu_status st;
	char err[512];
	size_t size;
	uint8_t *buf;

	memset(qm, 0, sizeof(*qm));
	if (!stat(path, &sb) && (uint64_t)sb.st_size > MAX_MODEL_BYTES) {
		fprintf(stderr, TOOL ": %s: a model of %lld bytes, above the limit of 2 GiB\n",
			path, (long long)sb.st_size);
		return 1;
	}
	buf = file_read_whole(path, &size, err, sizeof(err));
	if (!buf) {
		fprintf(stderr, TOOL ": %s\n", err);
		return 1;
	}
	st = vnpu_core_read_model_from_memory(core, buf, size, f32);
	if (st) {
		fprintf(stderr, TOOL ": %s: %s%s\n", path, vnpu_last_error(),
			st == VNPU_NOT_FOUND ? " (models with external data are not supported)" : "");
		free(buf);
		return 1;
	}
	qm->proto = onnx__model_proto__unpack(NULL, size, buf);
	free(buf);
	if (!qm->proto || !qm->proto->graph) {
		fprintf(stderr, TOOL ": %s: not an ONNX model\n", path);
		return 1;
	}
	qm->g = qm->proto->graph;
	if (opset(qm->proto) < MIN_OPSET) {
		if (opset(qm->proto))
			fprintf(stderr, TOOL ": %s: opset %lld", path, (long long)opset(qm->proto));
		else
			fprintf(stderr, TOOL ": %s: no opset of the default domain", path);
		fprintf(stderr, "; quantizing needs opset %d or later (per-channel "
			"DequantizeLinear)\n", MIN_OPSET);
		return 1;
	}
	return qm_index(qm);
}

void qm_fini(struct qmodel *qm)
{
	stats_free(qm);
	if (qm->proto)
		onnx__model_proto__free_unpacked(qm->proto, NULL);
	for (size_t i = 0; i < qm->num_owned; i++)
		free(qm->owned[i]);
	free(qm->owned);
	free(qm->t);
	free(qm->map.slots);
	memset(qm, 0, sizeof(*qm));
}

bool qm_kept(const struct options *o, const Onnx__NodeProto *n)
{
	for (size_t i = 0; n->name && i < o->num_keep; i++)
		if (!strcmp(o->keep[i], n->name))
			return true;
	return false;
}

int qm_check_keep(const struct qmodel *qm, const struct options *o)
{
	for (size_t i = 0; i < o->num_keep; i++) {
		size_t n;

		for (n = 0; n < qm->g->n_node; n++)
			if (qm->g->node[n]->name && !strcmp(qm->g->node[n]->name, o->keep[i]))
				break;
		if (n == qm->g->n_node) {
			fprintf(stderr, TOOL ": --keep-float: the model has no node called \"%s\"\n",
				o->keep[i]);
			return 1;
		}
	}
	return 0;
}

bool qm_is(const Onnx__NodeProto *n, const char *op)
{
	return (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) &&
	       n->op_type && !strcmp(n->op_type, op);
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	return NULL;
}

int64_t qm_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a && a->has_i ? a->i : def;
}

float qm_attr_float(const Onnx__NodeProto *n, const char *name, float def)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a && a->has_f ? a->f : def;
}

int qm_init_floats(const struct qmodel *qm, int32_t tensor, vnpu_tensor **out)
{
	const Onnx__TensorProto *tp;
	char err[512];

	if (tensor < 0 || qm->t[tensor].init < 0)
		return 1;
	tp = qm->g->initializer[qm->t[tensor].init];
	if (!tp->has_data_type || tp->data_type != VNPU_TYPE_F32)
		return 1;
	if (tensor_from_proto(tp, qm->t[tensor].name, out, err, sizeof(err))) {
		fprintf(stderr, TOOL ": %s\n", err);
		return -1;
	}
	return 0;
}

static int push(void ***arr, size_t *n, void *item)
{
	void **a = realloc(*arr, (*n + 1) * sizeof(*a));

	if (!a)
		return qm_oom();
	a[(*n)++] = item;
	*arr = a;
	return 0;
}

Onnx__TensorProto *qm_add_init(struct qmodel *qm, const char *name, int32_t type,
			       const int64_t *dims, size_t rank, const void *data,
			       size_t bytes)
{
	Onnx__TensorProto *tp = malloc(sizeof(*tp));

	if (!tp)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = strdup(name);
	tp->dims = malloc((rank ? rank : 1) * sizeof(int64_t));
	tp->raw_data.data = malloc(bytes ? bytes : 1);
	if (!tp->name || !tp->dims || !tp->raw_data.data ||
	    push((void ***)&qm->g->initializer, &qm->g->n_initializer, tp)) {
		onnx__tensor_proto__free_unpacked(tp, NULL);
		return NULL;
	}
	if (rank)
		memcpy(tp->dims, dims, rank * sizeof(int64_t));
	tp->n_dims = rank;
	tp->has_data_type = 1;
	tp->data_type = type;
	tp->has_raw_data = 1;
	tp->raw_data.len = bytes;
	memcpy(tp->raw_data.data, data, bytes);
	return tp;
}

static int set_axis(Onnx__NodeProto *n, int64_t axis)
{
	Onnx__AttributeProto *a = malloc(sizeof(*a));

	if (!a)
		return 1;
	onnx__attribute_proto__init(a);
	a->name = strdup("axis");
	if (!a->name || push((void ***)&n->attribute, &n->n_attribute, a)) {
		onnx__attribute_proto__free_unpacked(a, NULL);
		return 1;
	}
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = axis;
	return 0;
}

Onnx__NodeProto *qm_new_node(const char *op, const char *name, const char *const *in,
			     size_t n_in, const char *out, int64_t axis)
{
	Onnx__NodeProto *n = malloc(sizeof(*n));
	bool ok;

	if (!n)
		return NULL;
	onnx__node_proto__init(n);
	n->input = calloc(n_in, sizeof(char *));
	n->output = calloc(1, sizeof(char *));
	ok = n->input && n->output;
	if (ok) {
		n->n_input = n_in;
		n->n_output = 1;
	}
	for (size_t i = 0; ok && i < n_in; i++)
		ok = (n->input[i] = strdup(in[i])) != NULL;
	ok = ok && (n->output[0] = strdup(out)) && (n->op_type = strdup(op)) &&
	     (n->name = strdup(name)) && (axis < 0 || !set_axis(n, axis));
	if (!ok) {
		onnx__node_proto__free_unpacked(n, NULL);
		return NULL;
	}
	return n;
}

/* Mark every tensor a node of @g or of its subgraphs reads, in @used. */
static void mark_read(const struct qmodel *qm, const Onnx__GraphProto *g, bool *used)
{
	for (size_t n = 0; n < g->n_node; n++) {
		const Onnx__NodeProto *node = g->node[n];

		for (size_t i = 0; i < node->n_input; i++) {
			int32_t v = qm_find(qm, node->input[i]);

			if (v >= 0)
				used[v] = true;
		}
		for (size_t a = 0; a < node->n_attribute; a++) {
			const Onnx__AttributeProto *at = node->attribute[a];

			if (at->g)
				mark_read(qm, at->g, used);
			for (size_t k = 0; k < at->n_graphs; k++)
				mark_read(qm, at->graphs[k], used);
		}
	}
}

/* Drop the graph inputs named @name (an initializer listed as an input). */
static void drop_input(Onnx__GraphProto *g, const char *name)
{
	size_t k = 0;

	for (size_t i = 0; i < g->n_input; i++) {
		if (g->input[i]->name && !strcmp(g->input[i]->name, name))
			onnx__value_info_proto__free_unpacked(g->input[i], NULL);
		else
			g->input[k++] = g->input[i];
	}
	g->n_input = k;
}

int qm_drop_unused_inits(struct qmodel *qm)
{
	Onnx__GraphProto *g = qm->g;
	bool *used;
	size_t k = 0;

	if (qm_index(qm))
		return 1;
	used = calloc(qm->num_t ? qm->num_t : 1, sizeof(*used));
	if (!used)
		return qm_oom();
	mark_read(qm, g, used);
	for (size_t i = 0; i < g->n_initializer; i++) {
		Onnx__TensorProto *tp = g->initializer[i];
		int32_t v = tp->name ? qm_find(qm, tp->name) : -1;

		if (v < 0 || used[v] || qm->t[v].graph_output) {
			g->initializer[k++] = tp;
			continue;
		}
		drop_input(g, tp->name);
		if (retire(qm, tp->name)) {
			free(used);
			return 1;
		}
		tp->name = NULL;
		onnx__tensor_proto__free_unpacked(tp, NULL);
	}
	g->n_initializer = k;
	free(used);
	return qm_index(qm);
}

int qm_pack(const struct qmodel *qm, uint8_t **out, size_t *size)
{
	size_t len = onnx__model_proto__get_packed_size(qm->proto);
	uint8_t *buf;

	if (len > MAX_MODEL_BYTES) {
		fprintf(stderr, TOOL ": the quantized model would be %zu bytes, above 2 GiB\n",
			len);
		return 1;
	}
	buf = malloc(len ? len : 1);
	if (!buf)
		return qm_oom();
	onnx__model_proto__pack(qm->proto, buf);
	*out = buf;
	*size = len;
	return 0;
}

int qm_write(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(data, 1, size, f) == size;

	if (f && fclose(f))
		ok = false;
	if (!ok) {
		fprintf(stderr, TOOL ": %s: %s\n", path, strerror(errno));
		if (f)
			remove(path);
		return 1;
	}
	return 0;
}
