#!/usr/bin/python3
"""Models and sample sets for the peers bench (issue 45): the same sets for every tool.

    make_inputs.py SCRATCH

Writes SCRATCH/models/*.onnx (the overflow model, a small BERT-like encoder, a 15-layer one
of 521 MB in one file; the four bundled real models are read where they are) and, per model,
SCRATCH/samples/MODEL/{tools,held}/test_data_set_K/input_*.pb: `tools` is the share given to
every tool (npucc's --sample-inputs, AutoCast's --calibration_data, onnxconverter-common's
feed), `held` is kept from all of them and only judged on. Inputs are what each model reads
in use, as the accuracy suites make them: rendered pages for the text detector
(tests/tools/render_pages.py), rendered text lines for the direction classifier, speech-like
frames for silero_vad, inputs near 1000 for the overflow model, Zipf-distributed token ids for
the encoders, English paraphrase pairs for paraphrase_minilm (tests/tools/paraphrase_samples.py:
pairs 0-3 for the tools, 4-11 held out; its model is read from the venv's package).
oww_hello_deepa reads the embeddings of openwakeword's speech embedding model, which is not
here: its sets are Gaussian features (said so in the bench README).
Run with Debian's python3 (Pillow, onnx); idempotent: what exists is kept.
"""

import os
import subprocess
import sys

import numpy as np
from onnx import numpy_helper

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOLS = os.path.join(SOURCE, "tests", "tools")
SHARES = {"tools": (1, 4), "held": (2, 8)}  # share: (seed, sets)
ENCODER = ["--layers", "4", "--hidden", "256", "--heads", "4", "--vocab", "8000"]
BIG = ["--layers", "15"]  # BERT-base's shape, 15 layers: 521 MB of float32 weights


def write_set(folder, arrays):
    os.makedirs(folder, exist_ok=True)
    for i, (name, value) in enumerate(arrays.items()):
        with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def write_sets(out, make, seed, count):
    rng = np.random.default_rng(seed)
    for k in range(count):
        write_set(os.path.join(out, "test_data_set_%d" % k), make(rng, k))


def speech(rng, k):
    """Voiced frames (110-220 Hz fundamental, two formants, syllable-rate envelope, breath
    noise) at 16 kHz, the LSTM state from zero: as tests/e2e/test_accuracy_figures.sh."""
    t = np.arange(512) / 16000.0
    f0 = rng.uniform(110, 220)
    voiced = sum(np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6)) *
                 (np.exp(-((f0 * h - 700) / 300) ** 2) + 0.6 * np.exp(-((f0 * h - 1200) / 400) ** 2))
                 for h in range(1, 20))
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t + k)
    x = (0.3 * voiced * envelope + 0.01 * rng.normal(size=512)).astype(np.float32)[None]
    return {"input": x, "sr": np.array(16000, np.int64),
            "h": np.zeros((2, 1, 64), np.float32), "c": np.zeros((2, 1, 64), np.float32)}


def tokens(vocab):
    def make(rng, _):
        # Word frequencies follow Zipf's law; id 0..999 are the special and frequent tokens.
        ids = np.minimum(rng.zipf(1.3, (1, 32)) + 999, vocab - 1).astype(np.int64)
        ids[0, 0] = 101
        return {"input_ids": ids, "position_ids": np.arange(32, dtype=np.int64)[None]}
    return make


GENERATED = {
    "silero_vad_legacy": speech,
    "oww_hello_deepa": lambda rng, _: {"onnx::Flatten_0": rng.standard_normal((1, 25, 96)).astype(np.float32)},
    "overflow": lambda rng, _: {"x": rng.uniform(900.0, 1100.0, (1, 16)).astype(np.float32)},
    "encoder": tokens(8000),
    "bert_521mb": tokens(30522),
}
RENDERED = {"ppocrv4_det": ["--size", "320,320"], "ppocr_cls": ["--text-lines", "--size", "48,192"]}


def paraphrase_pairs(out, share):
    first, count = (0, 4) if share == "tools" else (4, 8)
    subprocess.run([sys.executable, os.path.join(TOOLS, "paraphrase_samples.py"), "sets", out,
                    "--first", str(first), "--count", str(count)], check=True)


def make_models(scratch):
    models = os.path.join(scratch, "models")
    os.makedirs(models, exist_ok=True)
    if not os.path.exists(os.path.join(models, "overflow.onnx")):
        subprocess.run([sys.executable, os.path.join(TOOLS, "make_accuracy_models.py"),
                        os.path.join(scratch, "accuracy-models")], check=True)
        os.replace(os.path.join(scratch, "accuracy-models", "overflow.onnx"), os.path.join(models, "overflow.onnx"))
    for name, shape in (("encoder", ENCODER), ("bert_521mb", BIG)):
        path = os.path.join(models, name + ".onnx")
        if not os.path.exists(path):
            print("peers: building %s" % path, file=sys.stderr, flush=True)
            subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "bench", "make_transformer.py"),
                            path, *shape], check=True)


def make_samples(scratch):
    for model in list(GENERATED) + list(RENDERED) + ["paraphrase_minilm"]:
        for share, (seed, count) in SHARES.items():
            out = os.path.join(scratch, "samples", model, share)
            if os.path.isdir(out):
                continue
            if model == "paraphrase_minilm":
                paraphrase_pairs(out, share)
            elif model in RENDERED:
                subprocess.run([sys.executable, os.path.join(TOOLS, "render_pages.py"), out,
                                "--pages", str(count), "--seed", str(seed), *RENDERED[model]], check=True)
            else:
                write_sets(out, GENERATED[model], seed, count)


def main():
    scratch = sys.argv[1]
    make_models(scratch)
    make_samples(scratch)


if __name__ == "__main__":
    main()
