// SPDX-License-Identifier: MIT
/*
 * The types of the attributes the library reads, checked once when a node
 * is read: a model whose 'axis' is a FLOAT is refused. Every name the
 * library reads is listed (the test frontend-attr-names scans the sources
 * for the readers' names), so the helpers that read attributes later
 * (vnpu_attr_int() and its kin, in inference and in the compiler) never
 * meet an attribute of another type in a model that was read.
 *
 * ONNX gives an attribute name one type in every op that has it, but for
 * the few listed in op_attrs[]; a name not listed is not read by the
 * library and not checked, nor are the ops of domains other than ONNX's
 * and its training ops' (the library runs none). A FLOAT attribute may be
 * given as an INT (the helper converts it exactly).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ir.h"

struct attr_type {
	const char *name;
	enum vnpu_attr_type type;
};

#define F VNPU_ATTR_FLOAT
#define I VNPU_ATTR_INT
#define S VNPU_ATTR_STRING
#define T VNPU_ATTR_TENSOR
#define G VNPU_ATTR_GRAPH
#define FS VNPU_ATTR_FLOATS
#define IS VNPU_ATTR_INTS
#define SS VNPU_ATTR_STRINGS

/* Sorted by name for bsearch(). */
static const struct attr_type attrs[] = {
	{ "activation_alpha", FS }, { "activation_beta", FS }, { "activations", SS },
	{ "align_corners", I }, { "allowzero", I }, { "alpha", F }, { "auto_pad", S },
	{ "axes", IS }, { "axis", I }, { "batch_axis", I }, { "batch_dims", I },
	{ "beta", F }, { "bias", F }, { "blocksize", I }, { "body", G },
	{ "broadcast", I }, { "case_change_action", S }, { "ceil_mode", I }, { "center_point_box", I }, { "clip", F },
	{ "coordinate_transformation_mode", S }, { "count_include_pad", I },
	{ "cubic_coeff_a", F }, { "decay_factor", F }, { "detect_negative", I },
	{ "detect_positive", I }, { "dilations", IS }, { "direction", S }, { "dtype", I },
	{ "else_branch", G }, { "end", I }, { "ends", IS }, { "epsilon", F },
	{ "equation", S }, { "exclude_outside", I }, { "exclusive", I },
	{ "extrapolation_value", F }, { "fmod", I }, { "gamma", F }, { "group", I },
	{ "hidden_size", I },
	{ "ignore_index", I }, { "input_forget", I }, { "inverse", I }, { "is_case_sensitive", I }, { "k", I },
	{ "keepdims", I }, { "kernel_shape", IS }, { "lambd", F }, { "largest", I },
	{ "layout", I },
	{ "linear_before_reset", I }, { "locale", S }, { "max", F }, { "max_gram_length", I },
	{ "max_skip_count", I }, { "min", F }, { "min_gram_length", I }, { "mode", S },
	{ "momentum", F }, { "nearest_mode", S }, { "new_axis", I }, { "ngram_counts", IS },
	{ "ngram_indexes", IS }, { "noop_with_empty_axes", I }, { "norm_coefficient", F },
	{ "norm_coefficient_post", F }, { "num_outputs", I }, { "num_scan_inputs", I },
	{ "onesided", I }, { "output_datatype", I }, { "output_height", I },
	{ "output_padding", IS }, { "output_shape", IS }, { "output_width", I }, { "p", I },
	{ "padding_mode", S }, { "pads", IS }, { "periodic", I }, { "perm", IS },
	{ "pool_int64s", IS }, { "ratio", F }, { "reduction", S }, { "reverse", I },
	{ "sampling_ratio", I }, { "scales", FS }, { "scan_input_axes", IS },
	{ "scan_input_directions", IS }, { "scan_output_axes", IS },
	{ "scan_output_directions", IS }, { "seed", F }, { "select_last_index", I },
	{ "shape", IS }, { "size", I }, { "sorted", I }, { "spatial_scale", F },
	{ "split", IS }, { "start", I }, { "starts", IS }, { "stash_type", I },
	{ "steps", IS }, { "stopwords", SS }, { "storage_order", I }, { "strides", IS }, { "then_branch", G },
	{ "time_axis", I }, { "to", I }, { "training_mode", I }, { "transA", I },
	{ "transB", I }, { "upper", I }, { "value", T }, { "value_float", F },
	{ "value_floats", FS }, { "value_int", I }, { "value_ints", IS },
	{ "value_string", S }, { "value_strings", SS }, { "weights", FS },
};

/* Where an op gives a name another type than attrs[] does. */
static const struct {
	const char *op;
	struct attr_type attr;
} op_attrs[] = {
	{ "Pad", { "value", F } },		/* opsets 1 and 2 */
	{ "Scan", { "directions", IS } },	/* opset 8 */
};

static int cmp_attr(const void *key, const void *entry)
{
	return strcmp(key, ((const struct attr_type *)entry)->name);
}

static const char *type_name(enum vnpu_attr_type t)
{
	static const char *const names[] = {
		[VNPU_ATTR_FLOAT] = "a FLOAT", [VNPU_ATTR_INT] = "an INT",
		[VNPU_ATTR_STRING] = "a STRING", [VNPU_ATTR_TENSOR] = "a TENSOR",
		[VNPU_ATTR_GRAPH] = "a GRAPH", [VNPU_ATTR_FLOATS] = "FLOATS",
		[VNPU_ATTR_INTS] = "INTS", [VNPU_ATTR_STRINGS] = "STRINGS",
		[VNPU_ATTR_TYPE_PROTO] = "a TYPE_PROTO", [VNPU_ATTR_TYPE_PROTOS] = "TYPE_PROTOS",
	};

	if ((unsigned)t < sizeof(names) / sizeof(names[0]) && names[t])
		return names[t];
	return "of an unknown type";
}

/* The type @op's attribute @name must have, or 0 when it is not read. */
static enum vnpu_attr_type expected_type(const char *op, const char *name)
{
	const struct attr_type *a;

	for (size_t i = 0; i < sizeof(op_attrs) / sizeof(op_attrs[0]); i++)
		if (!strcmp(op_attrs[i].op, op) && !strcmp(op_attrs[i].attr.name, name))
			return op_attrs[i].attr.type;
	a = bsearch(name, attrs, sizeof(attrs) / sizeof(attrs[0]), sizeof(attrs[0]), cmp_attr);
	return a ? a->type : 0;
}

vnpu_status vnpu_node_check_attrs(const struct vnpu_node *n)
{
	/* Another domain's op may give a name another type: not read here. */
	if (n->domain[0] && strcmp(n->domain, "ai.onnx.preview.training"))
		return VNPU_OK;
	for (uint32_t i = 0; i < n->num_attrs; i++) {
		const struct vnpu_attr *a = &n->attrs[i];
		enum vnpu_attr_type want = expected_type(n->op, a->name);

		if (!want || a->type == want || (want == F && a->type == I))
			continue;
		return vnpu_node_error(VNPU_PARSE_ERROR, n, "attribute '%s' is %s, expected %s",
				       a->name, type_name(a->type), type_name(want));
	}
	return VNPU_OK;
}

/* The table must stay sorted for bsearch(): a test calls this. */
bool vnpu_attr_schema_sorted(void)
{
	for (size_t i = 1; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (strcmp(attrs[i - 1].name, attrs[i].name) >= 0)
			return false;
	return true;
}
