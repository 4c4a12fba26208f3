/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __VNPU_DRV_H__
#define __VNPU_DRV_H__

#include <drm/drm_device.h>

#define VNPU_MAX_DEVICES 8

/**
 * struct vnpu_device - one simulated NPU
 * @drm: the DRM device, embedded; reach the vnpu_device with to_vnpu_device()
 * @index: device index, 0..num_devices-1
 */
struct vnpu_device {
	struct drm_device drm;
	int index;
};

static inline struct vnpu_device *to_vnpu_device(struct drm_device *drm)
{
	return container_of(drm, struct vnpu_device, drm);
}

#endif /* __VNPU_DRV_H__ */
