/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vnpu telemetry: the generic netlink family "vnpu".
 *
 * DEV_GET (do: one device by %VNPU_NL_A_DEV_INDEX or %VNPU_NL_A_DEV_NODE;
 * dump: every device) answers with the device attributes; CLIENT_GET (dump,
 * optionally of one device) answers one message per open file. The
 * multicast group %VNPU_NL_MCGRP_EVENTS carries JOB_FAULT, JOB_TIMEOUT,
 * DEVICE_RESET and MEMORY_LIMIT events. Counters only reset with the
 * device (module reload). Every request attribute is checked by a strict
 * policy: unknown attributes, wrong types and oversized strings are
 * -EINVAL. Unprivileged users may query and listen.
 */
#ifndef _UAPI_LINUX_VNPU_NETLINK_H
#define _UAPI_LINUX_VNPU_NETLINK_H

#define VNPU_NL_FAMILY_NAME	"vnpu"
#define VNPU_NL_FAMILY_VERSION	1
#define VNPU_NL_MCGRP_EVENTS	"events"

/**
 * enum vnpu_nl_cmd - commands and events
 * @VNPU_NL_CMD_UNSPEC: never used
 * @VNPU_NL_CMD_DEV_GET: request, do or dump; reply: device attributes
 * @VNPU_NL_CMD_CLIENT_GET: request, dump; reply: client attributes
 * @VNPU_NL_CMD_JOB_FAULT: event: a job ended %DRM_VNPU_JOB_FAULT
 * @VNPU_NL_CMD_JOB_TIMEOUT: event: a job ended %DRM_VNPU_JOB_TIMEOUT
 * @VNPU_NL_CMD_DEVICE_RESET: event: the device was reset
 * @VNPU_NL_CMD_MEMORY_LIMIT: event: BO_CREATE failed on the memory limit
 * @__VNPU_NL_CMD_MAX: one past the last command
 * @VNPU_NL_CMD_MAX: the last command
 */
enum vnpu_nl_cmd {
	VNPU_NL_CMD_UNSPEC,
	VNPU_NL_CMD_DEV_GET,
	VNPU_NL_CMD_CLIENT_GET,
	VNPU_NL_CMD_JOB_FAULT,
	VNPU_NL_CMD_JOB_TIMEOUT,
	VNPU_NL_CMD_DEVICE_RESET,
	VNPU_NL_CMD_MEMORY_LIMIT,

	__VNPU_NL_CMD_MAX,
	VNPU_NL_CMD_MAX = __VNPU_NL_CMD_MAX - 1
};

/**
 * enum vnpu_nl_attr - attributes (one space for all messages)
 * @VNPU_NL_A_UNSPEC: never used
 * @VNPU_NL_A_DEV_INDEX: u32, device index; request (DEV_GET do, CLIENT_GET
 *	filter), reply and events
 * @VNPU_NL_A_DEV_NODE: string, render node name such as "renderD128", at
 *	most 15 characters; request (DEV_GET do) and reply
 * @VNPU_NL_A_DEV_TILES: u32, compute tiles
 * @VNPU_NL_A_DEV_BUSY_NS: u64, device time spent running jobs, ns
 * @VNPU_NL_A_DEV_UTIL: u32, utilization over the last second in
 *	thousandths (0 to 1000)
 * @VNPU_NL_A_DEV_JOBS_SUBMITTED: u64, jobs submitted
 * @VNPU_NL_A_DEV_JOBS_COMPLETED: u64, jobs ended OK
 * @VNPU_NL_A_DEV_JOBS_FAILED: u64, jobs ended FAULT
 * @VNPU_NL_A_DEV_JOBS_TIMEDOUT: u64, jobs ended TIMEOUT
 * @VNPU_NL_A_DEV_JOBS_CANCELLED: u64, jobs ended CANCELLED
 * @VNPU_NL_A_DEV_RESETS: u64, device resets
 * @VNPU_NL_A_DEV_MEM_USED: u64, BO bytes charged to the device
 * @VNPU_NL_A_DEV_MEM_LIMIT: u64, the device's BO memory limit
 * @VNPU_NL_A_DEV_BOS: u32, live BOs
 * @VNPU_NL_A_DEV_BYTES_UPLOADED: u64, bytes copied by BO_UPLOAD
 * @VNPU_NL_A_DEV_BYTES_DOWNLOADED: u64, bytes copied by BO_DOWNLOAD
 * @VNPU_NL_A_DEV_CLIENTS: u32, open files
 * @VNPU_NL_A_CLIENT_ID: u64, the client's drm-client-id (fdinfo); reply
 *	and events
 * @VNPU_NL_A_CLIENT_PID: u32, process that opened the file; reply, events
 * @VNPU_NL_A_CLIENT_COMM: string, its command name
 * @VNPU_NL_A_CLIENT_JOBS: u64, jobs the client submitted
 * @VNPU_NL_A_CLIENT_BUSY_NS: u64, device time of the client's jobs, ns
 * @VNPU_NL_A_JOB_ID: u64, job id in its client; events
 * @VNPU_NL_A_REASON: string, what happened; events
 * @VNPU_NL_A_PAD: padding of 64-bit attributes
 * @VNPU_NL_A_DEV_FPU_SECTIONS: u64, FPU sections the device's tiles ran:
 *	each part of a command runs in one, with preemption off on its CPU
 * @VNPU_NL_A_DEV_FPU_NS: u64, their total time, ns (parts overlap on the
 *	tiles: it may exceed %VNPU_NL_A_DEV_BUSY_NS)
 * @VNPU_NL_A_DEV_FPU_MAX_NS: u64, the longest FPU section, ns; at most
 *	%VNPU_NL_A_DEV_FPU_NS. How long the device kept one CPU from
 *	scheduling anything else.
 * @VNPU_NL_A_DEV_FPU_MAX_OPCODE: u32, the &enum vnpu_opcode of the
 *	command that ran the longest section; 0 while none ran
 * @VNPU_NL_A_DEV_FPU_MAX_LAYER_OP: u32, that command's &enum
 *	vnpu_layer_op when it is a %VNPU_CMD_LAYER, else 0
 * @__VNPU_NL_A_MAX: one past the last attribute
 * @VNPU_NL_A_MAX: the last attribute
 */
enum vnpu_nl_attr {
	VNPU_NL_A_UNSPEC,
	VNPU_NL_A_DEV_INDEX,
	VNPU_NL_A_DEV_NODE,
	VNPU_NL_A_DEV_TILES,
	VNPU_NL_A_DEV_BUSY_NS,
	VNPU_NL_A_DEV_UTIL,
	VNPU_NL_A_DEV_JOBS_SUBMITTED,
	VNPU_NL_A_DEV_JOBS_COMPLETED,
	VNPU_NL_A_DEV_JOBS_FAILED,
	VNPU_NL_A_DEV_JOBS_TIMEDOUT,
	VNPU_NL_A_DEV_JOBS_CANCELLED,
	VNPU_NL_A_DEV_RESETS,
	VNPU_NL_A_DEV_MEM_USED,
	VNPU_NL_A_DEV_MEM_LIMIT,
	VNPU_NL_A_DEV_BOS,
	VNPU_NL_A_DEV_BYTES_UPLOADED,
	VNPU_NL_A_DEV_BYTES_DOWNLOADED,
	VNPU_NL_A_DEV_CLIENTS,
	VNPU_NL_A_CLIENT_ID,
	VNPU_NL_A_CLIENT_PID,
	VNPU_NL_A_CLIENT_COMM,
	VNPU_NL_A_CLIENT_JOBS,
	VNPU_NL_A_CLIENT_BUSY_NS,
	VNPU_NL_A_JOB_ID,
	VNPU_NL_A_REASON,
	VNPU_NL_A_PAD,
	VNPU_NL_A_DEV_FPU_SECTIONS,
	VNPU_NL_A_DEV_FPU_NS,
	VNPU_NL_A_DEV_FPU_MAX_NS,
	VNPU_NL_A_DEV_FPU_MAX_OPCODE,
	VNPU_NL_A_DEV_FPU_MAX_LAYER_OP,

	__VNPU_NL_A_MAX,
	VNPU_NL_A_MAX = __VNPU_NL_A_MAX - 1
};

/** VNPU_NL_NODE_MAX - the longest %VNPU_NL_A_DEV_NODE a request may hold */
#define VNPU_NL_NODE_MAX 15

#endif /* _UAPI_LINUX_VNPU_NETLINK_H */
