#!/usr/bin/python3
"""Writes a BERT-like transformer encoder as ONNX, with random float32 weights.

The defaults give BERT-base's shape (12 layers, hidden 768, 12 heads, FFN 3072,
vocabulary 30522): about 110 M parameters, 420 MiB of float32 weights. --hidden and
--layers scale it; --external-data puts the weights in MODEL.data beside the model (needed
past protobuf's 2 GiB limit). --opset writes the same graph at another ai.onnx opset (17 to
26; every op it uses is valid at each), with the IR version of the ONNX release that
introduced that opset, as exporters do.

    /usr/bin/python3 tests/bench/make_transformer.py OUT.onnx [--layers N] [--hidden H] [--opset N]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(args):
    rng = np.random.default_rng(args.seed)
    h, heads, ffn = args.hidden, args.heads, args.hidden * 4
    head_dim = h // heads
    initializers = []
    nodes = []

    def weight(name, *shape, scale=0.02):
        array = (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)
        initializers.append(numpy_helper.from_array(array, name))
        return name

    def const_i64(name, values):
        initializers.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=f"{outputs[0]}_{op}", **attrs))
        return outputs[0]

    def layer_norm(x, prefix):
        gamma = initializers.append(numpy_helper.from_array(np.ones(h, np.float32), prefix + ".gamma"))
        beta = initializers.append(numpy_helper.from_array(np.zeros(h, np.float32), prefix + ".beta"))
        del gamma, beta
        return node("LayerNormalization", [x, prefix + ".gamma", prefix + ".beta"], [prefix + ".out"],
                    axis=-1, epsilon=1e-12)

    def linear(x, prefix, n_in, n_out):
        y = node("MatMul", [x, weight(prefix + ".weight", n_in, n_out)], [prefix + ".mm"])
        return node("Add", [y, weight(prefix + ".bias", n_out, scale=0.0)], [prefix + ".out"])

    words = weight("embeddings.word", args.vocab, h)
    positions = weight("embeddings.position", args.max_positions, h)
    x = node("Gather", [words, "input_ids"], ["emb.words"], axis=0)
    pos = node("Gather", [positions, "position_ids"], ["emb.positions"], axis=0)
    x = node("Add", [x, pos], ["emb.sum"])
    x = layer_norm(x, "emb.ln")
    split_shape = const_i64("shape.split_heads", [0, 0, heads, head_dim])
    merge_shape = const_i64("shape.merge_heads", [0, 0, h])
    scale = numpy_helper.from_array(np.array(1.0 / np.sqrt(head_dim), np.float32), "attn.scale")
    initializers.append(scale)
    sqrt_half = numpy_helper.from_array(np.array(1 / np.sqrt(2), np.float32), "gelu.sqrt_half")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "gelu.one")
    half = numpy_helper.from_array(np.array(0.5, np.float32), "gelu.half")
    initializers.extend([sqrt_half, one, half])
    for i in range(args.layers):
        p = f"layer{i}"
        heads_of = {}
        for part in ("q", "k", "v"):
            t = linear(x, f"{p}.{part}", h, h)
            t = node("Reshape", [t, split_shape], [f"{p}.{part}.split"])
            perm = [0, 2, 3, 1] if part == "k" else [0, 2, 1, 3]
            heads_of[part] = node("Transpose", [t], [f"{p}.{part}.heads"], perm=perm)
        scores = node("MatMul", [heads_of["q"], heads_of["k"]], [f"{p}.scores"])
        scores = node("Mul", [scores, "attn.scale"], [f"{p}.scaled"])
        probs = node("Softmax", [scores], [f"{p}.probs"], axis=-1)
        ctx = node("MatMul", [probs, heads_of["v"]], [f"{p}.ctx"])
        ctx = node("Transpose", [ctx], [f"{p}.ctx.t"], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], [f"{p}.ctx.merged"])
        attn = linear(ctx, f"{p}.attn_out", h, h)
        x = layer_norm(node("Add", [x, attn], [f"{p}.res1"]), f"{p}.ln1")
        up = linear(x, f"{p}.ffn_up", h, ffn)
        erf = node("Erf", [node("Mul", [up, "gelu.sqrt_half"], [f"{p}.gelu.a"])], [f"{p}.gelu.erf"])
        gelu = node("Mul", [node("Mul", [up, "gelu.half"], [f"{p}.gelu.b"]),
                            node("Add", [erf, "gelu.one"], [f"{p}.gelu.c"])], [f"{p}.gelu"])
        down = linear(gelu, f"{p}.ffn_down", ffn, h)
        x = layer_norm(node("Add", [x, down], [f"{p}.res2"]), f"{p}.ln2")
    node("Identity", [x], ["last_hidden_state"])
    graph = helper.make_graph(
        nodes, "transformer_encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", h])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", args.opset)],
                              producer_name="npucc-bench")
    model.ir_version = IR_OF_OPSET[args.opset]
    return model


# The IR version of the ONNX release that introduced each opset (ONNX's versions table).
IR_OF_OPSET = {17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--max-positions", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opset", type=int, default=17, choices=sorted(IR_OF_OPSET))
    parser.add_argument("--external-data", action="store_true")
    args = parser.parse_args()
    model = build(args)
    if args.external_data:
        location = os.path.basename(args.output) + ".data"
        onnx.save_model(model, args.output, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=location, size_threshold=1024)
    else:
        onnx.save_model(model, args.output)
    weights = sum(t.raw_data.__len__() for t in model.graph.initializer) if not args.external_data else None
    print(f"wrote {args.output}" + (f" ({weights / 2**20:.0f} MiB of weights)" if weights else ""))


if __name__ == "__main__":
    main()
