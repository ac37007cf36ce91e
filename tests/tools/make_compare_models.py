#!/usr/bin/python3
"""Models and samples for tests/e2e/test_compare.sh, written with ONNX's own helpers.

    make_compare_models.py OUTDIR

OUTDIR gets a float32 reference (ref.onnx) and candidates that store its values in a low type
the way converters write them:
  f16.onnx       float16 inside, float32 inputs and outputs through Casts (keep_io_types=True)
  f16_io.onnx    float16 inputs and outputs too (keep_io_types=False)
  bf16.onnx      bfloat16 inside, float32 inputs and outputs through Casts
and samples/ (one .npz per set). No value_info is written: npucc must infer the types.

The data are integers (and integers times powers of two), so every float32 result is exact
whatever the order a runtime sums in: the only rounding left is the low type's, where the
candidate stores a value. Between them the cases cover rounding to nearest even, float16
overflow (y_big, z), float16 subnormals and flush to zero (y_small, z), and bfloat16 overflow
of an input (z)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
OPSET = 17
# y_small = (h3 * 2^-14) * 2^-14, each factor float16's smallest normal: h3 * 2^-28 is a
# float16 subnormal (below 2^-14), rounded to a multiple of 2^-24, or flushed to zero below
# 2^-25 (h3 < 8); exact in float32.
SCALE = 2.0 ** -14


def weights():
    rng = np.random.default_rng(43)
    return {
        # |x W1| past 2048, where float16 stops holding every integer: h1 and h2 round
        "W1": np.concatenate([rng.integers(-8, 9, (2, 8)),  # rows 0, 1: small h3 (flushes)
                              rng.integers(-64, 65, (6, 8))]).astype(np.float32),
        "b1": np.concatenate([np.zeros(4), rng.integers(-100, 101, (4,))]).astype(np.float32),
        "W2": rng.integers(0, 49, (8, 8)).astype(np.float32),  # y_big past 65504, below 2^24
        "s": np.array(SCALE, dtype=np.float32),
    }


def to_bfloat16_bits(values):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept NaN)."""
    bits = np.asarray(values, dtype=np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32).reshape(-1))
    rounded[nan] = 0x7FC0
    return rounded


def initializer(name, value, low):
    if low == TensorProto.FLOAT16:
        return numpy_helper.from_array(value.astype(np.float16), name)
    if low == TensorProto.BFLOAT16:
        return helper.make_tensor(name, TensorProto.BFLOAT16, value.shape,
                                  to_bfloat16_bits(value).tobytes(), raw=True)
    return numpy_helper.from_array(value, name)


def cast(src, dst, to):
    return helper.make_node("Cast", [src], [dst], name=f"cast_{dst}", to=to)


def model(low, io_low):
    """The graph with values of type `low` (float32 for the reference); inputs and outputs of
    type `low` when io_low, else float32 with Casts at the edges."""
    inside = low
    io = low if io_low else F32
    suffix = "" if low == F32 or io_low else "_low"
    nodes = []
    if suffix:
        nodes += [cast("x", "x_low", inside), cast("z", "z_low", inside)]
    nodes += [
        helper.make_node("MatMul", ["x" + suffix, "W1"], ["h1"], name="matmul1"),
        helper.make_node("Add", ["h1", "b1"], ["h2"], name="add1"),
        helper.make_node("Relu", ["h2"], ["h3"], name="relu1"),
        helper.make_node("MatMul", ["h3", "W2"], ["y_big" + suffix], name="matmul2"),
        helper.make_node("Mul", ["h3", "s"], ["h4"], name="scale1"),
        helper.make_node("Mul", ["h4", "s"], ["y_small" + suffix], name="scale2"),
        helper.make_node("Relu", ["z" + suffix], ["z_out" + suffix], name="relu_z"),
    ]
    if suffix:
        nodes += [cast(f"{name}_low", name, F32) for name in ("y_big", "y_small", "z_out")]
    inits = [initializer(name, value, inside) for name, value in weights().items()]
    graph = helper.make_graph(
        nodes, "compare_case",
        [helper.make_tensor_value_info("x", io, [4, 8]), helper.make_tensor_value_info("z", io, [2, 6])],
        [helper.make_tensor_value_info(name, io, shape)
         for name, shape in (("y_big", [4, 8]), ("y_small", [4, 8]), ("z_out", [2, 6]))],
        inits)
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             producer_name="make_compare_models")
    made.ir_version = 8
    onnx.checker.check_model(made)
    return made


def samples():
    """Two sets: x's rows at different scales (small rows stay finite in float16, large ones
    overflow in matmul2), z's edge values."""
    rng = np.random.default_rng(7)
    sets = []
    for k in range(2):
        x = rng.integers(-64, 65, (4, 8)).astype(np.float32)
        x[0] = rng.integers(-2, 3, 8)  # a row whose y_big stays within float16
        x[1] = np.eye(8)[k]  # h3 = Relu(a row of W1 + b1): values below 8 flush in y_small
        z = np.array([[65520.0, 7.0e4, 1.0e-8, 3.0e-6, -1.0, 1000.3],
                      [3.4e38, 3.39e38, 2049.0 + k, 6.0e-5, 2.0e-5, -3.0e38]], dtype=np.float32)
        sets.append({"x": x, "z": z})
    return sets


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    onnx.save(model(F32, False), os.path.join(out, "ref.onnx"))
    onnx.save(model(TensorProto.FLOAT16, False), os.path.join(out, "f16.onnx"))
    onnx.save(model(TensorProto.FLOAT16, True), os.path.join(out, "f16_io.onnx"))
    onnx.save(model(TensorProto.BFLOAT16, False), os.path.join(out, "bf16.onnx"))
    for i, sample in enumerate(samples()):
        np.savez(os.path.join(out, "samples", f"set{i}.npz"), **sample)


if __name__ == "__main__":
    main()
