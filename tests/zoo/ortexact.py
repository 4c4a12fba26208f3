# SPDX-License-Identifier: MIT
"""ONNX Runtime as an exact int8 reference, for tests/zoo/zoo-check and
tools/vnpu-quantize/test-quantize.py.

On a CPU without VNNI (neither avx512_vnni nor avx_vnni in /proc/cpuinfo),
ONNX Runtime multiplies u8 activations by s8 weights with vpmaddubsw, whose
16-bit sums of two products saturate at 32767: its output is then not the
model's integer arithmetic (0.24 of the output's magnitude off on the zoo's
convnet_qdq, 0.011 on resnet50_qdq). The same model with each s8 weight of a
DequantizeLinear written as u8 (w + 128, zero point + 128) holds the same
values, and ONNX Runtime multiplies u8 by u8 exactly (16-bit operands,
32-bit sums): that form is the reference there.
"""


def exact_int8_ort():
    """Whether ONNX Runtime's u8 x s8 products are exact here (VNNI)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def u8_weights(path, out):
    """@path with each s8 initializer of a DequantizeLinear as u8 (w + 128,
    zero point + 128) into @out; False when it has none."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    done = 0
    for node in m.graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in inits:
            continue
        w = numpy_helper.to_array(inits[node.input[0]])
        if w.dtype != np.int8:
            continue
        zp = np.zeros((), np.int8)
        if len(node.input) > 2 and node.input[2]:
            zp = numpy_helper.to_array(inits[node.input[2]])
        names = (f"{node.input[0]}.u8", f"{node.output[0]}.zero_point.u8")
        for name, a in zip(names, (w, zp)):
            u = (a.astype(np.int16) + 128).astype(np.uint8)
            m.graph.initializer.append(numpy_helper.from_array(u, name))
        if len(node.input) < 2:
            raise ValueError(f"{node.name}: a DequantizeLinear without a scale")
        node.input[0] = names[0]
        del node.input[2:]
        node.input.append(names[1])
        done += 1
    if done:
        onnx.save(m, out)
    return bool(done)
