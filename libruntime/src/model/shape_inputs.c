// SPDX-License-Identifier: MIT
/*
 * Which model inputs decide shapes: an input whose values some node reads
 * to know its output's shape (or, for control flow, which branch runs and
 * how often), directly or through ops computing on them. A static-shape
 * device compiles such a model once the caller, who knows the values,
 * freezes those inputs (vnpu_model_freeze_input()); the tools do so with
 * the inputs they are given.
 *
 * The values flow forward from the input through every node that reads
 * them, in the main graph and in subgraphs (which share its value table);
 * Shape and Size read only a shape, and a value inference folded to a
 * constant no longer depends on the input.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ir.h"

/* The inputs of an op whose values decide its outputs' shapes, as bits. */
struct shape_operands {
	const char *op;
	uint32_t inputs;
};

#define BIT_IN(k) (1u << (k))

/* Sorted by op for bsearch(). */
static const struct shape_operands shape_operands[] = {
	{ "BlackmanWindow", BIT_IN(0) },
	{ "CenterCropPad", BIT_IN(1) | BIT_IN(2) },
	{ "Col2Im", BIT_IN(1) | BIT_IN(2) },
	{ "Compress", BIT_IN(1) },
	{ "ConstantOfShape", BIT_IN(0) },
	{ "DFT", BIT_IN(1) | BIT_IN(2) },
	{ "Expand", BIT_IN(1) },
	{ "HammingWindow", BIT_IN(0) },
	{ "HannWindow", BIT_IN(0) },
	{ "If", BIT_IN(0) },
	{ "Loop", BIT_IN(0) | BIT_IN(1) },
	{ "MelWeightMatrix", BIT_IN(0) | BIT_IN(1) },
	{ "NonMaxSuppression", BIT_IN(0) | BIT_IN(1) | BIT_IN(2) | BIT_IN(3) | BIT_IN(4) },
	{ "NonZero", BIT_IN(0) },
	{ "OneHot", BIT_IN(1) },
	{ "Pad", BIT_IN(1) | BIT_IN(3) },
	{ "Range", BIT_IN(0) | BIT_IN(1) | BIT_IN(2) },
	{ "ReduceL1", BIT_IN(1) },
	{ "ReduceL2", BIT_IN(1) },
	{ "ReduceLogSum", BIT_IN(1) },
	{ "ReduceLogSumExp", BIT_IN(1) },
	{ "ReduceMax", BIT_IN(1) },
	{ "ReduceMean", BIT_IN(1) },
	{ "ReduceMin", BIT_IN(1) },
	{ "ReduceProd", BIT_IN(1) },
	{ "ReduceSum", BIT_IN(1) },
	{ "ReduceSumSquare", BIT_IN(1) },
	{ "Reshape", BIT_IN(1) },
	{ "Resize", BIT_IN(1) | BIT_IN(2) | BIT_IN(3) },
	{ "STFT", BIT_IN(1) | BIT_IN(3) },
	{ "Slice", BIT_IN(1) | BIT_IN(2) | BIT_IN(3) | BIT_IN(4) },
	{ "Split", BIT_IN(1) },
	{ "Squeeze", BIT_IN(1) },
	{ "Tile", BIT_IN(1) },
	{ "TopK", BIT_IN(1) },
	{ "Unique", BIT_IN(0) },
	{ "Unsqueeze", BIT_IN(1) },
	{ "Upsample", BIT_IN(1) },
};

static int cmp_op(const void *key, const void *entry)
{
	return strcmp(key, ((const struct shape_operands *)entry)->op);
}

static uint32_t shape_inputs_of(const struct vnpu_node *n)
{
	const struct shape_operands *s;

	if (n->domain[0])
		return 0;
	s = bsearch(n->op, shape_operands, sizeof(shape_operands) / sizeof(shape_operands[0]),
		    sizeof(shape_operands[0]), cmp_op);
	return s ? s->inputs : 0;
}

/* Ops whose outputs hold the shape of their input, not its values. */
static bool reads_shape_only(const struct vnpu_node *n)
{
	return !n->domain[0] && (!strcmp(n->op, "Shape") || !strcmp(n->op, "Size"));
}

/*
 * The input of node @n that a subgraph's input @k takes, or -1: a Loop's
 * body gets the iteration number, then the condition and carried values;
 * opset 8's Scan has sequence_lens first, which its body does not get.
 */
static int64_t node_input_of(const struct vnpu_model *m, const struct vnpu_node *n, uint32_t k)
{
	if (!strcmp(n->op, "Loop"))
		return k ? (int64_t)k : -1;
	if (!strcmp(n->op, "Scan") && m->opset < 9)
		return (int64_t)k + 1;
	return k;
}

/*
 * Mark the values of @g (and of its subgraphs) that the marked ones flow
 * into; true when a marked value reaches an input of a node that decides
 * a shape with it. A subgraph's inputs are marked when the node's inputs
 * they take are (a loop's carried values), its outer values as they are;
 * its node's outputs when any of its outputs is. @depth bounds the recursion
 * (the reader's limit on nesting holds it far below).
 */
static bool flow(const struct vnpu_model *m, const struct vnpu_graph *g, bool *marked,
		 int depth)
{
	bool decides = false;

	if (depth > 64)
		return false;
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		const struct vnpu_node *n = &g->nodes[i];
		uint32_t shape_in = shape_inputs_of(n);
		bool reached = false;

		for (uint32_t k = 0; k < n->num_inputs; k++) {
			if (n->inputs[k] < 0 || !marked[n->inputs[k]])
				continue;
			reached = true;
			decides |= k < 32 && (shape_in & BIT_IN(k));
		}
		for (uint32_t a = 0; a < n->num_attrs; a++) {
			const struct vnpu_graph *sg = n->attrs[a].g;

			if (n->attrs[a].type != VNPU_ATTR_GRAPH || !sg)
				continue;
			for (uint32_t k = 0; k < sg->num_inputs; k++) {
				int64_t from = node_input_of(m, n, k);

				if (from >= 0 && from < n->num_inputs && n->inputs[from] >= 0 &&
				    marked[n->inputs[from]])
					marked[sg->inputs[k]] = true;
			}
			decides |= flow(m, sg, marked, depth + 1);
			for (uint32_t k = 0; k < sg->num_outputs; k++)
				reached |= sg->outputs[k] >= 0 && marked[sg->outputs[k]];
		}
		if (!reached || reads_shape_only(n))
			continue;
		for (uint32_t k = 0; k < n->num_outputs; k++)
			if (n->outputs[k] >= 0 && !m->values[n->outputs[k]].info.data)
				marked[n->outputs[k]] = true;
	}
	return decides;
}

vnpu_status vnpu_model_input_decides_shapes(const vnpu_model *m, size_t index, int *out)
{
	bool *marked;

	if (!m || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "model: NULL argument");
	if (index >= m->main.num_inputs)
		return vnpu_error(VNPU_NOT_FOUND, "model has no input %zu (it has %u)", index,
				  m->main.num_inputs);
	marked = calloc(m->num_values + 1, sizeof(*marked));
	if (!marked)
		return vnpu_error(VNPU_OUT_OF_MEMORY, "out of memory");
	marked[m->main.inputs[index]] = true;
	*out = flow(m, &m->main, marked, 0);
	free(marked);
	return VNPU_OK;
}
