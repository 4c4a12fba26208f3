#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tensor files the tools read and write besides TensorProto: NumPy .npy
(every dtype, through vnpu-run on the CPU, against numpy) and raw files
(FILE.raw:TYPE:D,D,...), vnpu-run -f npy into a folder it creates,
vnpu-bench -i; and hostile files, each refused with exit 1 and a one-line
message (never a crash): bad magic, versions, header lengths, keys,
dtypes, Fortran order, shapes that overflow, data of the wrong size.
String TensorProtos in and out of a StringNormalizer model, and a string
count that does not fit the shape.

    vnpu_tensor_files.py VNPU_RUN VNPU_BENCH
"""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

RELU = "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx"
ADD = "/usr/share/libonnx-testdata/data/node/test_add/model.onnx"
# data f32[2,3,4], shape i64[3] -> reshaped: the shape input decides shapes
RESHAPE = "/usr/share/libonnx-testdata/data/node/test_reshape_reordered_all_dims"
run, bench = sys.argv[1:3]
tmp = tempfile.mkdtemp(prefix="vnpu-files-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def tool(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def path(name):
    return os.path.join(tmp, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def npy_bytes(header, data=b"", version=(1, 0)):
    """A .npy file of @header (a str, padded and ended with \\n) and @data."""
    h = header.encode("latin1")
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    if version[0] == 1:
        pre = b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(h))
    else:
        pre = b"\x93NUMPY" + bytes(version) + struct.pack("<I", len(h))
    return pre + h + data


def refused(spec, what, code=1):
    p = tool(run, "-m", RELU, "-d", "CPU", "-i", spec, "-o", path("out"))
    msg = p.stderr.strip()
    check(p.returncode == code and msg.startswith("vnpu-run: ") and "\n" not in msg,
          f"{what}: exit {p.returncode}, stderr {msg!r}")
    return msg


x = (np.arange(60).reshape(3, 4, 5) - 30) / 4.0
# Every dtype numpy saves and libvnpu converts, into relu's f32 input.
for dtype in (np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16,
              np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_):
    a = x.astype(dtype) if dtype not in (np.uint8, np.uint16, np.uint32, np.uint64) \
        else np.abs(x).astype(dtype)
    np.save(path("in.npy"), a)
    out = path(f"out-{np.dtype(dtype).name}/nested")
    p = tool(run, "-m", RELU, "-d", "CPU", "-i", path("in.npy"), "-o", out, "-f", "npy")
    check(p.returncode == 0, f"{np.dtype(dtype).name}: {p.stderr.strip()}")
    if p.returncode == 0:
        y = np.load(os.path.join(out, "y.npy"))
        check(y.dtype == np.float32 and np.array_equal(y, np.maximum(a.astype(np.float32), 0)),
              f"{np.dtype(dtype).name}: relu values")
# Versions 2.0 and 3.0, a scalar-free 1-D save and a Fortran-order 1-D.
a = x.astype(np.float32)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5), }"
for v in ((2, 0), (3, 0)):
    p = tool(run, "-m", RELU, "-d", "CPU", "-i", write("v.npy", npy_bytes(hdr, a.tobytes(), v)),
             "-o", path("outv"), "-f", "npy")
    check(p.returncode == 0 and np.array_equal(np.load(path("outv/y.npy")), np.maximum(a, 0)),
          f"version {v}: {p.stderr.strip()}")
# Raw files, and TensorProto outputs still the default.
a.tofile(path("in.raw"))
p = tool(run, "-m", RELU, "-d", "CPU", "-i", "x=" + path("in.raw") + ":f32:3,4,5",
         "-o", path("outraw"))
check(p.returncode == 0 and os.path.exists(path("outraw/y.pb")), f"raw: {p.stderr.strip()}")
x.astype(np.float64).tofile(path("in64.raw"))
p = tool(run, "-m", RELU, "-d", "CPU", "-i", path("in64.raw") + ":f64:3,4,5",
         "-o", path("outraw64"), "-f", "npy")
check(p.returncode == 0 and np.array_equal(np.load(path("outraw64/y.npy")),
                                           np.maximum(a, 0)), f"raw f64: {p.stderr.strip()}")

# Hostile .npy files.
good = npy_bytes(hdr, a.tobytes())
cases = {
    "empty": b"",
    "magic": b"\x93NUMPX" + good[6:],
    "version": good[:6] + b"\x09\x09" + good[8:],
    "header past the file": good[:8] + struct.pack("<H", 0xffff) + good[10:100],
    "v2 header of 4 GiB": b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xffffffff) + b"{}",
    "truncated header": good[:40],
    "no newline": good[:10] + good[10:good.index(b"\n")] + b" " + good[good.index(b"\n") + 1:],
    "NUL in the header": good[:20] + b"\0" + good[21:],
    "missing key": npy_bytes("{'descr': '<f4', 'shape': (3, 4, 5), }", a.tobytes()),
    "extra key": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5), 'x': 1}",
                           a.tobytes()),
    "twice a key": npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                             "'shape': (3, 4, 5)}", a.tobytes()),
    "big-endian": npy_bytes(hdr.replace("<f4", ">f4"), a.tobytes()),
    "complex": npy_bytes(hdr.replace("<f4", "<c8"), a.tobytes() * 2),
    "objects": npy_bytes(hdr.replace("'<f4'", "'|O'"), a.tobytes()),
    "structured": npy_bytes(hdr.replace("'<f4'", "[('a', '<f4')]"), a.tobytes()),
    "Fortran order": npy_bytes(hdr.replace("False", "True"), a.tobytes()),
    "negative dim": npy_bytes(hdr.replace("(3, 4, 5)", "(-3, 4, 5)"), a.tobytes()),
    "not a tuple": npy_bytes(hdr.replace("(3, 4, 5)", "(60)"), a.tobytes()),
    "overflow": npy_bytes(hdr.replace("(3, 4, 5)", "(4294967296, 4294967296, 16)")),
    "huge dim": npy_bytes(hdr.replace("(3, 4, 5)", "(99999999999999999999,)")),
    "rank 9": npy_bytes(hdr.replace("(3, 4, 5)", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), b"\0" * 4),
    "short data": good[:-1],
    "extra data": good + b"\0",
    "shape of 2^40": npy_bytes(hdr.replace("(3, 4, 5)", "(1099511627776,)"), a.tobytes()),
}
for what, data in cases.items():
    refused(write("bad.npy", data), what)
os.mkdir(path("dir.npy"))
refused(path("dir.npy"), "a directory")
refused(path("none.npy"), "a missing file")
# Hostile raw specs.
for spec, what in ((":f33:3,4,5", "unknown type"), (":f32:3,,5", "empty dimension"),
                   (":f32:3,4,", "trailing comma"), (":f32:-3,4,5", "negative dimension"),
                   (":f32:3,4,6", "the wrong size"), (":f32:1,1,1,1,1,1,1,1,60", "rank 9"),
                   (":f32:18446744073709551615,2", "overflow"), (":f32", "no shape"),
                   (":f32:3x4", "not numbers")):
    refused(path("in.raw") + spec, what)
refused(path("none.raw") + ":f32:3,4,5", "a missing raw file")
p = tool(run, "-m", RELU, "-d", "CPU", "-f", "json")
check(p.returncode == 2 and "--format" in p.stderr, f"-f json: {p.returncode} {p.stderr!r}")

# vnpu-bench -i: real data, its errors.
np.save(path("x.npy"), a)
np.save(path("y.npy"), a)
p = tool(bench, "-m", RELU, "-d", "CPU", "-niter", "3", "-i", path("x.npy"))
check(p.returncode == 0, f"bench -i: {p.stderr.strip()}")
p = tool(bench, "-m", ADD, "-d", "CPU", "-niter", "3", "-api", "sync",
         "-i", "x=" + path("x.npy"), "-i", "y=" + path("in.raw") + ":f32:3,4,5")
check(p.returncode == 0, f"bench -i two inputs: {p.stderr.strip()}")
np.save(path("x64.npy"), a.astype(np.float64))
p = tool(bench, "-m", RELU, "-d", "CPU", "-niter", "2", "-i", "x=" + path("x64.npy"))
check(p.returncode == 0, f"bench -i f64 into f32: {p.stderr.strip()}")
np.save(path("small.npy"), a[:1])
for args, code, what in (([path("x.npy")], 1, "unnamed with two inputs"),
                         (["nope=" + path("x.npy")], 1, "unknown input"),
                         (["x=" + path("small.npy")], 1, "another shape"),
                         (["x=" + write("bad.npy", b"junk")], 1, "a bad file")):
    p = tool(bench, "-m", ADD, "-d", "CPU", "-niter", "1", *sum((["-i", s] for s in args), []))
    msg = p.stderr.strip()
    check(p.returncode == code and msg and "\n" not in msg,
          f"bench -i {what}: exit {p.returncode}, {msg!r}")

# vnpu-bench freezes an input whose values decide shapes to its -i file;
# a file of values the node refuses is a one-line error, as is a shape
# input given a float file (the model's input is i64), for vnpu-run too.
data = os.path.join(RESHAPE, "test_data_set_0", "input_0.pb")
np.save(path("shape.npy"), np.array([4, 2, 3], dtype=np.int64))
p = tool(bench, "-m", os.path.join(RESHAPE, "model.onnx"), "-d", "CPU", "-niter", "2",
         "-i", "data=" + data, "-i", "shape=" + path("shape.npy"))
check(p.returncode == 0 and "shape" not in p.stdout.split("Outputs")[0].split("Inputs")[-1],
      f"bench -i a shape input: exit {p.returncode}, {p.stderr.strip()!r}")
np.save(path("badshape.npy"), np.array([5, 5, 5], dtype=np.int64))
np.save(path("fshape.npy"), np.array([4, 2, 3], dtype=np.float32))
for spec, what in ((path("badshape.npy"), "Reshape node: 24 elements reshaped to 125"),
                   (path("fshape.npy"), "freeze 'shape': type f32, the input is i64")):
    for args in ((bench, "-niter", "1"), (run, "-o", path("out"))):
        p = tool(*args, "-m", os.path.join(RESHAPE, "model.onnx"), "-d", "CPU",
                 "-i", "data=" + data, "-i", "shape=" + spec)
        msg = p.stderr.strip()
        check(p.returncode == 1 and what in msg and "\n" not in msg,
              f"{args[0]} -i a bad shape input: exit {p.returncode}, {msg!r}")

# String tensors (TensorProto string_data) through StringNormalizer; a
# string count other than the shape's, and .npy, which has no strings.
SN = "/usr/share/libonnx-testdata/data/node/test_strnormalizer_export_monday_insensintive_upper_twodim"
p = tool(run, "-m", os.path.join(SN, "model.onnx"), "-d", "CPU",
         "-i", os.path.join(SN, "test_data_set_0/input_0.pb"), "-o", path("sn"))
with open(os.path.join(SN, "test_data_set_0/output_0.pb"), "rb") as f:
    want = f.read()
got = open(path("sn/y.pb"), "rb").read() if p.returncode == 0 else b""
check(p.returncode == 0 and got == want, f"strings: exit {p.returncode}, {p.stderr.strip()!r}")
short = b"\x08\x01\x08\x06\x10\x08" + b"\x32\x01a" * 5 + b"\x42\x01x"
for spec, args, what in ((write("short.pb", short), (), "5 strings, the shape needs 6"),
                         (os.path.join(SN, "test_data_set_0/input_0.pb"), ("-f", "npy"),
                          "string has no .npy type")):
    p = tool(run, "-m", os.path.join(SN, "model.onnx"), "-d", "CPU", "-i", spec,
             "-o", path("sn2"), *args)
    msg = p.stderr.strip()
    check(p.returncode == 1 and what in msg and "\n" not in msg,
          f"strings refused: exit {p.returncode}, {msg!r}")

subprocess.run(["rm", "-rf", tmp])
if failures:
    sys.exit(f"{len(failures)} failure(s)")
print("tensor files: ok")
