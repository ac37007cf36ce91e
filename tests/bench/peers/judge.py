"""The one judge of every tool's graph (issue 45): `npucc compare REFERENCE CANDIDATE
--sample-inputs HELD --json`, the graph's float16/bfloat16 emulation against the float32
original on the held-out sets, for every tool's graph alike (npucc's own too). Beside it, as a
cross-check, the bench's own emulation (emulation.py: written apart from npucc, run in the
venv's ONNX Runtime), whose outputs also give the task metric; its plain ONNX Runtime run;
whether ONNX Runtime loads it at each optimisation level; how many of its nodes compute low.

Two emulations written apart that agree are evidence for both; agrees() says within what.
"""

import glob
import json
import os
import re
import subprocess

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


def paraphrase_at_1(candidates, output):
    """The share of sentences whose nearest neighbour (cosine) among all the sets' sentences is
    their paraphrase: each set is one pair, rows 0 and 1 of `output`."""
    embeddings = np.concatenate([c[output].astype(np.float64) for c in candidates])
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    if not np.isfinite(embeddings).all() or not norms.all():
        return None
    unit = embeddings / norms
    similarity = unit @ unit.T
    np.fill_diagonal(similarity, -np.inf)
    partner = np.arange(len(unit)) ^ 1
    return float(np.mean(np.argmax(similarity, 1) == partner))


def task_metric(kind, references, candidates, output):
    """top1 agreement, mean IoU of maps thresholded at 0.5, agreement of a probability's
    decision at 0.5, over the sets, or paraphrase retrieval (paraphrase_at_1, a figure of the
    candidate alone: the float32 original's is in the README); None where no set allows it."""
    if kind == "paraphrase@1":
        return (kind, paraphrase_at_1(candidates, output))
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


def compare_figures(npucc, reference_path, candidate_path, held_folder):
    """npucc compare's figures in the shape of figures() (no task metric: compare knows none
    of the bench's), or {"error": its last line}."""
    proc = subprocess.run([npucc, "compare", str(reference_path), str(candidate_path), "--sample-inputs",
                           str(held_folder), "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        line = re.sub(r"^npucc: error: the (candidate|reference) \S+: ", r"\1: ", lines[-1]) if lines else ""
        return {"error": short_error(line or f"exit {proc.returncode}")}
    outputs = json.loads(proc.stdout)["accuracy"]["outputs"]
    large = [o for o in outputs if o["elements_per_sample"] >= MIN_COSINE_ELEMENTS]
    nonfinite = sum(o["nonfinite"] for o in outputs)
    cosines = [o["cosine"] for o in large]
    worst = None if (not cosines or None in cosines) else min(cosines)
    errors = [o["max_abs_error"] for o in outputs if o["max_abs_error"] is not None]
    max_abs = float("inf") if nonfinite else (max(errors) if errors else None)
    return {"cosine": worst, "max_abs": max_abs, "nonfinite": nonfinite, "no_cosine": not large, "task": None}


# The two emulations agree when their worst cosines differ by at most 1e-6 or 5% of the larger
# 1 - cosine, and their max abs errors by at most 25% (or 1e-6), or both count the same
# non-finite values. Why not exactly: npucc's runtime is ONNX Runtime 1.30 (C library), the
# bench's the venv's 1.24.4, whose MatMul/Conv kernels may sum in another order, so a value
# near a float16/bfloat16 rounding boundary rounds the other way in one of them, and the
# flip travels; a max abs error is one element's, so it moves most (paraphrase_minilm: 0.0834
# against 0.099 for AutoCast's bfloat16 graph, cosines 1.1e-6 apart). Each also types the
# graph's values with its own ONNX shape inference (1.12 and 1.21).
COSINE_AGREEMENT, COSINE_SHARE, MAX_ABS_SHARE = 1e-6, 0.05, 0.25


def agrees(npucc_figures, own):
    if "error" in npucc_figures:
        return False
    if npucc_figures["nonfinite"] or own["nonfinite"]:
        return npucc_figures["nonfinite"] == own["nonfinite"]
    a, b = npucc_figures["cosine"], own["cosine"]
    cosine_ok = (a is None and b is None) or (
        a is not None and b is not None and abs(a - b) <= max(COSINE_AGREEMENT, COSINE_SHARE * max(1 - a, 1 - b)))
    x, y = npucc_figures["max_abs"], own["max_abs"]
    if x is None or y is None:
        return cosine_ok and x is y
    return cosine_ok and abs(x - y) <= max(1e-6, MAX_ABS_SHARE * max(x, y))


def verdict(judged):
    """The figures a row is judged by: npucc compare's, with the task metric from the bench's
    own emulation's outputs (compare has no IoU or decision metric); the bench's own
    figures where compare refused the graph (the table says so)."""
    if "error" in judged["npucc"]:
        return judged["emulated"]
    return dict(judged["npucc"], task=judged["emulated"]["task"])


def judge(npucc, reference_path, candidate_path, held_folder, held_sets, task, reference_outputs):
    """Figures of `candidate_path` on the held sets against the float32 original: npucc
    compare's, the bench's own emulation's (and the task metric from its outputs), the plain
    run's, ONNX Runtime's loads and the node counts."""
    model = onnx.load(candidate_path)
    emulated = emulation_model(model)
    result = {"loads": ort_loads(candidate_path), "nodes": node_counts(model)}
    del model
    result["emulated"] = figures(reference_outputs, run(session(emulated, JUDGE_LEVEL), held_sets), task)
    del emulated
    result["npucc"] = compare_figures(npucc, reference_path, candidate_path, held_folder)
    result["agrees"] = agrees(result["npucc"], result["emulated"])
    try:
        result["plain"] = figures(reference_outputs, run(session(candidate_path), held_sets), task)
    except Exception as error:
        result["plain"] = {"error": short_error(error)}
    return result
