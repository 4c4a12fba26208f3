/* SPDX-License-Identifier: MIT */
/*
 * Internal: the interface between the core (libvnpu.so) and a device
 * plugin (a shared object the core loads with dlopen).
 *
 * A plugin exports one function, VNPU_PLUGIN_ENTRY, which receives the
 * host services table and returns its plugin object. Plugins never link
 * the library's own objects: errors and logs go through the host table,
 * so the thread-local last error stays one instance, in libvnpu.so.
 *
 * Memory model: a device buffer (struct vnpu_buf) is always mapped into
 * the process (@map). A program's slots are buffers of its primary
 * device; the CPU runs fallback segments on any buffer through its map.
 *
 * Thread safety: every op may be called from any thread; a job is waited
 * for by one thread. A job ends in one of two ways: its submitter waits
 * for it (a sync inference), or the device calls the function notify()
 * gave it (every asynchronous run). The one shortcut is the device's own:
 * submit may run a job on the calling thread while the device is idle
 * (VNPU_SUBMIT_CALLER_WAITS, a job short enough for the driver's rule, or
 * on the CPU a caller that is the device's completion thread).
 */
#ifndef VNPU_SRC_PLUGIN_H
#define VNPU_SRC_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include <vnpu/vnpu_common.h>

#define VNPU_PLUGIN_ABI_VERSION 10
#define VNPU_PLUGIN_ENTRY "vnpu_plugin_create"

enum vnpu_log_level {
	VNPU_LOG_NONE = 0,
	VNPU_LOG_ERROR = 1,
	VNPU_LOG_WARNING = 2,
	VNPU_LOG_INFO = 3,
	VNPU_LOG_DEBUG = 4,
};

/* What the core gives a plugin. */
struct vnpu_host {
	uint32_t abi_version;
	/* Record a failure for vnpu_last_error() and return @status. */
	vnpu_status (*error)(vnpu_status status, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
	vnpu_status (*error_prefix)(vnpu_status status, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
	void (*log)(enum vnpu_log_level level, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
};

/* What a device tells of itself (all text NUL-terminated). */
struct vnpu_device_info {
	char name[32];			/* "CPU", "NPU.0" */
	char full_name[128];
	char architecture[64];		/* blobs compiled for it say this */
	char device_version[64];
	char driver_version[64];	/* uAPI version, "1.0" */
	char capabilities[256];		/* space-separated: "FP32 INT8 ..." */
	char device_id[32];
	uint32_t uapi_version;		/* major << 16 | minor; 0 on the CPU */
	uint32_t tiles;			/* compute units */
	uint32_t max_requests;		/* requests that make sense in flight */
	uint32_t optimal_requests;	/* for THROUGHPUT */
	uint64_t layer_ops;		/* bit n: takes vnpu_layer_op n; 0: all */
	uint64_t dtypes;		/* bit n: takes vnpu_element_type n; 0: all */
};

/* A device's live figures (the NPU's from the driver's netlink family). */
struct vnpu_device_stats {
	uint64_t busy_ns;		/* device time spent running jobs */
	uint32_t utilization;		/* over the last second, thousandths */
	uint64_t jobs_submitted;
	uint64_t jobs_completed;	/* ended OK */
	uint64_t jobs_failed;		/* ended with a fault */
	uint64_t jobs_timed_out;
	uint64_t jobs_cancelled;
	uint64_t resets;
	uint64_t memory_used;		/* buffer bytes charged to the device */
	uint64_t memory_limit;
	uint64_t buffers;		/* live buffers */
	uint64_t bytes_uploaded;
	uint64_t bytes_downloaded;
	uint64_t clients;		/* processes' open files */
};

struct vnpu_dev;			/* plugin-private */
struct vnpu_exe;			/* one command stream loaded on a device */
struct vnpu_dev_job;			/* one submitted run of an exe */

/* A device buffer mapped into the process. */
struct vnpu_buf {
	struct vnpu_dev *dev;		/* the device that made it */
	void *map;			/* byte 0, read-write */
	uint64_t size;			/* bytes */
	uint64_t id;			/* unique while it lives */
};

/* One slot of a program: how big its buffer must be, whether it is written. */
struct vnpu_slot_desc {
	uint64_t size;
	bool writable;
};

/*
 * The explicit fences of one job (ABI 8), as sync_file fds: the job
 * starts on the device once every @in_fds fence has signalled (no thread
 * waits for them), and with @want_out submit returns in @out_fd a new
 * sync_file that signals when the job ends (the caller closes it).
 */
/* The most in-fences of one job (the NPU's DRM_VNPU_MAX_IN_SYNCOBJS). */
#define VNPU_MAX_IN_FENCES 64

struct vnpu_job_fences {
	const int *in_fds;
	uint32_t num_in;
	bool want_out;
	int out_fd;			/* returned, -1 without @want_out */
};

/* How the caller of submit goes on (@flags; ABI 10). */
enum vnpu_submit_flags {
	/* It waits for the job as soon as submit returns (a sync inference). */
	VNPU_SUBMIT_CALLER_WAITS = 1u << 0,
	/*
	 * Other asynchronous runs are in flight (requests kept busy, as the
	 * THROUGHPUT hint does): more jobs follow this one soon, so the
	 * device should run them side by side rather than this one at once.
	 */
	VNPU_SUBMIT_MORE_IN_FLIGHT = 1u << 1,
};

struct vnpu_plugin_ops;

/* The object a plugin's entry point returns; the plugin embeds it. */
struct vnpu_plugin {
	const struct vnpu_plugin_ops *ops;
	const char *type;		/* "CPU" or "NPU" */
	uint32_t num_devices;
	struct vnpu_dev **devices;
	/* No device: why none was found (module, permission, version). ABI 6 */
	const char *absent_reason;
};

struct vnpu_plugin_ops {
	void (*destroy)(struct vnpu_plugin *plugin);

	void (*get_info)(struct vnpu_dev *dev, struct vnpu_device_info *out);

	vnpu_status (*buf_create)(struct vnpu_dev *dev, uint64_t size,
				  struct vnpu_buf **out);
	void (*buf_free)(struct vnpu_buf *buf);
	/* Host memory <-> buffer (the NPU's UPLOAD / DOWNLOAD). */
	vnpu_status (*buf_write)(struct vnpu_buf *buf, uint64_t offset,
				 const void *src, uint64_t size);
	vnpu_status (*buf_read)(struct vnpu_buf *buf, uint64_t offset,
				void *dst, uint64_t size);

	/*
	 * Load a command stream that will run over @slots; validates it
	 * against them (sizes, writes only to writable slots) and returns
	 * its number of commands in @num_cmds.
	 */
	vnpu_status (*exe_load)(struct vnpu_dev *dev, const void *cmd,
				uint64_t cmd_size, const struct vnpu_slot_desc *slots,
				uint32_t num_slots, uint32_t *num_cmds,
				struct vnpu_exe **out);
	void (*exe_free)(struct vnpu_exe *exe);
	/*
	 * Optional: a second stream for @exe, of the same commands but for
	 * their arena offsets (program.h's @own_cmd), validated as exe_load
	 * does against @slots (their arena of that plan's size). The device
	 * then runs either as it chooses; both give the same bits.
	 */
	vnpu_status (*exe_load_alt)(struct vnpu_exe *exe, const void *cmd, uint64_t cmd_size,
				    const struct vnpu_slot_desc *slots, uint32_t num_slots);

	/*
	 * Start @exe over @slots (buffers of this device; the CPU takes any
	 * buffer). With @profile the job times each command. @flags (enum
	 * vnpu_submit_flags) say how the caller goes on: with
	 * VNPU_SUBMIT_CALLER_WAITS a device may run the job on the calling
	 * thread when it is idle rather than hand it to another; with
	 * VNPU_SUBMIT_MORE_IN_FLIGHT it should not. @fences (NULL: none; ABI 8)
	 * are the job's explicit fences: VNPU_UNSUPPORTED from a device
	 * without fence_import.
	 */
	vnpu_status (*submit)(struct vnpu_exe *exe, struct vnpu_buf *const *slots,
			      uint32_t num_slots, bool profile, uint32_t flags,
			      struct vnpu_job_fences *fences, struct vnpu_dev_job **out);
	/*
	 * Wait for @job until the absolute CLOCK_MONOTONIC @deadline_ns
	 * (INT64_MAX: forever): VNPU_OK, VNPU_NOT_READY when the deadline
	 * passed first, or the job's failure. When the job ended and it was
	 * submitted with profiling, @cmd_ns (one entry per command) gets each
	 * command's device time and @total_ns the job's.
	 */
	vnpu_status (*wait)(struct vnpu_dev_job *job, int64_t deadline_ns,
			    uint64_t *cmd_ns, uint64_t *total_ns);
	/* Ask a submitted job to stop; wait() then reports VNPU_CANCELLED. */
	void (*cancel)(struct vnpu_dev_job *job);
	/* Free a job (waits for it to end first). */
	void (*job_free)(struct vnpu_dev_job *job);

	/*
	 * Read the device's figures now (never cached); NULL when the device
	 * has none (the CPU). The core offers the telemetry properties only
	 * on devices with this op.
	 */
	vnpu_status (*get_stats)(struct vnpu_dev *dev, struct vnpu_device_stats *out);

	/*
	 * Have @fn(@arg) called once when @job ends (ABI 9; every device has
	 * it), so that nobody has to sleep in wait() for it: on the device's
	 * completion context, with no lock of the device held; on the
	 * caller's thread, before notify returns, only when the job has ended
	 * already and the caller is that context inside another job's @fn
	 * (a callback's next inference: no handoff per inference). @fn then
	 * waits for and frees the job as usual (both return at once) and may
	 * submit, wait for and free other jobs meanwhile: the context keeps
	 * finishing the device's other jobs. An error (no thread could be
	 * started) leaves the job to the caller's wait().
	 */
	vnpu_status (*notify)(struct vnpu_dev_job *job, void (*fn)(void *arg), void *arg);

	/*
	 * Optional (NULL: the device cannot tell; ABI 4). After wait()
	 * reported a fault or a timeout: the index in @job's command stream
	 * of the command that stopped it, so the core can name the layer
	 * that command came from. False when no command did.
	 */
	bool (*fault_cmd)(struct vnpu_dev_job *job, uint32_t *out);

	/*
	 * Optional (NULL: the device has a fixed count; ABI 5). Run @n
	 * threads, 0 for the device's default (INFERENCE_NUM_THREADS); the
	 * core checks the range and reads the count back from get_info's
	 * @tiles. VNPU_BUSY when the device cannot change it now.
	 */
	vnpu_status (*set_threads)(struct vnpu_dev *dev, uint32_t n);

	/*
	 * Optional (NULL: the device has none; ABI 7). A buffer over the
	 * caller's @ptr of @size bytes that the device reads and writes in
	 * place while the buffer lives (@map is @ptr); the caller keeps the
	 * memory mapped. VNPU_UNSUPPORTED, with the reason, when the device
	 * cannot take this @ptr (alignment, an older driver).
	 */
	vnpu_status (*buf_wrap)(struct vnpu_dev *dev, void *ptr, uint64_t size,
				struct vnpu_buf **out);
	/*
	 * Optional (ABI 7). A buffer over the dma-buf @fd, at least @size
	 * bytes, mapped into the process; the caller keeps its @fd.
	 */
	vnpu_status (*buf_import)(struct vnpu_dev *dev, int fd, uint64_t size,
				  struct vnpu_buf **out);

	/*
	 * Optional (NULL: the device has no explicit fences; ABI 8). The
	 * fence of @fd, a sync_file or a syncobj (the fence it holds now) by
	 * @kind, as a new sync_file in @out; VNPU_INVALID_ARGUMENT when @fd
	 * is no such thing or the syncobj holds no fence.
	 */
	vnpu_status (*fence_import)(struct vnpu_dev *dev, vnpu_fence_kind kind, int fd,
				    int *out);
	/* ABI 8, with fence_import. The sync_file @fd as a new fd of @kind. */
	vnpu_status (*fence_export)(struct vnpu_dev *dev, vnpu_fence_kind kind, int fd,
				    int *out);
};

typedef vnpu_status (*vnpu_plugin_entry_fn)(const struct vnpu_host *host,
					    struct vnpu_plugin **out);

#endif /* VNPU_SRC_PLUGIN_H */
