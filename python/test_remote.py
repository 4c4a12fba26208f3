#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Python package's remote tensors and fences on one device (exit 77
when it is absent): a model run in place over memory the device reads
and writes, dma-bufs of vgem (where vgem is loaded), two requests chained
through an output's out-fence with no wait in between (the NPU), and
the errors of bad use (every device).

    test_remote.py DEVICE
"""
import fcntl
import os
import struct
import sys

import numpy as np

import vnpu
from vnpu_check import check, finish, raises

NODE = "/usr/share/libonnx-testdata/data/node"
ADD = f"{NODE}/test_add/model.onnx"
SHAPE = (3, 4, 5)
device = sys.argv[1]
def vgem_dmabuf(nbytes):
    """A dma-buf fd of nbytes from vgem's card node, or None without vgem."""
    drm = "/sys/class/drm"
    for name in sorted(os.listdir(drm) if os.path.isdir(drm) else []):
        # vgem's card is of its platform device "vgem" (no driver bound).
        device = os.path.realpath(f"{drm}/{name}/device")
        if not name.startswith("card") or os.path.basename(device) != "vgem":
            continue
        card = os.open(f"/dev/dri/{name}", os.O_RDWR | os.O_CLOEXEC)
        try:
            # DRM_IOCTL_MODE_CREATE_DUMB, then DRM_IOCTL_PRIME_HANDLE_TO_FD.
            dumb = struct.pack("IIIIIIQ", 1, (nbytes + 3) // 4, 32, 0, 0, 0, 0)
            handle = struct.unpack("IIIIIIQ", fcntl.ioctl(card, 0xC02064B2, dumb))[4]
            prime = struct.pack("IIi", handle, os.O_RDWR | os.O_CLOEXEC, -1)
            return struct.unpack("IIi", fcntl.ioctl(card, 0xC00C642D, prime))[2]
        finally:
            os.close(card)
    return None


core = vnpu.Core()
if device not in core.available_devices:
    print(f"skip: no {device} in {core.available_devices}")
    sys.exit(77)
fenced = device.startswith("NPU")
add = core.compile_model(ADD, device)
rng = np.random.default_rng(3)
x = rng.standard_normal(SHAPE).astype(np.float32)
y = rng.standard_normal(SHAPE).astype(np.float32)

# In place: inputs and output over memory the device uses as it is.
tx, ty, ts = (core.create_remote_tensor(device, SHAPE, np.float32) for _ in range(3))
check(tx.device == device, f"remote tensor of {device}: {tx.device}")
check(tx.array.shape == SHAPE and tx.array.dtype == np.float32, "remote tensor's array")
tx.array[...], ty.array[...] = x, y
req = add.create_infer_request()
for name, t in (("x", tx), ("y", ty), ("sum", ts)):
    req.set_tensor(name, t)
req.infer()
check(np.allclose(ts.array, x + y), "sum written in place")
tx.array[...] = -x
req.infer()
check(np.allclose(ts.array, y - x), "the next run reads the memory as it is now")
out = ts.array
del ts, req
check(np.allclose(out, y - x), "an array outlives its tensor and request")

# dma-bufs: vgem's memory as the output (the CPU imports none).
fd = vgem_dmabuf(x.nbytes)
if fd is not None and fenced:
    td = core.import_dmabuf_tensor(device, fd, SHAPE, np.float32)
    os.close(fd)                       # the tensor holds the dma-buf
    req = add.create_infer_request()
    req.set_tensor("sum", td)
    req.infer({"x": x, "y": y})
    check(np.allclose(td.array, x + y), "sum written into a vgem dma-buf")
    del td, req
elif fd is not None:
    raises("UNSUPPORTED", lambda: core.import_dmabuf_tensor(device, fd, SHAPE, np.float32),
           "a dma-buf on a device without import")
    os.close(fd)
else:
    print("dma-buf: vgem is not loaded, not tried")

# Fences: request B reads A's output, started before A has run, gated on
# the device by A's out-fence.
a, b = add.create_infer_request(), add.create_infer_request()
mid, last = (core.create_remote_tensor(device, SHAPE, np.float32) for _ in range(2))
if fenced:
    raises("NOT_FOUND", mid.export_out_fence, "an out-fence before any run")
    a.set_tensor("sum", mid)
    b.set_tensor("x", mid)
    b.set_tensor("sum", last)
    for k in range(3):
        a.start_async({"x": x + k, "y": y})
        fence = mid.export_out_fence()
        mid.set_in_fence(fence)
        os.close(fence)
        b.start_async({"y": y})
        b.wait()
        a.wait()
        check(np.allclose(last.array, x + k + 2 * y), f"B after A through the fence, run {k}")
    fence = mid.export_out_fence("syncobj")
    check(fence >= 0, "a syncobj out-fence")
    mid.set_in_fence(fence, "syncobj")
    os.close(fence)
    b.infer({"y": y})
    check(np.allclose(last.array, x + 2 + 2 * y), "a syncobj in-fence")
else:
    raises("UNSUPPORTED", mid.export_out_fence, "an out-fence on a device without fences")
    raises("UNSUPPORTED", lambda: mid.set_in_fence(0), "an in-fence on a device without fences")

# Bad use.
raises("NOT_FOUND", lambda: core.create_remote_tensor("GPU", SHAPE, np.float32), "no device")
raises("INVALID_ARGUMENT", lambda: core.create_remote_tensor(device, (3, -1), np.float32),
       "a dynamic shape")
raises("INVALID_ARGUMENT", lambda: core.create_remote_tensor(device, SHAPE, np.complex64),
       "a dtype libvnpu lacks")
raises("INVALID_ARGUMENT", lambda: core.create_remote_tensor(device, (1,) * 9, np.float32),
       "rank 9")
raises("INVALID_ARGUMENT", lambda: core.import_dmabuf_tensor(device, -1, SHAPE, np.float32),
       "a dma-buf fd of -1")
with open(ADD, "rb") as f:
    raises("UNSUPPORTED" if not fenced else "INVALID_ARGUMENT",
           lambda: core.import_dmabuf_tensor(device, f.fileno(), SHAPE, np.float32),
           "a file that is no dma-buf")
    if fenced:
        raises("INVALID_ARGUMENT", lambda: mid.set_in_fence(f.fileno()), "a file as a fence")
raises("INVALID_ARGUMENT", lambda: mid.set_in_fence(0, "semaphore"), "an unknown fence kind")
raises("INVALID_ARGUMENT", lambda: mid.export_out_fence("semaphore"), "an unknown fence kind")
if fenced:
    raises("INVALID_ARGUMENT", lambda: mid.set_in_fence(-1), "an in-fence fd of -1")
req = add.create_infer_request()
raises("INVALID_ARGUMENT", lambda: req.set_tensor("x", x), "a numpy array to set_tensor")
raises("NOT_FOUND", lambda: req.set_tensor("nope", tx), "an unknown port")
wrong = core.create_remote_tensor(device, (2, 2), np.float32)
raises("INVALID_ARGUMENT", lambda: req.set_tensor("x", wrong), "a tensor of another shape")

finish(f"python remote tensors on {device}: ok")
