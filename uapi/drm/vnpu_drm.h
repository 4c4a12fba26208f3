/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vnpu ioctls: the userspace interface of the vnpu DRM render driver.
 *
 * Conventions: every struct has a @flags or @pad member that must be zero
 * (non-zero is -EINVAL), pointers are __u64 *_ptr members, timeouts are
 * absolute CLOCK_MONOTONIC nanoseconds, and new members are only ever added
 * at the end, each with a capability bit (%DRM_VNPU_PARAM_CAPABILITIES).
 */
#ifndef _VNPU_DRM_H_
#define _VNPU_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DRM_VNPU_UAPI_VERSION - bumped whenever a member or ioctl is added; not
 * for a new &enum drm_vnpu_param, which a driver without it answers with
 * -EINVAL. It says nothing about the command-stream format, which has its
 * own %VNPU_CMD_SET_VERSION (vnpu_cmd.h).
 */
#define DRM_VNPU_UAPI_VERSION 3

#define DRM_VNPU_GET_PARAM	0x00
#define DRM_VNPU_BO_CREATE	0x01
#define DRM_VNPU_BO_INFO	0x02
#define DRM_VNPU_BO_UPLOAD	0x03
#define DRM_VNPU_BO_DOWNLOAD	0x04
#define DRM_VNPU_SUBMIT		0x05
#define DRM_VNPU_WAIT		0x06
#define DRM_VNPU_CANCEL		0x07
#define DRM_VNPU_BO_USERPTR	0x08

#define DRM_IOCTL_VNPU_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_GET_PARAM, struct drm_vnpu_get_param)
#define DRM_IOCTL_VNPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_CREATE, struct drm_vnpu_bo_create)
#define DRM_IOCTL_VNPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_INFO, struct drm_vnpu_bo_info)
#define DRM_IOCTL_VNPU_BO_UPLOAD \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VNPU_BO_UPLOAD, struct drm_vnpu_bo_xfer)
#define DRM_IOCTL_VNPU_BO_DOWNLOAD \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VNPU_BO_DOWNLOAD, struct drm_vnpu_bo_xfer)
#define DRM_IOCTL_VNPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_SUBMIT, struct drm_vnpu_submit)
#define DRM_IOCTL_VNPU_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_WAIT, struct drm_vnpu_wait)
#define DRM_IOCTL_VNPU_CANCEL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VNPU_CANCEL, struct drm_vnpu_cancel)
#define DRM_IOCTL_VNPU_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_USERPTR, struct drm_vnpu_bo_userptr)

/**
 * enum drm_vnpu_param - what %DRM_IOCTL_VNPU_GET_PARAM reports
 * @DRM_VNPU_PARAM_DEVICE_INDEX: index of the device, 0 to num_devices - 1
 * @DRM_VNPU_PARAM_NUM_TILES: compute tiles (parallel units) of the device
 * @DRM_VNPU_PARAM_MEM_LIMIT: bytes of BO memory the device may hold
 * @DRM_VNPU_PARAM_MEM_USED: bytes of BO memory it holds now (all files)
 * @DRM_VNPU_PARAM_MAX_BO_SIZE: the largest size %DRM_IOCTL_VNPU_BO_CREATE
 *	takes, in bytes
 * @DRM_VNPU_PARAM_UAPI_VERSION: %DRM_VNPU_UAPI_VERSION of the driver
 * @DRM_VNPU_PARAM_CAPABILITIES: a mask of %DRM_VNPU_CAP_*
 * @DRM_VNPU_PARAM_CLOCK_HZ: ticks per second of the device timestamps
 *	(%DRM_IOCTL_VNPU_WAIT, profiling); 1000000000: they are nanoseconds
 *	of CLOCK_MONOTONIC
 * @DRM_VNPU_PARAM_RESET_COUNT: resets of the device since it was created
 * @DRM_VNPU_PARAM_MAX_SLOTS: the most slots one job may have
 * @DRM_VNPU_PARAM_MAX_CMD_SIZE: the largest command stream, in bytes
 * @DRM_VNPU_PARAM_ENGINE_FEATURES: VNPU_ENG_F_* the device's engine uses
 * @DRM_VNPU_PARAM_CMD_SET_VERSION: the command set (%VNPU_CMD_SET_VERSION
 *	of vnpu_cmd.h) the driver's stream validator takes. Drivers before
 *	it was added answer -EINVAL; they take command set 1.
 */
enum drm_vnpu_param {
	DRM_VNPU_PARAM_DEVICE_INDEX = 0,
	DRM_VNPU_PARAM_NUM_TILES = 1,
	DRM_VNPU_PARAM_MEM_LIMIT = 2,
	DRM_VNPU_PARAM_MEM_USED = 3,
	DRM_VNPU_PARAM_MAX_BO_SIZE = 4,
	DRM_VNPU_PARAM_UAPI_VERSION = 5,
	DRM_VNPU_PARAM_CAPABILITIES = 6,
	DRM_VNPU_PARAM_CLOCK_HZ = 7,
	DRM_VNPU_PARAM_RESET_COUNT = 8,
	DRM_VNPU_PARAM_MAX_SLOTS = 9,
	DRM_VNPU_PARAM_MAX_CMD_SIZE = 10,
	DRM_VNPU_PARAM_ENGINE_FEATURES = 11,
	DRM_VNPU_PARAM_CMD_SET_VERSION = 12,
};

/* Capability bits of %DRM_VNPU_PARAM_CAPABILITIES. */
/** DRM_VNPU_CAP_PRIME - BOs can be exported and dma-bufs imported */
#define DRM_VNPU_CAP_PRIME		0x1ull
/** DRM_VNPU_CAP_SYNCOBJ - SUBMIT takes in and out syncobjs */
#define DRM_VNPU_CAP_SYNCOBJ		0x2ull
/** DRM_VNPU_CAP_PROFILING - SUBMIT takes %DRM_VNPU_SUBMIT_PROFILE */
#define DRM_VNPU_CAP_PROFILING		0x4ull
/** DRM_VNPU_CAP_CANCEL - %DRM_IOCTL_VNPU_CANCEL exists */
#define DRM_VNPU_CAP_CANCEL		0x8ull
/** DRM_VNPU_CAP_PRIORITY - SUBMIT takes a &drm_vnpu_submit.priority */
#define DRM_VNPU_CAP_PRIORITY		0x10ull
/**
 * DRM_VNPU_CAP_SUBMIT_RESULT - SUBMIT returns the result of a job that
 * ended in it (&drm_vnpu_submit.out_flags); uAPI version 2
 */
#define DRM_VNPU_CAP_SUBMIT_RESULT	0x20ull
/**
 * DRM_VNPU_CAP_USERPTR - %DRM_IOCTL_VNPU_BO_USERPTR exists; uAPI version 3
 */
#define DRM_VNPU_CAP_USERPTR		0x40ull
/**
 * DRM_VNPU_CAP_USERPTR_EXPORT - a writable userptr BO exports as a dma-buf
 * (PRIME); without it the export fails with -EINVAL
 */
#define DRM_VNPU_CAP_USERPTR_EXPORT	0x80ull

/**
 * struct drm_vnpu_get_param - %DRM_IOCTL_VNPU_GET_PARAM
 * @param: one of &enum drm_vnpu_param
 * @pad: must be zero
 * @value: returned value of @param
 */
struct drm_vnpu_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/** DRM_VNPU_BO_FLAGS - the flags %DRM_IOCTL_VNPU_BO_CREATE takes (none yet) */
#define DRM_VNPU_BO_FLAGS 0u

/**
 * struct drm_vnpu_bo_create - %DRM_IOCTL_VNPU_BO_CREATE
 * @size: bytes, 1 to %DRM_VNPU_PARAM_MAX_BO_SIZE; rounded up to the page
 *	size (%DRM_IOCTL_VNPU_BO_INFO returns the result). The memory starts
 *	zeroed.
 * @flags: must be zero (%DRM_VNPU_BO_FLAGS)
 * @handle: returned GEM handle of the new BO, local to the file
 */
struct drm_vnpu_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
};

/**
 * struct drm_vnpu_bo_info - %DRM_IOCTL_VNPU_BO_INFO
 * @handle: GEM handle of a BO of this file (created or imported)
 * @flags: must be zero
 * @mmap_offset: returned offset to pass to mmap() on the render node
 * @size: returned size of the BO in bytes
 */
struct drm_vnpu_bo_info {
	__u32 handle;
	__u32 flags;
	__u64 mmap_offset;
	__u64 size;
};

/**
 * struct drm_vnpu_bo_xfer - %DRM_IOCTL_VNPU_BO_UPLOAD and
 * %DRM_IOCTL_VNPU_BO_DOWNLOAD: copy between user memory and a BO
 * @handle: GEM handle of a BO of this file (created or imported)
 * @flags: must be zero
 * @offset: byte offset into the BO, any alignment
 * @size: bytes to copy, at least 1; @offset + @size must not exceed the
 *	BO's size
 * @data_ptr: user memory to read (upload) or write (download)
 *
 * An upload waits for the device jobs that use the BO, a download for the
 * jobs that write it, so the copy never races with the device.
 */
struct drm_vnpu_bo_xfer {
	__u32 handle;
	__u32 flags;
	__u64 offset;
	__u64 size;
	__u64 data_ptr;
};

/* Flags of &drm_vnpu_bo_userptr.flags. */
/**
 * DRM_VNPU_BO_USERPTR_READ_ONLY - the BO is never written: neither a job
 * slot with %DRM_VNPU_SLOT_WRITE nor an upload may use it, and read-only
 * memory (PROT_READ, a file opened read-only) can back it
 */
#define DRM_VNPU_BO_USERPTR_READ_ONLY	0x1u
/** DRM_VNPU_BO_USERPTR_FLAGS - the mask of valid userptr flags */
#define DRM_VNPU_BO_USERPTR_FLAGS	DRM_VNPU_BO_USERPTR_READ_ONLY

/**
 * struct drm_vnpu_bo_userptr - %DRM_IOCTL_VNPU_BO_USERPTR: a BO over the
 * caller's own memory, without a copy
 * @user_ptr: address of the memory; a multiple of the page size
 * @size: bytes, a multiple of the page size, from one page to
 *	%DRM_VNPU_PARAM_MAX_BO_SIZE; charged to the device's memory limit
 * @flags: %DRM_VNPU_BO_USERPTR_* (mask %DRM_VNPU_BO_USERPTR_FLAGS)
 * @handle: returned GEM handle of the new BO, local to the file
 *
 * The pages are pinned until the BO is freed: the device and the process
 * see the same memory. After munmap() the BO keeps the pages it pinned
 * (the process no longer sees them); after fork() the parent keeps them
 * and the child's private mappings get copies. The BO cannot be mmapped
 * through the render node. A BO without %DRM_VNPU_BO_USERPTR_READ_ONLY
 * exports as a dma-buf (%DRM_VNPU_CAP_USERPTR_EXPORT), which importers map
 * and which keeps the BO, its pins and its charge while it lives; the
 * dma-buf cannot be mmapped. A read-only one does not export (-EINVAL).
 */
struct drm_vnpu_bo_userptr {
	__u64 user_ptr;
	__u64 size;
	__u32 flags;
	__u32 handle;
};

/* Flags of &drm_vnpu_slot.flags. */
/** DRM_VNPU_SLOT_READ - the job reads the slot's BO */
#define DRM_VNPU_SLOT_READ	0x1u
/** DRM_VNPU_SLOT_WRITE - the job writes the slot's BO */
#define DRM_VNPU_SLOT_WRITE	0x2u
/** DRM_VNPU_SLOT_FLAGS - the mask of valid slot flags */
#define DRM_VNPU_SLOT_FLAGS	(DRM_VNPU_SLOT_READ | DRM_VNPU_SLOT_WRITE)

/**
 * struct drm_vnpu_slot - one entry of a job's slot table
 * @handle: GEM handle of the BO the command stream reaches as this slot
 * @flags: %DRM_VNPU_SLOT_READ and/or %DRM_VNPU_SLOT_WRITE, at least one.
 *	They set the job's implicit fences: a job that reads a BO waits for
 *	the BO's last writer, one that writes it waits for all earlier users.
 */
struct drm_vnpu_slot {
	__u32 handle;
	__u32 flags;
};

/* Flags of &drm_vnpu_submit.flags. */
/** DRM_VNPU_SUBMIT_PROFILE - write per-command timestamps to @profile_handle */
#define DRM_VNPU_SUBMIT_PROFILE	0x1u
/** DRM_VNPU_SUBMIT_FLAGS - the mask of valid submit flags */
#define DRM_VNPU_SUBMIT_FLAGS	DRM_VNPU_SUBMIT_PROFILE

/**
 * DRM_VNPU_SUBMIT_OUT_ENDED - &drm_vnpu_submit.out_flags: the job ran and
 * ended in SUBMIT itself; its result is in the &drm_vnpu_submit
 */
#define DRM_VNPU_SUBMIT_OUT_ENDED	0x1u

/**
 * enum drm_vnpu_priority - scheduling priority of a job
 * @DRM_VNPU_PRIORITY_LOW: runs when nothing else is ready
 * @DRM_VNPU_PRIORITY_NORMAL: the default
 * @DRM_VNPU_PRIORITY_HIGH: runs before normal and low jobs of all files
 */
enum drm_vnpu_priority {
	DRM_VNPU_PRIORITY_LOW = 0,
	DRM_VNPU_PRIORITY_NORMAL = 1,
	DRM_VNPU_PRIORITY_HIGH = 2,
};

/** DRM_VNPU_MAX_SLOTS - the most entries of a slot table */
#define DRM_VNPU_MAX_SLOTS 256
/** DRM_VNPU_MAX_IN_SYNCOBJS - the most in-syncobjs of one job */
#define DRM_VNPU_MAX_IN_SYNCOBJS 64
/** DRM_VNPU_MAX_CMD_SIZE - the largest command stream, in bytes */
#define DRM_VNPU_MAX_CMD_SIZE (16u << 20)

/**
 * struct drm_vnpu_submit - %DRM_IOCTL_VNPU_SUBMIT: queue one job
 * @cmd_handle: GEM handle of the BO that holds the command stream
 * @flags: %DRM_VNPU_SUBMIT_* (mask %DRM_VNPU_SUBMIT_FLAGS)
 * @cmd_offset: byte offset of the stream in the BO; a multiple of 8
 * @cmd_size: bytes of the stream, 8 to %DRM_VNPU_MAX_CMD_SIZE, a multiple
 *	of 8. The stream is copied and validated (vnpu_cmd.h) at submit;
 *	later writes to the BO do not change the job.
 * @slots_ptr: user pointer to @slot_count &struct drm_vnpu_slot
 * @slot_count: entries at @slots_ptr, 0 to %DRM_VNPU_MAX_SLOTS
 * @in_syncobj_count: entries at @in_syncobjs_ptr, 0 to
 *	%DRM_VNPU_MAX_IN_SYNCOBJS
 * @in_syncobjs_ptr: user pointer to __u32 syncobj handles; the job starts
 *	after their fences signal
 * @out_syncobj: syncobj handle that gets the job's done fence, or 0
 * @priority: one of &enum drm_vnpu_priority
 * @profile_handle: with %DRM_VNPU_SUBMIT_PROFILE, a BO of at least
 *	16 * (number of commands) bytes where the device writes, for each
 *	command i, its start and end timestamps as two __u64 at 16 * i;
 *	must be 0 without the flag
 * @pad: must be zero
 * @job_id: returned id of the job, unique in this file and increasing
 *	from 1, for %DRM_IOCTL_VNPU_WAIT and %DRM_IOCTL_VNPU_CANCEL
 * @out_flags: returned %DRM_VNPU_SUBMIT_OUT_ENDED when the job ran and
 *	ended in SUBMIT itself (a short job that could start at once): then
 *	@status, @start_ns, @end_ns and @fault_cmd are what
 *	%DRM_IOCTL_VNPU_WAIT would return for it, and no WAIT is needed;
 *	returned 0 when the job was queued, and the four are 0
 * @status: returned &enum drm_vnpu_job_status of a job that ended
 * @fault_cmd: returned as &drm_vnpu_wait.fault_cmd of a job that ended
 * @start_ns: returned device timestamp when a job that ended started
 * @end_ns: returned device timestamp when it ended
 * @pad2: must be zero
 *
 * Jobs of one file complete in submission order. The members from
 * @out_flags on came with uAPI version 2 (%DRM_VNPU_CAP_SUBMIT_RESULT):
 * but for @pad2 they are outputs, their input values are ignored (a
 * struct can be submitted again as it came back); a program built with
 * the shorter struct of version 1 works as before. A program built with
 * this struct that runs on a version 1 driver gets its input values back
 * in them: it sets @out_flags to 0.
 */
struct drm_vnpu_submit {
	__u32 cmd_handle;
	__u32 flags;
	__u64 cmd_offset;
	__u64 cmd_size;
	__u64 slots_ptr;
	__u32 slot_count;
	__u32 in_syncobj_count;
	__u64 in_syncobjs_ptr;
	__u32 out_syncobj;
	__u32 priority;
	__u32 profile_handle;
	__u32 pad;
	__u64 job_id;
	__u32 out_flags;
	__u32 status;
	__u32 fault_cmd;
	__u32 pad2;
	__u64 start_ns;
	__u64 end_ns;
};

/**
 * enum drm_vnpu_job_status - how a job ended
 * @DRM_VNPU_JOB_OK: every command ran
 * @DRM_VNPU_JOB_FAULT: the device faulted on command
 *	&drm_vnpu_wait.fault_cmd; later commands did not run
 * @DRM_VNPU_JOB_TIMEOUT: the job ran longer than the device's timeout and
 *	the device was reset
 * @DRM_VNPU_JOB_CANCELLED: the job never ran (%DRM_IOCTL_VNPU_CANCEL, or
 *	the device went away)
 */
enum drm_vnpu_job_status {
	DRM_VNPU_JOB_OK = 0,
	DRM_VNPU_JOB_FAULT = 1,
	DRM_VNPU_JOB_TIMEOUT = 2,
	DRM_VNPU_JOB_CANCELLED = 3,
};

/** DRM_VNPU_JOB_HISTORY - a file can wait for its last this many jobs */
#define DRM_VNPU_JOB_HISTORY 4096

/**
 * struct drm_vnpu_wait - %DRM_IOCTL_VNPU_WAIT: wait for a job to end
 * @job_id: id from &drm_vnpu_submit.job_id of this file
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline; a past deadline polls
 * @flags: must be zero
 * @status: returned &enum drm_vnpu_job_status
 * @start_ns: returned device timestamp when the job started (0 if never)
 * @end_ns: returned device timestamp when it ended (0 if never started)
 * @fault_cmd: returned index of the faulting command with
 *	%DRM_VNPU_JOB_FAULT, of the running one with %DRM_VNPU_JOB_TIMEOUT
 * @pad: must be zero
 */
struct drm_vnpu_wait {
	__u64 job_id;
	__s64 timeout_ns;
	__u32 flags;
	__u32 status;
	__u64 start_ns;
	__u64 end_ns;
	__u32 fault_cmd;
	__u32 pad;
};

/**
 * struct drm_vnpu_cancel - %DRM_IOCTL_VNPU_CANCEL: cancel a queued job
 * @job_id: id from &drm_vnpu_submit.job_id of this file
 * @flags: must be zero
 * @pad: must be zero
 *
 * A job that has not started yet ends %DRM_VNPU_JOB_CANCELLED without
 * running (still in submission order); one that started or ended is
 * left alone and the ioctl fails with -EBUSY.
 */
struct drm_vnpu_cancel {
	__u64 job_id;
	__u32 flags;
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* _VNPU_DRM_H_ */
