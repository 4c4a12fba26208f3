# SPDX-License-Identifier: MIT
"""Text detection and recognition as PaddleOCR's models export (Paddle2ONNX,
BatchNorm kept): a DBNet detector at 320x320 and a CRNN recognizer at
48x320 with a bidirectional LSTM and PP-OCR's 6625-character dictionary."""
import numpy as np

from graph import Graph


def basic_block(g, x, cin, cout, stride):
    y = g.conv_bn(x, cin, cout, 3, stride, conv_name="conv1", bn_name="bn1")
    y = g.conv_bn(y, cout, cout, 3, act=None, gamma=0.3, conv_name="conv2", bn_name="bn2")
    if stride != 1 or cin != cout:
        with g.block("short"):
            x = g.conv_bn(x, cin, cout, 1, stride, act=None)
    return g.op("Relu", [g.op("Add", [x, y])])


def resnet18_stages(g, x):
    """ResNet-18's stem and four stages: C2..C5 at strides 4, 8, 16, 32."""
    with g.block("backbone"):
        y = g.conv_bn(x, 3, 64, 7, 2, conv_name="conv1", bn_name="bn1")
        y = g.op("MaxPool", [y], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
        feats, c = [], 64
        for si, cout in enumerate([64, 128, 256, 512]):
            for b in range(2):
                with g.block(f"stage{si}.{b}"):
                    y = basic_block(g, y, c, cout, 2 if b == 0 and si > 0 else 1)
                c = cout
            feats.append((y, c))
    return feats


def dbnet():
    """DB's FPN: 1x1 lateral convolutions, top-down sum with nearest
    upsampling, 3x3 smoothing to a quarter of the channels, bilinear
    upsampling of each level to 1/4, Concat; the head's two transposed
    convolutions back to full size and Sigmoid."""
    g = Graph("dbnet", seed=320)
    x = g.input("x", [1, 3, 320, 320])
    feats = resnet18_stages(g, x)
    inner = 256
    with g.block("neck"):
        lat = []
        for i, (f, c) in enumerate(feats):
            with g.block(f"in{i + 2}_conv"):
                lat.append(g.conv(f, c, inner, 1, pad=0, bias=False, gain=1.0))
        for i in (2, 1, 0):
            lat[i] = g.op("Add", [lat[i], g.resize(lat[i + 1], 2.0, "nearest")])
        outs = []
        for i, t in enumerate(lat):
            with g.block(f"p{i + 2}_conv"):
                p = g.conv(t, inner, inner // 4, 3, bias=False, gain=1.0)
            outs.append(g.resize(p, float(2 ** i), "linear") if i else p)
        y = g.op("Concat", outs[::-1], axis=1)
    with g.block("head"), g.block("binarize"):
        y = g.conv_bn(y, inner, inner // 4, 3, conv_name="conv1", bn_name="conv_bn1")
        with g.block("conv2"):
            w = g.he((inner // 4, inner // 4, 2, 2), inner // 4)
            y = g.op("ConvTranspose", [y, g.param("weight", w), g.param("bias", g.small(inner // 4))],
                     kernel_shape=[2, 2], strides=[2, 2])
        with g.block("conv_bn2"):
            y = g.op("Relu", [g.batchnorm(y, inner // 4)])
        with g.block("conv3"):
            w = g.xavier((inner // 4, 1, 2, 2), inner // 4, 4)
            y = g.op("ConvTranspose", [y, g.param("weight", w), g.param("bias", g.small(1))],
                     kernel_shape=[2, 2], strides=[2, 2])
        y = g.op("Sigmoid", [y])
    g.output(y, "sigmoid_0.tmp_0", [1, 1, 320, 320])
    return g.model(13, "DBNet text detector (ResNet-18 backbone, DB FPN and head), 320x320")


def bilstm(g, x, seq, fin, hidden):
    """One bidirectional LSTM layer on [seq, 1, fin]: Y [seq, 2, 1, hidden]
    back to [seq, 1, 2 * hidden] as exporters reshape it."""
    scale = 1.0 / np.sqrt(hidden)
    w = g.rng.uniform(-scale, scale, (2, 4 * hidden, fin)).astype(np.float32)
    r = g.rng.uniform(-scale, scale, (2, 4 * hidden, hidden)).astype(np.float32)
    b = g.rng.uniform(-scale, scale, (2, 8 * hidden)).astype(np.float32)
    y = g.op("LSTM", [x, g.param("weight_ih", w), g.param("weight_hh", r), g.param("bias", b)],
             outputs=3, direction="bidirectional", hidden_size=hidden)[0]
    y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
    return g.op("Reshape", [y, g.const([seq, 1, 2 * hidden])])


def crnn():
    """A VGG-like backbone that pools height 48 down to 1 and keeps 80 time
    steps, two bidirectional LSTM layers of 256, a MatMul to 6625 classes
    and Softmax over them."""
    g = Graph("crnn", seed=48)
    x = g.input("x", [1, 3, 48, 320])
    stages = [(32, 2, None), (64, 1, (2, 2)), (128, 1, None), (128, 1, (2, 1)),
              (256, 1, None), (256, 1, (2, 1)), (512, 1, None), (512, 1, (3, 1))]
    y, c = x, 3
    with g.block("backbone"):
        for i, (cout, s, pool) in enumerate(stages):
            with g.block(f"conv{i}"):
                y = g.conv_bn(y, c, cout, 3, s)
            if pool:
                y = g.op("MaxPool", [y], kernel_shape=list(pool), strides=list(pool))
            c = cout
    seq, hidden = 80, 256
    with g.block("neck"):
        y = g.op("Squeeze", [y, g.const([2])])
        y = g.op("Transpose", [y], perm=[2, 0, 1])
        for i in range(2):
            with g.block(f"lstm{i}"):
                y = bilstm(g, y, seq, c if i == 0 else 2 * hidden, hidden)
        y = g.op("Transpose", [y], perm=[1, 0, 2])
    with g.block("head"):
        # a trained recognizer's confident logits (several units apart)
        y = g.linear(y, 2 * hidden, 6625, transposed=False, gain=40.0)
        y = g.op("Softmax", [y], axis=2)
    g.output(y, "softmax_0.tmp_0", [1, seq, 6625])
    return g.model(13, "CRNN text recognizer (VGG-like backbone, 2x BiLSTM 256), 48x320, "
                   "6625 classes")
