/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vnpu NN layers: the ops of %VNPU_CMD_LAYER and their attribute structs.
 * Every struct's size is a multiple of 8, every pad and flag must be zero.
 */
#ifndef _VNPU_LAYERS_H_
#define _VNPU_LAYERS_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * enum vnpu_layer_op - the layers of %VNPU_CMD_LAYER
 * @VNPU_LAYER_INVALID: never valid
 */
enum vnpu_layer_op {
	VNPU_LAYER_INVALID = 0,
};

#if defined(__cplusplus)
}
#endif

#endif /* _VNPU_LAYERS_H_ */
