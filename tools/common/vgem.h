/* SPDX-License-Identifier: MIT */
/*
 * vgem, the kernel's virtual GEM driver, as a stand-in for another device
 * (a camera, a decoder) that shares buffers as dma-bufs: vnpu-zerocopy and
 * the remote-tensor tests allocate their dma-bufs here.
 */
#ifndef VNPU_TOOLS_VGEM_H
#define VNPU_TOOLS_VGEM_H

#include <stdint.h>

/* The first node /dev/dri/<prefix><minor> of @driver from @first_minor, or -1. */
int drm_node_open(const char *driver, const char *prefix, int first_minor);

/* vgem's card node (after `modprobe vgem` when it is missing), or -1. */
int vgem_open(void);

/* A new vgem buffer of at least @bytes (whole pages) as a dma-buf fd, or -1. */
int vgem_dmabuf(int vgem, uint64_t bytes);

/*
 * A producer whose work is not done: a new vgem buffer with an unsignalled
 * write fence (vgem's id in @fence), that fence as a sync_file in
 * @sync_file. 0, or -1 with errno.
 */
int vgem_fence_start(int vgem, uint32_t *fence, int *sync_file);

/* Signal the fence @fence of vgem_fence_start(). 0, or -1 with errno. */
int vgem_fence_signal(int vgem, uint32_t fence);

#endif /* VNPU_TOOLS_VGEM_H */
