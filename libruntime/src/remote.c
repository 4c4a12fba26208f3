// SPDX-License-Identifier: MIT
/*
 * Remote tensors: the caller's memory or a dma-buf as a device buffer
 * (vnpu_remote.h). The devices do the work (plugin ops buf_wrap and
 * buf_import); this file picks the device, and falls back to a host
 * tensor over the caller's memory when the device cannot take it. A
 * device tensor's fences are sync_file fds (the device converts syncobjs
 * with fence_import and fence_export); infer_request.c hands them to the
 * device at submit.
 */
#include <stdint.h>
#include <unistd.h>

#include "runtime.h"

static vnpu_status make_wrapped_buf(struct vnpu_core_device *device, uint64_t bytes,
				    void *ctx, struct vnpu_buf **out)
{
	return device->plugin->ops->buf_wrap(device->dev, ctx, bytes, out);
}

static vnpu_status make_imported_buf(struct vnpu_core_device *device, uint64_t bytes,
				     void *ctx, struct vnpu_buf **out)
{
	return device->plugin->ops->buf_import(device->dev, *(int *)ctx, bytes, out);
}

static vnpu_status find_device(vnpu_core *core, const char *name, const char *fn,
			       struct vnpu_core_device **out)
{
	if (!core || !name)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	*out = vnpu_core_find_device(core, name);
	return *out ? VNPU_OK : VNPU_NOT_FOUND;
}

VNPU_API vnpu_status vnpu_core_create_remote_tensor(vnpu_core *core, const char *device,
						    vnpu_element_type type,
						    const vnpu_shape *shape, void *data,
						    vnpu_tensor **out)
{
	static const char fn[] = "vnpu_core_create_remote_tensor";
	struct vnpu_core_device *d = NULL;
	vnpu_status st;

	if (!data || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	st = find_device(core, device, fn, &d);
	if (st != VNPU_OK)
		return st;
	/* The host tensor checks the type, shape and alignment first. */
	st = vnpu_tensor_create_from_ptr(type, shape, data, out);
	if (st != VNPU_OK || !d->plugin->ops->buf_wrap)
		return st;
	vnpu_tensor_free(*out);
	st = vnpu_tensor_new_buf(core, d, type, shape, make_wrapped_buf, data, out);
	if (st != VNPU_UNSUPPORTED)
		return st;
	vnpu_log(VNPU_LOG_INFO, "%s: %s; requests will copy the tensor", fn, vnpu_last_error());
	return vnpu_tensor_create_from_ptr(type, shape, data, out);
}

VNPU_API vnpu_status vnpu_core_import_dmabuf_tensor(vnpu_core *core, const char *device,
						    vnpu_element_type type,
						    const vnpu_shape *shape, int fd,
						    vnpu_tensor **out)
{
	static const char fn[] = "vnpu_core_import_dmabuf_tensor";
	struct vnpu_core_device *d = NULL;
	vnpu_status st;

	if (!out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	if (fd < 0)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: fd %d is not a file", fn, fd);
	st = find_device(core, device, fn, &d);
	if (st != VNPU_OK)
		return st;
	if (!d->plugin->ops->buf_import)
		return vnpu_error(VNPU_UNSUPPORTED, "%s: %s cannot import a dma-buf", fn,
				  d->info.name);
	return vnpu_tensor_new_buf(core, d, type, shape, make_imported_buf, &fd, out);
}

VNPU_API vnpu_status vnpu_tensor_get_device(const vnpu_tensor *t, const char **out)
{
	if (!t || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "vnpu_tensor_get_device: NULL argument");
	*out = t->buf ? t->device->info.name : NULL;
	return VNPU_OK;
}

static vnpu_status tensor_fences(vnpu_tensor *t, vnpu_fence_kind kind, const char *fn,
				 struct vnpu_tensor_fences **out)
{
	if (kind != VNPU_FENCE_SYNC_FILE && kind != VNPU_FENCE_SYNCOBJ)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: unknown fence kind %d", fn,
				  (int)kind);
	if (!t->fences)
		return vnpu_error(VNPU_UNSUPPORTED, "%s: %s has no fences", fn,
				  t->buf ? t->device->info.name : "a host tensor");
	*out = t->fences;
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_set_in_fence(vnpu_tensor *t, vnpu_fence_kind kind, int fd)
{
	static const char fn[] = "vnpu_tensor_set_in_fence";
	struct vnpu_tensor_fences *f = NULL;
	vnpu_status st;
	int sync_file;

	if (!t)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	st = tensor_fences(t, kind, fn, &f);
	if (st != VNPU_OK)
		return st;
	if (fd < 0)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: fd %d is not a file", fn, fd);
	st = t->device->plugin->ops->fence_import(t->device->dev, kind, fd, &sync_file);
	if (st != VNPU_OK)
		return vnpu_error_prefix(st, "%s", fn);
	pthread_mutex_lock(&f->lock);
	if (f->in_fd >= 0)
		close(f->in_fd);
	f->in_fd = sync_file;
	pthread_mutex_unlock(&f->lock);
	return VNPU_OK;
}

VNPU_API vnpu_status vnpu_tensor_export_out_fence(vnpu_tensor *t, vnpu_fence_kind kind, int *out)
{
	static const char fn[] = "vnpu_tensor_export_out_fence";
	struct vnpu_tensor_fences *f = NULL;
	vnpu_status st;

	if (!t || !out)
		return vnpu_error(VNPU_INVALID_ARGUMENT, "%s: NULL argument", fn);
	st = tensor_fences(t, kind, fn, &f);
	if (st != VNPU_OK)
		return st;
	pthread_mutex_lock(&f->lock);
	while (f->pending)
		pthread_cond_wait(&f->submitted, &f->lock);
	if (f->out_fd < 0)
		st = vnpu_error(VNPU_NOT_FOUND, "%s: no request has written the tensor yet", fn);
	else
		st = t->device->plugin->ops->fence_export(t->device->dev, kind, f->out_fd, out);
	pthread_mutex_unlock(&f->lock);
	return st;
}
