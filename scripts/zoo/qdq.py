# SPDX-License-Identifier: MIT
"""QDQ versions of zoo models, as ONNX Runtime's static quantizer writes them
(QuantFormat.QDQ): u8 activations with asymmetric per-tensor parameters
from min-max calibration, s8 weights symmetric per output channel, i32
biases at scale x_scale * w_scale. The Convolutions' inputs and outputs are
quantized (an output after the Relu that follows it alone, so that the Relu
folds into the saturation); MaxPool of a quantized tensor keeps its
parameters; everything else (Add, pooling to the classifier, Gemm, the
activations of MobileNetV3) stays f32 between a DequantizeLinear and the
next QuantizeLinear. BatchNormalization after a Conv is folded into it
first, as the quantizer's preprocessing does.

Calibration runs the f32 model on ONNX Runtime (scripts/zoo/ort.js) with
every tensor to quantize as an extra output, on a few random inputs from a
fixed seed. This is not vnpu-quantize: a fixed recipe to make test models.
"""
import json
import os
import subprocess
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_JS = os.path.join(HERE, "ort.js")


def _inits(model):
    return {i.name: i for i in model.graph.initializer}


def _replace(field, items):
    """Sets a repeated message field to copies of @items (elements still
    in it are not safe to keep across its deletion)."""
    copies = []
    for x in items:
        c = type(x)()
        c.CopyFrom(x)
        copies.append(c)
    del field[:]
    field.extend(copies)


def _consumers(nodes, name):
    return [n for n in nodes if name in n.input]


def fold_batchnorm(model):
    """Conv -> BatchNormalization (the Conv's output read by it alone) as one
    Conv with scaled weights and a bias."""
    g = model.graph
    inits = _inits(model)
    drop = set()
    for bn in [n for n in g.node if n.op_type == "BatchNormalization"]:
        conv = next((n for n in g.node if bn.input[0] in n.output and n.op_type == "Conv"), None)
        if conv is None or len(_consumers(g.node, conv.output[0])) != 1:
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (numpy_helper.to_array(inits[x]).astype(np.float64)
                                  for x in bn.input[1:5])
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float64)
        b = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) \
            if len(conv.input) > 2 else np.zeros(w.shape[0])
        f = gamma / np.sqrt(var + eps)
        w = (w * f[:, None, None, None]).astype(np.float32)
        b = ((b - mean) * f + beta).astype(np.float32)
        inits[conv.input[1]].CopyFrom(numpy_helper.from_array(w, conv.input[1]))
        bname = conv.output[0] + ".bias"
        g.initializer.append(numpy_helper.from_array(b, bname))
        if len(conv.input) > 2:
            conv.input[2] = bname
        else:
            conv.input.append(bname)
        conv.output[0] = bn.output[0]
        drop.add(bn.name)
    _replace(g.node, [n for n in g.node if n.name not in drop])
    used = {x for n in g.node for x in n.input}
    _replace(g.initializer, [i for i in g.initializer if i.name in used])


def quantized_tensors(model):
    """Tensors to quantize: each Conv's input and output point; MaxPool
    outputs of quantized inputs (name -> the tensor whose parameters they
    share, or None)."""
    g = model.graph
    inits = _inits(model)
    out = {}
    for n in g.node:
        if n.op_type != "Conv":
            continue
        out.setdefault(n.input[0], None)
        users = _consumers(g.node, n.output[0])
        if len(users) == 1 and users[0].op_type == "Relu":
            out[users[0].output[0]] = None
        else:
            out[n.output[0]] = None
    for n in g.node:
        if n.op_type == "MaxPool" and n.input[0] in out:
            out[n.output[0]] = n.input[0]
    return {k: v for k, v in out.items() if k not in inits}


def calibrate(model, names, node_modules, inputs):
    """min and max of each tensor of @names over the runs on @inputs (one
    dict of arrays per run), from ONNX Runtime."""
    m = type(model)()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for name in names:
        if name not in have:
            m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    with tempfile.TemporaryDirectory(prefix="zoo-qdq-") as tmp:
        path = os.path.join(tmp, "calib.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        for k, feed in enumerate(inputs):
            out = os.path.join(tmp, f"out{k}")
            os.makedirs(out)
            args = ["node", ORT_JS, node_modules, "run", path, out]
            for name, a in feed.items():
                raw = os.path.join(tmp, f"{name}-{k}.bin")
                a.tofile(raw)
                args.append(f"{name}={raw}:float32:{','.join(map(str, a.shape))}")
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(out, "outputs.json")) as f:
                meta = json.load(f)
            for i, o in enumerate(meta):
                if o["name"] in lo:
                    a = np.fromfile(os.path.join(out, f"{i}.bin"), np.float32)
                    lo[o["name"]] = min(lo[o["name"]], float(a.min()))
                    hi[o["name"]] = max(hi[o["name"]], float(a.max()))
    return lo, hi


def u8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    return scale, np.uint8(zp)


def quantize(model, node_modules, samples=3, seed=7):
    """The QDQ model of @model (changed in place and returned)."""
    fold_batchnorm(model)
    g = model.graph
    inits = _inits(model)
    names = quantized_tensors(model)
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(samples):
        feed = {}
        for i in g.input:
            if i.name in inits:
                continue
            shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
            feed[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
        feeds.append(feed)
    lo, hi = calibrate(model, [n for n, same in names.items() if same is None],
                       node_modules, feeds)
    params = {}
    for n, same in names.items():
        if same is None:
            params[n] = u8_params(lo[n], hi[n])
    for n, same in names.items():
        if same is not None:
            params[n] = params[same]
    new_nodes, new_inits = [], []

    def const(name, a):
        new_inits.append(numpy_helper.from_array(a, name))
        return name

    # A quantized model output: the producer writes t_float, the DQ t.
    outs = {o.name for o in g.output}
    for t in [t for t in params if t in outs]:
        for n in g.node:
            for i, x in enumerate(n.output):
                if x == t:
                    n.output[i] = t + "_float"
            for i, x in enumerate(n.input):
                if x == t:
                    n.input[i] = t + "_float"
        params[t + "_float"] = params.pop(t)
    # Activations: Q -> DQ after the producer, every reader reads the DQ.
    renamed = {}
    for t, (scale, zp) in params.items():
        s = const(t + "_scale", np.array(scale, np.float32))
        z = const(t + "_zero_point", np.array(zp, np.uint8))
        new_nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [t + "_quantized"],
                                          name=t + "_QuantizeLinear"))
        out = t[:-len("_float")] if t.endswith("_float") and t[:-len("_float")] in outs \
            else t + "_dequantized"
        new_nodes.append(helper.make_node("DequantizeLinear", [t + "_quantized", s, z],
                                          [out], name=t + "_DequantizeLinear"))
        renamed[t] = out
    for n in g.node:
        for i, x in enumerate(n.input):
            if x in renamed:
                n.input[i] = renamed[x]
    # Weights and biases of the Convolutions.
    for n in g.node:
        if n.op_type != "Conv":
            continue
        w = numpy_helper.to_array(inits[n.input[1]])
        ws = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127.0).astype(np.float32)
        ws[ws == 0] = 1.0
        wq = np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
        base = n.input[1]
        const(base + "_quantized", wq)
        const(base + "_scale", ws)
        const(base + "_zero_point", np.zeros(w.shape[0], np.int8))
        new_nodes.append(helper.make_node(
            "DequantizeLinear", [base + "_quantized", base + "_scale", base + "_zero_point"],
            [base + "_dequantized"], name=base + "_DequantizeLinear", axis=0))
        n.input[1] = base + "_dequantized"
        if len(n.input) > 2 and n.input[2]:
            x = next(t for t, r in renamed.items() if r == n.input[0])
            bs = (params[x][0] * ws).astype(np.float32)
            b = numpy_helper.to_array(inits[n.input[2]])
            bq = np.round(b / bs).astype(np.int32)
            bb = n.input[2]
            const(bb + "_quantized", bq)
            const(bb + "_scale", bs)
            new_nodes.append(helper.make_node(
                "DequantizeLinear", [bb + "_quantized", bb + "_scale"],
                [bb + "_dequantized"], name=bb + "_DequantizeLinear", axis=0))
            n.input[2] = bb + "_dequantized"
    # Topological order: each Q/DQ right after what it reads is produced.
    order = []
    placed = {i.name for i in g.input} | {i.name for i in g.initializer} | \
        {i.name for i in new_inits}
    pending = list(new_nodes) + list(g.node)
    while pending:
        rest = []
        for n in pending:
            if all(x in placed or not x for x in n.input):
                order.append(n)
                placed.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise ValueError("qdq: the graph has a cycle")
        pending = rest
    _replace(g.node, order)
    g.initializer.extend(new_inits)
    used = {x for n in g.node for x in n.input}
    _replace(g.initializer, [i for i in g.initializer if i.name in used])
    model.doc_string += "; QDQ (u8 activations, s8 per-channel weights)"
    return model
