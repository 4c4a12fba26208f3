// SPDX-License-Identifier: MIT
/*
 * The NPU device: the vnpu driver's render nodes through libdrm.
 *
 * Devices are found with drmGetDevices2() by driver name "vnpu" and named
 * "NPU.<index>" after DRM_VNPU_PARAM_DEVICE_INDEX. Buffers are GEM BOs
 * mapped into the process; host data moves with BO_UPLOAD / BO_DOWNLOAD,
 * a program's stream lives in its own BO, and a job is one SUBMIT with the
 * request's slot table, waited for with WAIT. The ioctls of DRM itself
 * go through libdrm's helpers (drmPrime*, drmSyncobj*,
 * drmCloseBufferHandle); the driver's own through npu_ioctl(), which
 * retries EINTR/EAGAIN, and npu_status() maps errno to a status in one
 * place. Explicit fences travel as sync_files: a job's in-fences become
 * syncobjs for SUBMIT, its out-syncobj a sync_file, the syncobjs are
 * destroyed once SUBMIT returns (the job holds its fences). The telemetry properties come from the driver's
 * generic netlink family "vnpu" (DEV_GET of the device's index, which
 * needs no privilege), asked afresh at every get.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/sync_file.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <xf86drm.h>

#include <drm/vnpu_drm.h>
#include <linux/vnpu_netlink.h>

#include "completion.h"
#include "plugin.h"
#include "vnpu_exec.h"

#define NPU_VISIBLE __attribute__((visibility("default")))
#define NPU_MAX_DEVICES 16

static const struct vnpu_host *host;

struct vnpu_dev {
	int fd;
	char node[64];			/* /dev/dri/renderD<n> */
	struct vnpu_device_info info;
	uint32_t index;			/* DRM_VNPU_PARAM_DEVICE_INDEX */
	uint64_t clock_hz;
	uint64_t caps;
	uint64_t max_bo_size;
	uint32_t max_slots;
	/* protects @imports and the handles of imports (made, closed) */
	pthread_mutex_t import_lock;
	struct npu_buf *imports;	/* buffers of imported dma-bufs */
	struct completion completion;	/* WAITs for notified jobs, in order */
};

struct npu_plugin {
	struct vnpu_plugin plugin;
	struct vnpu_dev *devices[NPU_MAX_DEVICES];
	char absent[320];		/* plugin.absent_reason: the first reason */
};

struct npu_buf {
	struct vnpu_buf buf;
	uint32_t handle;
	uint64_t bo_size;		/* the BO's, rounded up to pages */
	bool own_map;			/* @buf.map is our mmap of the BO */
	bool imported;			/* in &vnpu_dev.imports */
	struct npu_buf *next_import;	/* in &vnpu_dev.imports */
};

struct vnpu_exe {
	struct vnpu_dev *dev;
	struct npu_buf *cmd;		/* the stream, uploaded once */
	uint64_t cmd_size;
	uint32_t num_cmds;
	uint32_t num_slots;
	struct vnpu_slot_desc *slots;
};

struct vnpu_dev_job {
	struct vnpu_exe *exe;
	uint64_t id;
	struct npu_buf *profile;	/* per-command timestamps, or NULL */
	bool ended;			/* waited for, or ended in SUBMIT */
	struct drm_vnpu_wait result;	/* of a job that ended */
	int wait_err;			/* WAIT failed with this -errno */
	struct completion_item done_item;	/* on dev->completion */
};

/* ---- the ioctl wrapper ---- */

static int npu_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

static vnpu_status npu_status(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Map a negative errno of @what to a status and record the message. */
static vnpu_status npu_status(int err, const char *fmt, ...)
{
	vnpu_status st;
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	switch (-err) {
	case ENOMEM: case ENOSPC: st = VNPU_OUT_OF_MEMORY; break;
	case EINVAL: case EFAULT: case E2BIG: st = VNPU_INVALID_ARGUMENT; break;
	case ENOENT: st = VNPU_NOT_FOUND; break;
	case ETIMEDOUT: st = VNPU_NOT_READY; break;
	case EBUSY: st = VNPU_BUSY; break;
	case ENOTTY: case EOPNOTSUPP: st = VNPU_NOT_IMPLEMENTED; break;
	default: st = VNPU_DEVICE_ERROR; break;
	}
	return host->error(st, "NPU: %s: %s", what, strerror(-err));
}

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_vnpu_get_param p = { .param = param };
	int ret = npu_ioctl(fd, DRM_IOCTL_VNPU_GET_PARAM, &p);

	if (!ret)
		*value = p.value;
	return ret;
}

/* ---- buffers ---- */

static void gem_close(int fd, uint32_t handle)
{
	drmCloseBufferHandle(fd, handle);
}

/*
 * The buffer record of BO @handle: mapped through the render node, or
 * over @ptr when it is not NULL (a userptr BO). On failure the handle is
 * closed unless another buffer shares it (@shared: an import).
 */
static vnpu_status wrap_handle(struct vnpu_dev *dev, uint32_t handle, uint64_t size, void *ptr,
			       bool shared, struct npu_buf **out)
{
	struct drm_vnpu_bo_info info = { .handle = handle };
	struct npu_buf *b = NULL;
	void *map = ptr;
	vnpu_status st;
	int ret;

	ret = npu_ioctl(dev->fd, DRM_IOCTL_VNPU_BO_INFO, &info);
	if (ret) {
		st = npu_status(ret, "BO_INFO");
		goto err_close;
	}
	if (info.size < size) {
		st = host->error(VNPU_INVALID_ARGUMENT,
				 "NPU: the buffer holds %llu bytes, the tensor %llu",
				 (unsigned long long)info.size, (unsigned long long)size);
		goto err_close;
	}
	if (!map)
		map = mmap(NULL, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
			   (off_t)info.mmap_offset);
	if (map == MAP_FAILED) {
		st = npu_status(-errno, "mapping a buffer");
		goto err_close;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		st = host->error(VNPU_OUT_OF_MEMORY, "NPU: out of memory");
		goto err_unmap;
	}
	b->buf.dev = dev;
	b->buf.map = map;
	b->buf.size = size;
	b->buf.id = (uintptr_t)b;	/* two imports of a dma-buf share the handle */
	b->handle = handle;
	b->bo_size = info.size;
	b->own_map = !ptr;
	*out = b;
	return VNPU_OK;

err_unmap:
	if (!ptr)
		munmap(map, info.size);
err_close:
	if (!shared)
		gem_close(dev->fd, handle);
	return st;
}

static vnpu_status npu_buf_wrap_handle(struct vnpu_dev *dev, uint32_t handle, uint64_t size,
				       void *ptr, struct npu_buf **out)
{
	return wrap_handle(dev, handle, size, ptr, false, out);
}

static vnpu_status npu_buf_new(struct vnpu_dev *dev, uint64_t size, struct npu_buf **out)
{
	struct drm_vnpu_bo_create create = { .size = size ? size : 1 };
	int ret;

	if (size > dev->max_bo_size)
		return host->error(VNPU_OUT_OF_MEMORY,
				   "NPU: a %llu-byte buffer is above the device's limit of %llu",
				   (unsigned long long)size,
				   (unsigned long long)dev->max_bo_size);
	ret = npu_ioctl(dev->fd, DRM_IOCTL_VNPU_BO_CREATE, &create);
	if (ret)
		return npu_status(ret, "creating a %llu-byte buffer", (unsigned long long)size);
	return npu_buf_wrap_handle(dev, create.handle, size, NULL, out);
}

static vnpu_status npu_buf_create(struct vnpu_dev *dev, uint64_t size, struct vnpu_buf **out)
{
	struct npu_buf *b;
	vnpu_status st = npu_buf_new(dev, size, &b);

	if (st == VNPU_OK)
		*out = &b->buf;
	return st;
}

static bool forget_import_locked(struct npu_buf *b);

static void npu_buf_free(struct vnpu_buf *buf)
{
	struct npu_buf *b = (struct npu_buf *)buf;
	struct vnpu_dev *dev;
	bool last = true;

	if (!b)
		return;
	dev = b->buf.dev;
	if (b->imported)
		pthread_mutex_lock(&dev->import_lock);
	if (b->own_map)
		munmap(b->buf.map, b->bo_size);
	if (b->imported)
		last = forget_import_locked(b);
	if (last)
		gem_close(dev->fd, b->handle);
	if (b->imported)
		pthread_mutex_unlock(&dev->import_lock);
	free(b);
}

/*
 * A userptr BO over the caller's memory (uAPI 3): the device reads and
 * writes it in place. The BO covers whole pages: the bytes after the
 * tensor in its last page are the caller's too, which no job writes.
 */
static vnpu_status npu_buf_wrap(struct vnpu_dev *dev, void *ptr, uint64_t size,
				struct vnpu_buf **out)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct drm_vnpu_bo_userptr u = {
		.user_ptr = (uintptr_t)ptr,
		.size = ((size ? size : 1) + page - 1) & ~(page - 1),
	};
	struct npu_buf *b;
	vnpu_status st;
	int ret;

	if (!(dev->caps & DRM_VNPU_CAP_USERPTR))
		return host->error(VNPU_UNSUPPORTED,
				   "%s: the driver has no BO_USERPTR (uAPI 3)", dev->info.name);
	if ((uintptr_t)ptr % page)
		return host->error(VNPU_UNSUPPORTED, "%s: %p is not aligned to the %llu-byte page",
				   dev->info.name, ptr, (unsigned long long)page);
	if (u.size > dev->max_bo_size)
		return host->error(VNPU_UNSUPPORTED,
				   "%s: %llu bytes are above the device's buffer limit of %llu",
				   dev->info.name, (unsigned long long)u.size,
				   (unsigned long long)dev->max_bo_size);
	ret = npu_ioctl(dev->fd, DRM_IOCTL_VNPU_BO_USERPTR, &u);
	if (ret)
		return npu_status(ret, "BO_USERPTR of %llu bytes at %p", (unsigned long long)u.size,
				  ptr);
	st = npu_buf_wrap_handle(dev, u.handle, size, ptr, &b);
	if (st == VNPU_OK)
		*out = &b->buf;
	return st;
}

/* Take @b off its device's imports: whether it was the last on its handle. */
static bool forget_import_locked(struct npu_buf *b)
{
	struct vnpu_dev *dev = b->buf.dev;
	struct npu_buf **p, *other;

	for (p = &dev->imports; *p; p = &(*p)->next_import) {
		if (*p == b) {
			*p = b->next_import;
			break;
		}
	}
	for (other = dev->imports; other; other = other->next_import) {
		if (other->handle == b->handle)
			return false;
	}
	return true;
}

/*
 * A dma-buf through libdrm's PRIME helper. The file has one handle per
 * dma-buf, which GEM_CLOSE ends for all its users: buffers of one dma-buf
 * share the handle, closed with the last of them. The import lock spans
 * the handle's making and closing, so an import never gets a handle that
 * is being closed.
 */
static vnpu_status npu_buf_import(struct vnpu_dev *dev, int fd, uint64_t size,
				  struct vnpu_buf **out)
{
	struct npu_buf *b, *other;
	uint32_t handle = 0;
	vnpu_status st;

	pthread_mutex_lock(&dev->import_lock);
	if (drmPrimeFDToHandle(dev->fd, fd, &handle)) {
		st = npu_status(-errno, "importing dma-buf fd %d", fd);
		pthread_mutex_unlock(&dev->import_lock);
		return st;
	}
	for (other = dev->imports; other && other->handle != handle; other = other->next_import)
		;
	st = wrap_handle(dev, handle, size, NULL, other != NULL, &b);
	if (st == VNPU_OK) {
		b->imported = true;
		b->next_import = dev->imports;
		dev->imports = b;
		*out = &b->buf;
	}
	pthread_mutex_unlock(&dev->import_lock);
	return st;
}

static vnpu_status npu_xfer(struct vnpu_buf *buf, unsigned long request, uint64_t offset,
			    const void *data, uint64_t size)
{
	struct npu_buf *b = (struct npu_buf *)buf;
	struct drm_vnpu_bo_xfer x = {
		.handle = b->handle, .offset = offset, .size = size,
		.data_ptr = (uintptr_t)data,
	};
	int ret;

	if (offset > buf->size || size > buf->size - offset)
		return host->error(VNPU_INVALID_ARGUMENT,
				   "NPU: %llu bytes at %llu are outside a %llu-byte buffer",
				   (unsigned long long)size, (unsigned long long)offset,
				   (unsigned long long)buf->size);
	if (!size)
		return VNPU_OK;
	ret = npu_ioctl(buf->dev->fd, request, &x);
	if (ret)
		return npu_status(ret, request == DRM_IOCTL_VNPU_BO_UPLOAD ? "upload" : "download");
	return VNPU_OK;
}

static vnpu_status npu_buf_write(struct vnpu_buf *buf, uint64_t offset, const void *src,
				 uint64_t size)
{
	return npu_xfer(buf, DRM_IOCTL_VNPU_BO_UPLOAD, offset, src, size);
}

static vnpu_status npu_buf_read(struct vnpu_buf *buf, uint64_t offset, void *dst,
				uint64_t size)
{
	return npu_xfer(buf, DRM_IOCTL_VNPU_BO_DOWNLOAD, offset, dst, size);
}

/* ---- programs ---- */

static void npu_exe_free(struct vnpu_exe *exe)
{
	if (!exe)
		return;
	npu_buf_free(exe->cmd ? &exe->cmd->buf : NULL);
	free(exe->slots);
	free(exe);
}

/* Validate here too: a bad stream fails at compile, not at the first infer. */
static vnpu_status check_stream(const void *cmd, uint64_t size,
				const struct vnpu_slot_desc *descs, uint32_t num_slots,
				uint32_t *num_cmds)
{
	struct vnpu_slot_info *slots = calloc(num_slots ? num_slots : 1, sizeof(*slots));
	void *copy = malloc(size ? size : 8);
	uint32_t i;
	int ret;

	if (!slots || !copy) {
		free(slots);
		free(copy);
		return host->error(VNPU_OUT_OF_MEMORY, "NPU: out of memory");
	}
	for (i = 0; i < num_slots; i++) {
		slots[i].size = descs[i].size;
		slots[i].id = i + 1;
		slots[i].flags = descs[i].writable ? VNPU_SLOT_INFO_WRITE : 0;
	}
	memcpy(copy, cmd, size);	/* aligned to 8 for the validator */
	ret = vnpu_stream_validate(copy, size, slots, num_slots, num_cmds);
	free(slots);
	free(copy);
	if (ret)
		return host->error(VNPU_INVALID_ARGUMENT,
				   "NPU: command %u of the stream is invalid", *num_cmds);
	return VNPU_OK;
}

static vnpu_status npu_exe_load(struct vnpu_dev *dev, const void *cmd, uint64_t cmd_size,
				const struct vnpu_slot_desc *descs, uint32_t num_slots,
				uint32_t *num_cmds, struct vnpu_exe **out)
{
	struct vnpu_exe *exe;
	vnpu_status st;

	if (num_slots > dev->max_slots)
		return host->error(VNPU_UNSUPPORTED, "NPU: %u slots, the device takes %u",
				   num_slots, dev->max_slots);
	if (!cmd_size || cmd_size > DRM_VNPU_MAX_CMD_SIZE)
		return host->error(VNPU_UNSUPPORTED,
				   "NPU: a %llu-byte stream (the device takes 8 to %u)",
				   (unsigned long long)cmd_size, DRM_VNPU_MAX_CMD_SIZE);
	exe = calloc(1, sizeof(*exe));
	if (!exe)
		return host->error(VNPU_OUT_OF_MEMORY, "NPU: out of memory");
	exe->dev = dev;
	exe->cmd_size = cmd_size;
	exe->num_slots = num_slots;
	exe->slots = calloc(num_slots ? num_slots : 1, sizeof(*descs));
	if (!exe->slots) {
		free(exe);
		return host->error(VNPU_OUT_OF_MEMORY, "NPU: out of memory");
	}
	memcpy(exe->slots, descs, num_slots * sizeof(*descs));
	st = check_stream(cmd, cmd_size, descs, num_slots, &exe->num_cmds);
	if (st == VNPU_OK)
		st = npu_buf_new(dev, cmd_size, &exe->cmd);
	if (st == VNPU_OK)
		st = npu_buf_write(&exe->cmd->buf, 0, cmd, cmd_size);
	if (st != VNPU_OK) {
		npu_exe_free(exe);
		return st;
	}
	*num_cmds = exe->num_cmds;
	*out = exe;
	return VNPU_OK;
}

/* ---- fences ---- */

/* A new syncobj of @dev holding the fence of @sync_file. */
static int syncobj_of_sync_file(struct vnpu_dev *dev, int sync_file, uint32_t *out)
{
	int ret;

	if (drmSyncobjCreate(dev->fd, 0, out))
		return -errno;
	if (!drmSyncobjImportSyncFile(dev->fd, *out, sync_file))
		return 0;
	ret = -errno;
	drmSyncobjDestroy(dev->fd, *out);
	return ret;
}

static vnpu_status npu_fence_import(struct vnpu_dev *dev, vnpu_fence_kind kind, int fd,
				    int *out)
{
	struct sync_file_info info = { 0 };
	uint32_t handle;
	int ret;

	if (!(dev->caps & DRM_VNPU_CAP_SYNCOBJ))
		return host->error(VNPU_UNSUPPORTED, "%s: the driver has no syncobjs",
				   dev->info.name);
	if (kind == VNPU_FENCE_SYNC_FILE) {
		ret = npu_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
		if (ret)
			return host->error(VNPU_INVALID_ARGUMENT, "fd %d is not a sync_file: %s",
					   fd, strerror(-ret));
		*out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		return *out < 0 ? npu_status(-errno, "duplicating fd %d", fd) : VNPU_OK;
	}
	if (drmSyncobjFDToHandle(dev->fd, fd, &handle))
		return host->error(VNPU_INVALID_ARGUMENT, "fd %d is not a syncobj: %s", fd,
				   strerror(errno));
	ret = drmSyncobjExportSyncFile(dev->fd, handle, out) ? -errno : 0;
	drmSyncobjDestroy(dev->fd, handle);
	if (ret == -EINVAL)
		return host->error(VNPU_INVALID_ARGUMENT, "the syncobj of fd %d holds no fence", fd);
	return ret ? npu_status(ret, "reading the fence of syncobj fd %d", fd) : VNPU_OK;
}

static vnpu_status npu_fence_export(struct vnpu_dev *dev, vnpu_fence_kind kind, int fd,
				    int *out)
{
	uint32_t handle;
	int ret;

	if (kind == VNPU_FENCE_SYNC_FILE) {
		*out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		return *out < 0 ? npu_status(-errno, "duplicating a fence") : VNPU_OK;
	}
	ret = syncobj_of_sync_file(dev, fd, &handle);
	if (ret)
		return npu_status(ret, "a syncobj for a fence");
	ret = drmSyncobjHandleToFD(dev->fd, handle, out) ? -errno : 0;
	drmSyncobjDestroy(dev->fd, handle);
	return ret ? npu_status(ret, "exporting a syncobj") : VNPU_OK;
}

/* The syncobjs of a job's fences, made before SUBMIT, destroyed after. */
struct job_syncobjs {
	uint32_t in[VNPU_MAX_IN_FENCES];
	uint32_t num_in;
	uint32_t out;
};

static void job_syncobjs_destroy(struct vnpu_dev *dev, struct job_syncobjs *j)
{
	while (j->num_in)
		drmSyncobjDestroy(dev->fd, j->in[--j->num_in]);
	if (j->out)
		drmSyncobjDestroy(dev->fd, j->out);
	j->out = 0;
}

static vnpu_status job_syncobjs_make(struct vnpu_dev *dev, const struct vnpu_job_fences *f,
				     struct job_syncobjs *j, struct drm_vnpu_submit *s)
{
	int ret = 0;

	if (!(dev->caps & DRM_VNPU_CAP_SYNCOBJ))
		return host->error(VNPU_UNSUPPORTED, "%s: the driver has no syncobjs",
				   dev->info.name);
	if (f->num_in > VNPU_MAX_IN_FENCES)
		return host->error(VNPU_INVALID_ARGUMENT, "NPU: %u in-fences, at most %d",
				   f->num_in, VNPU_MAX_IN_FENCES);
	while (!ret && j->num_in < f->num_in) {
		ret = syncobj_of_sync_file(dev, f->in_fds[j->num_in], &j->in[j->num_in]);
		if (!ret)
			j->num_in++;
	}
	if (!ret && f->want_out)
		ret = drmSyncobjCreate(dev->fd, 0, &j->out) ? -errno : 0;
	if (ret) {
		job_syncobjs_destroy(dev, j);
		return npu_status(ret, "making the job's syncobjs");
	}
	s->in_syncobjs_ptr = (uintptr_t)j->in;
	s->in_syncobj_count = j->num_in;
	s->out_syncobj = j->out;
	return VNPU_OK;
}

/* ---- jobs ---- */

/* The SUBMIT of @bufs into @s for @exe. */
static vnpu_status fill_slots(struct vnpu_exe *exe, struct vnpu_buf *const *bufs,
			      uint32_t num_slots, struct drm_vnpu_slot *slots)
{
	uint32_t i;

	if (num_slots != exe->num_slots || num_slots > DRM_VNPU_MAX_SLOTS)
		return host->error(VNPU_INVALID_ARGUMENT, "NPU: %u slots given, the program has %u",
				   num_slots, exe->num_slots);
	for (i = 0; i < num_slots; i++) {
		if (!bufs[i] || bufs[i]->dev != exe->dev || bufs[i]->size < exe->slots[i].size)
			return host->error(VNPU_INVALID_ARGUMENT,
					   "NPU: slot %u is missing, too small or of another device",
					   i);
		slots[i].handle = ((struct npu_buf *)bufs[i])->handle;
		slots[i].flags = DRM_VNPU_SLOT_READ |
				 (exe->slots[i].writable ? DRM_VNPU_SLOT_WRITE : 0);
	}
	return VNPU_OK;
}

/*
 * @flags change nothing here: SUBMIT already runs a short job to its end
 * in the ioctl when the device is idle, and a longer one belongs to the
 * device's own threads.
 */
static vnpu_status npu_submit(struct vnpu_exe *exe, struct vnpu_buf *const *bufs,
			      uint32_t num_slots, bool profile, uint32_t flags,
			      struct vnpu_job_fences *fences, struct vnpu_dev_job **out)
{
	struct vnpu_dev *dev = exe->dev;
	struct drm_vnpu_slot slots[DRM_VNPU_MAX_SLOTS];
	struct drm_vnpu_submit s = {
		.cmd_handle = exe->cmd->handle,
		.cmd_size = exe->cmd_size,
		.priority = DRM_VNPU_PRIORITY_NORMAL,
	};
	struct job_syncobjs syncobjs = { .num_in = 0 };
	struct vnpu_dev_job *job;
	vnpu_status st;
	int ret;

	(void)flags;
	st = fill_slots(exe, bufs, num_slots, slots);
	if (st != VNPU_OK)
		return st;
	if (fences) {
		fences->out_fd = -1;
		st = job_syncobjs_make(dev, fences, &syncobjs, &s);
		if (st != VNPU_OK)
			return st;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		job_syncobjs_destroy(dev, &syncobjs);
		return host->error(VNPU_OUT_OF_MEMORY, "NPU: out of memory");
	}
	if (profile && (dev->caps & DRM_VNPU_CAP_PROFILING)) {
		st = npu_buf_new(dev, 16 * (uint64_t)exe->num_cmds, &job->profile);
		if (st != VNPU_OK) {
			job_syncobjs_destroy(dev, &syncobjs);
			free(job);
			return st;
		}
		s.flags |= DRM_VNPU_SUBMIT_PROFILE;
		s.profile_handle = job->profile->handle;
	}
	s.slots_ptr = (uintptr_t)slots;
	s.slot_count = num_slots;
	ret = npu_ioctl(dev->fd, DRM_IOCTL_VNPU_SUBMIT, &s);
	/* The job holds the fences it needs: the syncobjs can go. */
	if (!ret && syncobjs.out && drmSyncobjExportSyncFile(dev->fd, syncobjs.out,
							     &fences->out_fd))
		host->log(VNPU_LOG_WARNING, "NPU: no out-fence for job %llu: %s",
			  (unsigned long long)s.job_id, strerror(errno));
	job_syncobjs_destroy(dev, &syncobjs);
	if (ret) {
		npu_buf_free(job->profile ? &job->profile->buf : NULL);
		free(job);
		return npu_status(ret, "submit");
	}
	job->exe = exe;
	job->id = s.job_id;
	/* A short job may have run in SUBMIT: then no WAIT is needed. */
	if (s.out_flags & DRM_VNPU_SUBMIT_OUT_ENDED) {
		job->ended = true;
		job->result = (struct drm_vnpu_wait){
			.job_id = s.job_id, .status = s.status, .fault_cmd = s.fault_cmd,
			.start_ns = s.start_ns, .end_ns = s.end_ns,
		};
	}
	*out = job;
	return VNPU_OK;
}

static uint64_t ticks_to_ns(const struct vnpu_dev *dev, uint64_t ticks)
{
	if (!dev->clock_hz || dev->clock_hz == 1000000000)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000 / dev->clock_hz);
}

static void read_profile(struct vnpu_dev_job *job, uint64_t *cmd_ns)
{
	const uint64_t *stamps = job->profile->buf.map;
	uint32_t i;

	for (i = 0; i < job->exe->num_cmds; i++)
		cmd_ns[i] = stamps[2 * i + 1] > stamps[2 * i] ?
			    ticks_to_ns(job->exe->dev, stamps[2 * i + 1] - stamps[2 * i]) : 0;
}

/* WAIT for @job until @deadline_ns; 0 once it ended, with its result kept. */
static int job_wait_ioctl(struct vnpu_dev_job *job, int64_t deadline_ns)
{
	struct drm_vnpu_wait w = { .job_id = job->id, .timeout_ns = deadline_ns };
	int ret;

	if (job->ended)
		return 0;
	ret = npu_ioctl(job->exe->dev->fd, DRM_IOCTL_VNPU_WAIT, &w);
	if (!ret) {
		job->ended = true;
		job->result = w;
	}
	return ret;
}

static vnpu_status npu_wait(struct vnpu_dev_job *job, int64_t deadline_ns, uint64_t *cmd_ns,
			    uint64_t *total_ns)
{
	struct vnpu_dev *dev = job->exe->dev;
	struct drm_vnpu_wait w;
	int ret = job->wait_err ? job->wait_err : job_wait_ioctl(job, deadline_ns);

	if (ret == -ETIMEDOUT)
		return host->error(VNPU_NOT_READY, "NPU: job %llu is still running",
				   (unsigned long long)job->id);
	if (ret)
		return npu_status(ret, "waiting for job %llu", (unsigned long long)job->id);
	w = job->result;
	switch (w.status) {
	case DRM_VNPU_JOB_OK:
		break;
	case DRM_VNPU_JOB_FAULT:
		return host->error(VNPU_DEVICE_FAULT, "NPU: the device faulted on command %u",
				   w.fault_cmd);
	case DRM_VNPU_JOB_TIMEOUT:
		return host->error(VNPU_TIMEOUT,
				   "NPU: command %u ran past the device's timeout; the device was reset",
				   w.fault_cmd);
	case DRM_VNPU_JOB_CANCELLED:
		return host->error(VNPU_CANCELLED, "NPU: the job was cancelled");
	default:
		return host->error(VNPU_DEVICE_ERROR, "NPU: unknown job status %u", w.status);
	}
	if (cmd_ns && job->profile)
		read_profile(job, cmd_ns);
	if (total_ns)
		*total_ns = w.end_ns > w.start_ns ? ticks_to_ns(dev, w.end_ns - w.start_ns) : 0;
	return VNPU_OK;
}

static bool npu_fault_cmd(struct vnpu_dev_job *job, uint32_t *out)
{
	if (!job->ended || (job->result.status != DRM_VNPU_JOB_FAULT &&
			    job->result.status != DRM_VNPU_JOB_TIMEOUT))
		return false;
	*out = job->result.fault_cmd;
	return true;
}

static void npu_cancel(struct vnpu_dev_job *job)
{
	struct drm_vnpu_cancel c = { .job_id = job->id };

	/* EBUSY: it started already and will end on its own. */
	npu_ioctl(job->exe->dev->fd, DRM_IOCTL_VNPU_CANCEL, &c);
}

/*
 * The completion context's wait for a notified job: no deadline, as the
 * driver's own timeout ends a job that hangs. A WAIT that fails otherwise
 * (the device was unplugged) is the job's result.
 */
static void npu_wait_end(struct completion_item *item)
{
	struct vnpu_dev_job *job = (struct vnpu_dev_job *)((char *)item -
		offsetof(struct vnpu_dev_job, done_item));
	int ret;

	do {
		ret = job_wait_ioctl(job, INT64_MAX);
	} while (ret == -ETIMEDOUT);
	job->wait_err = ret;
}

static vnpu_status npu_notify(struct vnpu_dev_job *job, void (*fn)(void *arg), void *arg)
{
	struct vnpu_dev *dev = job->exe->dev;

	if (completion_add(&dev->completion, &job->done_item, job->ended, fn, arg) != VNPU_OK)
		return host->error(VNPU_GENERAL_ERROR, "%s: cannot start a completion thread",
				   dev->info.name);
	return VNPU_OK;
}

static void npu_job_free(struct vnpu_dev_job *job)
{
	if (!job)
		return;
	if (!job->ended && !job->wait_err) {
		npu_cancel(job);
		job_wait_ioctl(job, INT64_MAX);
	}
	npu_buf_free(job->profile ? &job->profile->buf : NULL);
	free(job);
}

/* ---- devices ---- */

/* ---- telemetry ---- */

struct stats_reply {
	struct vnpu_device_stats *out;
	bool found;
};

static uint64_t nl_u64(struct nlattr **a, int type)
{
	return a[type] ? nla_get_u64(a[type]) : 0;
}

static uint32_t nl_u32(struct nlattr **a, int type)
{
	return a[type] ? nla_get_u32(a[type]) : 0;
}

static int stats_parse(struct nl_msg *msg, void *arg)
{
	struct stats_reply *r = arg;
	struct vnpu_device_stats *s = r->out;
	struct nlattr *a[VNPU_NL_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, VNPU_NL_A_MAX, NULL))
		return NL_SKIP;
	s->busy_ns = nl_u64(a, VNPU_NL_A_DEV_BUSY_NS);
	s->utilization = nl_u32(a, VNPU_NL_A_DEV_UTIL);
	s->jobs_submitted = nl_u64(a, VNPU_NL_A_DEV_JOBS_SUBMITTED);
	s->jobs_completed = nl_u64(a, VNPU_NL_A_DEV_JOBS_COMPLETED);
	s->jobs_failed = nl_u64(a, VNPU_NL_A_DEV_JOBS_FAILED);
	s->jobs_timed_out = nl_u64(a, VNPU_NL_A_DEV_JOBS_TIMEDOUT);
	s->jobs_cancelled = nl_u64(a, VNPU_NL_A_DEV_JOBS_CANCELLED);
	s->resets = nl_u64(a, VNPU_NL_A_DEV_RESETS);
	s->memory_used = nl_u64(a, VNPU_NL_A_DEV_MEM_USED);
	s->memory_limit = nl_u64(a, VNPU_NL_A_DEV_MEM_LIMIT);
	s->buffers = nl_u32(a, VNPU_NL_A_DEV_BOS);
	s->bytes_uploaded = nl_u64(a, VNPU_NL_A_DEV_BYTES_UPLOADED);
	s->bytes_downloaded = nl_u64(a, VNPU_NL_A_DEV_BYTES_DOWNLOADED);
	s->clients = nl_u32(a, VNPU_NL_A_DEV_CLIENTS);
	r->found = true;
	return NL_OK;
}

/* One DEV_GET of the device's index on @sock; 0 or a negative libnl error. */
static int stats_request(struct vnpu_dev *dev, struct nl_sock *sock, int family,
			 struct stats_reply *reply)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -NLE_NOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 VNPU_NL_CMD_DEV_GET, VNPU_NL_FAMILY_VERSION) ||
	    nla_put_u32(msg, VNPU_NL_A_DEV_INDEX, dev->index)) {
		nlmsg_free(msg);
		return -NLE_NOMEM;
	}
	nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, stats_parse, reply);
	ret = nl_send_auto(sock, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return ret;
	/* The reply, then the ACK the request asked for. */
	ret = nl_recvmsgs_default(sock);
	if (ret >= 0)
		ret = nl_wait_for_ack(sock);
	return ret < 0 ? ret : 0;
}

static vnpu_status npu_get_stats(struct vnpu_dev *dev, struct vnpu_device_stats *out)
{
	struct stats_reply reply = { .out = out };
	struct nl_sock *sock = nl_socket_alloc();
	int family, ret;

	if (!sock)
		return host->error(VNPU_OUT_OF_MEMORY, "%s: out of memory for a netlink socket",
				   dev->info.name);
	ret = genl_connect(sock);
	if (ret < 0) {
		nl_socket_free(sock);
		return host->error(VNPU_DEVICE_ERROR,
				   "%s: cannot open a generic netlink socket: %s",
				   dev->info.name, nl_geterror(ret));
	}
	family = genl_ctrl_resolve(sock, VNPU_NL_FAMILY_NAME);
	if (family < 0) {
		nl_socket_free(sock);
		return host->error(VNPU_DEVICE_ERROR,
				   "%s: no telemetry: the generic netlink family \"%s\" is absent (%s): a vnpu driver without it, or not the initial network namespace",
				   dev->info.name, VNPU_NL_FAMILY_NAME, nl_geterror(family));
	}
	ret = stats_request(dev, sock, family, &reply);
	nl_socket_free(sock);
	if (ret < 0)
		return host->error(VNPU_DEVICE_ERROR, "%s: telemetry: DEV_GET of device %u: %s",
				   dev->info.name, dev->index, nl_geterror(ret));
	if (!reply.found)
		return host->error(VNPU_DEVICE_ERROR,
				   "%s: telemetry: the driver did not answer DEV_GET of device %u",
				   dev->info.name, dev->index);
	return VNPU_OK;
}

static void npu_get_info(struct vnpu_dev *dev, struct vnpu_device_info *out)
{
	*out = dev->info;
}

static void dev_close(struct vnpu_dev *dev)
{
	if (!dev)
		return;
	completion_fini(&dev->completion);
	pthread_mutex_destroy(&dev->import_lock);
	close(dev->fd);
	free(dev);
}

static void npu_destroy(struct vnpu_plugin *p)
{
	struct npu_plugin *np = (struct npu_plugin *)p;
	uint32_t i;

	for (i = 0; i < p->num_devices; i++)
		dev_close(np->devices[i]);
	free(np);
}

static const struct vnpu_plugin_ops npu_ops = {
	.destroy = npu_destroy,
	.get_info = npu_get_info,
	.buf_create = npu_buf_create,
	.buf_free = npu_buf_free,
	.buf_write = npu_buf_write,
	.buf_read = npu_buf_read,
	.exe_load = npu_exe_load,
	.exe_free = npu_exe_free,
	.submit = npu_submit,
	.wait = npu_wait,
	.fault_cmd = npu_fault_cmd,
	.cancel = npu_cancel,
	.job_free = npu_job_free,
	.notify = npu_notify,
	.get_stats = npu_get_stats,
	.buf_wrap = npu_buf_wrap,
	.buf_import = npu_buf_import,
	.fence_import = npu_fence_import,
	.fence_export = npu_fence_export,
};

/*
 * The command set the driver's validator takes, which must be the one this
 * library writes: the same stream means another thing under another set.
 * It names the architecture, which a blob must match: a new uAPI with the
 * same commands keeps blobs valid. Drivers before
 * %DRM_VNPU_PARAM_CMD_SET_VERSION took command set 1.
 */
static uint64_t cmd_set_version(int fd)
{
	uint64_t version = 1;

	get_param(fd, DRM_VNPU_PARAM_CMD_SET_VERSION, &version);
	return version;
}

static int fill_info(struct vnpu_dev *dev, const char *node, const drmVersion *ver)
{
	struct vnpu_device_info *info = &dev->info;
	uint64_t index, tiles, uapi, mem, max_slots, features = 0;

	if (get_param(dev->fd, DRM_VNPU_PARAM_DEVICE_INDEX, &index) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_NUM_TILES, &tiles) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_UAPI_VERSION, &uapi) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_CAPABILITIES, &dev->caps) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_CLOCK_HZ, &dev->clock_hz) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_MAX_BO_SIZE, &dev->max_bo_size) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_MEM_LIMIT, &mem) ||
	    get_param(dev->fd, DRM_VNPU_PARAM_MAX_SLOTS, &max_slots))
		return -1;
	/* Older drivers may lack it: then the engine features are unknown. */
	get_param(dev->fd, DRM_VNPU_PARAM_ENGINE_FEATURES, &features);
	dev->index = (uint32_t)index;
	dev->max_slots = max_slots > DRM_VNPU_MAX_SLOTS ? DRM_VNPU_MAX_SLOTS : (uint32_t)max_slots;

	snprintf(info->name, sizeof(info->name), "NPU.%llu", (unsigned long long)index);
	snprintf(info->full_name, sizeof(info->full_name),
		 "vnpu simulated NPU %llu (%llu tiles, %llu MiB, %s)",
		 (unsigned long long)index, (unsigned long long)tiles,
		 (unsigned long long)(mem >> 20), node);
	snprintf(info->architecture, sizeof(info->architecture), "vnpu-npu-%d",
		 VNPU_CMD_SET_VERSION);
	snprintf(info->device_version, sizeof(info->device_version), "%d.%d.%d",
		 ver->version_major, ver->version_minor, ver->version_patchlevel);
	snprintf(info->driver_version, sizeof(info->driver_version), "vnpu %d.%d.%d, uAPI %llu",
		 ver->version_major, ver->version_minor, ver->version_patchlevel,
		 (unsigned long long)uapi);
	snprintf(info->capabilities, sizeof(info->capabilities),
		 "FP32 FP16 BF16 INT8 INT32 INT64 EXPORT_IMPORT%s%s%s%s%s",
		 dev->caps & DRM_VNPU_CAP_PROFILING ? " PROFILING" : "",
		 dev->caps & DRM_VNPU_CAP_CANCEL ? " CANCEL" : "",
		 features & VNPU_ENG_F_AVX2_FMA ? " AVX2_FMA" : "",
		 features & VNPU_ENG_F_AVX512_BF16 ? " AVX512_BF16" : "",
		 features & VNPU_ENG_F_AVX512_FP16 ? " AVX512_FP16" : "");
	snprintf(info->device_id, sizeof(info->device_id), "%llu", (unsigned long long)index);
	info->uapi_version = (uint32_t)uapi << 16;
	info->tiles = (uint32_t)tiles;
	info->max_requests = 16;
	info->optimal_requests = 2;
	/* The device computes no f64: such nodes fall back to the CPU. */
	info->dtypes = ~(UINT64_C(1) << 11);
	return 0;
}

/* The DRM major version of the driver this library speaks (vnpu_drv.c). */
#define NPU_DRIVER_MAJOR 1

/* Keep the first reason a vnpu node was not taken (the most telling). */
static void note_absent(struct npu_plugin *np, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note_absent(struct npu_plugin *np, const char *fmt, ...)
{
	va_list ap;

	if (np->absent[0])
		return;
	va_start(ap, fmt);
	vsnprintf(np->absent, sizeof(np->absent), fmt, ap);
	va_end(ap);
}

/* Whether sysfs says render node @node (/dev/dri/renderD<N>) is vnpu's. */
static bool node_is_vnpu(const char *node)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *name = strrchr(node, '/');
	ssize_t len;

	snprintf(link, sizeof(link), "/sys/class/drm/%s/device/driver", name ? name + 1 : node);
	len = readlink(link, target, sizeof(target) - 1);
	if (len <= 0)
		return false;
	target[len] = '\0';
	name = strrchr(target, '/');
	return !strcmp(name ? name + 1 : target, "vnpu");
}

/* Why @node, vnpu's, cannot be opened: for the "no device" message. */
static void note_open_failure(struct npu_plugin *np, const char *node, int err)
{
	struct group *gr;
	struct stat st;

	if (err != EACCES && err != EPERM) {
		note_absent(np, "cannot open %s, the vnpu render node: %s", node, strerror(err));
		return;
	}
	if (stat(node, &st)) {
		note_absent(np, "no permission to open %s, the vnpu render node", node);
		return;
	}
	gr = getgrgid(st.st_gid);
	note_absent(np,
		    "no permission to open %s, the vnpu render node (mode %04o, group %s): add the user to that group (sudo adduser $USER render with vnpu's udev rule) and log in again",
		    node, (unsigned int)(st.st_mode & 07777), gr ? gr->gr_name : "?");
}

/* Open @node if it is a vnpu render node; say why not when it is one. */
static struct vnpu_dev *dev_open(struct npu_plugin *np, const char *node)
{
	struct vnpu_dev *dev;
	drmVersion *ver;
	int fd = open(node, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		if (node_is_vnpu(node))
			note_open_failure(np, node, errno);
		return NULL;
	}
	ver = drmGetVersion(fd);
	if (!ver || strcmp(ver->name, "vnpu")) {
		drmFreeVersion(ver);
		close(fd);
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev && ver->version_major != NPU_DRIVER_MAJOR) {
		note_absent(np, "%s: the vnpu driver is version %d.%d.%d, this libvnpu speaks %d.x (uAPI %d): install the module and the library of one release",
			    node, ver->version_major, ver->version_minor, ver->version_patchlevel,
			    NPU_DRIVER_MAJOR, DRM_VNPU_UAPI_VERSION);
		free(dev);
		dev = NULL;
	} else if (dev && cmd_set_version(fd) != VNPU_CMD_SET_VERSION) {
		note_absent(np, "%s: the vnpu driver takes command set %llu, this libvnpu writes %d: install the module and the library of one release",
			    node, (unsigned long long)cmd_set_version(fd), VNPU_CMD_SET_VERSION);
		free(dev);
		dev = NULL;
	} else if (dev) {
		dev->fd = fd;
		pthread_mutex_init(&dev->import_lock, NULL);
		completion_init(&dev->completion, npu_wait_end, NULL, NULL);
		snprintf(dev->node, sizeof(dev->node), "%s", node);
		if (fill_info(dev, node, ver)) {
			note_absent(np, "%s: the vnpu driver (%d.%d.%d) does not answer this libvnpu's GET_PARAM queries (uAPI %d): install the module and the library of one release",
				    node, ver->version_major, ver->version_minor,
				    ver->version_patchlevel, DRM_VNPU_UAPI_VERSION);
			host->log(VNPU_LOG_WARNING, "NPU: %s", np->absent);
			completion_fini(&dev->completion);
			pthread_mutex_destroy(&dev->import_lock);
			free(dev);
			dev = NULL;
		}
	}
	drmFreeVersion(ver);
	if (!dev)
		close(fd);
	return dev;
}

static int by_index(const void *a, const void *b)
{
	const struct vnpu_dev *x = *(struct vnpu_dev *const *)a;
	const struct vnpu_dev *y = *(struct vnpu_dev *const *)b;

	return atoi(x->info.device_id) - atoi(y->info.device_id);
}

NPU_VISIBLE vnpu_status vnpu_plugin_create(const struct vnpu_host *h,
					   struct vnpu_plugin **out);

/* Open @node once: skip it when a device of the plugin already has it. */
static void add_node(struct npu_plugin *np, const char *node)
{
	struct vnpu_dev *dev;
	uint32_t i;

	for (i = 0; i < np->plugin.num_devices; i++) {
		if (!strcmp(np->devices[i]->node, node))
			return;
	}
	if (np->plugin.num_devices >= NPU_MAX_DEVICES)
		return;
	dev = dev_open(np, node);
	if (dev)
		np->devices[np->plugin.num_devices++] = dev;
}

/*
 * The render nodes drmGetDevices2() lists, then every render node: libdrm
 * takes platform devices without a device-tree node for one and the same
 * device (their bus info compares equal), so it lists only one of them.
 */
static void find_devices(struct npu_plugin *np)
{
	drmDevicePtr devices[64];
	char node[64];
	int n, i;

	n = drmGetDevices2(0, devices, 64);
	for (i = 0; i < n; i++) {
		if (devices[i]->available_nodes & (1 << DRM_NODE_RENDER))
			add_node(np, devices[i]->nodes[DRM_NODE_RENDER]);
	}
	if (n > 0)
		drmFreeDevices(devices, n);
	for (i = 0; i < 64; i++) {
		snprintf(node, sizeof(node), DRM_RENDER_DEV_NAME, DRM_DIR_NAME, 128 + i);
		if (access(node, F_OK) == 0)
			add_node(np, node);
	}
	/* No device: the module not loaded says more than any node. */
	if (np->plugin.num_devices)
		return;
	if (access("/sys/module/vnpu", F_OK)) {
		snprintf(np->absent, sizeof(np->absent),
			 "the vnpu module is not loaded (/sys/module/vnpu is absent: sudo modprobe vnpu)");
	} else {
		note_absent(np, "the vnpu module is loaded but %s has no render node of it",
			    DRM_DIR_NAME);
	}
	np->plugin.absent_reason = np->absent;
}

NPU_VISIBLE vnpu_status vnpu_plugin_create(const struct vnpu_host *h,
					   struct vnpu_plugin **out)
{
	struct npu_plugin *np;

	if (!h || h->abi_version != VNPU_PLUGIN_ABI_VERSION)
		return VNPU_WRONG_VERSION;
	host = h;
	np = calloc(1, sizeof(*np));
	if (!np)
		return host->error(VNPU_OUT_OF_MEMORY, "NPU: out of memory");
	find_devices(np);
	qsort(np->devices, np->plugin.num_devices, sizeof(np->devices[0]), by_index);
	np->plugin.ops = &npu_ops;
	np->plugin.type = "NPU";
	np->plugin.devices = np->devices;
	*out = &np->plugin;
	return VNPU_OK;
}
