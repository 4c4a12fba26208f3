/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vnpu command-stream format.
 *
 * A job's command buffer is a sequence of commands, each starting with a
 * &struct vnpu_cmd_header and a multiple of 8 bytes long. Commands address
 * memory only as tensors: (slot, byte offset) plus dtype, dims and strides,
 * where the slot indexes the job's slot table of BO handles (see
 * &struct drm_vnpu_submit). A compiled model's stream therefore never needs
 * patching between requests: each request passes its own slot table.
 *
 * The kernel validates the whole stream at submit time: every opcode and
 * field known, every pad and flag zero, and every element each tensor can
 * reach inside its slot's BO (overflow-safe). A stream that fails is
 * rejected with -EINVAL and nothing is queued.
 */
#ifndef _VNPU_CMD_H_
#define _VNPU_CMD_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * VNPU_CMD_SET_VERSION - the command set: the encoding of every command
 * (this file) and of every layer op and attribute struct (vnpu_layers.h)
 *
 * Bumped only when an encoding changes incompatibly, so that a stream
 * built for the old set no longer means the same thing (a struct, opcode
 * or op renumbered or resized, a field's meaning changed). A new opcode,
 * op or flag leaves it as it is: a stream that uses one is refused with
 * -EINVAL by a driver that does not know it, like any invalid stream.
 * It is independent of %DRM_VNPU_UAPI_VERSION, which counts the ioctls;
 * the driver reports the set its validator takes as
 * %DRM_VNPU_PARAM_CMD_SET_VERSION.
 *
 * 1: the first release (tensor descriptors of up to %VNPU_MAX_DIMS 8)
 * 2: packed bf16 weights hold depth pairs (%VNPU_LAYER_F_PACKED in
 *    vnpu_layers.h), so a set-1 stream's bf16 weights read wrong
 * 3: a %VNPU_PACK_QCONV_SPLIT tile table holds its step schedule before
 *    its entries (vnpu_layers.h), so a set-2 table reads wrong
 */
#define VNPU_CMD_SET_VERSION 3

/** VNPU_MAX_DIMS - the highest tensor rank the device takes */
#define VNPU_MAX_DIMS 8

/**
 * VNPU_MAX_STRIDE - the largest stride of a tensor dimension, in elements,
 * whatever its extent (a stride past any BO is only ever useful on a
 * dimension of extent 0 or 1, where it is never stepped)
 */
#define VNPU_MAX_STRIDE (1ll << 48)

/**
 * enum vnpu_dtype - element types; the values are ONNX's TensorProto ones
 * @VNPU_DTYPE_F32: 32-bit IEEE float
 * @VNPU_DTYPE_U8: unsigned 8-bit integer
 * @VNPU_DTYPE_I8: signed 8-bit integer
 * @VNPU_DTYPE_U16: unsigned 16-bit integer
 * @VNPU_DTYPE_I16: signed 16-bit integer
 * @VNPU_DTYPE_I32: signed 32-bit integer
 * @VNPU_DTYPE_I64: signed 64-bit integer
 * @VNPU_DTYPE_BOOL: one byte, 0 or 1
 * @VNPU_DTYPE_F16: 16-bit IEEE float
 * @VNPU_DTYPE_F64: 64-bit IEEE float
 * @VNPU_DTYPE_U32: unsigned 32-bit integer
 * @VNPU_DTYPE_U64: unsigned 64-bit integer
 * @VNPU_DTYPE_BF16: bfloat16
 */
enum vnpu_dtype {
	VNPU_DTYPE_F32 = 1,
	VNPU_DTYPE_U8 = 2,
	VNPU_DTYPE_I8 = 3,
	VNPU_DTYPE_U16 = 4,
	VNPU_DTYPE_I16 = 5,
	VNPU_DTYPE_I32 = 6,
	VNPU_DTYPE_I64 = 7,
	VNPU_DTYPE_BOOL = 9,
	VNPU_DTYPE_F16 = 10,
	VNPU_DTYPE_F64 = 11,
	VNPU_DTYPE_U32 = 12,
	VNPU_DTYPE_U64 = 13,
	VNPU_DTYPE_BF16 = 16,
};

/**
 * struct vnpu_cmd_tensor - a strided view of elements inside one slot's BO
 * @slot: index into the job's slot table
 * @dtype: element type, one of &enum vnpu_dtype
 * @offset: byte offset of element [0, ..., 0] from the start of the BO;
 *	must be aligned to the element size
 * @rank: number of dimensions, 0 (a scalar) to %VNPU_MAX_DIMS
 * @flags: must be zero
 * @dims: extent of each dimension; entries at and above @rank must be zero.
 *	A zero extent makes an empty tensor that touches no memory.
 * @strides: distance between neighbours of each dimension, in elements,
 *	0 to %VNPU_MAX_STRIDE (0 broadcasts); entries at and above @rank
 *	must be zero
 *
 * The bytes a tensor can reach are [@offset, @offset + (1 + sum over d of
 * (@dims[d] - 1) * @strides[d]) * element size), which must lie inside the
 * slot's BO.
 */
struct vnpu_cmd_tensor {
	__u32 slot;
	__u32 dtype;
	__u64 offset;
	__u32 rank;
	__u32 flags;
	__u64 dims[VNPU_MAX_DIMS];
	__s64 strides[VNPU_MAX_DIMS];
};

/**
 * enum vnpu_opcode - command opcodes
 * @VNPU_CMD_NOP: does nothing (&struct vnpu_cmd_header alone)
 * @VNPU_CMD_FILL: writes one value into every element (&struct vnpu_cmd_fill)
 * @VNPU_CMD_COPY: strided copy between tensors of one element size and
 *	one shape (&struct vnpu_cmd_copy); transpose, slice, concat, split,
 *	tile, expand, depth-to-space and space-to-depth are all COPYs
 * @VNPU_CMD_SPIN: test-only: never finishes, so the scheduler's timeout
 *	and reset path can be exercised (&struct vnpu_cmd_header alone)
 * @VNPU_CMD_LAYER: one NN layer run by the device engine
 *	(&struct vnpu_cmd_layer; ops and attributes in vnpu_layers.h)
 */
enum vnpu_opcode {
	VNPU_CMD_NOP = 0,
	VNPU_CMD_FILL = 1,
	VNPU_CMD_COPY = 2,
	VNPU_CMD_SPIN = 3,
	VNPU_CMD_LAYER = 4,
};

/**
 * struct vnpu_cmd_header - the start of every command
 * @opcode: one of &enum vnpu_opcode
 * @size: bytes of the whole command including this header; a multiple of 8
 */
struct vnpu_cmd_header {
	__u32 opcode;
	__u32 size;
};

/**
 * struct vnpu_cmd_fill - %VNPU_CMD_FILL
 * @hdr: opcode %VNPU_CMD_FILL, size sizeof(struct vnpu_cmd_fill)
 * @dst: the elements to write
 * @value: the element's bit pattern in the low bytes (little endian);
 *	the bytes above the element size must be zero
 */
struct vnpu_cmd_fill {
	struct vnpu_cmd_header hdr;
	struct vnpu_cmd_tensor dst;
	__u64 value;
};

/**
 * struct vnpu_cmd_copy - %VNPU_CMD_COPY
 * @hdr: opcode %VNPU_CMD_COPY, size sizeof(struct vnpu_cmd_copy)
 * @dst: destination; same rank and dims as @src, same element size
 * @src: source; the byte ranges of @dst and @src must not overlap when
 *	they are in the same BO
 *
 * @dst must not reach one element twice (no zero strides on dims above 1,
 * no overlapping dims); @src may (a zero stride broadcasts).
 */
struct vnpu_cmd_copy {
	struct vnpu_cmd_header hdr;
	struct vnpu_cmd_tensor dst;
	struct vnpu_cmd_tensor src;
};

/** VNPU_LAYER_MAX_TENSORS - the most tensors one layer command names */
#define VNPU_LAYER_MAX_TENSORS 16
/** VNPU_LAYER_MAX_ATTR_SIZE - the largest attribute block, in bytes */
#define VNPU_LAYER_MAX_ATTR_SIZE 1024

/**
 * struct vnpu_cmd_layer - %VNPU_CMD_LAYER
 * @hdr: opcode %VNPU_CMD_LAYER; size sizeof(struct vnpu_cmd_layer) +
 *	@num_tensors * sizeof(struct vnpu_cmd_tensor) + @attr_size rounded up to 8
 * @op: the layer, one of &enum vnpu_layer_op (vnpu_layers.h)
 * @num_tensors: tensors that follow, 1 to %VNPU_LAYER_MAX_TENSORS; their
 *	order (inputs, then outputs) is the op's, see vnpu_layers.h
 * @num_outputs: how many of the tensors, at the end, the layer writes
 *	(1 to @num_tensors); the kernel checks their slots are writable
 * @attr_size: bytes of the op's attribute struct after the tensors, at
 *	most %VNPU_LAYER_MAX_ATTR_SIZE; padding up to 8 must be zero
 * @flags: must be zero
 * @pad: must be zero
 * @tensors: the tensors
 */
struct vnpu_cmd_layer {
	struct vnpu_cmd_header hdr;
	__u32 op;
	__u32 num_tensors;
	__u32 num_outputs;
	__u32 attr_size;
	__u32 flags;
	__u32 pad;
	struct vnpu_cmd_tensor tensors[];
};

#if defined(__cplusplus)
}
#endif

#endif /* _VNPU_CMD_H_ */
