/* SPDX-License-Identifier: MIT */
/*
 * Internal: a compiled program, the contract between the compiler
 * (src/compiler/) and the devices (plugins/): what a compiled model holds
 * and what an exported blob stores.
 *
 * Memory is addressed as the device does, by (slot, offset):
 *   slot 0                          weights (constants, pre-packed), read-only
 *   slot 1                          the scratch arena (all intermediates,
 *                                   placed by the liveness-based planner)
 *   slot 2 .. 2+num_inputs-1        one buffer per model input
 *   then num_outputs slots          one buffer per model output
 * so a request only passes its own input/output buffers and an arena.
 *
 * The program is a list of segments, each a command stream (uapi
 * vnpu_cmd.h) run by one device in order. With one device there is one
 * segment; HETERO splits the graph into segments alternating between the
 * NPU and the CPU fallback, all sharing the same slots.
 */
#ifndef VNPU_SRC_PROGRAM_H
#define VNPU_SRC_PROGRAM_H

#include <stdint.h>

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_model.h>

#define VNPU_SLOT_WEIGHTS 0
#define VNPU_SLOT_ARENA 1
#define VNPU_SLOT_FIRST_IO 2

/* One model input or output: its own slot, dense, row-major. */
struct vnpu_prog_port {
	char *name;
	vnpu_element_type type;
	vnpu_shape shape;	/* static: every dim known after compile */
	uint32_t slot;
	uint64_t size;		/* bytes */
};

/* Which device a segment runs on. */
enum vnpu_prog_target {
	VNPU_TARGET_PRIMARY = 0,	/* the device the model was compiled for */
	VNPU_TARGET_FALLBACK = 1,	/* the CPU, for what the primary does not take */
};

struct vnpu_prog_segment {
	enum vnpu_prog_target target;
	void *cmd;		/* the command stream */
	uint64_t cmd_size;	/* bytes, a multiple of 8 */
	uint32_t num_cmds;
	uint32_t first_layer;	/* layers[first_layer .. +num_layers) */
	uint32_t num_layers;
};

/* One layer of the source graph as it runs, for profiling. */
struct vnpu_prog_layer {
	char *name;		/* the ONNX node's name (or output name) */
	char *type;		/* the op type after fusion, e.g. "Conv+Relu" */
	uint32_t segment;
	uint32_t first_cmd;	/* commands [first_cmd, +num_cmds) of the segment */
	uint32_t num_cmds;
};

/*
 * A model input or output that is not one tensor: a sequence, whose
 * elements are the ports [first, first + count) of its side, named
 * "<name>[<i>]", or an optional compiled without a value (NONE, count 0).
 * The device only sees those ports; a program without groups has one port
 * per model input and output.
 */
struct vnpu_prog_group {
	char *name;
	vnpu_port_kind kind;	/* VNPU_PORT_SEQUENCE or VNPU_PORT_NONE */
	uint32_t is_output;
	uint32_t first;
	uint32_t count;
};

struct vnpu_program {
	void *weights;		/* NULL once a compiled model holds them */
	uint64_t weights_size;
	uint64_t arena_size;
	uint64_t intermediates_size;	/* sum of all intermediates, unplanned */

	uint32_t num_inputs;
	uint32_t num_outputs;
	struct vnpu_prog_port *inputs;
	struct vnpu_prog_port *outputs;

	uint32_t num_segments;
	struct vnpu_prog_segment *segments;

	uint32_t num_layers;
	struct vnpu_prog_layer *layers;

	uint32_t num_groups;
	struct vnpu_prog_group *groups;

	/*
	 * Optional (NULL): the one segment's commands again, the same but
	 * for the arena offsets, of a plan that gives every arena buffer
	 * bytes of its own (no reuse) in an arena of @own_arena_size. A
	 * device that takes it (plugin.h's exe_load_alt) runs either
	 * stream, both giving the same bits; its requests' arenas hold the
	 * larger plan (vnpu_program_arena_bytes()).
	 */
	void *own_cmd;
	uint64_t own_cmd_size;
	uint64_t own_arena_size;
};

static inline uint32_t vnpu_program_num_slots(const struct vnpu_program *p)
{
	return VNPU_SLOT_FIRST_IO + p->num_inputs + p->num_outputs;
}

/* The bytes a request's arena holds: the larger plan's. */
static inline uint64_t vnpu_program_arena_bytes(const struct vnpu_program *p)
{
	return p->own_cmd && p->own_arena_size > p->arena_size ? p->own_arena_size :
	       p->arena_size;
}

void vnpu_program_free(struct vnpu_program *p);

/*
 * Memory for a program's weights of @size bytes, zeroed: 64-byte aligned,
 * and on huge pages from 2 MiB on, as the CPU device's buffers are, so that
 * the CPU device can run on them in place. vnpu_program_free() frees it,
 * or vnpu_program_weights_free() (which leaves @p->weights NULL).
 */
void *vnpu_program_weights_alloc(uint64_t size);
void vnpu_program_weights_free(struct vnpu_program *p);

/*
 * Address space for weights of up to @cap bytes, on a huge page boundary
 * and zero: nothing is committed until written, so that a compiler can
 * make its constants where the weights will be and place them there
 * without a copy (vnpu_eng_host_reserve()). NULL for a @cap under
 * VNPU_ENG_HOST_HUGE or when the system refuses. Of a reservation,
 * vnpu_program_weights_keep() keeps the first @size bytes (at least
 * VNPU_ENG_HOST_HUGE) as memory vnpu_program_weights_alloc(@size) would
 * have given, returning the rest; vnpu_program_weights_release() returns
 * it all.
 */
void *vnpu_program_weights_reserve(uint64_t cap);
void vnpu_program_weights_keep(void *base, uint64_t cap, uint64_t size);
void vnpu_program_weights_release(void *base, uint64_t cap);

/*
 * Serialize into one malloc'd buffer (no header: the blob code adds the
 * versioned header) and back. Deserialization validates every count, size
 * and offset and fails with VNPU_PARSE_ERROR on anything malformed.
 */
vnpu_status vnpu_program_serialize(const struct vnpu_program *p,
				   void **out_data, uint64_t *out_size);
vnpu_status vnpu_program_deserialize(const void *data, uint64_t size,
				     struct vnpu_program **out);

#endif /* VNPU_SRC_PROGRAM_H */
