/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Command streams: validation and execution, shared by the simulated NPU
 * (vnpu.ko) and the runtime's CPU device. Freestanding C like the engine.
 */
#ifndef _VNPU_EXEC_H_
#define _VNPU_EXEC_H_

#include <drm/vnpu_cmd.h>
#include "engine/vnpu_engine.h"

/* struct vnpu_slot_info.flags */
#define VNPU_SLOT_INFO_WRITE 0x1u

/**
 * struct vnpu_slot_info - what the validator knows of one slot
 * @size: bytes of the slot's BO
 * @id: identity of the BO (two slots with equal @id are the same BO)
 * @flags: %VNPU_SLOT_INFO_WRITE when commands may write the slot
 */
struct vnpu_slot_info {
	__u64 size;
	__u64 id;
	__u32 flags;
};

/**
 * vnpu_stream_validate() - check a whole command stream
 * @stream: the commands
 * @size: bytes at @stream (a multiple of 8)
 * @slots: one entry per slot of the job
 * @num_slots: entries in @slots
 * @num_cmds: returned: the number of commands
 *
 * Every command is checked in full: opcode, size, flags and pads, each
 * tensor against its slot (overflow-safe), writes only to writable slots,
 * and each layer by vnpu_eng_layer_check().
 *
 * Return: 0, or -22 (EINVAL) at the first bad field; @num_cmds is then
 * the index of the bad command.
 */
int vnpu_stream_validate(const void *stream, __u64 size,
			 const struct vnpu_slot_info *slots, __u32 num_slots,
			 __u32 *num_cmds);

/**
 * vnpu_stream_next() - walk a validated stream
 * @stream: the commands
 * @size: bytes at @stream
 * @cmd: a command of @stream, or NULL
 *
 * Return: the command after @cmd (the first one when @cmd is NULL), or
 * NULL at the end of the stream.
 */
const struct vnpu_cmd_header *vnpu_stream_next(const void *stream, __u64 size,
					       const struct vnpu_cmd_header *cmd);

/**
 * vnpu_exec_parts() - how many parts to split a validated command into
 * @cmd: the command
 * @tiles: tiles (threads) available
 * @chunk_cost: the largest cost one part should have (see
 *	vnpu_eng_layer_cost()); 0 for no limit
 * @features: the engine features the parts run with (&struct vnpu_eng_ctx)
 *
 * Return: the number of parts, 1 or more.
 */
__u32 vnpu_exec_parts(const struct vnpu_cmd_header *cmd, __u32 tiles,
		      __u64 chunk_cost, __u32 features);

/**
 * vnpu_exec_parts_fine() - vnpu_exec_parts() for tiles that poll for work
 * @cmd: the command
 * @tiles: tiles (threads) available
 * @chunk_cost: as for vnpu_exec_parts()
 * @features: the engine features the parts run with
 *
 * Where the other tiles poll for the next command rather than sleep, a
 * part costs them about a microsecond to take, not the tens a wakeup
 * costs: parts may hold 2^%VNPU_EXEC_FINE_SHIFT times less work than
 * vnpu_exec_parts() gives one, in a multiple of @tiles where the work
 * alone limits them, and one a tile (as far as the command has units)
 * where its work would keep it whole. The CPU device splits so those
 * commands of one part whose runs so split took less time than in one
 * part (BERT-base's LayerNorms, mask chains and head transposes, 30-300
 * us on one AVX-512 CPU, 9.5% of its 2-CPU time on one CPU;
 * oww_embedding's MaxPools); the engine's cost figures alone do not
 * tell those from layers that split in two only take longer.
 *
 * Return: the number of parts, 1 or more.
 */
__u32 vnpu_exec_parts_fine(const struct vnpu_cmd_header *cmd, __u32 tiles,
			   __u64 chunk_cost, __u32 features);

#define VNPU_EXEC_FINE_SHIFT 2

/**
 * vnpu_exec_cost() - the work vnpu_exec_parts() splits a command by
 * @cmd: the command
 * @features: the engine features it runs with
 *
 * Return: a layer's element operations as vnpu_exec_parts() weighs them
 * (vnpu_eng_layer_part_cost(), more on the engine's baseline path), 16
 * a COPY's or FILL's element (a part's least work of each); 0 for a
 * command that never splits.
 */
__u64 vnpu_exec_cost(const struct vnpu_cmd_header *cmd, __u32 features);

/**
 * vnpu_exec_scratch() - scratch bytes each part of a validated command needs
 * @cmd: the command
 * @num_parts: parts it is split into (vnpu_exec_parts())
 * @features: the engine features the parts run with
 *
 * Return: the bytes, 0 when a part needs none.
 */
__u64 vnpu_exec_scratch(const struct vnpu_cmd_header *cmd, __u32 num_parts,
			__u32 features);

/*
 * How the firmware splits a command (vnpu_exec_parts()): into parts of at
 * most %VNPU_EXEC_FW_CHUNK_COST element operations where the layer's units
 * of work allow (a GEMM or CONV unit may hold up to 2^26 multiply-adds, 2^20
 * on the engine's baseline path, so its part is larger;
 * Documentation/vnpu/hw.rst has the measured sections), and at least
 * %VNPU_EXEC_FW_PARTS_PER_TILE parts per tile where the layer allows: the
 * tiles take parts from a shared counter, so a tile that loses its CPU for a
 * while (here: to another thread of a vCPU; on hardware: never) leaves the
 * rest of the command to the others instead of holding it up (NPU conv model
 * in the VM, one boot, medians of 3 interleaved runs, 1 part per tile -> 4:
 * sync 26.1 -> 26.9 FPS, async 25.5 -> 27.2). vnpu-kbench --fpu-sections
 * times such parts on the host.
 */
#define VNPU_EXEC_FW_CHUNK_COST (1u << 20)
#define VNPU_EXEC_FW_PARTS_PER_TILE 4

/*
 * The most work of a job that may run on the thread that hands it to the
 * device: element operations (about a flop each), and commands. Running it
 * there costs about what waking the device's thread for it would.
 */
#define VNPU_EXEC_SHORT_MAX_COST 4096
#define VNPU_EXEC_SHORT_MAX_CMDS 64

/**
 * vnpu_exec_stream_is_short() - whether a validated stream is short
 * @stream: the stream
 * @size: its bytes
 *
 * Short: at most %VNPU_EXEC_SHORT_MAX_CMDS commands, no SPIN, no layer
 * that needs scratch memory (growing it allocates, which a job holding the
 * device for others must not do) and %VNPU_EXEC_SHORT_MAX_COST element
 * operations in all (a stream of NOPs has none).
 *
 * Return: 1 when short, 0 otherwise.
 */
int vnpu_exec_stream_is_short(const void *stream, __u64 size);

/**
 * vnpu_tensor_size() - bytes a valid tensor can reach from its offset
 * @t: the tensor
 *
 * Return: the byte count, 0 for an empty tensor.
 */
__u64 vnpu_tensor_size(const struct vnpu_cmd_tensor *t);

/**
 * vnpu_exec_part() - run one part of a validated command
 * @cmd: the command
 * @slot_base: for each slot, the address of its BO's first byte
 * @part: the part, 0 to @num_parts - 1
 * @num_parts: parts the command is split into (vnpu_exec_parts())
 * @ctx: the engine context (features, this part's scratch)
 *
 * Return: 0, or a negative error: the device reports a fault.
 */
int vnpu_exec_part(const struct vnpu_cmd_header *cmd, void *const *slot_base,
		   __u32 part, __u32 num_parts, const struct vnpu_eng_ctx *ctx);

#endif /* _VNPU_EXEC_H_ */
