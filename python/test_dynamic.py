#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A text recognizer of dynamic width (a small CRNN: convolutions pool a
32-pixel-high line to one row, a bidirectional LSTM reads its columns, a
per-step classifier with Softmax) compiled once and run at two widths on
one request, each width's program compiled on first use.

  test_dynamic.py DEVICE NODE_MODULES

Widths the model refuses (0: a window larger than the input; 200000:
an LSTM of more steps than are unrolled) fail their run with the
compile's status and message, and the model runs on after. On the CPU the outputs are compared with ONNX Runtime (node and
onnxruntime-node from NODE_MODULES); on another device with the CPU's
(ONNX Runtime does not run in the VM). Exit 0 on success, 1 on a
mismatch.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import vnpu

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_JS = os.path.join(TOP, "scripts/zoo/ort.js")
WIDTHS = (64, 100)
CLASSES, HIDDEN = 11, 12
TOL = 1e-4


def crnn():
    rng = np.random.default_rng(32)
    inits, nodes = [], []

    def param(name, shape, scale):
        inits.append(numpy_helper.from_array(
            rng.uniform(-scale, scale, shape).astype(np.float32), name))
        return name

    def const(name, values):
        inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    y, cin = "image", 1
    for i, (cout, pool) in enumerate([(8, (2, 2)), (16, (2, 1)), (16, (8, 1))]):
        w = param(f"conv{i}.weight", (cout, cin, 3, 3), 1.0 / np.sqrt(9 * cin))
        b = param(f"conv{i}.bias", (cout,), 0.1)
        y = node("Conv", [y, w, b], f"conv{i}", pads=[1, 1, 1, 1], kernel_shape=[3, 3])
        y = node("Relu", [y], f"relu{i}")
        y = node("MaxPool", [y], f"pool{i}", kernel_shape=list(pool), strides=list(pool))
        cin = cout
    y = node("Squeeze", [y, const("h_axis", [2])], "squeeze")
    y = node("Transpose", [y], "steps", perm=[2, 0, 1])
    s = 1.0 / np.sqrt(HIDDEN)
    lstm = helper.make_node(
        "LSTM", [y, param("lstm.w", (2, 4 * HIDDEN, cin), s),
                 param("lstm.r", (2, 4 * HIDDEN, HIDDEN), s),
                 param("lstm.b", (2, 8 * HIDDEN), s)],
        ["lstm"], name="lstm", direction="bidirectional", hidden_size=HIDDEN)
    nodes.append(lstm)
    y = node("Transpose", ["lstm"], "lstm_t", perm=[0, 2, 1, 3])
    y = node("Reshape", [y, const("merge", [0, 0, -1])], "merged")
    y = node("Transpose", [y], "batch_first", perm=[1, 0, 2])
    y = node("MatMul", [y, param("fc.weight", (2 * HIDDEN, CLASSES), 2.0)], "logits")
    y = node("Add", [y, param("fc.bias", (CLASSES,), 0.5)], "biased")
    node("Softmax", [y], "probs", axis=2)
    graph = helper.make_graph(
        nodes, "crnn_dynamic",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 32, "width"])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, "steps", CLASSES])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def ort_run(node_modules, path, image, tmp):
    raw = os.path.join(tmp, "image.bin")
    image.tofile(raw)
    out = tempfile.mkdtemp(dir=tmp)
    shape = ",".join(map(str, image.shape))
    r = subprocess.run(["node", ORT_JS, node_modules, "run", path, out,
                        f"image={raw}:float32:{shape}"], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("ONNX Runtime: " + r.stderr.strip()[-400:])
    with open(os.path.join(out, "outputs.json")) as f:
        meta = json.load(f)[0]
    return np.fromfile(os.path.join(out, "0.bin"), np.float32).reshape(meta["dims"])


def main():
    device, node_modules = sys.argv[1], sys.argv[2]
    core = vnpu.Core()
    if device not in core.available_devices:
        print(f"{device}: not present, skipped")
        return 77
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "crnn.onnx")
        onnx.save(crnn(), path)
        model = core.read_model(path)
        compiled = core.compile_model(model, device, {"ENABLE_PROFILING": "YES"})
        reference = None if device == "CPU" else core.compile_model(model, "CPU")
        port = compiled.inputs[0]
        assert port.shape == (1, 1, 32, -1), port
        request = compiled.create_infer_request()
        rng = np.random.default_rng(7)
        for rnd in range(2):
            for width in WIDTHS:
                image = rng.uniform(0, 1, (1, 1, 32, width)).astype(np.float32)
                got = request.infer({"image": image})["probs"]
                stage = [e for e in request.get_profiling_info() if e["name"] == "compile"]
                if reference is None:
                    want = ort_run(node_modules, path, image, tmp)
                else:
                    want = reference({"image": image})["probs"]
                err = float(np.max(np.abs(got - want))) if got.shape == want.shape else None
                ok = err is not None and err <= TOL and stage[0]["executed"] == (rnd == 0)
                print(f"width {width} round {rnd}: probs {list(got.shape)}, "
                      f"max |diff| {err}, compiled now {stage[0]['executed']} "
                      f"({stage[0]['real_time_ns'] / 1e6:.1f} ms) {'ok' if ok else 'FAIL'}")
                failed += not ok
        # Widths the model refuses fail their run, named; the rest still runs.
        for width, status, says in ((0, "INVALID_ARGUMENT", "window larger"),
                                    (200000, "UNSUPPORTED", "at most 65536 are unrolled")):
            try:
                request.infer({"image": np.zeros((1, 1, 32, width), np.float32)})
                print(f"width {width}: ran, want {status}")
                failed += 1
            except vnpu.Error as e:
                ok = e.status == status and f"compiling for image=[1,1,32,{width}]" in str(e) \
                    and says in str(e)
                print(f"width {width}: {e.status} {'ok' if ok else 'FAIL: ' + str(e)}")
                failed += not ok
        image = rng.uniform(0, 1, (1, 1, 32, WIDTHS[0])).astype(np.float32)
        want = request.infer({"image": image})["probs"]
        failed += not np.array_equal(want, compiled.create_infer_request().infer(
            {"image": image})["probs"])
        compiles = compiled.get_property("DYNAMIC_SHAPE_COMPILES")
        if compiles != len(WIDTHS):
            print(f"DYNAMIC_SHAPE_COMPILES is {compiles}, want {len(WIDTHS)}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
