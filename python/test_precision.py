#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""INFERENCE_PRECISION_HINT on DEVICE (exit 77 when it is absent), on a
model of a Conv, a depthwise Conv, a Gemm and a MatMul with constant
weights, and a 1x1 Conv over 8 channels beside them (python3-onnx builds
it in memory):

* f32, f16 and bf16 compile and report the hint they were compiled with;
  f16 and bf16 halve WEIGHTS_SIZE (the packed weights; biases stay f32).
* Each result is the f32 computation on the weights rounded to the hint's
  type (to nearest even, the numpy reference in double; under bf16 and f16
  the depthwise Conv and the 1x1 Conv of depth 8 keep their f32 weights,
  runtime.rst: the 1x1's output is the f32 hint's, bit for bit), and where the
  device lists AVX512_BF16 under bf16 also on the inputs of the Conv, the
  Gemm and the MatMul rounded to bf16 (its vdpbf16ps kernels), where it
  lists AVX512_FP16 under f16 the AVX512-FP16 kernels' sums (inputs rounded
  to f16, runs of 16 depths summed in f16, each run added in f32; modelled
  exactly): within 2e-5 of the largest output, and at least four times
  nearer to that than to the f32 weights' result, so the hint cannot be a
  no-op.
* Documented tolerance against f32 (runtime.rst): the largest difference
  at most 2e-3 (f16) and 2e-2 (bf16) of the largest f32 output.
* The hint set on the device applies to the next compile; export and
  import keep the bits; bad values are INVALID_ARGUMENT and change nothing.
* OPTIMIZATION_CAPABILITIES lists FP32, FP16 and BF16; AVX512_BF16
  exactly when the CPU has AVX512-BF16 (/proc/cpuinfo), the kernels pay
  there (AMD family 0x19 and later, engine.rst) or VNPU_ENGINE_ISA=bf16
  asks for them, and VNPU_ENGINE_ISA does not cap the engine below them;
  AVX512_FP16 exactly when the CPU has AVX512-FP16 and VNPU_ENGINE_ISA
  does not cap the engine below it.
* With a second device (test_precision.py NPU.0 CPU): for each hint the
  two devices give the same bits.

    test_precision.py DEVICE [OTHER_DEVICE]
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import vnpu
from vnpu_check import check, finish, raises

devices = sys.argv[1:]
HINTS = ("f32", "f16", "bf16")
TOLERANCE = {"f32": 0.0, "f16": 2e-3, "bf16": 2e-2}


rng = np.random.default_rng(23)
C, M, H, W, N, O = 8, 16, 14, 14, 40, 24
weights = {
    "w1": rng.standard_normal((M, C, 3, 3)).astype(np.float32) * 0.3,
    "b1": rng.standard_normal(M).astype(np.float32) * 0.1,
    "w2": rng.standard_normal((M, 1, 3, 3)).astype(np.float32) * 0.3,
    "b2": rng.standard_normal(M).astype(np.float32) * 0.1,
    "w3": rng.standard_normal((N, M * H * W)).astype(np.float32) * 0.03,
    "b3": rng.standard_normal(N).astype(np.float32) * 0.1,
    "w4": rng.standard_normal((N, O)).astype(np.float32) * 0.2,
}
x = rng.standard_normal((1, C, H, W)).astype(np.float32)
weights["w5"] = np.random.default_rng(5).standard_normal((4, C, 1, 1)).astype(np.float32) * 0.3


def build():
    F = TensorProto.FLOAT
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["conv"], pads=[1, 1, 1, 1], group=M),
        helper.make_node("Flatten", ["conv"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w3", "b3"], ["g"], transB=1),
        helper.make_node("Relu", ["g"], ["r3"]),
        helper.make_node("MatMul", ["r3", "w4"], ["y"]),
        helper.make_node("Conv", ["x", "w5"], ["small"]),
    ]
    graph = helper.make_graph(
        nodes, "precision",
        [helper.make_tensor_value_info("x", F, [1, C, H, W])],
        [helper.make_tensor_value_info("conv", F, [1, M, H, W]),
         helper.make_tensor_value_info("y", F, [1, O]),
         helper.make_tensor_value_info("small", F, [1, 4, H, W])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def rounded(w, hint):
    """@w rounded to the hint's type to nearest even, as float64."""
    if hint == "f16":
        return w.astype(np.float16).astype(np.float64)
    if hint == "bf16":
        u = w.view(np.uint32).astype(np.uint64)
        u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000
        return u.astype(np.uint32).view(np.float32).astype(np.float64)
    return w.astype(np.float64)


def conv3x3(inp, w, b, group):
    """Conv with 3x3 kernels and pads of 1, in float64."""
    ci, h, wd = inp.shape
    m = w.shape[0]
    pad = np.zeros((ci, h + 2, wd + 2))
    pad[:, 1:-1, 1:-1] = inp
    out = np.empty((m, h, wd))
    cg, mg = ci // group, m // group
    for o in range(m):
        g = o // mg
        acc = np.full((h, wd), b[o], dtype=np.float64)
        for c in range(cg):
            for i in range(3):
                for j in range(3):
                    acc += w[o, c, i, j] * pad[g * cg + c, i:i + h, j:j + wd]
        out[o] = acc
    return out


def f16_sums(a, b):
    """A [R, K] by B [K, N], both f16 values, as the AVX512-FP16 kernels
    sum them: per depth slice (gemm_block()'s: at most 384, even sizes
    from the depth alone) runs of 16 depths from the slice's first, each
    h = fma(a, b, h) rounded once to f16 from 0 (the double sum is exact),
    then s = s + h in f32."""
    k = a.shape[1]
    step = -(-k // -(-k // 384))
    s = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for s0 in range(0, k, step):
        for r0 in range(s0, min(s0 + step, k), 16):
            h = np.zeros(s.shape, np.float16)
            for d in range(r0, min(r0 + 16, s0 + step, k)):
                h = (np.outer(a[:, d], b[d]) + h.astype(np.float64)).astype(np.float16)
            s = s + h.astype(np.float32)
    return s


def conv3x3_f16(inp, w, b):
    """conv3x3() of one group on the AVX512-FP16 kernels: depth c, i, j."""
    ci, h, wd = inp.shape
    pad = np.zeros((ci, h + 2, wd + 2))
    pad[:, 1:-1, 1:-1] = rounded(inp.astype(np.float32), "f16")
    cols = np.stack([pad[c, i:i + h, j:j + wd].reshape(-1)
                     for c in range(ci) for i in range(3) for j in range(3)])
    out = f16_sums(w.reshape(w.shape[0], -1), cols) + b.astype(np.float32)[:, None]
    return out.astype(np.float64).reshape(-1, h, wd)


def reference(hint, native=False):
    """The model in float64 on the weights rounded to @hint (biases f32);
    @native: bf16's inputs of the Conv, the Gemm and the MatMul rounded to
    bf16 too (the depthwise Conv's stay f32), f16's those layers as the
    AVX512-FP16 kernels sum them (f16_sums()). Under bf16 and f16 the
    depthwise Conv and the 1x1 Conv of depth 8 keep f32 weights (and
    inputs)."""
    w = {k: (rounded(v, hint) if k.startswith("w") and
             (k not in ("w2", "w5") or hint == "f32") else v.astype(np.float64))
         for k, v in weights.items()}
    if native and hint == "f16":
        f16 = lambda a: rounded(a.astype(np.float32), "f16")
        c1 = np.maximum(conv3x3_f16(x[0], w["w1"], w["b1"]), 0)
        conv = conv3x3(c1, w["w2"], w["b2"], M)
        g = f16_sums(f16(conv.reshape(1, -1)), w["w3"].T) + weights["b3"]
        g = np.maximum(g.astype(np.float64), 0)
        y = f16_sums(f16(g), w["w4"]).astype(np.float64)
    else:
        act = (lambda a: rounded(a.astype(np.float32), "bf16")) if native else (lambda a: a)
        c1 = np.maximum(conv3x3(act(x[0]).astype(np.float64), w["w1"], w["b1"], 1), 0)
        conv = conv3x3(c1, w["w2"], w["b2"], M)
        g = np.maximum(act(conv.reshape(1, -1)) @ w["w3"].T + w["b3"], 0)
        y = act(g) @ w["w4"]
    small = np.einsum("oc,chw->ohw", w["w5"][:, :, 0, 0], x[0].astype(np.float64))
    return {"conv": conv[None], "y": y, "small": small[None]}


def run(cm):
    out = cm({"x": x})
    return {k: np.array(out[k]) for k in ("conv", "y", "small")}


def max_rel(a, b):
    return max(float(np.max(np.abs(a[k] - b[k])) / np.max(np.abs(b[k]))) for k in a)


core = vnpu.Core()
for d in devices:
    if d not in core.available_devices:
        print(f"skip: no device {d}")
        sys.exit(77)
model = core.read_model(build())
refs = {h: reference(h) for h in HINTS}
with open("/proc/cpuinfo") as f:
    cpuinfo = f.read()
cpu_bf16 = " avx512_bf16" in cpuinfo
cpu_fp16 = " avx512_fp16" in cpuinfo
# The engine takes its bf16 kernels where they pay (vnpu_eng_bf16_pays():
# AMD family 0x19 and later) or VNPU_ENGINE_ISA=bf16 asks for them;
# base|avx2|avx512|vnni|fp16 keep it off them, base|avx2|avx512|vnni|bf16
# off its f16 ones.
field = {k.strip(): v.strip() for k, v in
         (line.split(":", 1) for line in cpuinfo.split("\n")[:30] if ":" in line)}
pays = field.get("vendor_id") == "AuthenticAMD" and int(field.get("cpu family", "0")) >= 0x19
isa = os.environ.get("VNPU_ENGINE_ISA")
cpu_bf16 = cpu_bf16 and (pays or isa == "bf16") and \
    isa not in ("base", "avx2", "avx512", "vnni", "fp16")
cpu_fp16 = cpu_fp16 and isa not in ("base", "avx2", "avx512", "vnni", "bf16")
results = {}
for dev in devices:
    caps = core.get_property("OPTIMIZATION_CAPABILITIES", dev)
    check({"FP32", "FP16", "BF16"} <= set(caps), f"{dev}: capabilities {caps}")
    native = {"bf16": "AVX512_BF16" in caps, "f16": "AVX512_FP16" in caps, "f32": False}
    check(native["bf16"] == cpu_bf16 or (not native["bf16"] and "AVX2_FMA" not in caps),
          f"{dev}: capabilities {caps}, CPU avx512_bf16 {cpu_bf16}")
    check(native["f16"] == cpu_fp16 or (not native["f16"] and "AVX2_FMA" not in caps),
          f"{dev}: capabilities {caps}, CPU avx512_fp16 {cpu_fp16}")
    size = {}
    for hint in HINTS:
        cm = core.compile_model(model, dev, {"INFERENCE_PRECISION_HINT": hint})
        check(cm.get_property("INFERENCE_PRECISION_HINT") == hint,
              f"{dev} {hint}: compiled model reports {cm.get_property('INFERENCE_PRECISION_HINT')}")
        size[hint] = cm.get_property("WEIGHTS_SIZE")
        got = run(cm)
        results[(dev, hint)] = got
        ref = reference(hint, True) if native[hint] else refs[hint]
        near = max_rel(got, ref)
        check(near <= 2e-5, f"{dev} {hint}: {near:.3g} from the {hint}-weights reference")
        if hint != "f32":
            far = max_rel(got, refs["f32"])
            check(far >= 4 * near, f"{dev} {hint}: {far:.3g} from f32 weights, {near:.3g} "
                  "from its own: were the weights rounded?")
        blob = cm.export()
        again = run(core.import_model(blob, dev))
        check(all(np.array_equal(again[k], got[k]) for k in got),
              f"{dev} {hint}: imported blob gives other bits")
    for hint in ("f16", "bf16"):
        diff = max_rel(results[(dev, hint)], results[(dev, "f32")])
        print(f"{dev} {hint}: largest difference from f32 {diff:.3g} of the largest output")
        check(diff <= TOLERANCE[hint], f"{dev} {hint}: {diff:.3g} from f32 (tolerance "
              f"{TOLERANCE[hint]})")
        check(size[hint] * 2 <= size["f32"] * 1.02 + 4096,
              f"{dev} {hint}: WEIGHTS_SIZE {size[hint]} against f32's {size['f32']}")
    for hint in ("f16", "bf16"):
        check(np.array_equal(results[(dev, hint)]["small"], results[(dev, "f32")]["small"]),
              f"{dev}: under {hint} the 1x1 Conv of depth 8 is not the f32 layer")

    # The device's hint applies to the next compile.
    core.set_property("INFERENCE_PRECISION_HINT", "bf16", dev)
    check(core.get_property("INFERENCE_PRECISION_HINT", dev) == "bf16", f"{dev}: hint not set")
    cm = core.compile_model(model, dev)
    check(cm.get_property("INFERENCE_PRECISION_HINT") == "bf16", f"{dev}: device hint unused")
    check(all(np.array_equal(v, results[(dev, "bf16")][k]) for k, v in run(cm).items()),
          f"{dev}: the device's bf16 hint gives other bits than the compile's")

    # Bad values: refused, nothing changed.
    for bad in ("f64", "int8", "fp16", "", "bf16 "):
        raises("INVALID_ARGUMENT",
               lambda: core.set_property("INFERENCE_PRECISION_HINT", bad, dev),
               f"{dev}: set hint {bad!r}", "f32, f16, bf16")
        raises("INVALID_ARGUMENT",
               lambda: core.compile_model(model, dev, {"INFERENCE_PRECISION_HINT": bad}),
               f"{dev}: compile with hint {bad!r}", "f32, f16, bf16")
    check(core.get_property("INFERENCE_PRECISION_HINT", dev) == "bf16",
          f"{dev}: a refused value changed the hint")
    core.set_property("INFERENCE_PRECISION_HINT", "f32", dev)

for hint in HINTS:
    for dev in devices[1:]:
        same = all(np.array_equal(results[(dev, hint)][k], results[(devices[0], hint)][k])
                   for k in ("conv", "y", "small"))
        check(same, f"{hint}: {devices[0]} and {dev} give other bits")

finish(f"ok: precision hints on {', '.join(devices)}")
