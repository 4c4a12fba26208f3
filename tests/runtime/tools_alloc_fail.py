#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The tools answer out of memory as they answer bad input: an exit code of
1 with a line naming the tool on stderr, never a signal or a hang.

  tools_alloc_fail.py FAILMALLOC_SO VNPU_RUN VNPU_BENCH VNPU_QUANTIZE VNPU_INFO

Each tool runs once with failmalloc.so preloaded to count its allocations
(malloc, calloc, realloc), then again with the Nth one failing, for N
from 1 to that count (an even sample of 120 where there are more). A run
with a failed allocation must end within 60 s with exit code 0 (the
failure was recovered from) or 1 with a "TOOL: ..." line on stderr.
Exit 0 when all pass, 1 otherwise.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SAMPLES = 120


def conv_model(path):
    """Conv 3x3 (4 -> 8 channels) + Relu + Gemm-like MatMul: a few layers."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 4, 3, 3)).astype(np.float32), "w")
    m = numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "m")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "m"], ["y"])]
    g = helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
                          [w, m])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def run(cmd, env, timeout=60):
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def check_tool(name, cmd, so, tmp):
    """0 when every failing allocation of @cmd ends cleanly, else 1."""
    # Symbols bound at load: a lazy binding that finds no memory ends the
    # process in ld.so with exit code 127, before any code of ours runs.
    base = dict(os.environ, LD_PRELOAD=so, LD_BIND_NOW="1")
    count = os.path.join(tmp, "count")
    r = run(cmd, dict(base, VNPU_FAIL_ALLOC_COUNT=count))
    if r is None or r.returncode:
        print("FAIL %s: the run without a failure: %s" % (name, r and r.stderr.strip()))
        return 1
    total = int(open(count).read())
    step = max(1, total // SAMPLES)
    bad = failed = 0
    for n in range(1, total + 1, step):
        r = run(cmd, dict(base, VNPU_FAIL_ALLOC=str(n)))
        if r is None:
            why = "hung (60 s)"
        elif r.returncode < 0:
            why = "killed by signal %d" % -r.returncode
        elif r.returncode == 0:
            continue
        elif r.returncode != 1:
            why = "exit code %d" % r.returncode
        elif not any(l.startswith(name + ":") for l in r.stderr.splitlines()):
            why = "no '%s:' line on stderr: %r" % (name, r.stderr[-300:])
        else:
            failed += 1
            continue
        bad += 1
        print("FAIL %s: allocation %d of %d failing: %s" % (name, n, total, why))
        if bad >= 5:
            break
    print("%s %s: %d allocations a run, %d runs with one failing, %d ended with a message"
          % ("ok" if not bad else "FAIL", name, total, len(range(1, total + 1, step)), failed))
    return 1 if bad else 0


def main():
    if len(sys.argv) != 6:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    so, vnpu_run, vnpu_bench, vnpu_quantize, vnpu_info = sys.argv[1:]
    so = os.path.abspath(so)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "conv.onnx")
        conv_model(model)
        x = os.path.join(tmp, "x.npy")
        np.save(x, np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 4, 8, 8))
        tools = [
            ("vnpu-run", [vnpu_run, "-m", model, "-d", "CPU", "-i", "x=" + x,
                          "-o", os.path.join(tmp, "out"), "-f", "npy"]),
            ("vnpu-bench", [vnpu_bench, "-m", model, "-d", "CPU", "-api", "async",
                            "-nireq", "2", "-niter", "4"]),
            ("vnpu-quantize", [vnpu_quantize, "-m", model, "-o", os.path.join(tmp, "q.onnx"),
                               "-r", "2"]),
            ("vnpu-info", [vnpu_info]),
        ]
        rc = 0
        for name, cmd in tools:
            rc |= check_tool(name, cmd, so, tmp)
    return rc


if __name__ == "__main__":
    sys.exit(main())
