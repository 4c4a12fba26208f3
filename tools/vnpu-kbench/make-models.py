#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Writes the ONNX models of vnpu-kbench's shapes into a directory:
gemm (MatMul 1024x1024 by a constant 1024x1024), conv3x3 (64->64 on
56x56, pad 1), dw3x3 (depthwise 3x3 on 32x112x112, pad 1) and conv1x1
(256->256 on 28x28), all f32 with constant weights and biases."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, node, inputs, inits, output):
    graph = helper.make_graph([node], 'kbench', inputs, [output], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


def conv(path, c, m, hw, k, group):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, c // group, k, k)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    node = helper.make_node('Conv', ['x', 'w', 'b'], ['y'], group=group,
                            kernel_shape=[k, k], pads=[k // 2] * 4)
    save(path, node,
         [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, hw, hw])],
         [numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b')],
         helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, m, hw, hw]))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    bmat = rng.standard_normal((1024, 1024)).astype(np.float32)
    save(out + '/gemm.onnx', helper.make_node('MatMul', ['a', 'b'], ['y']),
         [helper.make_tensor_value_info('a', TensorProto.FLOAT, [1024, 1024])],
         [numpy_helper.from_array(bmat, 'b')],
         helper.make_tensor_value_info('y', TensorProto.FLOAT, [1024, 1024]))
    conv(out + '/conv3x3.onnx', 64, 64, 56, 3, 1)
    conv(out + '/dw3x3.onnx', 32, 32, 112, 3, 32)
    conv(out + '/conv1x1.onnx', 256, 256, 28, 1, 1)


if __name__ == '__main__':
    main()
