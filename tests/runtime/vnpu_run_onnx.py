#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run ONNX backend node test cases through vnpu-run and compare its output
files with the expected ones.

  vnpu_run_onnx.py VNPU_RUN DEVICE [--list FILE] [--min N] [CASE ...]

With --list, the cases named in FILE (one per line, # comments) must all
pass; otherwise every case of the test data is tried and a summary printed.
Exit 0 when every listed case passed and at least --min passed, 77 when
DEVICE is not present (a skip for the VM-only runs), 1 otherwise.
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"


def run_case(vnpu_run, device, case, tmp):
    d = os.path.join(DATA, case)
    model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    data = os.path.join(d, "test_data_set_0")
    args = [vnpu_run, "-m", os.path.join(d, "model.onnx"), "-d", device, "-o", tmp]
    for k, name in enumerate(inputs):
        args += ["-i", "%s=%s" % (name, os.path.join(data, "input_%d.pb" % k))]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode:
        return "run failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    for k, name in enumerate(outputs):
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_%d.pb" % k)))
        path = os.path.join(tmp, name.replace("/", "_") + ".pb")
        got = numpy_helper.to_array(onnx.load_tensor(path))
        if got.shape != want.shape:
            return "output %s has shape %s, want %s" % (name, got.shape, want.shape)
        if got.dtype != want.dtype:
            return "output %s is %s, want %s" % (name, got.dtype, want.dtype)
        if want.dtype.kind == "f":
            if not np.allclose(got, want, rtol=1e-3, atol=1e-4, equal_nan=True):
                return "output %s differs by %g" % (name, np.nanmax(np.abs(got - want)))
        elif not np.array_equal(got, want):
            return "output %s differs" % name
    return None


def device_present(vnpu_run, device):
    info = os.path.join(os.path.dirname(os.path.dirname(vnpu_run)), "vnpu-info", "vnpu-info")
    if device in ("CPU", "AUTO") or not os.path.exists(info):
        return True
    r = subprocess.run([info, "-d", device], capture_output=True)
    return r.returncode == 0


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    vnpu_run, device = os.path.abspath(args[0]), args[1]
    listed, minimum, cases = None, 0, []
    rest = args[2:]
    while rest:
        a = rest.pop(0)
        if a == "--list":
            with open(rest.pop(0)) as f:
                listed = [l.split("#")[0].strip() for l in f]
                listed = [l for l in listed if l]
        elif a == "--min":
            minimum = int(rest.pop(0))
        else:
            cases.append(a)
    if not device_present(vnpu_run, device):
        print("skip: no device %s" % device)
        return 77
    if listed is not None:
        cases = listed
    elif not cases:
        cases = sorted(os.path.basename(p) for p in glob.glob(os.path.join(DATA, "test_*")))
    passed, failed = 0, []
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                why = run_case(vnpu_run, device, case, tmp)
            except Exception as e:  # a crash of the tool or a missing file
                why = "error: %s" % e
        if why is None:
            passed += 1
            print("ok - %s" % case)
        else:
            failed.append(case)
            print("not ok - %s: %s" % (case, why))
    print("%s: %d of %d cases passed" % (device, passed, len(cases)))
    if listed is not None and failed:
        return 1
    return 0 if passed >= minimum else 1


if __name__ == "__main__":
    sys.exit(main())
