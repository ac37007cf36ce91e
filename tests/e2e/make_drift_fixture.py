#!/usr/bin/env python3
"""Writes a drift report (drift.json, npucc-compile(1) ACCURACY) for the picture's tests.

Usage: make_drift_fixture.py OUT [--count N] [--unnamed]   (the report, named in OUT/manifest.json
       as a compile names it, unless --unnamed)
       make_drift_fixture.py OUT --stamp   (names the drift.json already there)

OUT is a compiled output folder: the values are named after its low.onnx nodes (the
Constant and Cast nodes left out), as a drift report of that compile would name them; with
--count beyond the graph's nodes, or without low.onnx, synthetic names fill in. The figures
follow what issue 43 measured on mobilenet_v3 at fast: a drift that grows slowly, a first
crossing of cosine 0.9999 at the first Conv from #40 on (a Conv of a squeeze-excitation block, tiny values, so
they flush), a collapse at a GlobalAveragePool near the end. Among them: values kept
float32 (BatchNormalization, for its schema), three that overflow, two whose cosine is
undefined (an all-zero reference), three exact zeros (log scale floor), and one node name
of hostile characters (markup, quotes, a control character, 300 characters long).
Deterministic: the same arguments write the same file.
"""
import hashlib
import json
import math
import os
import random
import sys

HOSTILE = 'se<b>&"q\'\x01' + "x" * 300


def node_names(out):
    try:
        import onnx
        model = onnx.load(os.path.join(out, "low.onnx"), load_external_data=False)
    except Exception:  # no graph beside it: synthetic names only
        return []
    return [(n.name or n.output[0], n.op_type, n.output[0]) for n in model.graph.node
            if n.op_type not in ("Constant", "Cast") and n.output]


def one_value(i, count, name, op_type, value_name, rng, start):
    kept = op_type == "BatchNormalization"
    # 1 - cosine grows from 1e-8 to 1e-2 along the graph, with a step at #40 and a collapse
    # at the end (the GlobalAveragePool of issue 43).
    error = 10 ** (-8 + 6 * i / max(count - 1, 1) + rng.uniform(-0.4, 0.4))
    if i >= start:
        error = max(error, 2e-4 * (1 + rng.random()))
    if i >= count - 4 and count > 40:
        error = 0.62 if i == count - 4 else 0.999
    cosine = 1 - error
    entry = {"order": i, "node": name, "op_type": op_type, "value": value_name, "graph": "main",
             "stored": "float32" if kept else "float16",
             "kept_reason": "schema" if kept else None, "elements": 9600,
             "cosine": cosine, "cosine_undefined": None,
             "max_abs_error": error * 10 ** rng.uniform(-1, 1), "flush_share": 0.0,
             "overflow_share": 0.0, "high_max_abs": 10 ** rng.uniform(-1, 2),
             "high_min_nonzero_abs": 10 ** rng.uniform(-9, -5), "added_drift": error / 3}
    if i < 3:
        entry.update(cosine=1.0, max_abs_error=0.0, added_drift=0.0)
    if start - 2 <= i <= start + 6:  # the squeeze-excitation values stay under 5.7e-6: they flush
        entry.update(flush_share=0.05 + 0.02 * (i - 38), high_max_abs=5.7e-6)
    if i in (61, 62, 90):
        entry.update(overflow_share=0.003, high_max_abs=7.1e4)
    if i in (20, 75):
        entry.update(cosine=None, cosine_undefined="the float32 reference is all zero")
    return entry


def name_in_manifest(out):
    """Names OUT/drift.json in OUT/manifest.json as a compile does (file, sha256, bytes)."""
    with open(os.path.join(out, "drift.json"), "rb") as f:
        data = f.read()
    path = os.path.join(out, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    manifest["drift_report"] = {"file": "drift.json", "sha256": hashlib.sha256(data).hexdigest(),
                                "bytes": len(data)}
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2)


def main(argv):
    out = argv[1]
    if "--stamp" in argv:  # only name the drift.json already there (after a test edits it)
        name_in_manifest(out)
        return 0
    count = int(argv[argv.index("--count") + 1]) if "--count" in argv else 120
    rng = random.Random(43)
    names = node_names(out)
    names += [("node_%d" % i, "Conv", "t%d" % i) for i in range(len(names), count)]
    # The drift begins at the first Conv from #40 on (#40 itself in synthetic names).
    start = next((i for i in range(40, count) if names[i][1] == "Conv"), 40)
    values = []
    for i in range(count):
        name, op_type, value_name = names[i]
        if i == count - 4:
            op_type = "GlobalAveragePool"
        if i == 88:
            name = HOSTILE
        values.append(one_value(i, count, name, op_type, value_name, rng, start))
    crossing = next((i for i, v in enumerate(values)
                     if v["cosine"] is not None and v["cosine"] < 0.9999), None)
    offenders = [i for i in (count - 4, start, 88) if 0 <= i < count]
    drift = {"format": "npucc-drift", "version": 1, "low_type": "float16", "sample_sets": 4,
             "runtime_runs": 2, "threshold": {"metric": "cosine", "below": 0.9999},
             "first_crossing": crossing, "top_offenders": offenders, "values": values}
    with open(os.path.join(out, "drift.json"), "w") as f:
        json.dump(drift, f, indent=1)
    if "--unnamed" not in argv:  # --unnamed: a stale drift.json the manifest does not name
        name_in_manifest(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
