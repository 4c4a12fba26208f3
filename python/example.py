#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run an ONNX model on a vnpu device from Python: numpy in, numpy out.

    python3 example.py [MODEL.onnx] [DEVICE]

By default Debian's libonnx-testdata Relu model on the CPU. Its inputs get
random values; the outputs are printed with their shapes.
"""
import sys

import numpy as np

import vnpu

model = sys.argv[1] if len(sys.argv) > 1 else \
    "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx"
device = sys.argv[2] if len(sys.argv) > 2 else "CPU"

core = vnpu.Core()
print("libvnpu", vnpu.version(), "devices:", core.available_devices)
try:
    compiled = core.compile_model(model, device, {"ENABLE_PROFILING": True})
except vnpu.Error as e:        # e.g. NOT_FOUND: no device "NPU.0" (and why)
    sys.exit(f"{model} on {device}: {e}")

rng = np.random.default_rng(1)
inputs = {p.name: rng.standard_normal(p.shape).astype(p.dtype) for p in compiled.inputs}
request = compiled.create_infer_request()
outputs = request.infer(inputs)
for name, value in outputs.items():
    print(f"{name}: {value.dtype}{list(value.shape)} mean={value.mean():.4f}")
layers = [e for e in request.get_profiling_info() if e["node_type"] != "Stage"]
print(f"{len(layers)} layer(s) on {device}, "
      f"{sum(e['real_time_ns'] for e in layers) / 1e3:.1f} us")
