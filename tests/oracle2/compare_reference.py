#!/usr/bin/env python3
"""The second oracle's judge (issue 45 item 3): runs each compiled case's low.onnx in ONNX's
Python reference evaluator (onnx.reference) and compares its outputs with the outputs of
npucc's emulation.onnx run in ONNX Runtime (run_emulation.js).

    compare_reference.py CASES_DIR COMPILED_DIR [--filter REGEX] [--table FILE]

CASES_DIR is what make_cases.py wrote; COMPILED_DIR/NAME/MODE/ holds npucc's low.onnx and
emulation.onnx and ort.json (ONNX Runtime's outputs of emulation.onnx). One line per case
and mode; exit 1 when a case disagrees beyond its op's tolerance, when an op npucc should
lower is not lowered, or when a listed limit no longer holds (the list stays true).

How onnx.reference computes the low types: float16 in NumPy's float16 (each element-wise
NumPy operation rounds its result to float16 once); bfloat16 in ml_dtypes' bfloat16, whose
NumPy operations compute in float32 and round each result to bfloat16 once. It does not
upcast a whole op to float32: an op written as several NumPy operations (Sigmoid as
1/(1+exp(-x)), Gelu's function body, a normalisation) rounds after each one, where npucc's
emulation (and a device kernel) rounds the op's float32 result once. Matrix products
(np.matmul) sum in float32 for both low types and round once (measured: 2048 + 64 ones gives
2112 in float16, 256 + 64 ones 320 in bfloat16); np.sum and np.mean sum in float32 for
float16 but in bfloat16 for bfloat16 (512 ones sum to 256).
"""
import base64
import json
import os
import re
import sys
import warnings

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator

from tolerances import NOT_LOWERED, REFERENCE_LIMITS, REWRITTEN, tolerance_for

LOW = {"fast": (TensorProto.FLOAT16, np.float16, "float16"),
       "fast1": (TensorProto.BFLOAT16, ml_dtypes.bfloat16, "bfloat16")}
NUMPY_OF = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16,
            TensorProto.BFLOAT16: ml_dtypes.bfloat16}


# Significand bits and smallest normal exponent of each low type.
FORMAT = {"float16": (10, -14), "bfloat16": (7, -126)}


def step_at(scale, low_name):
    """The spacing of the low type's values at |scale| (its ulp), subnormal range included."""
    bits, min_exp = FORMAT[low_name]
    scale = np.abs(scale.astype(np.float64))
    exponent = np.floor(np.log2(np.maximum(scale, 2.0**min_exp)))
    return np.exp2(exponent - bits)


def read_ort(file):
    with open(file) as f:
        doc = json.load(f)
    if "error" in doc:
        raise RuntimeError("ONNX Runtime: " + doc["error"])
    dtypes = {"float32": np.float32, "int64": np.int64, "bool": np.bool_, "int32": np.int32}
    return [np.frombuffer(base64.b64decode(o["data"]), dtypes[o["type"]]).reshape(o["dims"])
            for o in doc["outputs"]]


def run_reference(low_file, inputs):
    model = onnx.load(low_file)
    feeds = {}
    warnings.simplefilter("ignore")  # overflow to inf is one of the cases
    for value in model.graph.input:
        array = inputs[value.name]
        if array.dtype == np.float32:
            array = array.astype(NUMPY_OF[value.type.tensor_type.elem_type])
        feeds[value.name] = array
    return ReferenceEvaluator(model).run(None, feeds)


def low_types_of_op(low_file, op):
    """The element types of the tested op's float inputs and outputs in low.onnx."""
    model = onnx.shape_inference.infer_shapes(onnx.load(low_file))
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output)}
    types.update({i.name: i.data_type for i in model.graph.initializer})
    found = set()
    graphs = [model.graph]
    while graphs:  # the main graph and every branch or body under it
        graph = graphs.pop()
        types.update({v.name: v.type.tensor_type.elem_type
                      for v in list(graph.input) + list(graph.value_info) + list(graph.output)})
        for node in graph.node:
            graphs += [a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]
            if node.op_type == op:
                found.update(types.get(n, 0) for n in list(node.input) + list(node.output) if n)
    return found


def compare_output(ref, ort, scale, low_name):
    """(max abs diff over finite pairs, max of that diff in low-type steps at `scale` (the
    op's scale for each element, tolerances.py), count of elements where one side is NaN or
    infinite and the other is not the same). Integer and bool outputs: steps None, count of
    differing elements. -0 equals +0: the evaluators' own float32 kernels disagree on a zero's
    sign (max(-0, +0), Relu(-0), ONNX Runtime's Where), not the rounding under test."""
    ref = np.asarray(ref)
    if ref.dtype.kind in "biu" or ort.dtype.kind in "biu":
        bad = int(np.count_nonzero(ref.astype(np.int64) != ort.astype(np.int64)))
        return 0.0, None if bad else 0.0, bad
    ref = ref.astype(np.float32)
    same = (ref == ort) | (np.isnan(ref) & np.isnan(ort))
    finite = np.isfinite(ref) & np.isfinite(ort)
    nonfinite_mismatch = int(np.count_nonzero(~same & ~finite))
    diff = np.abs(ref.astype(np.float64) - ort.astype(np.float64))
    diff[~finite] = 0.0
    scale = np.maximum(np.abs(np.broadcast_to(scale, ref.shape)), np.abs(ref))
    steps = diff / step_at(np.where(np.isfinite(scale), scale, 0.0), low_name)
    return float(diff.max(initial=0.0)), float(steps.max(initial=0.0)), nonfinite_mismatch


def element_scales(kind, case, inputs, cases_dir, shapes, reference):
    """Each output element's magnitude the tolerance is counted at (tolerances.py, SCALES):
    the output itself (0 here: compare_output takes |reference| anyway), the largest |output|
    along the last axis (row), the largest same-shaped float input at that element or 1
    (unit), or the float32 model's output on the inputs' absolute values (abs_sum: for a sum
    of products, the sum of the |products|)."""
    if kind == "output":
        return [np.float64(0.0)] * len(shapes)
    if kind == "row":
        return [np.max(np.abs(np.where(np.isfinite(r), r, 0).astype(np.float64)), axis=-1, keepdims=True)
                for r in reference]
    if kind == "abs_sum":
        model = onnx.load(os.path.join(cases_dir, case["name"], "model.onnx"))
        feeds = {n: np.abs(v) if v.dtype == np.float32 else v for n, v in inputs.items()}
        return [np.abs(o.astype(np.float64)) for o in ReferenceEvaluator(model).run(None, feeds)]
    scales = []
    for shape in shapes:
        same = [np.abs(v.astype(np.float64)) for v in inputs.values()
                if v.dtype == np.float32 and v.shape == tuple(shape)]
        scale = np.max(same, axis=0) if same else np.zeros(shape)
        scale = np.where(np.isfinite(scale), scale, 0.0)
        scales.append(np.maximum(scale, 1.0))  # unit
    return scales


def converted_constants(case, folder, cases_dir, low_np):
    """npucc's own conversion of float32 constants (precision/float_convert.cpp): every low
    initializer of low.onnx named as a float32 initializer or Constant of the original must
    hold NumPy's (float16) or ml_dtypes' (bfloat16) round-to-nearest-even of it, bit for
    bit. Both evaluators read those bits, so only this check can see a wrong conversion.
    Returns (constants checked, problems)."""
    original = onnx.load(os.path.join(cases_dir, case["name"], "model.onnx"))
    values = {i.name: numpy_helper.to_array(i) for i in original.graph.initializer}
    for node in original.graph.node:
        if node.op_type == "Constant":
            values[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    checked, problems = 0, []
    for init in onnx.load(os.path.join(folder, "low.onnx")).graph.initializer:
        source = values.get(init.name)
        if source is None or source.dtype != np.float32 or init.data_type == TensorProto.FLOAT:
            continue
        want = source.astype(low_np).view(np.uint16)
        got = numpy_helper.to_array(init).astype(low_np).view(np.uint16)
        checked += 1
        if not np.array_equal(want, got):
            bad = np.nonzero(want.reshape(-1) != got.reshape(-1))[0]
            problems.append(f"constant {init.name}: {bad.size} values rounded differently "
                            f"(first {source.reshape(-1)[bad[0]]!r}: bits {got.reshape(-1)[bad[0]]:#06x}, "
                            f"want {want.reshape(-1)[bad[0]]:#06x})")
    return checked, problems


def judge(case, mode, cases_dir, compiled_dir):
    """Returns (status, max abs diff, max steps, text); status in ok, FAIL, limit."""
    name, op = case["name"], case["op"]
    low_type, low_np, low_name = LOW[mode]
    folder = os.path.join(compiled_dir, name, mode)
    if not os.path.exists(os.path.join(folder, "emulation.onnx")):
        return "FAIL", None, None, "npucc wrote no emulation.onnx"
    written_as = REWRITTEN.get(op, op).split(" ")[0]
    lowered = low_type in low_types_of_op(os.path.join(folder, "low.onnx"), written_as)
    listed = NOT_LOWERED.get((op, mode))
    if not lowered:
        return ("limit", None, None, f"not lowered: {listed}") if listed else \
            ("FAIL", None, None, f"npucc did not lower {op} to {low_name}")
    if listed:
        return "FAIL", None, None, f"lowered, but listed as not lowered ({listed}): update tolerances.py"
    inputs = {n: numpy_helper.to_array(onnx.load_tensor(os.path.join(cases_dir, name, f"input_{k}.pb")))
              for k, n in enumerate(case["inputs"])}
    limit = REFERENCE_LIMITS.get((op, mode))
    try:
        reference = run_reference(os.path.join(folder, "low.onnx"), inputs)
    except Exception as e:  # the reference's own limits: each must be listed with why
        text = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
        return ("limit", None, None, f"onnx.reference cannot run it: {limit}") if limit else \
            ("FAIL", None, None, f"onnx.reference failed, not a listed limit: {text}")
    if limit:
        return "FAIL", None, None, f"onnx.reference runs it, but it is listed ({limit}): update tolerances.py"
    declared = [o.type.tensor_type.elem_type for o in onnx.load(os.path.join(folder, "low.onnx")).graph.output]
    upcast = [k for k, (r, t) in enumerate(zip(reference, declared))
              if t == low_type and np.asarray(r).dtype != low_np]
    if upcast:  # an output low.onnx declares low must come back low
        return "FAIL", None, None, f"onnx.reference returned outputs {upcast} not in {low_name}: it upcast"
    try:
        ort = read_ort(os.path.join(folder, "ort.json"))
    except (OSError, RuntimeError, ValueError) as e:  # run_emulation.js said why, too
        return "FAIL", None, None, f"no ONNX Runtime outputs: {str(e).splitlines()[0][:160]}"
    steps_allowed, scale_kind, reason = tolerance_for(op, mode)
    scales = element_scales(scale_kind, case, inputs, cases_dir, [o.shape for o in ort],
                            [np.asarray(r).astype(np.float32) for r in reference])
    constants, problems = converted_constants(case, folder, cases_dir, low_np)
    worst_abs, worst_steps = 0.0, 0.0
    for k, (r, o, scale) in enumerate(zip(reference, ort, scales)):
        abs_diff, steps, nonfinite = compare_output(r, o, scale, low_name)
        if steps is None:
            problems.append(f"output {k}: {nonfinite} of {o.size} integer/bool values differ")
            continue
        worst_abs, worst_steps = max(worst_abs, abs_diff), max(worst_steps, steps)
        if nonfinite:
            problems.append(f"output {k}: {nonfinite} NaN/inf differ")
    if worst_steps > steps_allowed:
        problems.append(f"{worst_steps:.3g} {low_name} steps (at the {scale_kind} scale) > {steps_allowed} allowed")
    status = "FAIL" if problems else "ok"
    text = "; ".join(problems) if problems else reason
    if op in REWRITTEN:
        text += f"; written as {REWRITTEN[op]}"
    if constants and not problems:
        text += f"; {constants} constant(s) npucc converted: NumPy's rounding, bit for bit"
    return status, worst_abs, worst_steps, text


def main():
    cases_dir, compiled_dir = sys.argv[1], sys.argv[2]
    option = lambda flag: sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else None
    table, only = option("--table"), option("--filter") or ".*"
    with open(os.path.join(cases_dir, "cases.json")) as f:
        cases = [c for c in json.load(f) if re.fullmatch(only, c["name"])]
    rows, failures = [], 0
    print(f"{'case':22} {'mode':5} {'status':6} {'max abs':>10} {'steps':>6}  why")
    for case in cases:
        for mode in case["modes"]:
            status, abs_diff, steps, text = judge(case, mode, cases_dir, compiled_dir)
            failures += status == "FAIL"
            shown = "-" if abs_diff is None else f"{abs_diff:.3g}"
            shown_steps = "-" if steps is None else f"{steps:.3g}"
            print(f"{case['name']:22} {mode:5} {status:6} {shown:>10} {shown_steps:>6}  {text}")
            rows.append({"case": case["name"], "op": case["op"], "mode": mode, "status": status,
                         "max_abs": abs_diff, "steps": steps, "why": text})
    if table:
        with open(table, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"oracle2: {len(rows)} runs, {failures} failed, "
          f"{sum(r['status'] == 'limit' for r in rows)} stated limits")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
