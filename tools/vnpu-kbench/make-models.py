#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Writes the ONNX models of vnpu-kbench's shapes into a directory:
gemm (MatMul 1024x1024 by a constant 1024x1024), conv3x3 (64->64 on
56x56, pad 1), dw3x3 (depthwise 3x3 on 32x112x112, pad 1), conv1x1
(256->256 on 28x28), gconv3x3 (128->128 in 32 groups on 56x56, pad 1),
deconv2x2 (ConvTranspose 64->64, kernel 2 stride 2, on 160x160), gap
(GlobalAveragePool over 256x160x160), conv1x1_7 (2048->512 on 7x7) and
conv3x3_7 (512->512 on 7x7, pad 1), bert_ffn1, bert_ffn2 and bert_qkv
(MatMul 128x768 by 768x3072, 128x3072 by 3072x768, 128x768 by 768x768), all f32 with constant weights and
biases; and the bandwidth-bound layers of --bandwidth: resize_nn2x and
resize_lin2x (nearest and bilinear 2x upsampling of 1x96x40x40), softmax
(1x40x6625, last axis), softmax_c (1x64x40x40, axis 1), mul_se (1x96x40x40
by 1x96x1x1), add_res (two 1x96x40x40), hardswish (1x96x40x40), transpose
(1x96x80x80 by 0,2,3,1), concat (two 1x48x80x80 on axis 1: the bytes of
vnpu-kbench's one COPY of 96 channels into a 192-channel output),
reduce_mean (1x512x768, last axis, kept) and layernorm (1x512x768, last
axis, constant scale and bias)."""
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


def matmul(path, m, n, k):
    rng = np.random.default_rng(3)
    b = rng.standard_normal((k, n)).astype(np.float32)
    save(path, helper.make_node('MatMul', ['a', 'b'], ['y']),
         [helper.make_tensor_value_info('a', TensorProto.FLOAT, [m, k])],
         [numpy_helper.from_array(b, 'b')],
         helper.make_tensor_value_info('y', TensorProto.FLOAT, [m, n]))


def value(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def resize(path, mode, coord, nearest):
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), 's')
    roi = numpy_helper.from_array(np.array([], np.float32), 'roi')
    node = helper.make_node('Resize', ['x', 'roi', 's'], ['y'], mode=mode,
                            coordinate_transformation_mode=coord,
                            nearest_mode=nearest)
    save(path, node, [value('x', [1, 96, 40, 40])], [scales, roi],
         value('y', [1, 96, 80, 80]))


def bandwidth_models(out):
    fm = [1, 96, 40, 40]
    resize(out + '/resize_nn2x.onnx', 'nearest', 'asymmetric', 'floor')
    resize(out + '/resize_lin2x.onnx', 'linear', 'half_pixel',
           'round_prefer_floor')
    for name, dims, axis in (('softmax', [1, 40, 6625], -1),
                             ('softmax_c', [1, 64, 40, 40], 1)):
        save(out + '/' + name + '.onnx',
             helper.make_node('Softmax', ['x'], ['y'], axis=axis),
             [value('x', dims)], [], value('y', dims))
    for name, op, other, dims in (('mul_se', 'Mul', 's', [1, 96, 1, 1]),
                                  ('add_res', 'Add', 'z', fm)):
        save(out + '/' + name + '.onnx',
             helper.make_node(op, ['x', other], ['y']),
             [value('x', fm), value(other, dims)], [], value('y', fm))
    node = helper.make_node('HardSwish', ['x'], ['y'])
    graph = helper.make_graph([node], 'kbench', [value('x', fm)],
                              [value('y', fm)])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid('', 14)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, out + '/hardswish.onnx')
    copy_models(out)


def copy_models(out):
    save(out + '/transpose.onnx',
         helper.make_node('Transpose', ['x'], ['y'], perm=[0, 2, 3, 1]),
         [value('x', [1, 96, 80, 80])], [], value('y', [1, 80, 80, 96]))
    half = [1, 48, 80, 80]
    save(out + '/concat.onnx',
         helper.make_node('Concat', ['x', 'z'], ['y'], axis=1),
         [value('x', half), value('z', half)], [], value('y', [1, 96, 80, 80]))
    seq = [1, 512, 768]
    save(out + '/reduce_mean.onnx',
         helper.make_node('ReduceMean', ['x'], ['y'], axes=[-1], keepdims=1),
         [value('x', seq)], [], value('y', [1, 512, 1]))
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(rng.standard_normal(768).astype(np.float32),
                                     n) for n in ('g', 'b')]
    node = helper.make_node('LayerNormalization', ['x', 'g', 'b'], ['y'],
                            axis=-1, epsilon=1e-5)
    graph = helper.make_graph([node], 'kbench', [value('x', seq)],
                              [value('y', seq)], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out + '/layernorm.onnx')


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    bmat = rng.standard_normal((1024, 1024)).astype(np.float32)
    save(out + '/gemm.onnx', helper.make_node('MatMul', ['a', 'b'], ['y']),
         [helper.make_tensor_value_info('a', TensorProto.FLOAT, [1024, 1024])],
         [numpy_helper.from_array(bmat, 'b')],
         helper.make_tensor_value_info('y', TensorProto.FLOAT, [1024, 1024]))
    for name, m, n, k in (('bert_ffn1', 128, 3072, 768),
                          ('bert_ffn2', 128, 768, 3072),
                          ('bert_qkv', 128, 768, 768)):
        matmul(out + '/' + name + '.onnx', m, n, k)
    conv(out + '/conv3x3.onnx', 64, 64, 56, 3, 1)
    conv(out + '/dw3x3.onnx', 32, 32, 112, 3, 32)
    conv(out + '/conv1x1.onnx', 256, 256, 28, 1, 1)
    conv(out + '/gconv3x3.onnx', 128, 128, 56, 3, 32)
    conv(out + '/conv1x1_7.onnx', 2048, 512, 7, 1, 1)
    conv(out + '/conv3x3_7.onnx', 512, 512, 7, 3, 1)
    w = rng.standard_normal((64, 64, 2, 2)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    save(out + '/deconv2x2.onnx',
         helper.make_node('ConvTranspose', ['x', 'w', 'b'], ['y'],
                          kernel_shape=[2, 2], strides=[2, 2]),
         [helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                        [1, 64, 160, 160])],
         [numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b')],
         helper.make_tensor_value_info('y', TensorProto.FLOAT,
                                       [1, 64, 320, 320]))
    save(out + '/gap.onnx', helper.make_node('GlobalAveragePool', ['x'], ['y']),
         [helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                        [1, 256, 160, 160])],
         [], helper.make_tensor_value_info('y', TensorProto.FLOAT,
                                           [1, 256, 1, 1]))
    bandwidth_models(out)


if __name__ == '__main__':
    main()
