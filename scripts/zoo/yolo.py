# SPDX-License-Identifier: MIT
"""A YOLOv8n-style detector at 640x640 as Ultralytics exports it (opset 17,
BatchNorm fused into the convolutions): SiLU written as x * Sigmoid(x), C2f
blocks (Split, bottlenecks, Concat), SPPF's three MaxPools, nearest Resize
upsampling and Concat in the neck, and the anchor-free head with its DFL
(Softmax over 16 bins, a 1x1 convolution) and box decoding."""
import numpy as np

from graph import Graph

CLASSES, REG_MAX = 80, 16


def conv(g, x, cin, cout, k, s=1, name="conv"):
    with g.block(name):
        return g.act(g.conv(x, cin, cout, k, s), "SiLU")


def c2f(g, x, cin, cout, n, shortcut):
    c = cout // 2
    y = conv(g, x, cin, 2 * c, 1, name="cv1")
    parts = g.op("Split", [y, g.const([c, c])], outputs=2, axis=1)
    ys = list(parts)
    for i in range(n):
        with g.block(f"m.{i}"):
            t = conv(g, ys[-1], c, c, 3, name="cv1")
            t = conv(g, t, c, c, 3, name="cv2")
            ys.append(g.op("Add", [ys[-1], t]) if shortcut else t)
    return conv(g, g.op("Concat", ys, axis=1), (2 + n) * c, cout, 1, name="cv2")


def sppf(g, x, cin, cout):
    c = cin // 2
    y = conv(g, x, cin, c, 1, name="cv1")
    ys = [y]
    for _ in range(3):
        ys.append(g.op("MaxPool", [ys[-1]], kernel_shape=[5, 5], pads=[2, 2, 2, 2],
                       strides=[1, 1]))
    return conv(g, g.op("Concat", ys, axis=1), 4 * c, cout, 1, name="cv2")


def anchors(sizes, strides):
    pts, st = [], []
    for n, s in zip(sizes, strides):
        yy, xx = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        pts.append(np.stack([xx.ravel(), yy.ravel()]))
        st.append(np.full((1, n * n), s))
    return (np.concatenate(pts, 1)[None].astype(np.float32),
            np.concatenate(st, 1)[None].astype(np.float32))


def detect(g, feats, size):
    c2, c3 = max(16, feats[0][1] // 4, REG_MAX * 4), max(feats[0][1], min(CLASSES, 100))
    flat = []
    for i, (f, c) in enumerate(feats):
        with g.block(f"cv2.{i}"):
            b = conv(g, conv(g, f, c, c2, 3, name="0"), c2, c2, 3, name="1")
            with g.block("2"):
                b = g.conv(b, c2, 4 * REG_MAX, 1, gain=1.0)
        with g.block(f"cv3.{i}"):
            k = conv(g, conv(g, f, c, c3, 3, name="0"), c3, c3, 3, name="1")
            with g.block("2"):
                k = g.conv(k, c3, CLASSES, 1, gain=1.0)
        y = g.op("Concat", [b, k], axis=1)
        flat.append(g.op("Reshape", [y, g.const([1, 4 * REG_MAX + CLASSES, -1])]))
    y = g.op("Concat", flat, axis=2)
    box, cls = g.op("Split", [y, g.const([4 * REG_MAX, CLASSES])], outputs=2, axis=1)
    n = sum((size // s) ** 2 for s in (8, 16, 32))
    with g.block("dfl"):
        d = g.op("Reshape", [box, g.const([1, 4, REG_MAX, n])])
        d = g.op("Softmax", [g.op("Transpose", [d], perm=[0, 2, 1, 3])], axis=1)
        bins = np.arange(REG_MAX, dtype=np.float32).reshape(1, REG_MAX, 1, 1)
        d = g.op("Conv", [d, g.param("conv.weight", bins)], kernel_shape=[1, 1])
        d = g.op("Reshape", [d, g.const([1, 4, n])])
    lt, rb = g.op("Split", [d, g.const([2, 2])], outputs=2, axis=1)
    pts, strides = anchors([size // s for s in (8, 16, 32)], (8, 16, 32))
    a = g.const(pts, np.float32)
    x1y1 = g.op("Sub", [a, lt])
    x2y2 = g.op("Add", [a, rb])
    cxy = g.op("Div", [g.op("Add", [x1y1, x2y2]), g.const(2.0, np.float32)])
    wh = g.op("Sub", [x2y2, x1y1])
    xywh = g.op("Mul", [g.op("Concat", [cxy, wh], axis=1), g.const(strides, np.float32)])
    return g.op("Concat", [xywh, g.op("Sigmoid", [cls])], axis=1), n


def yolov8n(size=640):
    g = Graph("yolov8n", seed=8)
    x = g.input("images", [1, 3, size, size])
    with g.block("model.0"):
        y = conv(g, x, 3, 16, 3, 2)
    with g.block("model.1"):
        y = conv(g, y, 16, 32, 3, 2)
    with g.block("model.2"):
        y = c2f(g, y, 32, 32, 1, True)
    with g.block("model.3"):
        y = conv(g, y, 32, 64, 3, 2)
    with g.block("model.4"):
        p3 = c2f(g, y, 64, 64, 2, True)
    with g.block("model.5"):
        y = conv(g, p3, 64, 128, 3, 2)
    with g.block("model.6"):
        p4 = c2f(g, y, 128, 128, 2, True)
    with g.block("model.7"):
        y = conv(g, p4, 128, 256, 3, 2)
    with g.block("model.8"):
        y = c2f(g, y, 256, 256, 1, True)
    with g.block("model.9"):
        p5 = sppf(g, y, 256, 256)
    with g.block("model.10"):
        y = g.resize(p5, 2.0, "nearest")
    y = g.op("Concat", [y, p4], axis=1)
    with g.block("model.12"):
        h4 = c2f(g, y, 384, 128, 1, False)
    with g.block("model.13"):
        y = g.resize(h4, 2.0, "nearest")
    y = g.op("Concat", [y, p3], axis=1)
    with g.block("model.15"):
        o3 = c2f(g, y, 192, 64, 1, False)
    with g.block("model.16"):
        y = conv(g, o3, 64, 64, 3, 2)
    y = g.op("Concat", [y, h4], axis=1)
    with g.block("model.18"):
        o4 = c2f(g, y, 192, 128, 1, False)
    with g.block("model.19"):
        y = conv(g, o4, 128, 128, 3, 2)
    y = g.op("Concat", [y, p5], axis=1)
    with g.block("model.21"):
        o5 = c2f(g, y, 384, 256, 1, False)
    with g.block("model.22"):
        y, n = detect(g, [(o3, 64), (o4, 128), (o5, 256)], size)
    g.output(y, "output0", [1, 4 + CLASSES, n])
    return g.model(17, f"YOLOv8n-style detector (C2f, SPPF, anchor-free DFL head), {size}x{size}")
