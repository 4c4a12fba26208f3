#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Control flow and sequences the ONNX node tests do not cover, through
vnpu-run: models built here with onnx.helper, expected outputs computed
with numpy.

  vnpu_run_control.py VNPU_RUN DEVICE

Covers SplitToSequence (pieces of 1 with and without the axis, a scalar
split with a smaller last piece, listed sizes), ConcatFromSequence (along
an axis, along a new axis), SequenceErase, SequenceAt with a negative
position, SequenceLength, a sequence output (one file per element), a Loop
whose condition is computed from the iteration number, a Loop without a
trip count, an If on a run-time value inside a Loop body, and a Scan with a
reversed input and an output along axis 1.
Exit 0 when all pass, 77 when DEVICE is not present, 1 otherwise.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def const(name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.array(value), name + "_v"))


def model(nodes, inputs, outputs, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def seq_out(name, elem=F):
    return helper.make_tensor_sequence_value_info(name, elem, None)


X = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5


def split_concat():
    """Split along 1 in pieces of 4, 2 (scalar split 4), concatenated back."""
    nodes = [const("k", np.int64(4)),
             helper.make_node("SplitToSequence", ["x", "k"], ["s"], axis=1),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=-1),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [4, 6])],
              [helper.make_tensor_value_info("y", F, None),
               helper.make_tensor_value_info("n", I64, None)])
    return m, {"x": X}, {"y": X, "n": np.int64(2)}


def split_sizes_stack():
    """Listed sizes 1, 3 along 0, then stacked on a new axis after SequenceErase."""
    nodes = [const("sizes", np.array([1, 3], dtype=np.int64)),
             helper.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=0),
             helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
             const("first", np.array(0, dtype=np.int64)),
             helper.make_node("SequenceErase", ["rows", "first"], ["rest"]),
             helper.make_node("ConcatFromSequence", ["rest"], ["y"], axis=-1, new_axis=1),
             const("last", np.array(-1, dtype=np.int64)),
             helper.make_node("SequenceAt", ["s", "last"], ["tail"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [4, 6])],
              [helper.make_tensor_value_info("y", F, None),
               helper.make_tensor_value_info("tail", F, None)])
    return m, {"x": X}, {"y": np.stack([X[1], X[2], X[3]], axis=-1), "tail": X[1:]}


def sequence_output():
    """Pieces of one column with keepdims 1: a sequence output of 6 tensors."""
    nodes = [helper.make_node("SplitToSequence", ["x"], ["cols"], axis=1)]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [4, 6])], [seq_out("cols")])
    return m, {"x": X}, {"cols[%d]" % i: X[:, i:i + 1] for i in range(6)}


def loop_condition():
    """Loop of at most 10 iterations, stopping once the iteration number
    reaches 3 (the condition folds per iteration); y doubles each time."""
    body = helper.make_graph(
        [const("three", np.int64(3)),
         helper.make_node("Less", ["i", "three"], ["c_out"]),
         helper.make_node("Add", ["y_in", "y_in"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", F, [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", F, [2]),
         helper.make_tensor_value_info("scan", F, [2])])
    nodes = [const("m", np.int64(10)), const("c", np.bool_(True)),
             helper.make_node("Loop", ["m", "c", "y"], ["y_final", "ys"], body=body)]
    m = model(nodes, [helper.make_tensor_value_info("y", F, [2])],
              [helper.make_tensor_value_info("y_final", F, None),
               helper.make_tensor_value_info("ys", F, None)])
    y = np.array([1.5, -2], dtype=np.float32)
    # iterations 0..3 run (the condition after iteration 3 is false)
    return m, {"y": y}, {"y_final": y * 16, "ys": np.stack([y * 2, y * 4, y * 8, y * 16])}


def loop_no_trip_count():
    """No trip count: the condition (i < 4, computed) alone ends the loop."""
    body = helper.make_graph(
        [const("four", np.int64(4)), const("one", np.int64(1)),
         helper.make_node("Add", ["i", "one"], ["next"]),
         helper.make_node("Less", ["next", "four"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["acc_in", "fi"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", F, [3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", F, [3])])
    nodes = [const("c", np.bool_(True)),
             helper.make_node("Loop", ["", "c", "acc"], ["total"], body=body)]
    m = model(nodes, [helper.make_tensor_value_info("acc", F, [3])],
              [helper.make_tensor_value_info("total", F, None)])
    acc = np.array([0.5, 1, -3], dtype=np.float32)
    return m, {"acc": acc}, {"total": acc + 0 + 1 + 2 + 3}


def scan_reverse_axis():
    """Scan over x reversed; the running sums stacked along output axis 1."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["o"])],
        "body",
        [helper.make_tensor_value_info("s_in", F, [6]),
         helper.make_tensor_value_info("row", F, [6])],
        [helper.make_tensor_value_info("s_out", F, [6]),
         helper.make_tensor_value_info("o", F, [6])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s", "z"], body=body, num_scan_inputs=1,
                              scan_input_directions=[1], scan_output_axes=[1])]
    m = model(nodes, [helper.make_tensor_value_info("s0", F, [6]),
                      helper.make_tensor_value_info("x", F, [4, 6])],
              [helper.make_tensor_value_info("s", F, None),
               helper.make_tensor_value_info("z", F, None)])
    s0 = np.ones(6, dtype=np.float32)
    sums = s0 + np.cumsum(X[::-1], axis=0)
    return m, {"s0": s0, "x": X}, {"s": sums[-1], "z": sums.T}


def loop_if_runtime():
    """An If on a value known at run time inside a Loop body: both branches
    run, a select per iteration (y doubles while its sum is negative, else
    drops by one)."""
    then_g = helper.make_graph([helper.make_node("Add", ["y_in", "y_in"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", F, [2])])
    else_g = helper.make_graph([const("one_f", np.float32(1)),
                                helper.make_node("Sub", ["y_in", "one_f"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", F, [2])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["y_in"], ["sum"], keepdims=0),
         const("zero", np.float32(0)),
         helper.make_node("Less", ["sum", "zero"], ["neg"]),
         helper.make_node("If", ["neg"], ["y_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", F, [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", F, [2])])
    nodes = [const("m", np.int64(3)), const("c", np.bool_(True)),
             helper.make_node("Loop", ["m", "c", "y"], ["y_final"], body=body)]
    m = model(nodes, [helper.make_tensor_value_info("y", F, [2])],
              [helper.make_tensor_value_info("y_final", F, None)])
    y = np.array([-3, 3.5], dtype=np.float32)  # else, then, then
    want = y.copy()
    for _ in range(3):
        want = want * 2 if want.sum() < 0 else want - 1
    return m, {"y": y}, {"y_final": want}


CASES = [split_concat, split_sizes_stack, sequence_output, loop_condition,
         loop_no_trip_count, loop_if_runtime, scan_reverse_axis]


def run(vnpu_run, device, case, tmp):
    m, inputs, outputs = case()
    path = os.path.join(tmp, "model.onnx")
    onnx.save(m, path)
    args = [vnpu_run, "-m", path, "-d", device, "-o", tmp]
    for name, value in inputs.items():
        f = os.path.join(tmp, "in_%s.pb" % name)
        with open(f, "wb") as out:
            out.write(numpy_helper.from_array(value, name).SerializeToString())
        args += ["-i", "%s=%s" % (name, f)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode:
        return "vnpu-run failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    for name, want in outputs.items():
        got = numpy_helper.to_array(onnx.load_tensor(os.path.join(tmp, name + ".pb")))
        want = np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            return "%s is %s %s, want %s %s" % (name, got.dtype, got.shape, want.dtype,
                                                 want.shape)
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            return "%s differs by %g" % (name, np.max(np.abs(got - want)))
    return None


def device_present(vnpu_run, device):
    info = os.path.join(os.path.dirname(os.path.dirname(vnpu_run)), "vnpu-info", "vnpu-info")
    if device in ("CPU", "AUTO") or not os.path.exists(info):
        return True
    return subprocess.run([info, "-d", device], capture_output=True).returncode == 0


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    vnpu_run, device = os.path.abspath(sys.argv[1]), sys.argv[2]
    if not device_present(vnpu_run, device):
        print("skip: no device %s" % device)
        return 77
    failed = 0
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            why = run(vnpu_run, device, case, tmp)
        print("%s - %s%s" % ("not ok" if why else "ok", case.__name__,
                             ": " + why if why else ""))
        failed += why is not None
    print("%s: %d of %d cases passed" % (device, len(CASES) - failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
