// SPDX-License-Identifier: MIT
/* vgem buffers as dma-bufs (vgem.h), through libdrm. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <xf86drm.h>

#include "vgem.h"

#define VGEM_PAGE 4096u

/* vgem's fence ioctls (the kernel's uapi/drm/vgem_drm.h, not in libdrm). */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE 0x1
#define VGEM_IOCTL_FENCE_ATTACH DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define VGEM_IOCTL_FENCE_SIGNAL DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

int drm_node_open(const char *driver, const char *prefix, int first_minor)
{
	char path[40];

	for (int minor = first_minor; minor < first_minor + 64; minor++) {
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/%s%d", prefix, minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, driver)) {
			drmFreeVersion(v);
			return fd;
		}
		drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

int vgem_open(void)
{
	int fd = drm_node_open("vgem", "card", 0);

	if (fd < 0 && system("modprobe vgem 2>/dev/null") == 0)
		fd = drm_node_open("vgem", "card", 0);
	return fd;
}

int vgem_dmabuf(int vgem, uint64_t bytes)
{
	uint64_t pages = bytes ? (bytes + VGEM_PAGE - 1) / VGEM_PAGE : 1;
	struct drm_mode_create_dumb d = { .height = 1, .bpp = 32 };
	int fd;

	/* A dumb buffer is width x height pixels: one row of 4-byte pixels. */
	if (pages > UINT32_MAX / (VGEM_PAGE / 4))
		return -1;
	d.width = (uint32_t)(pages * (VGEM_PAGE / 4));
	if (drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &d) ||
	    drmPrimeHandleToFD(vgem, d.handle, DRM_CLOEXEC | DRM_RDWR, &fd))
		return -1;
	/* The dma-buf keeps the buffer: vgem's handle is not needed. */
	drmCloseBufferHandle(vgem, d.handle);
	return fd;
}

int vgem_fence_start(int vgem, uint32_t *fence, int *sync_file)
{
	struct drm_mode_create_dumb d = { .width = VGEM_PAGE / 4, .height = 1, .bpp = 32 };
	struct vgem_fence_attach fa = { .flags = VGEM_FENCE_WRITE };
	struct dma_buf_export_sync_file ex = { .flags = DMA_BUF_SYNC_RW, .fd = -1 };
	int dmabuf = -1, ret = -1;

	if (drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &d))
		return -1;
	fa.handle = d.handle;
	if (!drmPrimeHandleToFD(vgem, d.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf) &&
	    !drmIoctl(vgem, VGEM_IOCTL_FENCE_ATTACH, &fa) &&
	    !drmIoctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex)) {
		*fence = fa.out_fence;
		*sync_file = ex.fd;
		ret = 0;
	}
	if (dmabuf >= 0)
		close(dmabuf);
	drmCloseBufferHandle(vgem, d.handle);
	return ret;
}

int vgem_fence_signal(int vgem, uint32_t fence)
{
	struct vgem_fence_signal fs = { .fence = fence };

	return drmIoctl(vgem, VGEM_IOCTL_FENCE_SIGNAL, &fs);
}
