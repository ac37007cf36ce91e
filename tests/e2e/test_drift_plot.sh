#!/usr/bin/env bash
# `npucc inspect OUT --drift-plot FILE.svg`: the drift report of a compiled output drawn as
# SVG. The picture is checked by things we did not write: Python's XML parser reads it
# (well-formed, the texts as a reader gets them, hostile names intact but inert), and
# rsvg-convert (librsvg) renders it to PNG, whose pixels PIL counts: the plot area has
# content, each kind of mark is there in its colour, and the first crossing's line stands
# where the report puts it. The drift report is a fixture (make_drift_fixture.py) beside a
# real compile of a bundled model, named after that compile's nodes. Then compile
# --accuracy-plot draws a real compile's report.
set -uo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/skip_common.sh"
PYTHON=/usr/bin/python3

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-drift-plot.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect_error WHAT PATTERN ARGS...: exit 1, one line on stderr matching PATTERN.
expect_error() {
  local what="$1" pattern="$2"
  shift 2
  "$NPUCC" "$@" >"$work/out.txt" 2>"$work/err.txt"
  local status=$?
  [ "$status" = 1 ] || fail "$what: exit $status, not 1"
  [ "$(wc -l <"$work/err.txt")" = 1 ] || fail "$what: not one error line: $(cat "$work/err.txt")"
  grep -q -- "$pattern" "$work/err.txt" || fail "$what: no \"$pattern\" in: $(cat "$work/err.txt")"
}

out="$work/out"
"$NPUCC" compile "$TESTDATA/models/ppocr_cls.onnx" -o "$out" --accelerate-train-mode 'fast|step|0.9' \
  --no-cache >/dev/null 2>"$work/compile.err" || {
  echo "FAIL: compile: $(cat "$work/compile.err")"
  exit 1
}

# No drift report yet: say so, and how to get one; write nothing.
expect_error "no report" "this output has no drift report.*--accuracy-report nodes" \
  inspect "$out" --drift-plot "$work/none.svg"
[ ! -e "$work/none.svg" ] || fail "no report: a picture was written anyway"
mkdir "$work/empty"
expect_error "no output folder" "not an npucc output folder" inspect "$work/empty" --drift-plot "$work/none.svg"
# A stale drift.json (an earlier compile's) that the manifest does not name is not drawn.
"$PYTHON" "$here/make_drift_fixture.py" "$out" --unnamed || fail "make_drift_fixture.py --unnamed"
expect_error "stale drift.json" "this output has no drift report.*--accuracy-report nodes" \
  inspect "$out" --drift-plot "$work/none.svg"
[ ! -e "$work/none.svg" ] || fail "stale drift.json: a picture was drawn from it"

"$PYTHON" "$here/make_drift_fixture.py" "$out" || fail "make_drift_fixture.py"
# Named, but not the bytes the manifest records: refused.
cp "$out/drift.json" "$work/named.json"
printf ' ' >>"$out/drift.json"
expect_error "changed drift.json" "drift.json: not the drift report the compile wrote" \
  inspect "$out" --drift-plot "$work/none.svg"
[ ! -e "$work/none.svg" ] || fail "changed drift.json: a picture was drawn from it"
cp "$work/named.json" "$out/drift.json"
svg="$work/drift.svg"
if ! "$NPUCC" inspect "$out" --drift-plot "$svg" >"$work/out.txt" 2>"$work/err.txt"; then
  echo "FAIL: inspect --drift-plot: $(cat "$work/err.txt")"
  exit 1
fi
[ -s "$work/err.txt" ] && fail "inspect --drift-plot wrote to stderr: $(cat "$work/err.txt")"
grep -qx "drift picture: $svg (120 values, first below 0.9999: #[0-9]* p2o.Conv.[0-9]* (Conv))" "$work/out.txt" ||
  fail "inspect --drift-plot: the line says $(cat "$work/out.txt")"

# The XML, as a parser we did not write reads it.
"$PYTHON" - "$out/drift.json" "$svg" <<'PY' || fail "the SVG as XML (above)"
import json, sys
import xml.etree.ElementTree as ET

drift = json.load(open(sys.argv[1]))
root = ET.parse(sys.argv[2]).getroot()  # raises on anything not well-formed
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
titles = [t.text or "" for t in root.iter(ns + "title")]
everything = "\n".join(texts)
problems = []
def expect(what, ok):
    if not ok:
        problems.append(what)
expect("title with low type and sample sets",
       "float16 against float32, 120 values, 4 sample sets" in everything)
first = drift["values"][drift["first_crossing"]]
label = "first below 0.9999: #%d %s (%s)" % (first["order"], first["node"], first["op_type"])
expect("first crossing label %r" % label, label in texts)
expect("threshold label", "threshold: cosine 0.9999" in texts)
hostile = drift["values"][88]["node"]
shown = hostile.replace("\x01", "\\x01")
expect("hostile name listed, markup and quotes as text, the control character as \\x01",
       any(t.startswith("3. #88 " + shown[:40]) for t in texts))
expect("hostile name whole in its tooltip", shown in titles)
expect("no control character in any text", not any(ord(c) < 32 for c in everything if c != "\n"))
expect("three offenders listed", sum(t[:3] in ("1. ", "2. ", "3. ") for t in texts) == 3)
for p in problems:
    print("FAIL: svg: " + p)
sys.exit(1 if problems else 0)
PY

# The pixels, as librsvg renders them.
if ! command -v rsvg-convert >/dev/null; then
  skip_part "rsvg-convert is not installed (Debian: librsvg2-bin; scripts/install-test-deps)"
else
  rsvg-convert -o "$work/drift.png" "$svg" 2>"$work/rsvg.err" || fail "rsvg-convert: $(cat "$work/rsvg.err")"
  "$PYTHON" - "$out/drift.json" "$work/drift.png" <<'PY' || fail "the rendered picture (above)"
import json, sys
from PIL import Image

drift = json.load(open(sys.argv[1]))
image = Image.open(sys.argv[2]).convert("RGB")
width, height = image.size
pixels = image.load()
# The layout (src/report/drift_plot.cpp): plot x 100..1176; 1 - cosine y 64..274, max abs
# error 304..474, the lanes 494..562.
LEFT, RIGHT = 100, 1176
def colour_count(rgb, x0, y0, x1, y1, tolerance=10):
    return sum(1 for x in range(x0, x1) for y in range(y0, y1)
               if all(abs(a - b) <= tolerance for a, b in zip(pixels[x, y], rgb)))
def hex_rgb(text):
    return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))
problems = []
if (width, height) != (1200, height) or height < 700:
    problems.append("size %dx%d, not 1200 wide and at least 700 high" % (width, height))
ink = sum(1 for x in range(LEFT + 2, RIGHT - 2) for y in range(66, 272) if pixels[x, y] != (255, 255, 255))
if ink < 3000:
    problems.append("the 1 - cosine panel is nearly blank: %d non-white pixels" % ink)
marks = {  # colour: (what, region, at least, tolerance: lines are anti-aliased, marks solid)
    "#1f77b4": ("the 1 - cosine line", (LEFT, 64, RIGHT, 274), 400, 40),
    "#2ca02c": ("the max abs error line", (LEFT, 304, RIGHT, 474), 400, 40),
    "#8c8c8c": ("kept float32 marks", (LEFT, 494, RIGHT, 562), 300, 10),
    "#ff7f0e": ("overflow marks", (LEFT, 494, RIGHT, 562), 150, 10),
    "#17becf": ("flush marks", (LEFT, 494, RIGHT, 562), 300, 10),
    "#e377c2": ("undefined cosine marks", (LEFT, 64, RIGHT, 562), 100, 10),
    "#9467bd": ("top offender badges", (LEFT, 64, RIGHT, 274), 150, 10),
}
for colour, (what, box, least, tolerance) in marks.items():
    count = colour_count(hex_rgb(colour), *box, tolerance)
    print("%s %s: %d pixels" % (colour, what, count))
    if count < least:
        problems.append("%s: %d pixels of %s, expected at least %d" % (what, count, colour, least))
def near(rgb, name, tolerance):
    return all(abs(a - b) <= tolerance for a, b in zip(rgb, hex_rgb(name)))
# The threshold: a dashed red row across the 1 - cosine panel (dashes 6 on, 4 off).
rows = [y for y in range(66, 272)
        if sum(1 for x in range(LEFT, RIGHT) if near(pixels[x, y], "#d62728", 40)) > 0.4 * (RIGHT - LEFT)]
if not rows:
    problems.append("no dashed threshold row in the 1 - cosine panel")
# An undefined cosine is a gap, never a zero error: no line reaches the floor (the panel's
# bottom, y 274) there.
step = (RIGHT - LEFT) / len(drift["values"])
for index, value in enumerate(drift["values"]):
    if value["cosine"] is None:
        x = int(LEFT + (index + 0.5) * step)
        low = sum(1 for dx in (-1, 0, 1) for y in range(250, 273) if near(pixels[x + dx, y], "#1f77b4", 60))
        if low:
            problems.append("undefined cosine #%d: the line goes down to the floor at x=%d" % (index, x))
# The first crossing's line: the red column in the max abs error panel, where nothing else is red.
red = hex_rgb("#d62728")
columns = [x for x in range(LEFT, RIGHT)
           if sum(1 for y in range(310, 470) if all(abs(a - b) <= 40 for a, b in zip(pixels[x, y], red))) > 100]
expected = LEFT + (drift["first_crossing"] + 0.5) * (RIGHT - LEFT) / len(drift["values"])
if not columns or abs(sum(columns) / len(columns) - expected) > 2:
    problems.append("first crossing line at columns %s, expected near x=%.1f" % (columns, expected))
for p in problems:
    print("FAIL: png: " + p)
sys.exit(1 if problems else 0)
PY
fi

# Through a graph of the output, and replacing the picture it wrote before.
"$NPUCC" inspect "$out/low.onnx" --drift-plot "$svg" 2>"$work/err.txt" || fail "inspect low.onnx --drift-plot: $(cat "$work/err.txt")"

# A file that is not an SVG is not replaced; a folder, a missing folder: one line each.
printf 'precious\n' >"$work/notes.svg"
expect_error "non-SVG target" "exists and is not an SVG picture" inspect "$out" --drift-plot "$work/notes.svg"
[ "$(cat "$work/notes.svg")" = precious ] || fail "non-SVG target: its content changed"
mkdir "$work/folder.svg"
expect_error "folder target" "folder.svg: not a regular file" inspect "$out" --drift-plot "$work/folder.svg"
expect_error "missing folder" "$work/missing/x.svg: cannot create" inspect "$out" --drift-plot "$work/missing/x.svg"
ls "$work" | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls "$work")"

# Damaged reports: named, with what is wrong.
cp "$out/drift.json" "$work/good.json"
printf '{"format": "npucc-drift", ' >"$out/drift.json"
"$PYTHON" "$here/make_drift_fixture.py" "$out" --stamp
expect_error "truncated drift.json" "$out/drift.json: not valid JSON" inspect "$out" --drift-plot "$work/bad.svg"
"$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["values"][5]["cosine"]="high"; json.dump(d,open(sys.argv[2],"w"))' \
  "$work/good.json" "$out/drift.json"
"$PYTHON" "$here/make_drift_fixture.py" "$out" --stamp
expect_error "wrong field" "drift.json: invalid drift report: values\[5\].cosine: a string, not a number" \
  inspect "$out" --drift-plot "$work/bad.svg"
[ ! -e "$work/bad.svg" ] || fail "a damaged report left a picture"

# 0, 1 and 3000 values: well-formed, rendered, the big one of a sane size.
for count in 0 1 3000; do
  folder="$work/count$count"
  mkdir "$folder"
  cp "$out/manifest.json" "$folder/"
  "$PYTHON" "$here/make_drift_fixture.py" "$folder" --count "$count"
  "$NPUCC" inspect "$folder" --drift-plot "$folder/p.svg" 2>"$work/err.txt" || fail "$count values: $(cat "$work/err.txt")"
  "$PYTHON" -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$folder/p.svg" ||
    fail "$count values: not well-formed XML"
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert -o "$folder/p.png" "$folder/p.svg" || fail "$count values: rsvg-convert failed"
  fi
done
size=$(stat -c %s "$work/count3000/p.svg")
[ "$size" -lt 400000 ] || fail "3000 values: the SVG is $size bytes"
echo "3000 values: $size bytes"

# compile --accuracy-plot: the picture asked for is made. It implies --accuracy-report nodes
# (and so the check): a real compile of a bundled model on samples, no other accuracy option,
# writes the drift report the manifest names and draws it; librsvg renders it with content.
"$PYTHON" -c 'import numpy as np, sys
rng = np.random.default_rng(43)
for k in range(2):
    np.savez(sys.argv[1] + "/set%d.npz" % k, x=rng.uniform(-1, 1, (1, 3, 48, 192)).astype(np.float32))' \
  "$(mkdir -p "$work/cls_samples" && echo "$work/cls_samples")" || fail "cls samples"
if "$NPUCC" compile "$TESTDATA/models/ppocr_cls.onnx" -o "$work/plotted" --input-shape "x:1,3,48,192" \
  --accelerate-train-mode 'fast|step|0.9' --sample-inputs "$work/cls_samples" --no-cache \
  --accuracy-plot "$work/c.svg" >"$work/out.txt" 2>"$work/err.txt"; then
  grep -q "drift picture: $work/c.svg ([0-9]* values, " "$work/out.txt" ||
    fail "--accuracy-plot: no picture line in: $(cat "$work/out.txt")"
  "$PYTHON" -c 'import json, sys; m = json.load(open(sys.argv[1]))
assert m["drift_report"]["file"] == "drift.json", m.get("drift_report")
assert m["accuracy"]["outputs"], "no accuracy check"' "$work/plotted/manifest.json" ||
    fail "--accuracy-plot: the manifest has no drift report or no check"
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert -o "$work/c.png" "$work/c.svg" || fail "--accuracy-plot: rsvg-convert failed"
    "$PYTHON" - "$work/c.png" <<'PY' || fail "--accuracy-plot: the rendered picture (above)"
import sys
from PIL import Image
image = Image.open(sys.argv[1]).convert("RGB")
width, height = image.size
assert width >= 400 and height >= 200, image.size
# Content: many pixels neither white nor near-white (axes, text, the drift line and marks).
inked = sum(1 for pixel in image.getdata() if min(pixel) < 200)
print(f"--accuracy-plot: {width}x{height}, {inked} inked pixels")
assert inked > 2000, inked
PY
  else
    echo "note: rsvg-convert not installed: the compile's picture was not rendered"
  fi
else
  fail "compile --accuracy-plot: $(cat "$work/err.txt")"
fi
# cache explain takes the option (a compile's command line explains itself).
"$NPUCC" cache explain "$TESTDATA/models/ppocr_cls.onnx" --accuracy-plot "$work/e.svg" \
  --cache-dir "$work/cache" >/dev/null 2>"$work/err.txt"
[ $? != 2 ] || fail "cache explain refuses --accuracy-plot: $(cat "$work/err.txt")"
[ ! -e "$work/e.svg" ] || fail "cache explain drew a picture"

"$NPUCC" inspect --help | grep -q -- "--drift-plot" || fail "inspect --help does not show --drift-plot"
"$NPUCC" compile --help | grep -q -- "--accuracy-plot" || fail "compile --help does not show --accuracy-plot"
suite_end "$failures"
