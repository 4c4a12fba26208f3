#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Python package on one device (exit 77 when it is absent): devices,
properties, read and compile (path and bytes), sync inference against
numpy, dtype conversion, zero-copy tensors, async with callbacks on several
requests, profiling, export and import, and the errors of bad use.

    test_vnpu.py DEVICE
"""
import sys
import threading

import numpy as np

import vnpu
from vnpu_check import check, finish, raises

NODE = "/usr/share/libonnx-testdata/data/node"
RELU = f"{NODE}/test_relu/model.onnx"
ADD = f"{NODE}/test_add/model.onnx"
device = sys.argv[1]
core = vnpu.Core()
if device not in core.available_devices:
    print(f"skip: no {device} in {core.available_devices}")
    sys.exit(77)

# Properties: typed values, set and read back, bad keys and values.
check(isinstance(core.get_property("VERSION"), str), "VERSION is a string")
check(core.get_property("VERSION") == vnpu.version(), "VERSION is vnpu.version()")
check(device in core.get_property("AVAILABLE_DEVICES"), "AVAILABLE_DEVICES")
check(isinstance(core.get_property("ENABLE_PROFILING", device), bool), "a bool property")
r = core.get_property("RANGE_FOR_ASYNC_INFER_REQUESTS", device)
check(isinstance(r, tuple) and len(r) == 3, "a range property")
core.set_property("PERFORMANCE_HINT", "THROUGHPUT", device)
check(core.get_property("PERFORMANCE_HINT", device) == "THROUGHPUT", "set a property")
core.set_property("PERFORMANCE_HINT", "LATENCY", device)
raises("NOT_FOUND", lambda: core.get_property("NO_SUCH_KEY", device), "unknown key")
raises("INVALID_ARGUMENT", lambda: core.set_property("PERFORMANCE_HINT", "FAST", device),
       "bad value")
raises("INVALID_ARGUMENT", lambda: core.set_property("VERSION", "1"), "read-only key")
raises("NOT_FOUND", lambda: core.get_property("VERSION", "GPU"), "unknown device")

# Models: ports, a bad path, bad bytes.
model = core.read_model(RELU)
check([(p.name, p.type, p.shape) for p in model.inputs] == [("x", "f32", (3, 4, 5))],
      f"relu inputs {model.inputs}")
check([p.name for p in model.outputs] == ["y"], "relu outputs")
raises("NOT_FOUND", lambda: core.read_model("/nonexistent.onnx"), "missing model")
raises("PARSE_ERROR", lambda: core.read_model(b"\x08\x07garbage"), "garbage model")
raises("NOT_FOUND", lambda: core.compile_model(model, "GPU"), "compile for no device")

# Inputs whose values decide shapes, by name and index, frozen to compile.
reshape = core.read_model(f"{NODE}/test_reshape_reduced_dims/model.onnx")
check(reshape.input_decides_shapes("shape") and reshape.input_decides_shapes(1),
      "Reshape's shape decides shapes")
check(not reshape.input_decides_shapes("data"), "Reshape's data decides nothing")
raises("NOT_FOUND", lambda: reshape.input_decides_shapes(2), "no input 2")
raises("NOT_FOUND", lambda: reshape.input_decides_shapes("nope"), "no input nope")
raises("INVALID_ARGUMENT", lambda: reshape.input_decides_shapes(-1), "a negative index")
raises("INVALID_ARGUMENT", lambda: reshape.freeze_input("shape", np.array([4, 7], np.int64)),
       "a shape of other elements")
raises("INVALID_ARGUMENT", lambda: reshape.freeze_input("shape", np.array([4, 6], np.int32)),
       "a type other than the input's")
reshape.freeze_input("shape", np.array([4, 6], np.int64))
check([p.name for p in reshape.inputs] == ["data"], "a frozen input leaves the inputs")
data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
check(np.array_equal(core.compile_model(reshape, device)({"data": data})["reshaped"],
                     data.reshape(4, 6)), "the frozen model computes")

# Sync: relu from a path, add from bytes, against numpy.
rng = np.random.default_rng(7)
x = rng.standard_normal((3, 4, 5)).astype(np.float32)
compiled = core.compile_model(RELU, device)
req = compiled.create_infer_request()
out = req.infer({"x": x})
check(list(out) == ["y"] and np.array_equal(out["y"], np.maximum(x, 0)), "relu values")
with open(ADD, "rb") as f:
    add = core.compile_model(f.read(), device)
y = rng.standard_normal((3, 4, 5)).astype(np.float32)
check(np.allclose(add({"x": x, "y": y})["sum"], x + y), "add from bytes")
# The library converts: f64 and i32 inputs into the f32 port.
check(np.allclose(req.infer({"x": x.astype(np.float64)})["y"], np.maximum(x, 0)),
      "f64 input converted")
check(np.array_equal(req.infer({"x": np.arange(60, dtype=np.int32).reshape(3, 4, 5) - 30})["y"],
                     np.maximum(np.arange(60).reshape(3, 4, 5) - 30, 0).astype(np.float32)),
      "i32 input converted")
raises("INVALID_ARGUMENT", lambda: req.infer({"x": np.zeros((3, 4), np.float32)}),
       "wrong shape")
raises("NOT_FOUND", lambda: req.infer({"nope": x}), "unknown input")
raises("INVALID_ARGUMENT", lambda: req.set_input("x", np.zeros((3, 4, 5), np.complex64)),
       "complex dtype")

# Zero-copy: write into the request's own input buffer, read its output.
zreq = compiled.create_infer_request()
tin = zreq.get_tensor("x")
check(tin.shape == (3, 4, 5) and tin.dtype == np.float32, "input tensor view")
tin[...] = x
zreq.infer()
tout = zreq.get_tensor("y")
check(np.array_equal(tout, np.maximum(x, 0)), "zero-copy output")
tin[...] = -x
zreq.infer()
check(np.array_equal(tout, np.maximum(-x, 0)), "the same views see the next run")
del zreq                       # the views keep their buffers
check(np.array_equal(tout, np.maximum(-x, 0)), "a view outlives its request")

# Async: four requests in flight, a callback each.
done, lock = [], threading.Lock()


def on_done(request, error):
    with lock:
        done.append((request, error))


reqs = [compiled.create_infer_request() for _ in range(4)]
for k, r in enumerate(reqs):
    r.set_callback(on_done)
    r.start_async({"x": x + k})
for k, r in enumerate(reqs):
    check(r.wait(), "wait")
    check(np.array_equal(r.outputs()["y"], np.maximum(x + k, 0)), f"async request {k}")
check(len(done) == 4 and all(e is None for _, e in done), f"callbacks {done}")
check({id(r) for r, _ in done} == {id(r) for r in reqs}, "each callback got its request")
reqs[0].set_callback(None)
reqs[0].start_async()
check(reqs[0].wait(timeout_ms=60000), "wait_for")
check(len(done) == 4, "no callback once removed")

# Profiling, export and import.
prof = core.compile_model(RELU, device, {"ENABLE_PROFILING": True})
preq = prof.create_infer_request()
preq.infer({"x": x})
info = preq.get_profiling_info()
check([e["name"] for e in info[:6]] ==
      ["preprocess", "upload", "submit", "wait", "download", "postprocess"], "stages")
check(any(e["node_type"] != "Stage" and e["executed"] for e in info), "a layer ran")
raises("UNSUPPORTED", lambda: req.get_profiling_info(), "profiling off")
blob = compiled.export()
imported = core.import_model(blob, device)
check(np.array_equal(imported({"x": x})["y"], np.maximum(x, 0)), "imported blob")
raises("PARSE_ERROR", lambda: core.import_model(blob[:40], device), "truncated blob")

finish(f"python on {device}: ok")
