#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run the C examples on a device and compare the sums they print with
the references computed here, for two models of Debian's libonnx-testdata
(Relu: one input; Add: two). Exit 77 (skip) when the device is absent.
Plain Python, no numpy: numpy's SIMD kernels crash under the VM's QEMU
TCG (np.maximum, SIGSEGV), where the NPU variant runs.

    check-examples.py DEVICE SYNC ASYNC ZERO_COPY
"""
import re
import subprocess
import sys

NODE = "/usr/share/libonnx-testdata/data/node"
COUNT = 60          # both models' tensors are f32[3, 4, 5]
MODELS = {
    "relu": (1, lambda xs: [max(v, 0.0) for v in xs[0]]),
    "add": (2, lambda xs: [a + b for a, b in zip(xs[0], xs[1])]),
}


def ramp(k):
    """The examples' input k: ((i % 17) - 8) / 4 + k (exact in f32)."""
    return [((i % 17) - 8) / 4.0 + k for i in range(COUNT)]


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        if "no device" in p.stderr:
            print(f"skip: {p.stderr.strip()}")
            sys.exit(77)
        sys.exit(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def sums(out, label):
    """{index: sum} of the lines '<label> <k> y f32 60 sum=S' (or 'output y')."""
    found = {}
    for m in re.finditer(rf"^{label} ?(\d*) \S+ f32 60 sum=(\S+)$", out, re.M):
        found[int(m.group(1) or 0)] = float(m.group(2))
    return found


def expect(name, label, got, ks):
    nin, fn = MODELS[name]
    if sorted(got) != list(ks):
        sys.exit(f"{name} {label}: printed {sorted(got)}, expected {list(ks)}")
    for k in ks:
        want = sum(fn([ramp(k)] * nin))
        if abs(got[k] - want) > 1e-3:
            sys.exit(f"{name} {label} {k}: sum {got[k]}, numpy {want}")


def main():
    device, sync, async_, zero_copy = sys.argv[1:5]
    for name in MODELS:
        model = f"{NODE}/test_{name}/model.onnx"
        expect(name, "output", sums(run([sync, model, device]), "output"), [0])
        out = run([async_, model, device, "5"])
        expect(name, "request", sums(out, "request"), range(5))
        if "callbacks 5" not in out:
            sys.exit(f"{name}: async: not 5 callbacks:\n{out}")
        expect(name, "run", sums(run([zero_copy, model, device, "3"]), "run"), range(3))
    # Bad use: a usage error, a missing model.
    for argv, code in (([sync], 2), ([async_, "m.onnx", device, "0"], 2),
                       ([sync, "/nonexistent.onnx", device], 1)):
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != code or not p.stderr.strip():
            sys.exit(f"{argv}: exit {p.returncode} (want {code}), stderr {p.stderr!r}")
    print(f"examples on {device}: ok")


main()
