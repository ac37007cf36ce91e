"""The one judge of every tool's graph (issue 45): its float16/bfloat16 emulation against the
float32 original on the held-out sets, its plain ONNX Runtime run beside it, whether ONNX
Runtime loads it at each optimisation level, and how many of its nodes compute low.

judge() is the one function to swap for `npucc compare REFERENCE CANDIDATE --sample-inputs
HELD` once that command exists: it takes the same three things and returns the same figures.
"""

import glob
import os
import re

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper

from emulation import LOW, emulation_model, scope_types, subgraphs_of, typed

LEVELS = [("disable", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
          ("basic", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
          ("extended", ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED),
          ("all", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)]
# The emulation and the float32 reference run at ONNX Runtime's basic level, as npucc's
# accuracy check does: at "all", its fusions (Conv with the ops after it, across a Cast round
# trip's consumers) change what the emulation rounds (ppocrv4_det: cosine 0.999943 at "all",
# 0.999946 at basic and with none, which npucc's manifest gives too). The plain run stays at
# the default ("all"): that is the run users get.
JUDGE_LEVEL = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
STORAGE_OPS = {"Cast", "CastLike", "Constant"}  # move or hold values; compute nothing
MIN_COSINE_ELEMENTS = 8  # fewer elements than this give no meaningful cosine


def read_sets(folder):
    sets = []
    for set_folder in sorted(glob.glob(os.path.join(folder, "test_data_set_*")),
                             key=lambda p: int(p.rsplit("_", 1)[1])):
        feed = {}
        for path in sorted(glob.glob(os.path.join(set_folder, "input_*.pb"))):
            tensor = TensorProto()
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
            feed[tensor.name] = numpy_helper.to_array(tensor)
        sets.append(feed)
    return sets


def session(model_or_path, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.log_severity_level = 3
    source = model_or_path if isinstance(model_or_path, str) else model_or_path.SerializeToString()
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def run(sess, sets):
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, sess.run(None, feed))) for feed in sets]


def short_error(error):
    """ONNX Runtime's message without its "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED :" head."""
    line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return re.sub(r"(^|: )\[ONNXRuntimeError\] : \d+ : \w+ : ", r"\1", line)[:110]


def ort_loads(path):
    """'4/4', or the levels that fail with the first line of the first error."""
    failed = []
    for name, level in LEVELS:
        try:
            session(path, level)
        except Exception as error:  # ORT raises its own types; any of them is a refusal
            failed.append((name, short_error(error)))
    if not failed:
        return "4/4"
    if len(failed) == len(LEVELS):
        return f"0/4: {failed[0][1]}"
    return f"{4 - len(failed)}/4 (fails at {', '.join(n for n, _ in failed)}: {failed[0][1]})"


def node_counts(model):
    """(nodes computing low, nodes computing float32), Cast/Constant aside, subgraphs in."""
    low = kept = 0

    def visit(graph, outer):
        nonlocal low, kept
        types = scope_types(graph, outer)
        for node in graph.node:
            for attr in node.attribute:
                for sub in subgraphs_of(attr):
                    visit(sub, types)
            if node.op_type in STORAGE_OPS:
                continue
            out_types = [types.get(name) for name in node.output if name]
            if any(t in LOW for t in out_types):
                low += 1
            elif TensorProto.FLOAT in out_types:
                kept += 1

    visit(typed(model).graph, {})
    return low, kept


def cosine(reference, candidate):
    a, b = reference.astype(np.float64).ravel(), candidate.astype(np.float64).ravel()
    if a.size < MIN_COSINE_ELEMENTS or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    norms = np.linalg.norm(a) * np.linalg.norm(b)
    return None if norms == 0 else float(np.dot(a, b) / norms)


def task_metric(kind, references, candidates, output):
    """top1 agreement, mean IoU of maps thresholded at 0.5, or agreement of a probability's
    decision at 0.5, over the sets; None where no set allows it."""
    scores = []
    for ref, cand in zip(references, candidates):
        r, c = ref[output], cand[output]
        if kind == "top1":
            scores.append(float(np.argmax(r.reshape(r.shape[0], -1), -1).tolist() ==
                                np.argmax(c.reshape(c.shape[0], -1), -1).tolist()))
        elif kind == "iou@0.5":
            union = np.logical_or(r > 0.5, c > 0.5).sum()
            if union:
                scores.append(float(np.logical_and(r > 0.5, c > 0.5).sum() / union))
        elif kind == "decision@0.5":
            scores.append(float(bool((r > 0.5).all()) == bool((c > 0.5).all())))
    return (kind, float(np.mean(scores)) if scores else None)


def figures(references, candidates, task):
    """Worst cosine over outputs and sets (outputs with >= 8 elements), max abs error,
    count of non-finite values the candidate has where the reference is finite, task metric."""
    cosines, max_abs, nonfinite = [], 0.0, 0
    for ref, cand in zip(references, candidates):
        for name, r in ref.items():
            if r.dtype.kind != "f":
                continue
            c = cand[name].astype(np.float64)
            nonfinite += int(np.sum(~np.isfinite(c) & np.isfinite(r)))
            with np.errstate(invalid="ignore"):
                max_abs = max(max_abs, float(np.nanmax(np.abs(c - r))) if c.size else 0.0)
            if r.size >= MIN_COSINE_ELEMENTS:
                cosines.append(cosine(r, c))
    defined = [c for c in cosines if c is not None]
    worst = None if (not defined or len(defined) < len(cosines)) else min(defined)
    if nonfinite:
        max_abs = float("inf")
    return {"cosine": worst, "max_abs": max_abs, "nonfinite": nonfinite, "no_cosine": not cosines,
            "task": task_metric(task[0], references, candidates, task[1]) if task else None}


def judge(reference_path, candidate_path, held_sets, task, reference_outputs):
    """Figures of `candidate_path` on `held_sets` against the float32 original's outputs."""
    model = onnx.load(candidate_path)
    emulated = emulation_model(model)
    result = {"loads": ort_loads(candidate_path), "nodes": node_counts(model)}
    del model
    result["emulated"] = figures(reference_outputs, run(session(emulated, JUDGE_LEVEL), held_sets), task)
    del emulated
    try:
        result["plain"] = figures(reference_outputs, run(session(candidate_path), held_sets), task)
    except Exception as error:
        result["plain"] = {"error": short_error(error)}
    return result
