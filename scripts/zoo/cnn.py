# SPDX-License-Identifier: MIT
"""Image classifiers: MobileNetV3-Large and ResNet-50 at 224x224, the graphs
torchvision's models export to (opset 13)."""
from graph import Graph


def make_divisible(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    return n + d if n < 0.9 * v else n


# kernel, expanded, out, squeeze-excite, activation, stride (torchvision's table)
MBV3_LARGE = [
    (3, 16, 16, False, "Relu", 1), (3, 64, 24, False, "Relu", 2),
    (3, 72, 24, False, "Relu", 1), (5, 72, 40, True, "Relu", 2),
    (5, 120, 40, True, "Relu", 1), (5, 120, 40, True, "Relu", 1),
    (3, 240, 80, False, "HardSwish", 2), (3, 200, 80, False, "HardSwish", 1),
    (3, 184, 80, False, "HardSwish", 1), (3, 184, 80, False, "HardSwish", 1),
    (3, 480, 112, True, "HardSwish", 1), (3, 672, 112, True, "HardSwish", 1),
    (5, 672, 160, True, "HardSwish", 2), (5, 960, 160, True, "HardSwish", 1),
    (5, 960, 160, True, "HardSwish", 1),
]


def squeeze_excite(g, x, c):
    """GlobalAveragePool, two 1x1 convolutions, HardSigmoid, scale."""
    sq = make_divisible(c // 4)
    s = g.op("GlobalAveragePool", [x])
    with g.block("fc1"):
        s = g.conv(s, c, sq, 1, pad=0)
    s = g.op("Relu", [s])
    with g.block("fc2"):
        s = g.conv(s, sq, c, 1, pad=0, gain=1.0)
    s = g.op("HardSigmoid", [s], alpha=1.0 / 6, beta=0.5)
    return g.op("Mul", [s, x])


def mbv3_block(g, x, cin, k, exp, cout, se, act, stride):
    """Inverted residual; BatchNorm folded into the convolutions' biases as
    PyTorch's exporter does in eval mode."""
    y = x
    if exp != cin:
        with g.block("expand"):
            y = g.act(g.conv(y, cin, exp, 1, bias=True), act)
    with g.block("depthwise"):
        y = g.act(g.conv(y, exp, exp, k, stride, group=exp, bias=True), act)
    if se:
        with g.block("se"):
            y = squeeze_excite(g, y, exp)
    with g.block("project"):
        y = g.conv(y, exp, cout, 1, bias=True, gain=1.0)
    if stride == 1 and cin == cout:
        y = g.op("Add", [y, x])
    return y


def mobilenetv3_large():
    g = Graph("mobilenetv3_large", seed=3)
    x = g.input("input", [1, 3, 224, 224])
    with g.block("features"), g.block("0"):
        y = g.hardswish(g.conv(x, 3, 16, 3, 2))
    c = 16
    for i, (k, exp, cout, se, act, s) in enumerate(MBV3_LARGE):
        with g.block("features"), g.block(str(i + 1)):
            y = mbv3_block(g, y, c, k, exp, cout, se, act, s)
        c = cout
    with g.block("features"), g.block("16"):
        y = g.hardswish(g.conv(y, c, 960, 1))
    y = g.op("GlobalAveragePool", [y])
    y = g.op("Flatten", [y], axis=1)
    with g.block("classifier"):
        with g.block("0"):
            y = g.hardswish(g.linear(y, 960, 1280))
        with g.block("3"):
            y = g.linear(y, 1280, 1000)
    g.output(y, "output", [1, 1000])
    return g.model(13, "MobileNetV3-Large (torchvision layout), 224x224, random weights")


def bottleneck(g, x, cin, mid, stride):
    """ResNet v1.5 bottleneck: the stride on the 3x3 convolution; the last
    BatchNorm's scale small, as after training with zero-init residuals."""
    cout = mid * 4
    y = g.conv_bn(x, cin, mid, 1, conv_name="conv1", bn_name="bn1")
    y = g.conv_bn(y, mid, mid, 3, stride, conv_name="conv2", bn_name="bn2")
    y = g.conv_bn(y, mid, cout, 1, act=None, gamma=0.3, conv_name="conv3", bn_name="bn3")
    if stride != 1 or cin != cout:
        with g.block("downsample"):
            x = g.conv_bn(x, cin, cout, 1, stride, act=None, conv_name="0", bn_name="1")
    return g.op("Relu", [g.op("Add", [y, x])])


def resnet50():
    g = Graph("resnet50", seed=50)
    x = g.input("input", [1, 3, 224, 224])
    y = g.conv_bn(x, 3, 64, 7, 2, conv_name="conv1", bn_name="bn1")
    y = g.op("MaxPool", [y], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    c = 64
    for li, (n, mid, stride) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)]):
        for b in range(n):
            with g.block(f"layer{li + 1}"), g.block(f"layer{li + 1}.{b}"):
                y = bottleneck(g, y, c, mid, stride if b == 0 else 1)
            c = mid * 4
    y = g.op("GlobalAveragePool", [y])
    y = g.op("Flatten", [y], axis=1)
    with g.block("fc"):
        y = g.linear(y, 2048, 1000)
    g.output(y, "output", [1, 1000])
    return g.model(13, "ResNet-50 v1.5 (torchvision layout, BatchNorm kept), 224x224, random weights")


def convnet():
    """A small all-convolution network for int8 tests: strides, a MaxPool,
    1x1, depthwise, a 5x5 dilated convolution, channel counts that are not
    multiples of 12, Relu after some convolutions only."""
    g = Graph("convnet", seed=8)
    x = g.input("input", [1, 3, 64, 64])
    with g.block("conv1"):
        y = g.op("Relu", [g.conv(x, 3, 16, 3, 2)])
    y = g.op("MaxPool", [y], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    with g.block("conv2"):
        y = g.op("Relu", [g.conv(y, 16, 24, 1, pad=0)])
    with g.block("dw"):
        y = g.op("Relu", [g.conv(y, 24, 24, 3, group=24)])
    with g.block("conv3"):
        y = g.conv(y, 24, 40, 3, gain=1.0)
    with g.block("conv4"):
        y = g.op("Relu", [g.conv(y, 40, 13, 5, dilation=2, bias=False)])
    with g.block("conv5"):
        y = g.conv(y, 13, 30, 3, 2, gain=1.0)
    g.output(y, "output", [1, 30, 8, 8])
    return g.model(13, "a small convolution network for int8 tests, 64x64, random weights")
