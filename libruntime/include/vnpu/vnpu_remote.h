/* SPDX-License-Identifier: MIT */
/*
 * libvnpu: remote tensors, memory a device reads and writes in place
 * (OpenVINO's RemoteTensor). A remote tensor is a vnpu_tensor like any
 * other; set on an infer request of a model compiled for its device, with
 * the port's element type, it becomes the port's device buffer: no upload
 * before the run, no download after. Set on another device's request, or
 * of another type, it is read and written like host memory (a copy).
 *
 * Two sources:
 *   - the caller's memory (vnpu_core_create_remote_tensor): on the NPU a
 *     userptr buffer (its pages pinned while the tensor lives), on the
 *     CPU the memory itself;
 *   - a dma-buf (vnpu_core_import_dmabuf_tensor) of vgem, udmabuf,
 *     another vnpu device or any exporter of CPU-mappable memory.
 *
 * Fences: a device tensor of a device with explicit fences (the NPU)
 * carries an in-fence, which the next request started with it waits for
 * on the device (no thread of the process waits), and an out-fence,
 * which signals when the device has finished the last request started
 * with it as an output. So a producer (a camera, a decoder, another
 * device) and a consumer (a display, an encoder) chain with the NPU
 * without the CPU waiting in between. A fence is a sync_file or a DRM
 * syncobj fd (vnpu_fence_kind); the tensor keeps its own copy, the caller
 * keeps its fd.
 *
 * Ownership and thread safety: as every tensor (vnpu_tensor.h). The
 * caller keeps owning its memory and its dma-buf fd.
 */
#ifndef VNPU_REMOTE_H
#define VNPU_REMOTE_H

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_core.h>
#include <vnpu/vnpu_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A tensor over the caller's @data that @device reads and writes in place.
 * The caller keeps @data mapped, and does not touch it while a request
 * using the tensor runs, until the tensor is freed.
 *
 * The NPU takes @data when it is aligned to the page (posix_memalign,
 * mmap) and its driver has BO_USERPTR; the page's bytes past the tensor
 * are pinned with it but never written. Otherwise, and on devices without
 * remote memory, the result is a host tensor over @data that requests
 * copy to and from their own buffers (the fallback): see
 * vnpu_tensor_get_device(). The CPU takes any @data aligned to its
 * elements.
 */
VNPU_API vnpu_status vnpu_core_create_remote_tensor(vnpu_core *core, const char *device,
						    vnpu_element_type type,
						    const vnpu_shape *shape, void *data,
						    vnpu_tensor **out);

/**
 * A tensor over the dma-buf @fd, at least the tensor's byte size, which
 * @device reads and writes in place; the data is mapped into the process
 * too (vnpu_tensor_get_data). The caller keeps @fd (the tensor holds its
 * own reference to the dma-buf). A dma-buf imported twice gives two
 * tensors over the same memory. The CPU has no dma-buf import:
 * VNPU_UNSUPPORTED.
 */
VNPU_API vnpu_status vnpu_core_import_dmabuf_tensor(vnpu_core *core, const char *device,
						    vnpu_element_type type,
						    const vnpu_shape *shape, int fd,
						    vnpu_tensor **out);

/* vnpu_fence_kind (vnpu_common.h): what a fence fd is. */

/**
 * The next request started with @tensor (input or output, bound as its
 * port's buffer) waits on the device until the fence of @fd signals: a
 * sync_file, or the fence a syncobj holds now (VNPU_INVALID_ARGUMENT when
 * it holds none, or @fd is not of @kind). Replaces an in-fence not used
 * yet; the request that uses it drops it. A request that would copy the
 * tensor instead of binding it (another device, another element type)
 * fails to start with VNPU_INVALID_ARGUMENT. VNPU_UNSUPPORTED for host
 * tensors and devices without fences (the CPU).
 */
VNPU_API vnpu_status vnpu_tensor_set_in_fence(vnpu_tensor *tensor, vnpu_fence_kind kind, int fd);

/**
 * A new fd of @kind (the caller closes it) for the fence that signals
 * when the device has ended the last request started with @tensor set
 * (vnpu_infer_request_set_tensor) as an output and bound as its buffer; a
 * request's own tensors carry none. Right after start_async the call
 * waits for that request to reach the device (its submit, not its end). A request that failed
 * before reaching the device leaves the previous fence. VNPU_NOT_FOUND
 * when no request has written the tensor yet; VNPU_UNSUPPORTED as for
 * vnpu_tensor_set_in_fence().
 */
VNPU_API vnpu_status vnpu_tensor_export_out_fence(vnpu_tensor *tensor, vnpu_fence_kind kind,
						  int *out);

/**
 * The device whose memory @tensor is ("NPU.0", "CPU"), or NULL for host
 * memory, which requests copy. The name lives as long as the tensor.
 */
VNPU_API vnpu_status vnpu_tensor_get_device(const vnpu_tensor *tensor, const char **out);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_REMOTE_H */
