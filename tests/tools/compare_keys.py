#!/usr/bin/env python3
"""Whether two npucc binaries give the same cache keys (issue 46: keys unchanged for
existing caches). For every model and mode, `npucc cache explain --json` of each binary;
the keys must agree in every component but "build" (each binary's own build IDs, which
keep two builds apart by design), and the key recomputed from the second binary's
components with the first's build digest must be the first's key.

Usage: compare_keys.py OLD_NPUCC NEW_NPUCC MODEL...   exit 0 when every key agrees.
"""

import hashlib
import json
import subprocess
import sys
import tempfile

MODES = [
    [],
    ["--accelerate-train-mode", "fast|step"],
    ["--accelerate-train-mode", "fast|step|0.9"],
    ["--accelerate-train-mode", "fast1|step|0.9"],
    ["--precision-mode", "allow_mix_precision"],
    ["--precision-mode-v2", "mixed_bfloat16"],
    ["--accelerate-train-mode", "fast|step", "--emit-emulation"],
    ["--accelerate-train-mode", "fast|step", "--low-precision-weights", "--self-contained"],
    ["--accelerate-train-mode", "fast|step", "--no-keep-io-types", "--external-data"],
    ["--target-opset", "18"],
    ["--passes", "eliminate_dead_code,topological_sort"],
    ["--accelerate-train-mode", "fast|step", "--check-accuracy"],
    ["--accelerate-train-mode", "fast|step", "--accuracy-target", "cosine>=0.99"],
]


def explain(binary, model, mode, cache):
    run = subprocess.run([binary, "cache", "explain", model, "--cache-dir", cache, "--json"] +
                         mode, capture_output=True, text=True)
    if not run.stdout.strip().startswith("{"):
        return None, run.stderr.strip()
    return json.loads(run.stdout), None


def key_from(components, build_digest):
    text = "npucc-cache-key\n"
    for component in components:
        if not component.get("in_key", True):
            continue
        digest = build_digest if component["name"] == "build" else component["digest"]
        text += "%s:%s\n" % (component["name"], digest)
    return hashlib.sha256(text.encode()).hexdigest()


def main(argv):
    old, new, models = argv[1], argv[2], argv[3:]
    bad = 0
    rows = 0
    with tempfile.TemporaryDirectory() as cache:
        for model in models:
            for mode in MODES:
                a, a_error = explain(old, model, mode, cache)
                b, b_error = explain(new, model, mode, cache)
                label = "%s %s" % (model, " ".join(mode) or "(no options)")
                if a is None or b is None:
                    same = (a_error or "").split(":")[-1] == (b_error or "").split(":")[-1]
                    print("%s %s: refused: %s | %s" % ("same" if same else "DIFFERS", label,
                                                       a_error, b_error))
                    bad += 0 if same else 1
                    continue
                rows += 1
                build = next(c["digest"] for c in a["components"] if c["name"] == "build")
                others_a = [c for c in a["components"] if c["name"] != "build"]
                others_b = [c for c in b["components"] if c["name"] != "build"]
                ok = (others_a == others_b and key_from(a["components"], build) == a["key"] and
                      key_from(b["components"], build) == a["key"])
                print("%s %s: %s" % ("same" if ok else "DIFFERS", label, a["key"][:16]))
                bad += 0 if ok else 1
    print("%d keys compared, %d differ" % (rows, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
