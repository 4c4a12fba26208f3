#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""vnpu-quantize's tests (suite 'quantize'):

  test-quantize.py VNPU_QUANTIZE VNPU_RUN NODE_MODULES

- bad input: each exits non-zero (2 for usage errors, 1 otherwise) with a
  one-line message on stderr;
- a small model with every pattern the tool quantizes (Conv + BatchNorm +
  Relu, MaxPool, residual Add, AveragePool, GlobalAveragePool, Gemm,
  MatMul), and the zoo's all-convolution convnet in f32, quantized with
  --random and with a folder of samples: the QDQ model's structure (no
  BatchNorm left, s8 weights per channel behind DequantizeLinear, i32
  biases), its accuracy report (cosine above 0.99, top-1 agreement), and
  the same input run by vnpu (vnpu-run) and ONNX Runtime agreeing within
  the bound of Documentation/vnpu/quantize.rst (0 on convnet, whose
  convolutions vnpu runs as ONNX Runtime's int8 arithmetic exactly).

Skips (77) when numpy, onnx or ONNX Runtime is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
ORT_JS = os.path.join(TOP, "scripts/zoo/ort.js")
# max |vnpu - ORT| / max |ORT| on the small model: its Adds, pooling and
# products run f32 between DequantizeLinear and QuantizeLinear in vnpu and
# as QLinear ops in ONNX Runtime, which round in their own order: a value
# near a half step moves by one step (quantize.rst).
SMALL_BOUND = 2e-2
FAILS = []


def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)
    if not cond:
        FAILS.append(what)


def run(args, want=0):
    p = subprocess.run(args, capture_output=True, text=True)
    return p


def expect_fail(args, code, what):
    p = run(args)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    check(p.returncode == code and len(lines) == 1 and lines[0].startswith("vnpu-quantize: "),
          f"{what}: exit {p.returncode} (want {code}), stderr {lines!r}")


def small_model(np, helper, numpy_helper, TensorProto, opset=13):
    """Conv + BN + Relu, MaxPool, Conv + Relu, Conv, residual Add, Relu,
    AveragePool, GlobalAveragePool, Flatten, Gemm + Relu, MatMul."""
    rng = np.random.default_rng(5)
    inits = []

    def const(name, a):
        inits.append(numpy_helper.from_array(a.astype(np.float32), name))
        return name

    def conv_w(name, m, c, k):
        return const(name, rng.normal(0, np.sqrt(2 / (c * k * k)), (m, c, k, k)))

    nodes = [
        helper.make_node("Conv", ["input", conv_w("w1", 8, 3, 3)], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", const("g1", rng.uniform(0.5, 1.5, 8)),
                          const("b1", rng.normal(0, 0.1, 8)),
                          const("m1", rng.normal(0, 0.1, 8)),
                          const("v1", rng.uniform(0.5, 1.5, 8))], ["bn1"], name="bn1"),
        helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", conv_w("w2", 8, 8, 3), const("bias2", rng.normal(0, 0.1, 8))],
                         ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", conv_w("w3", 8, 8, 3), const("bias3", rng.normal(0, 0.1, 8))],
                         ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c3", "p1"], ["a1"], name="add1"),
        helper.make_node("Relu", ["a1"], ["r3"], name="relu3"),
        helper.make_node("AveragePool", ["r3"], ["p2"], name="pool2", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", const("wfc", rng.normal(0, 0.5, (16, 8))),
                                  const("bfc", rng.normal(0, 0.1, 16))], ["fc"], name="fc",
                         transB=1),
        helper.make_node("Relu", ["fc"], ["rfc"], name="relu_fc"),
        helper.make_node("MatMul", ["rfc", const("wout", rng.normal(0, 0.5, (16, 10)))],
                         ["logits"], name="head"),
    ]
    g = helper.make_graph(nodes, "small",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def two_inputs(np, helper, numpy_helper, TensorProto):
    """Add of two inputs, Conv, Relu."""
    w = np.random.default_rng(6).normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
         helper.make_node("Conv", ["s", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")], "two",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 3, 8, 8]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def multi_input(q, tmp, np, onnx, helper, numpy_helper, TensorProto):
    """A model of two inputs takes folders of input_N files, not files."""
    model = os.path.join(tmp, "two.onnx")
    onnx.save(two_inputs(np, helper, numpy_helper, TensorProto), model)
    out = os.path.join(tmp, "two_qdq.onnx")
    rng = np.random.default_rng(12)
    files = os.path.join(tmp, "two-files")
    os.makedirs(files)
    np.save(os.path.join(files, "a.npy"), np.zeros([1, 3, 8, 8], np.float32))
    expect_fail([q, "-m", model, "-o", out, "-c", files], 1, "two inputs, a file per sample")
    sets = os.path.join(tmp, "two-sets")
    for k in range(3):
        d = os.path.join(sets, f"set{k}")
        os.makedirs(d)
        np.save(os.path.join(d, "input_0.npy"), rng.uniform(-1, 1, [1, 3, 8, 8]).astype(np.float32))
        with open(os.path.join(d, "input_1.pb"), "wb") as f:
            f.write(numpy_helper.from_array(
                rng.uniform(-1, 1, [1, 3, 8, 8]).astype(np.float32), "b").SerializeToString())
    p = run([q, "-m", model, "-o", out, "-c", sets, "--json"])
    r, o = report(p)
    check(p.returncode == 0 and o is not None and o["cosine_min"] > 0.99 and r["samples"] == 3,
          f"two inputs, a folder per sample: {o} {p.stderr.strip()}")
    os.remove(os.path.join(sets, "set1", "input_1.pb"))
    expect_fail([q, "-m", model, "-o", out, "-c", sets], 1, "two inputs, input_1 missing")
    ext = os.path.join(tmp, "ext")
    os.makedirs(ext)
    onnx.save(onnx.load(model), os.path.join(ext, "two.onnx"), save_as_external_data=True,
              location="w.bin", size_threshold=0)
    expect_fail([q, "-m", os.path.join(ext, "two.onnx"), "-o", out, "-r", "1"], 1,
                "external data")


def activation_gemm(q, tmp, np, onnx, helper, numpy_helper, TensorProto):
    """A Gemm whose B is an input (both operands activations) and whose C
    is a constant: its bias stays f32 (no weight scale to give it)."""
    c = np.arange(4, dtype=np.float32)
    g = helper.make_graph(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm")], "gemm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(c, "c")])
    model = os.path.join(tmp, "gemm.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    p = run([q, "-m", model, "-o", os.path.join(tmp, "gemm_qdq.onnx"), "-r", "2", "--json"])
    r, o = report(p)
    check(p.returncode == 0 and o is not None and o["cosine_min"] > 0.99 and
          r["quantized_tensors"] == 2 and r["quantized_weights"] == 0,
          f"a Gemm of two activations: both quantized, C kept {r} {p.stderr.strip()}")


def convnet():
    sys.path.insert(0, os.path.join(TOP, "scripts/zoo"))
    import cnn
    return cnn.convnet()


def ort_run(node_modules, model, x, tmp):
    import numpy as np
    out = os.path.join(tmp, "ort-out")
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(tmp, "x.bin")
    x.tofile(raw)
    p = run(["node", ORT_JS, node_modules, "run", model, out,
             f"input={raw}:float32:{','.join(map(str, x.shape))}"])
    if p.returncode:
        return None, p.stderr.strip().splitlines()[-1:]
    meta = json.load(open(os.path.join(out, "outputs.json")))
    return np.fromfile(os.path.join(out, "0.bin"), np.float32).reshape(meta[0]["dims"]), None


def vnpu_run(vnpu_run_bin, model, x, tmp):
    import numpy as np
    from onnx import numpy_helper
    pb = os.path.join(tmp, "x.pb")
    with open(pb, "wb") as f:
        f.write(numpy_helper.from_array(x, "input").SerializeToString())
    out = os.path.join(tmp, "vnpu-out")
    p = run([vnpu_run_bin, "-m", model, "-d", "CPU", "-i", f"input={pb}", "-o", out, "-f", "npy",
             "--profile"])
    if p.returncode:
        return None, p.stderr
    name = [f for f in os.listdir(out) if f.endswith(".npy")][0]
    return np.load(os.path.join(out, name)), p.stderr


def qdq_structure(onnx, numpy_helper, path, kept=()):
    """No BatchNorm; each Conv, Gemm and MatMul not kept reads its weight from
    a DequantizeLinear of an s8 initializer with one scale per output
    channel on the right axis, and a Conv's or Gemm's bias from an i32 one."""
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    prod = {o: n for n in m.graph.node for o in n.output}
    check(not any(n.op_type == "BatchNormalization" for n in m.graph.node),
          "no BatchNormalization left")
    check(sum(n.op_type == "QuantizeLinear" for n in m.graph.node) >= 3, "QuantizeLinear nodes")
    for n in m.graph.node:
        if n.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        dq = prod.get(n.input[1])
        if n.name in kept:
            check(all(prod.get(x) is None or prod[x].op_type != "DequantizeLinear"
                      for x in n.input), f"{n.name} kept f32: reads no DequantizeLinear")
            continue
        ok = dq is not None and dq.op_type == "DequantizeLinear"
        if ok:
            w, s = inits[dq.input[0]], inits[dq.input[1]]
            axis = next((a.i for a in dq.attribute if a.name == "axis"), 1)
            want = 0 if n.op_type == "Conv" or (n.op_type == "Gemm" and any(
                a.name == "transB" and a.i for a in n.attribute)) else 1
            ok = w.dtype.name == "int8" and axis == want and s.shape == (w.shape[axis],) \
                and abs(int(w.min())) <= 127
        check(ok, f"{n.name}: weight behind a per-channel s8 DequantizeLinear")
        if n.op_type != "MatMul" and len(n.input) > 2:
            dq = prod.get(n.input[2])
            check(dq is not None and inits[dq.input[0]].dtype.name == "int32",
                  f"{n.name}: i32 bias")


def report(p):
    try:
        r = json.loads(p.stdout)
        return r, r["outputs"][0]
    except (ValueError, KeyError, IndexError):
        return None, None


def compare_runtimes(np, bins, model, tmp, bound, what):
    """vnpu against ONNX Runtime on the QDQ model; without VNNI, against ONNX
    Runtime on its u8-weights form, whose products it does not saturate
    (tests/zoo/ortexact.py)."""
    sys.path.insert(0, os.path.join(TOP, "tests/zoo"))
    import ortexact
    x = np.random.default_rng(3).uniform(-1, 1, [1, 3, model[1], model[1]]).astype(np.float32)
    ref = os.path.join(tmp, "u8-weights.onnx")
    if ortexact.exact_int8_ort() or not ortexact.u8_weights(model[0], ref):
        ref = model[0]
    ort, err = ort_run(bins["node_modules"], ref, x, tmp)
    check(ort is not None, f"{what}: ONNX Runtime runs the QDQ model {err or ''}")
    ours, prof = vnpu_run(bins["vnpu_run"], model[0], x, tmp)
    check(ours is not None, f"{what}: vnpu runs the QDQ model")
    if ort is None or ours is None:
        return
    check("QLinearConv" in prof, f"{what}: vnpu runs the convolutions as int8 layers")
    diff = float(np.abs(ours - ort).max()) / float(np.abs(ort).max())
    check(ours.shape == ort.shape and diff <= bound,
          f"{what}: vnpu against ONNX Runtime: max |diff| / max |ort| = {diff:.3g} <= {bound}")


def bad_input(q, tmp, np, onnx, helper, TensorProto, model_path, old_opset):
    out = os.path.join(tmp, "bad.onnx")
    expect_fail([q], 2, "no arguments")
    expect_fail([q, "-m", model_path, "-o", out], 2, "no samples")
    expect_fail([q, "-m", model_path, "-o", out, "-r", "2", "-c", tmp], 2, "-c and -r")
    expect_fail([q, "-m", model_path, "-r", "2"], 2, "no output")
    for n in ("0", "-3", "x", "99999999"):
        expect_fail([q, "-m", model_path, "-o", out, "-r", n], 2, f"--random {n}")
    expect_fail([q, "-m", model_path, "-o", out, "-r", "1", "-a", "s16"], 2, "-a s16")
    expect_fail([q, "-m", model_path, "-o", out, "-r", "1", "-C", "kl"], 2, "-C kl")
    expect_fail([q, "-m", model_path, "-o", out, "-r", "1", "-p", "20"], 2, "-p 20")
    expect_fail([q, "-m", model_path, "-o", out, "-r", "1", "-t", "Conv,Relu"], 2, "-t Relu")
    expect_fail([q, "-m", os.path.join(tmp, "missing.onnx"), "-o", out, "-r", "1"], 1,
                "missing model")
    junk = os.path.join(tmp, "junk.onnx")
    with open(junk, "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0fnot a model")
    expect_fail([q, "-m", junk, "-o", out, "-r", "1"], 1, "not a model")
    expect_fail([q, "-m", old_opset, "-o", out, "-r", "1"], 1, "opset 11")
    expect_fail([q, "-m", model_path, "-o", out, "-c", os.path.join(tmp, "nodir")], 1,
                "missing calibration folder")
    expect_fail([q, "-m", model_path, "-o", out, "-c", junk], 1, "calibration folder is a file")
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    expect_fail([q, "-m", model_path, "-o", out, "-c", empty], 1, "empty calibration folder")
    for name, a in (("shape", np.zeros([1, 3, 8, 8], np.float32)),
                    ("rank", np.zeros([3, 16, 16], np.float32)),
                    ("type", np.zeros([1, 3, 16, 16], np.float64))):
        d = os.path.join(tmp, "bad-" + name)
        os.makedirs(d)
        np.save(os.path.join(d, "a.npy"), np.zeros([1, 3, 16, 16], np.float32))
        np.save(os.path.join(d, "b.npy"), a)
        expect_fail([q, "-m", model_path, "-o", out, "-c", d], 1, f"sample of the wrong {name}")
    d = os.path.join(tmp, "bad-pb")
    os.makedirs(d)
    with open(os.path.join(d, "x.pb"), "wb") as f:
        f.write(b"\xff\xff\xff")
    expect_fail([q, "-m", model_path, "-o", out, "-c", d], 1, "corrupt .pb sample")
    expect_fail([q, "-m", model_path, "-o", out, "-r", "1", "-k", "conv1,nosuchnode"], 1,
                "unknown node to keep f32")
    expect_fail([q, "-m", model_path, "-o", os.path.join(tmp, "nodir", "x.onnx"), "-r", "1"], 1,
                "unwritable output")
    big = os.path.join(tmp, "big.onnx")
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 256, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 256, 256])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), big)
    expect_fail([q, "-m", big, "-o", out, "-r", "8192"], 1,
                "--random 8192 samples of 1 MiB: above the 4 GiB samples may hold")
    check(not os.path.exists(out), "nothing written on bad input")


def main():
    q, vnpu_run_bin, node_modules = sys.argv[1:4]
    try:
        import numpy as np
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("skip: numpy or onnx missing")
        return 77
    if not os.path.isdir(os.path.join(node_modules, "onnxruntime-node")):
        print("skip: no onnxruntime-node in " + node_modules)
        return 77
    bins = {"vnpu_run": vnpu_run_bin, "node_modules": node_modules}
    with tempfile.TemporaryDirectory(prefix="vnpu-quantize-") as tmp:
        small = os.path.join(tmp, "small.onnx")
        onnx.save(small_model(np, helper, numpy_helper, TensorProto), small)
        old = os.path.join(tmp, "old.onnx")
        onnx.save(small_model(np, helper, numpy_helper, TensorProto, 11), old)
        bad_input(q, tmp, np, onnx, helper, TensorProto, small, old)
        multi_input(q, tmp, np, onnx, helper, numpy_helper, TensorProto)
        activation_gemm(q, tmp, np, onnx, helper, numpy_helper, TensorProto)

        # --random, u8, min-max.
        out = os.path.join(tmp, "small_qdq.onnx")
        p = run([q, "-m", small, "-o", out, "-r", "8", "--json"])
        check(p.returncode == 0, f"quantize --random 8 {p.stderr.strip()}")
        r, o = report(p)
        check(o is not None and o["cosine_min"] > 0.99 and o["top1_same"] == o["top1_rows"] == 8,
              f"small model, --random: cosine and top-1 {o}")
        check(r is not None and r["quantized_weights"] == 5 and r["samples"] == 8,
              "five weights quantized, report on 8 samples")
        qdq_structure(onnx, numpy_helper, out)
        qs = {n.input[0]: n.input[1] for n in onnx.load(out).graph.node if n.op_type == "QuantizeLinear"}
        check(qs.get("flat") == qs.get("gap") and qs.get("p1") == qs.get("r1") and "gap" in qs,
              f"Flatten and MaxPool outputs keep their inputs' parameters {qs}")
        compare_runtimes(np, bins, (out, 16), tmp, SMALL_BOUND, "small model, --random")

        # A folder of samples (.npy files, percentile, s8, one Conv kept f32).
        calib = os.path.join(tmp, "calib")
        os.makedirs(calib)
        rng = np.random.default_rng(11)
        for k in range(6):
            np.save(os.path.join(calib, f"s{k}.npy"),
                    rng.uniform(-1, 1, [1, 3, 16, 16]).astype(np.float32))
        out2 = os.path.join(tmp, "small_s8.onnx")
        p = run([q, "-m", small, "-o", out2, "-c", calib, "-C", "percentile", "-a", "s8",
                 "-k", "conv2", "--json"])
        check(p.returncode == 0, f"quantize -c -C percentile -a s8 -k conv2 {p.stderr.strip()}")
        r, o = report(p)
        check(o is not None and o["cosine_min"] > 0.99 and r["samples"] == 6,
              f"small model, -c: cosine on the 6 calibration samples {o}")
        qdq_structure(onnx, numpy_helper, out2, kept=("conv2",))
        m = onnx.load(out2)
        zps = [numpy_helper.to_array(i) for i in m.graph.initializer if i.name.endswith("_zero_point")]
        check(zps and all(z.dtype.name == "int8" for z in zps), "s8 activations")
        compare_runtimes(np, bins, (out2, 16), tmp, SMALL_BOUND, "small model, -c s8")

        # Percentile ranges lie within the min-max ones, some strictly.
        def scales(path):
            return {i.name: float(numpy_helper.to_array(i)) for i in onnx.load(path).graph.initializer
                    if i.name.endswith("_scale") and not i.dims}
        mm, pc = os.path.join(tmp, "mm.onnx"), os.path.join(tmp, "pc.onnx")
        p1 = run([q, "-m", small, "-o", mm, "-c", calib])
        p2 = run([q, "-m", small, "-o", pc, "-c", calib, "-p", "99"])
        a, b = scales(mm), scales(pc) if p2.returncode == 0 else {}
        check(p1.returncode == 0 and a.keys() == b.keys() and len(a) >= 8 and
              all(b[k] <= a[k] * (1 + 1e-6) for k in a) and any(b[k] < a[k] * 0.9 for k in a),
              f"-p 99: activation scales within min-max's, some narrower: {a} {b}")

        # Folders of ONNX test data (input_0.pb) work too.
        sets = os.path.join(tmp, "sets")
        for k in range(2):
            os.makedirs(os.path.join(sets, f"test_data_set_{k}"))
            with open(os.path.join(sets, f"test_data_set_{k}", "input_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(
                    rng.uniform(-1, 1, [1, 3, 16, 16]).astype(np.float32), "input").SerializeToString())
        p = run([q, "-m", small, "-o", os.path.join(tmp, "sets.onnx"), "-c", sets, "-e", calib])
        check(p.returncode == 0 and "6 held-out samples" in p.stdout,
              f"test_data_set folders, held-out report {p.stderr.strip()}")

        # -t Conv: the convolutions alone, as the zoo's QDQ models.
        out5 = os.path.join(tmp, "conv_only.onnx")
        p = run([q, "-m", small, "-o", out5, "-r", "2", "-t", "Conv", "--json"])
        r, o = report(p)
        m = onnx.load(out5)
        readers = {x: n.op_type for n in m.graph.node for x in n.input}
        check(r is not None and r["quantized_weights"] == 3 and
              all(readers.get(x) != "QuantizeLinear" for n in m.graph.node
                  if n.op_type in ("Add", "Gemm", "AveragePool") for x in n.output),
              f"-t Conv: only the convolutions {r}")

        # Names the rewrite would make are taken already: it makes others.
        taken = small_model(np, helper, numpy_helper, TensorProto)
        names = {"c2": "p1_dequantized", "a1": "input_quantized", "fc": "r3_scale"}
        for n in taken.graph.node:
            n.input[:] = [names.get(x, x) for x in n.input]
            n.output[:] = [names.get(x, x) for x in n.output]
        taken_path = os.path.join(tmp, "taken.onnx")
        onnx.save(taken, taken_path)
        out4 = os.path.join(tmp, "taken_qdq.onnx")
        p = run([q, "-m", taken_path, "-o", out4, "-r", "2"])
        check(p.returncode == 0, f"names taken: quantized {p.stderr.strip()}")
        compare_runtimes(np, bins, (out4, 16), tmp, SMALL_BOUND, "names taken")

        # The zoo's convnet: all convolutions int8, bit for bit with ORT.
        conv = os.path.join(tmp, "convnet.onnx")
        onnx.save(convnet(), conv)
        out3 = os.path.join(tmp, "convnet_qdq.onnx")
        p = run([q, "-m", conv, "-o", out3, "-r", "4", "--json"])
        r, o = report(p)
        check(p.returncode == 0 and o is not None and o["cosine_min"] > 0.99,
              f"convnet, --random 4: cosine {o}")
        compare_runtimes(np, bins, (out3, 64), tmp, 0.0, "convnet")
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
