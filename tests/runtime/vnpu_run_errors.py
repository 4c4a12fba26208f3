#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""vnpu-run refuses bad input files and bad arguments with one line on
stderr and the right exit code (2 for usage, 1 for a failure), and never
spends memory or prints half a JSON document on the way.

  vnpu_run_errors.py VNPU_RUN

Covers: an 11-byte input file declaring a 2 GiB tensor (run under a 1 GiB
address-space limit: the data is checked before the tensor is allocated),
typed data shorter than its shape, a directory given as an input, --json
after a failure (nothing on stdout), --shape of an input the model does not
have, a --seed that is not a number, a --precision that is none of f32,
f16, bf16, a good run with --json and --seed (one JSON document on
stdout), --precision reaching the compiler: a MatMul by weights of
1 + 2^-9 sums them exactly in f32 and f16 and as 1.0 in bf16, and a
Gather whose random indices fault: the one line names the layer, the
cause and the inputs that were random.
Exit 0 when all pass, 1 otherwise.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def relu_model(path):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def matmul_model(path):
    """y = x @ w, w [4, 1] all 1 + 2^-9: exact in f16, 1.0 in bf16."""
    w = np.full((4, 1), 1 + 2.0 ** -9, np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])],
                          [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def gather_model(path):
    """y = table[idx], table f32[2], idx i64[8]: random indices (0-15) fault."""
    g = helper.make_graph([helper.make_node("Gather", ["table", "idx"], ["y"])], "g",
                          [helper.make_tensor_value_info("idx", TensorProto.INT64, [8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
                          [numpy_helper.from_array(np.array([1, 2], np.float32), "table")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def precision_sum(vnpu_run, model, tmp, precision):
    """The MatMul model's output with x all ones under @precision, or why not."""
    out = os.path.join(tmp, "out-" + precision)
    r = run([vnpu_run, "-m", model, "-d", "CPU", "-o", out, "-f", "npy",
             "-i", "x=" + os.path.join(tmp, "ones.npy"), "--precision", precision])
    if r.returncode:
        return "exit %d: %s" % (r.returncode, r.stderr.strip())
    return float(np.load(os.path.join(out, "y.npy"))[0, 0])


def huge_declared(path):
    """dims [2^29] of f32 (2 GiB), data_type 1, one byte of raw_data: 11 bytes."""
    data = bytes([0x08, 0x80, 0x80, 0x80, 0x80, 0x02,   # dims: 536870912
                  0x10, 0x01,                           # data_type: FLOAT
                  0x4a, 0x01, 0x00])                    # raw_data: 1 byte
    assert len(data) == 11
    with open(path, "wb") as f:
        f.write(data)


def short_typed(path):
    """dims [1000000, 1000] of f32 with three float_data values."""
    t = TensorProto(name="x", dims=[1000000, 1000], data_type=TensorProto.FLOAT,
                    float_data=[1.0, 2.0, 3.0])
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def limit_memory():
    gib = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (gib, gib))


def run(args, limited=False):
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          preexec_fn=limit_memory if limited else None)


def expect(r, code, words, stdout_empty=True):
    """None when @r exited @code with one stderr line holding @words."""
    lines = r.stderr.strip().splitlines()
    if r.returncode != code:
        return "exit %d, want %d: %s" % (r.returncode, code, r.stderr.strip())
    if len(lines) != 1:
        return "%d lines on stderr, want 1: %r" % (len(lines), r.stderr)
    if any(w not in lines[0] for w in words):
        return "message %r lacks %r" % (lines[0], words)
    if stdout_empty and r.stdout:
        return "stdout is not empty: %r" % r.stdout
    return None


def cases(vnpu_run, tmp):
    model = os.path.join(tmp, "relu.onnx")
    relu_model(model)
    base = [vnpu_run, "-m", model, "-d", "CPU", "-o", os.path.join(tmp, "out")]
    huge = os.path.join(tmp, "huge.pb")
    huge_declared(huge)
    short = os.path.join(tmp, "short.pb")
    short_typed(short)
    good = os.path.join(tmp, "x.pb")
    with open(good, "wb") as f:
        f.write(numpy_helper.from_array(np.array([[-1, 2, -3, 4]], np.float32), "x")
                .SerializeToString())

    yield "huge_declared_size", expect(run(base + ["-i", "x=" + huge], limited=True), 1,
                                       ["huge.pb", "raw_data holds 1 bytes"])
    yield "short_typed_data", expect(run(base + ["-i", "x=" + short], limited=True), 1,
                                     ["short.pb", "holds 3 values"])
    yield "input_directory", expect(run(base + ["-i", "x=" + tmp]), 1,
                                    ["is a directory"])
    yield "json_after_failure", expect(run(base + ["--json", "-i", "x=" + tmp]), 1,
                                       ["is a directory"])
    yield "shape_unknown_input", expect(run(base + ["-S", "nope=1,4"]), 2,
                                        ["--shape", "no input \"nope\""])
    for seed in ("abc", "", "-1", "12x", "99999999999"):
        yield "seed_%r" % seed, expect(run(base + ["-s", seed]), 2, ["--seed"])
    for bad in ("f64", "", "FP16", "int8"):
        yield "precision_%r" % bad, expect(run(base + ["--precision", bad]), 2,
                                           ["--precision", "f32, f16 or bf16"])
    mm = os.path.join(tmp, "matmul.onnx")
    matmul_model(mm)
    np.save(os.path.join(tmp, "ones.npy"), np.ones((1, 4), np.float32))
    for precision, want in (("f32", 4 + 2.0 ** -7), ("f16", 4 + 2.0 ** -7), ("bf16", 4.0)):
        got = precision_sum(vnpu_run, mm, tmp, precision)
        yield "precision_%s_sum" % precision, (
            None if got == want else "y = %r, want %r" % (got, want))
    gm = os.path.join(tmp, "gather.onnx")
    gather_model(gm)
    gbase = [vnpu_run, "-m", gm, "-d", "CPU", "-o", os.path.join(tmp, "gout")]
    yield "random_index_faults", expect(run(gbase), 1, [
        'layer "y" (Gather)', "a value of its input out of range",
        "inputs given random values: idx", "-i NAME=FILE"])
    np.save(os.path.join(tmp, "idx.npy"), np.array([0, 1, 1, 0, -1, -2, 0, 1], np.int64))
    r = run(gbase + ["-i", "idx=" + os.path.join(tmp, "idx.npy")])
    yield "given_index_runs", "exit %d: %s" % (r.returncode, r.stderr.strip()) \
        if r.returncode else None
    r = run(base + ["--json", "-s", "7", "-i", "x=" + good])
    why = "exit %d: %s" % (r.returncode, r.stderr.strip()) if r.returncode else None
    if not why:
        try:
            doc = json.loads(r.stdout)
            if [o["name"] for o in doc["outputs"]] != ["y"]:
                why = "outputs %r" % doc["outputs"]
        except (ValueError, KeyError) as e:
            why = "not one JSON document (%s): %r" % (e, r.stdout)
    yield "json_good_run", why


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    vnpu_run = os.path.abspath(sys.argv[1])
    failed = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, why in cases(vnpu_run, tmp):
            total += 1
            failed += why is not None
            print("%s - %s%s" % ("not ok" if why else "ok", name, ": " + why if why else ""))
    print("%d of %d cases passed" % (total - failed, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
