# SPDX-License-Identifier: MIT
"""A small ONNX graph builder that writes the node patterns exporters write.

Node names follow PyTorch's exporter ("/layer1/layer1.0/conv1/Conv", outputs
"<node>_output_0"), initializers are named like state-dict entries
("layer1.0.conv1.weight"). Weights are drawn from one seeded generator with
the initializations the frameworks use (He for convolutions feeding a
rectifier, Xavier for linear layers) and BatchNorm statistics in the ranges a
trained network has, so that activations keep a unit-like scale through the
depth of the network and outputs are neither zero nor overflowing.
"""
import contextlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


class Graph:
    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.inputs = []
        self.outputs = []
        self.scope = []
        self.used = {}
        self.consts = {}

    # ---- names ----

    @contextlib.contextmanager
    def block(self, name):
        self.scope.append(name)
        try:
            yield
        finally:
            self.scope.pop()

    def _unique(self, base):
        k = self.used.get(base, 0)
        self.used[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def param_name(self, leaf):
        return self._unique(".".join(self.scope + [leaf]))

    # ---- tensors ----

    def input(self, name, shape, elem=F32):
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def output(self, tensor, name, shape=None, elem=F32):
        """Names the graph output @name: an Identity-free rename of @tensor's
        producer, as exporters name their outputs."""
        for node in self.nodes:
            for i, o in enumerate(node.output):
                if o == tensor:
                    node.output[i] = name
            for i, x in enumerate(node.input):
                if x == tensor:
                    node.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def param(self, leaf, array):
        name = self.param_name(leaf)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, array, dtype=np.int64):
        """A shared constant (shapes, axes, scalars) named like onnx::X_N."""
        a = np.asarray(array, dtype=dtype)
        key = (a.dtype.str, a.shape, a.tobytes())
        if key not in self.consts:
            name = f"onnx::{self.name}_const_{len(self.consts)}"
            self.inits.append(numpy_helper.from_array(a, name))
            self.consts[key] = name
        return self.consts[key]

    def op(self, op_type, inputs, outputs=1, **attrs):
        base = "/" + "/".join(self.scope + [op_type]) if self.scope else "/" + op_type
        name = self._unique(base)
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    # ---- weights ----

    def he(self, shape, fan_in):
        return (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def xavier(self, shape, fan_in, fan_out):
        lim = np.sqrt(6.0 / (fan_in + fan_out))
        return self.rng.uniform(-lim, lim, shape).astype(np.float32)

    def small(self, shape, scale=0.02):
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    # ---- layers ----

    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, dilation=1,
             bias=True, gain=2.0):
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        if pad is None:
            pad = [dilation * (kh - 1) // 2, dilation * (kw - 1) // 2] * 2
        elif isinstance(pad, int):
            pad = [pad] * 4
        fan_in = cin // group * kh * kw
        w = (self.rng.standard_normal((cout, cin // group, kh, kw))
             * np.sqrt(gain / fan_in)).astype(np.float32)
        ins = [x, self.param("weight", w)]
        if bias:
            ins.append(self.param("bias", self.small(cout, 0.05)))
        return self.op("Conv", ins, dilations=[dilation, dilation], group=group,
                       kernel_shape=[kh, kw], pads=pad, strides=[sh, sw])

    def batchnorm(self, x, c, gamma=1.0):
        """BatchNormalization with running statistics of a trained network:
        means near zero, variances near one, scales near @gamma."""
        ins = [x,
               self.param("weight", (gamma * self.rng.uniform(0.8, 1.2, c)).astype(np.float32)),
               self.param("bias", self.small(c, 0.05)),
               self.param("running_mean", self.small(c, 0.05)),
               self.param("running_var", self.rng.uniform(0.8, 1.2, c).astype(np.float32))]
        return self.op("BatchNormalization", ins, epsilon=1e-5, momentum=0.9)

    def conv_bn(self, x, cin, cout, k, stride=1, group=1, act="Relu", gamma=1.0, pad=None,
                conv_name="conv", bn_name="bn"):
        with self.block(conv_name):
            y = self.conv(x, cin, cout, k, stride, pad=pad, group=group, bias=False)
        with self.block(bn_name):
            y = self.batchnorm(y, cout, gamma)
        return self.act(y, act)

    def act(self, x, kind):
        if kind is None:
            return x
        if kind == "Relu":
            return self.op("Relu", [x])
        if kind == "HardSwish":
            return self.hardswish(x)
        if kind == "SiLU":
            return self.op("Mul", [x, self.op("Sigmoid", [x])])
        raise ValueError(kind)

    def hardswish(self, x):
        """x * relu6(x + 3) / 6, as exporters before opset 14 write it."""
        t = self.op("Add", [x, self.const(3.0, np.float32)])
        t = self.op("Clip", [t, self.const(0.0, np.float32), self.const(6.0, np.float32)])
        t = self.op("Mul", [x, t])
        return self.op("Div", [t, self.const(6.0, np.float32)])

    def linear(self, x, fin, fout, transposed=True, gain=1.0):
        """PyTorch's nn.Linear: Gemm(transB=1) on 2-D inputs, else MatMul by
        the transposed weight and Add."""
        w = gain * self.xavier((fout, fin), fin, fout)
        b = self.small(fout, 0.02)
        if transposed:
            return self.op("Gemm", [x, self.param("weight", w), self.param("bias", b)],
                           alpha=1.0, beta=1.0, transB=1)
        y = self.op("MatMul", [x, self.param("weight", np.ascontiguousarray(w.T))])
        return self.op("Add", [self.param("bias", b), y])

    def resize(self, x, scale, mode="nearest"):
        """Upsampling by @scale: nearest as Paddle and Ultralytics export it
        (asymmetric, floor), bilinear as PyTorch's align_corners=False."""
        scales = self.const([1.0, 1.0, scale, scale], np.float32)
        if mode == "nearest":
            return self.op("Resize", [x, "", scales], coordinate_transformation_mode="asymmetric",
                           mode="nearest", nearest_mode="floor")
        return self.op("Resize", [x, "", scales], coordinate_transformation_mode="half_pixel",
                       mode="linear")

    # ---- the model ----

    def model(self, opset, doc):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="vnpu-zoo", doc_string=doc)
        m.ir_version = 8
        return m


def params(model):
    return sum(int(np.prod(i.dims)) for i in model.graph.initializer)


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)
