/* SPDX-License-Identifier: MIT */
/*
 * libvnpu, the vnpu runtime: read ONNX models, compile them for the CPU or
 * the vnpu NPU and run them. Include this one header.
 *
 *   vnpu_core_create -> vnpu_core_read_model -> vnpu_core_compile_model
 *   -> vnpu_compiled_model_create_infer_request -> get/set tensors
 *   -> vnpu_infer_request_infer
 *
 * See Documentation/vnpu/runtime.rst for ownership, threading and the
 * properties.
 */
#ifndef VNPU_H
#define VNPU_H

#include <vnpu/vnpu_common.h>
#include <vnpu/vnpu_tensor.h>
#include <vnpu/vnpu_core.h>
#include <vnpu/vnpu_model.h>
#include <vnpu/vnpu_compiled_model.h>
#include <vnpu/vnpu_infer_request.h>
#include <vnpu/vnpu_remote.h>

#endif /* VNPU_H */
