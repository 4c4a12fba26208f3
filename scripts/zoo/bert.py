# SPDX-License-Identifier: MIT
"""A BERT-base encoder as Hugging Face's BertModel exports from PyTorch:
embeddings (three Gathers), 12 layers of hidden 768 with 12 heads, GELU
written out with Erf, attention as MatMul-Softmax-MatMul between Reshapes
and Transposes, the extended attention mask, and the pooler.

LayerNorm is either decomposed the way the opset-13 exporter writes it
(ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) or the single
LayerNormalization node of opset 17."""
import numpy as np

from graph import Graph, I64

VOCAB, MAX_POS, TYPES = 30522, 512, 2


def layer_norm(g, x, hidden, fused):
    gamma = g.param("weight", g.rng.uniform(0.9, 1.1, hidden).astype(np.float32))
    beta = g.param("bias", g.small(hidden))
    if fused:
        return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-12)
    mean = g.op("ReduceMean", [x], axes=[-1])
    d = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.const(2.0, np.float32)])], axes=[-1])
    std = g.op("Sqrt", [g.op("Add", [var, g.const(1e-12, np.float32)])])
    y = g.op("Div", [d, std])
    return g.op("Add", [g.op("Mul", [y, gamma]), beta])


def gelu(g, x):
    t = g.op("Erf", [g.op("Div", [x, g.const(1.4142135381698608, np.float32)])])
    t = g.op("Mul", [x, g.op("Add", [t, g.const(1.0, np.float32)])])
    return g.op("Mul", [t, g.const(0.5, np.float32)])


def dense(g, x, fin, fout, name):
    with g.block(name):
        return g.linear(x, fin, fout, transposed=False)


def attention(g, x, mask, seq, hidden, heads):
    hd = hidden // heads
    split = g.const([1, seq, heads, hd])

    def heads_of(name, perm):
        return g.op("Transpose", [g.op("Reshape", [dense(g, x, hidden, hidden, name), split])],
                    perm=perm)

    with g.block("attention"), g.block("self"):
        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        s = g.op("Div", [g.op("MatMul", [q, k]), g.const(float(np.sqrt(hd)), np.float32)])
        p = g.op("Softmax", [g.op("Add", [s, mask])], axis=-1)
        c = g.op("Transpose", [g.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
        c = g.op("Reshape", [c, g.const([1, seq, hidden])])
    return c


def encoder_layer(g, x, mask, seq, hidden, heads, fused):
    c = attention(g, x, mask, seq, hidden, heads)
    with g.block("attention"), g.block("output"):
        y = g.op("Add", [dense(g, c, hidden, hidden, "dense"), x])
        with g.block("LayerNorm"):
            x = layer_norm(g, y, hidden, fused)
    with g.block("intermediate"):
        h = gelu(g, dense(g, x, hidden, 4 * hidden, "dense"))
    with g.block("output"):
        y = g.op("Add", [dense(g, h, 4 * hidden, hidden, "dense"), x])
        with g.block("LayerNorm"):
            return layer_norm(g, y, hidden, fused)


def bert(name, fused, layers=12, hidden=768, seq=128):
    g = Graph(name, seed=768)
    ids = g.input("input_ids", [1, seq], I64)
    mask_in = g.input("attention_mask", [1, seq], I64)
    types = g.input("token_type_ids", [1, seq], I64)
    with g.block("embeddings"):
        we = g.param("word_embeddings.weight", g.small((VOCAB, hidden)))
        pe = g.param("position_embeddings.weight", g.small((MAX_POS, hidden)))
        te = g.param("token_type_embeddings.weight", g.small((TYPES, hidden)))
        pos = g.const(np.arange(seq).reshape(1, seq))
        y = g.op("Add", [g.op("Gather", [we, ids]), g.op("Gather", [te, types])])
        y = g.op("Add", [y, g.op("Gather", [pe, pos])])
        with g.block("LayerNorm"):
            y = layer_norm(g, y, hidden, fused)
    # (1 - mask) * -3.4e38 broadcast over heads and queries
    m = g.op("Unsqueeze", [g.op("Unsqueeze", [mask_in, g.const([1])]), g.const([2])])
    m = g.op("Cast", [m], to=1)
    m = g.op("Sub", [g.const(1.0, np.float32), m])
    mask = g.op("Mul", [m, g.const(np.finfo(np.float32).min, np.float32)])
    for i in range(layers):
        with g.block("encoder"), g.block(f"layer.{i}"):
            y = encoder_layer(g, y, mask, seq, hidden, 12, fused)
    y = g.output(y, "last_hidden_state", [1, seq, hidden])
    with g.block("pooler"):
        first = g.op("Gather", [y, g.const(0)], axis=1)
        p = g.op("Tanh", [dense(g, first, hidden, hidden, "dense")])
    g.output(p, "pooler_output", [1, hidden])
    what = "LayerNormalization" if fused else "LayerNorm decomposed (ReduceMean/Sub/Pow/Sqrt/Div)"
    return g.model(17 if fused else 13,
                   f"BERT-base encoder, {layers} layers, hidden {hidden}, sequence {seq}, {what}")


def bert_base():
    return bert("bert_base", fused=False)


def bert_base_ln():
    return bert("bert_base_ln", fused=True)
