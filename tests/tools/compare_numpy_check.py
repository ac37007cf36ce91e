#!/usr/bin/python3
"""Checks `npucc compare --json`'s figures against an emulation written here in NumPy.

    compare_numpy_check.py [--loose] REFERENCE.onnx CANDIDATE.onnx SAMPLES_DIR COMPARE.json
    compare_numpy_check.py --drift REFERENCE.onnx CANDIDATE.onnx SAMPLES_DIR COMPARE.json

--drift checks the per-value drift report (compare --accuracy-report nodes, "drift") instead:
each value's cosine, max_abs_error, flush and overflow shares and the reference's range,
recomputed from the same interpretation, to the tolerances below, and the first crossing.

Both graphs are interpreted node by node (the ops of tests/tools/make_compare_models.py:
Cast, MatMul, Add, Mul, Relu) in float32. For the candidate, every value it stores in a low
type (its inputs, initializers and node outputs, typed by ONNX's own shape inference) is
rounded to that type where it is stored: float16 through NumPy's astype (round to nearest
even, overflow to inf, subnormals kept), bfloat16 by bit manipulation (round to nearest
even on the upper 16 bits). The figures are then computed from their definitions
(src/accuracy/metrics.h) and must equal the report's:
  - nonfinite, high_nonfinite, elements: exactly;
  - max_abs_error, max_rel_error: to 1e-12 relative, i.e. the same doubles: the models'
    data are integers (times powers of two), so the float32 arithmetic is exact in any
    summation order and both sides hold the same bits; only the error's own double
    arithmetic is left;
  - cosine: to 1e-12 absolute: its sums are accumulated in double on both sides, in one
    order here and possibly another in npucc; 1e-12 is many times that rounding (1e-16 per
    step over 32 elements) and far below any float16 effect (1e-4).
--loose, for models whose data are not exact in float32 (another tool's conversion of
random weights): NumPy and ONNX Runtime may sum a MatMul in another order, so a float32
result may differ in its last bit, and then land on the other side of a float16 rounding
boundary, which moves that element by one float16 ulp. So: the counts still exactly;
max_abs_error to one float16 ulp of the largest finite reference magnitude (the most such a
move changes it); cosine to 1e-6 (such moves in a few elements change it by less); and
max_rel_error is not compared (one ulp of a subnormal over the 1e-6 floor is unbounded).Prints the figures it checked; exit 1 on the first mismatch, naming the output and figure."""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper, shape_inference

LOW = (TensorProto.FLOAT16, TensorProto.BFLOAT16)


def round_bfloat16(values):
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(values), np.float32(np.nan), out)


def round_to(values, elem_type):
    values = np.asarray(values, dtype=np.float32)
    if elem_type == TensorProto.FLOAT16:
        with np.errstate(over="ignore"):
            return values.astype(np.float16).astype(np.float32)
    if elem_type == TensorProto.BFLOAT16:
        return round_bfloat16(values)
    return values


def bfloat16_initializer(tensor):
    bits = np.frombuffer(tensor.raw_data, dtype=np.uint16).astype(np.uint32) << 16
    return bits.view(np.float32).reshape(tuple(tensor.dims))


def run(model_path, feeds, outputs, every=False):
    """Interprets the graph in float32; each low-typed value rounded where it is stored.
    every: all the values by name instead of `outputs`."""
    model = shape_inference.infer_shapes(onnx.load(model_path), strict_mode=True)
    graph = model.graph
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(graph.value_info) + list(graph.output) + list(graph.input)}
    env = {}
    for init in graph.initializer:
        if init.data_type == TensorProto.BFLOAT16:
            env[init.name] = bfloat16_initializer(init)
        else:
            env[init.name] = numpy_helper.to_array(init).astype(np.float32)
    for name, value in feeds.items():
        env[name] = round_to(value, types[name])
    with np.errstate(over="ignore", invalid="ignore"):
        for node in graph.node:
            a = [env[name] for name in node.input]
            if node.op_type == "Cast":
                result = a[0]  # rounded below, to the Cast's type
            elif node.op_type == "MatMul":
                result = np.matmul(a[0], a[1])
            elif node.op_type == "Add":
                result = a[0] + a[1]
            elif node.op_type == "Mul":
                result = a[0] * a[1]
            elif node.op_type == "Relu":
                result = np.maximum(a[0], np.float32(0))
            else:
                sys.exit(f"compare_numpy_check: no interpretation of {node.op_type}")
            out = node.output[0]
            env[out] = round_to(np.asarray(result, dtype=np.float32), types.get(out, TensorProto.FLOAT))
    if every:
        return {name: value.astype(np.float64) for name, value in env.items()}
    return [env[name].astype(np.float64) for name in outputs]


def figures(high, low):
    finite_high = np.isfinite(high)
    finite_low = np.isfinite(low)
    both = finite_high & finite_low
    scale = np.max(np.abs(high[finite_high])) if finite_high.any() else 0.0
    floor = max(1e-3 * scale, 1e-6)
    err = np.abs(low[both] - high[both])
    out = {
        "high_nonfinite": int((~finite_high).sum()),
        "nonfinite": int((finite_high & ~finite_low).sum()),
        "elements": int(both.sum()),
        "max_abs_error": float(err.max()) if err.size else None,
        "max_rel_error": float((err / np.maximum(np.abs(high[both]), floor)).max()) if err.size else None,
        "cosine": None,
    }
    if high.size >= 8 and finite_high.all() and finite_low.all() and np.dot(high, high) > 0:
        norm_low = np.dot(low, low)
        out["cosine"] = 0.0 if norm_low == 0 else float(
            np.dot(high, low) / (np.sqrt(np.dot(high, high)) * np.sqrt(norm_low)))
    return out


def close(name, want, got, ulp=None):
    if want is None or got is None:
        return want is None and got is None
    if ulp is not None and name == "max_rel_error":
        return True
    if ulp is not None and name == "max_abs_error":
        return abs(want - got) <= ulp
    if ulp is not None and name == "cosine":
        return abs(want - got) <= 1e-6
    if name == "cosine":
        return abs(want - got) <= 1e-12
    if isinstance(want, int):
        return want == got
    return abs(want - got) <= 1e-12 * max(abs(want), 1e-300)


def drift_figures(high_sets, low_sets):
    """One value's drift figures over its sample sets (npucc-compile(1), DRIFT REPORT)."""
    cosines, err, flushed, overflowed, total = [], 0.0, 0, 0, 0
    high_max, high_min = 0.0, None
    for high, low in zip(high_sets, low_sets):
        high, low = high.reshape(-1), low.reshape(-1)
        finite_high = np.isfinite(high)
        both = finite_high & np.isfinite(low)
        total += high.size
        overflowed += int((finite_high & ~np.isfinite(low)).sum())
        flushed += int((both & (low == 0) & (high != 0)).sum())
        if both.any():
            err = max(err, float(np.abs(low[both] - high[both]).max()))
        magnitudes = np.abs(high[finite_high])
        if magnitudes.size:
            high_max = max(high_max, float(magnitudes.max()))
            nonzero = magnitudes[magnitudes > 0]
            if nonzero.size:
                high_min = float(nonzero.min()) if high_min is None else min(high_min, float(nonzero.min()))
        cosine = figures(high, low)["cosine"]
        if cosine is not None:
            cosines.append(cosine)
    return {"cosine": min(cosines) if cosines else None, "max_abs_error": err,
            "flush_share": flushed / total, "overflow_share": overflowed / total,
            "high_max_abs": high_max, "high_min_nonzero_abs": high_min}


def drift_main(reference, candidate, samples_dir, report_path):
    """--drift: every value of the compare's drift report recomputed, and its first crossing."""
    drift = json.load(open(report_path))["drift"]
    files = sorted(f for f in os.listdir(samples_dir) if f.endswith(".npz"))
    highs, lows = [], []
    for name in files:
        feeds = dict(np.load(os.path.join(samples_dir, name)))
        highs.append(run(reference, feeds, [], every=True))
        lows.append(run(candidate, feeds, [], every=True))
    first = None
    for index, value in enumerate(drift["values"]):
        name = value["value"]
        mine = drift_figures([h[name] for h in highs], [l[name] for l in lows])
        for figure, want in mine.items():
            if not close("cosine" if figure == "cosine" else figure, want, value.get(figure)):
                sys.exit(f"FAIL: drift value {name} ({value['node']}): {figure} is "
                         f"{value.get(figure)} in npucc compare, {want} in NumPy's emulation")
        crossing = (mine["cosine"] is not None and mine["cosine"] < drift["threshold"]["below"]) or \
            mine["overflow_share"] > 0
        if first is None and crossing:
            first = index
        print(f"drift {value['node']} ({name}): " + ", ".join(f"{k} {v}" for k, v in mine.items()))
    if first != drift["first_crossing"]:
        sys.exit(f"FAIL: the first crossing is {drift['first_crossing']} in npucc compare, "
                 f"{first} in NumPy's emulation")
    if first is not None:
        print(f"first crossing: {drift['values'][first]['node']}")


def main():
    args = sys.argv[1:]
    if args and args[0] == "--drift":
        drift_main(*args[1:5])
        return
    loose = args[0] == "--loose"
    reference, candidate, samples_dir, report_path = args[1:5] if loose else args[0:4]
    report = json.load(open(report_path))
    outputs = [o["name"] for o in report["accuracy"]["outputs"]]
    files = sorted(f for f in os.listdir(samples_dir) if f.endswith(".npz"))
    for index, name in enumerate(files):
        feeds = dict(np.load(os.path.join(samples_dir, name)))
        high = run(reference, feeds, outputs)
        low = run(candidate, feeds, outputs)
        for o, output in enumerate(report["accuracy"]["outputs"]):
            sample = [s for s in output["per_sample"] if s["set"] == index][0]
            mine = figures(high[o].reshape(-1), low[o].reshape(-1))
            finite = np.abs(high[o][np.isfinite(high[o])])
            ulp = 2.0 ** (np.floor(np.log2(finite.max())) - 10) if loose and finite.size else None
            for figure, want in mine.items():
                got = sample.get(figure)
                if not close(figure, want, got, ulp):
                    sys.exit(f"FAIL: {os.path.basename(candidate)} {name} {output['name']}: "
                             f"{figure} is {got} in npucc compare, {want} in NumPy's emulation")
            # Not a figure of the report: shows the cases the data were made to hold.
            flushed = int(((high[o] != 0) & (low[o] == 0)).sum())
            print(f"{os.path.basename(candidate)} {name} {output['name']}: " +
                  ", ".join(f"{k} {v}" for k, v in mine.items()) + f"; flushed to zero {flushed}")


if __name__ == "__main__":
    main()
