#!/usr/bin/env python3
"""How much the accuracy figures move between ONNX Runtime's optimisation levels: npucc's
check runs at 'basic' (npucc-compile(1), ACCURACY); a session that sets no level runs at
ONNX Runtime's default ('all'). For each real model of testdata/models at fast and fast1,
on inputs like its own (rendered pages and text lines, speech-like audio, feature frames),
npucc checks the compile (--check-accuracy --emit-emulation) and the oracle
(tests/oracle/accuracy_check.js, Node's ONNX Runtime) recomputes every output's worst
cosine and max abs error at both levels. One row per model, mode and output: npucc's figure,
the oracle's at basic (must agree: the oracle exits 1 otherwise) and at default, and the
difference in 1 - cosine.

    tests/bench/accuracy_levels.py [--npucc build/npucc] [--scratch DIR] [--json FILE]

Exit status: 0 when every oracle run agreed with npucc at basic, 1 otherwise.
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import numpy_helper

SOURCE = pathlib.Path(__file__).resolve().parents[2]
MODELS = SOURCE / "testdata/models"
ORACLE = SOURCE / "tests/oracle/accuracy_check.js"
RENDER = SOURCE / "tests/tools/render_pages.py"


def write_sets(folder, sets):
    for k, tensors in enumerate(sets):
        target = folder / f"test_data_set_{k}"
        target.mkdir(parents=True, exist_ok=True)
        for i, (name, array) in enumerate(tensors):
            (target / f"input_{i}.pb").write_bytes(
                numpy_helper.from_array(array, name).SerializeToString())


def speech_like(rng, count):
    """silero_vad's inputs: 512 samples of voiced-like audio (harmonics of a pitch under an
    envelope, plus noise), the sample rate, and zero LSTM states."""
    sets = []
    t = np.arange(512) / 16000.0
    for _ in range(count):
        pitch = rng.uniform(90, 250)
        wave = sum(np.sin(2 * np.pi * pitch * h * t + rng.uniform(0, 6)) / h for h in range(1, 8))
        audio = (0.3 * wave * np.hanning(512) + 0.01 * rng.standard_normal(512))[None]
        sets.append([("input", audio.astype(np.float32)), ("sr", np.array(16000, np.int64)),
                     ("h", np.zeros((2, 1, 64), np.float32)), ("c", np.zeros((2, 1, 64), np.float32))])
    return sets


def make_samples(scratch):
    """model name -> its sample folder."""
    rng = np.random.default_rng(7)
    folders = {name: scratch / f"samples-{name}" for name in
               ("ppocrv4_det", "ppocr_cls", "silero_vad_legacy", "oww_hello_deepa")}
    subprocess.run([sys.executable, str(RENDER), str(folders["ppocrv4_det"]), "--pages", "2",
                    "--size", "320,320", "--seed", "1"], check=True)
    subprocess.run([sys.executable, str(RENDER), str(folders["ppocr_cls"]), "--text-lines",
                    "--pages", "4", "--size", "48,192", "--seed", "3"], check=True)
    write_sets(folders["silero_vad_legacy"], speech_like(rng, 4))
    # openWakeWord's classifier reads 25 frames of 96 speech-embedding features (each about
    # unit scale after the embedding model): smooth frames, as consecutive embeddings are.
    frames = [np.cumsum(rng.standard_normal((1, 25, 96)) * 0.3, axis=1).astype(np.float32)
              for _ in range(4)]
    write_sets(folders["oww_hello_deepa"], [[("onnx::Flatten_0", f)] for f in frames])
    return folders


def measure(args, model, mode, samples, scratch):
    out = scratch / f"{model}-{mode}"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([args.npucc, "compile", str(MODELS / f"{model}.onnx"), "-o", str(out),
                    "--accelerate-train-mode", f"{mode}|step|0.9", "--check-accuracy",
                    "--sample-inputs", str(samples), "--emit-emulation", "--no-cache"],
                   check=True, stdout=subprocess.DEVNULL)
    report = scratch / f"{model}-{mode}.json"
    done = subprocess.run(["node", str(ORACLE), str(out), str(samples), "--json", str(report)],
                          capture_output=True, text=True)
    rows = []
    for result in json.load(open(report)):
        rows.append({"model": model, "mode": mode, "output": result["name"],
                     "level": result["level"], "npucc": result["npucc"]["cosine"],
                     "npucc_max_abs": result["npucc"]["max_abs_error"],
                     "cosine": result["oracle"]["cosine"],
                     "max_abs": result["oracle"]["max_abs_error"]})
    return rows, done.returncode == 0


def loss(cosine):
    return None if cosine is None else 1 - cosine


def print_table(rows):
    print(f"{'model':<18} {'mode':<5} {'output':<22} {'npucc (basic)':>13} {'oracle basic':>12} "
          f"{'oracle default':>14} {'1-cos default/basic':>19} {'max abs basic':>13} {'max abs default':>15}")
    keyed = {}
    for row in rows:
        keyed.setdefault((row["model"], row["mode"], row["output"]), {})[row["level"]] = row
    for (model, mode, output), levels in keyed.items():
        basic, default = levels["basic"], levels["default"]
        text = lambda v, f: "undefined" if v is None else format(v, f)  # noqa: E731
        ratio = (loss(default["cosine"]) / loss(basic["cosine"])
                 if basic["cosine"] is not None and default["cosine"] is not None and loss(basic["cosine"]) > 0
                 else None)
        print(f"{model:<18} {mode:<5} {output[:22]:<22} {text(basic['npucc'], '.7f'):>13} "
              f"{text(basic['cosine'], '.7f'):>12} {text(default['cosine'], '.7f'):>14} "
              f"{text(ratio, '.3f'):>19} {text(basic['max_abs'], '.4g'):>13} {text(default['max_abs'], '.4g'):>15}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--npucc", default=str(SOURCE / "build/npucc"))
    parser.add_argument("--scratch")
    parser.add_argument("--json")
    args = parser.parse_args()
    scratch = pathlib.Path(args.scratch or tempfile.mkdtemp(prefix="npucc-levels-"))
    try:
        folders = make_samples(scratch)
        rows, agreed = [], True
        for model, samples in folders.items():
            for mode in ("fast", "fast1"):
                found, ok = measure(args, model, mode, samples, scratch)
                rows += found
                agreed = agreed and ok
        print_table(rows)
        if args.json:
            json.dump(rows, open(args.json, "w"), indent=1)
        print("the oracle agreed with npucc at basic on every run" if agreed
              else "FAIL: the oracle disagreed with npucc at basic (see its JSON)")
        return 0 if agreed else 1
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
