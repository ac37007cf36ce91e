#!/usr/bin/env python3
"""Models and samples for the accuracy suite (tests/e2e/test_accuracy.sh).

overflow.onnx: an MLP that overflows float16 in its activations only. Its weights are small
(at most 1, so the weight overflow prescan sees nothing), but on its samples (inputs near
1000) the second MatMul's outputs reach ~1e5, past float16's 65504:

    x[1,16] -> MatMul(W1 16x32) -> Relu -> h[1,32]      |h| ~ 4e3, fits float16
            -> MatMul(W2 32x32) -> Relu -> g[1,32]      |g| ~ 1e5: overflows float16
            -> MatMul(W3 32x10) -> z[1,10]              |z| ~ 1e5 (from g: overflows too)
            -> Mul(1e-6) -> y[1,10]                     |y| ~ 0.1 (its producer stays float32)

On random inputs in [-1, 1) nothing overflows (|g| ~ 10). The samples are written three ways:
OUT/samples/ (test_data_set_*/input_0.pb, 3 sets), OUT/samples.npz, OUT/npy/x.npy; and the
mismatches the suite expects refused: OUT/bad_type/x.npy (float64), OUT/bad_shape/x.npy
([1,15]), OUT/bad_name/z.npy.

underflow.onnx: the same MLP's shape, read by a model whose inputs are tiny (features near
1e-9, as mobilenet_v3's pre-logit activations are): float16 flushes them to zero at the first
MatMul's input Cast, so the low graph's output is all zero where float32 gives values near 1
(a collapse: cosine 0):

    x[1,16] ~1e-9 -> MatMul(W1 16x32) -> Relu -> MatMul(W2 32x10) -> Mul(1e9) -> y[1,10]

Its samples: OUT/underflow_samples/test_data_set_{0,1}/input_0.pb.

bf16_underflow.onnx: the same shape again, for bfloat16, whose range is float32's: inputs
near 1e-20 and first weights near 1e-20 make fc1's values ~5e-39, below bfloat16's (and
float32's) smallest normal 1.18e-38, where they keep a few bits; Mul(1e38) brings them back:

    x[1,16] ~1e-20 -> MatMul(W1 ~1e-20) -> Relu -> MatMul(W2) -> Mul(1e38) -> y[1,10]

Its samples: OUT/bf16_underflow_samples/test_data_set_{0,1}/input_0.pb.

descent.onnx: deny-list ops a low graph keeps float32, for the accuracy descent
(test_accuracy_descent.sh): a LayerNormalization whose float32 result reaches an output
exactly (lowering it costs float16's rounding of its input and output, ~1e-3 on yn), and a
Softmax read by an Add (so the low-readers rule leaves it float32) on a path whose small
output (y ~1e-3) hides the cost of lowering it:

    x[1,16] -> LayerNormalization(ln) -> Mul(scale_n) -> yn[1,16]
    x[1,16] -> MatMul(W1 16x64) -> Softmax(sm) -> Add(shift) -> MatMul(W3 64x10)
            -> Mul(rescale 1e-3) -> y[1,10]

Its samples: OUT/descent_samples/test_data_set_{0..5}/input_0.pb, and for
--validation-inputs OUT/descent_validation/test_data_set_{6,7}/input_0.pb.

Usage: make_accuracy_models.py OUT
"""

import copy
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def overflow_model():
    rng = np.random.default_rng(7)
    w1 = rng.uniform(0.0, 0.5, (16, 32)).astype(np.float32)
    w2 = rng.uniform(0.5, 1.0, (32, 32)).astype(np.float32)
    w3 = rng.uniform(-0.5, 0.5, (32, 10)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Relu", ["h0"], ["h"], name="relu1"),
        helper.make_node("MatMul", ["h", "w2"], ["g0"], name="fc2"),
        helper.make_node("Relu", ["g0"], ["g"], name="relu2"),
        helper.make_node("MatMul", ["g", "w3"], ["z"], name="fc3"),
        helper.make_node("Mul", ["z", "scale"], ["y"], name="rescale"),
    ]
    return mlp_model("overflow", nodes, {"w1": w1, "w2": w2, "w3": w3, "scale": 1e-6})


def mlp_model(name, nodes, weights):
    """x[1,16] -> nodes -> y[1,10], opset 17, the weights as initializers."""
    inits = [numpy_helper.from_array(np.asarray(value, np.float32), key)
             for key, value in weights.items()]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def rescaled_mlp(name, seed, w1_high, w1_factor, scale):
    """x -> MatMul(fc1) -> Relu -> MatMul(fc2) -> Mul(scale) -> y, fc1's weights drawn from
    [0, w1_high) times w1_factor, so that its values land where a low type loses them."""
    rng = np.random.default_rng(seed)
    w1 = (rng.uniform(0.0, w1_high, (16, 32)) * w1_factor).astype(np.float32)
    w2 = rng.uniform(-0.5, 0.5, (32, 10)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Relu", ["h0"], ["h"], name="relu1"),
        helper.make_node("MatMul", ["h", "w2"], ["z"], name="fc2"),
        helper.make_node("Mul", ["z", "scale"], ["y"], name="rescale"),
    ]
    return mlp_model(name, nodes, {"w1": w1, "w2": w2, "scale": scale})


def underflow_model():
    return rescaled_mlp("underflow", 5, 0.5, 1.0, 1e9)


def bf16_underflow_model():
    return rescaled_mlp("bf16_underflow", 9, 1.0, 1e-20, 1e38)


def descent_model():
    rng = np.random.default_rng(13)
    inits = {
        "gamma": rng.uniform(0.5, 1.5, (16,)), "beta": rng.uniform(-0.2, 0.2, (16,)),
        "w_n": rng.uniform(0.5, 1.0, (16,)), "w1": rng.uniform(-1.0, 1.0, (16, 64)),
        "shift_by": rng.uniform(-0.01, 0.01, (64,)), "w3": rng.uniform(-1.0, 1.0, (64, 10)),
        "scale": 1e-3,
    }
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], name="ln", axis=-1),
        helper.make_node("Mul", ["n", "w_n"], ["yn"], name="scale_n"),
        helper.make_node("MatMul", ["x", "w1"], ["g"], name="fc1"),
        helper.make_node("Softmax", ["g"], ["p"], name="sm", axis=-1),
        helper.make_node("Add", ["p", "shift_by"], ["q"], name="shift"),
        helper.make_node("MatMul", ["q", "w3"], ["z"], name="fc3"),
        helper.make_node("Mul", ["z", "scale"], ["y"], name="rescale"),
    ]
    model = mlp_model("descent", nodes, inits)
    model.graph.output.append(helper.make_tensor_value_info("yn", TensorProto.FLOAT, [1, 16]))
    return model


def write_pb(folder, array):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(array, "x").SerializeToString())


def write_npy(folder, name, array):
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, name + ".npy"), array)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(overflow_model(), os.path.join(out, "overflow.onnx"))
    rng = np.random.default_rng(11)
    samples = [rng.uniform(900.0, 1100.0, (1, 16)).astype(np.float32) for _ in range(3)]
    for i, x in enumerate(samples):
        write_pb(os.path.join(out, "samples", "test_data_set_%d" % i), x)
    np.savez_compressed(os.path.join(out, "samples.npz"), x=samples[0])
    write_npy(os.path.join(out, "npy"), "x", samples[1])
    write_npy(os.path.join(out, "bad_type"), "x", samples[0].astype(np.float64))
    write_npy(os.path.join(out, "bad_shape"), "x", samples[0][:, :15])
    write_npy(os.path.join(out, "bad_name"), "z", samples[0])
    save(underflow_model(), os.path.join(out, "underflow.onnx"))
    for i in range(2):
        x = (rng.uniform(0.5, 1.0, (1, 16)) * 1e-9).astype(np.float32)
        write_pb(os.path.join(out, "underflow_samples", "test_data_set_%d" % i), x)
    # The bfloat16 and descent sets each draw from the generator as it stands here, so that
    # adding one kind of model never changes the other's inputs.
    bf16_rng = copy.deepcopy(rng)
    save(bf16_underflow_model(), os.path.join(out, "bf16_underflow.onnx"))
    for i in range(2):
        x = (bf16_rng.uniform(0.5, 1.0, (1, 16)) * 1e-20).astype(np.float32)
        write_pb(os.path.join(out, "bf16_underflow_samples", "test_data_set_%d" % i), x)

    save(descent_model(), os.path.join(out, "descent.onnx"))
    for i in range(8):
        x = rng.uniform(-3.0, 3.0, (1, 16)).astype(np.float32)
        held = "descent_samples" if i < 6 else "descent_validation"
        write_pb(os.path.join(out, held, "test_data_set_%d" % i), x)


if __name__ == "__main__":
    main()
