#!/usr/bin/env bash
# ONNX's backend test suite (Debian's libonnx-testdata) through npucc, checked by independent
# tools: every model compiles or is refused cleanly (exit 1, one `npucc: error:` line, no
# signal); every high.onnx passes ONNX's full checker (Python); and wherever ONNX Runtime
# reproduces a case's expected outputs from the original model, it reproduces them from
# npucc's high.onnx too.
set -euo pipefail

data=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
if [ ! -d "$data/node" ]; then
  echo "skip: ONNX's backend test data is absent ($data); apt-get install libonnx-testdata"
  exit 77 # the one skip code (tests/e2e/skip_common.sh)
fi
: "${NPUCC:?set NPUCC to the npucc binary}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
python=/usr/bin/python3
source "$(dirname "$0")/oracle_common.sh" # sets oracle
jobs=${NPUCC_TEST_JOBS:-2}
# NPUCC_BACKEND_MODE=MODE compiles with --accelerate-train-mode MODE and checks the low
# graph instead: it must pass the full checker, and (fast: float16) ONNX Runtime must load
# and run it wherever it runs the original. bfloat16 arithmetic has no CPU kernels in
# ONNX Runtime, so fast1 low graphs get the checker only.
mode=${NPUCC_BACKEND_MODE:-}
graph=high.onnx
compile_args=""
if [ -n "$mode" ]; then
  graph=low.onnx
  compile_args="--accelerate-train-mode=$mode"
  echo "backend suite with --accelerate-train-mode '$mode': checking low.onnx"
fi
export NPUCC_COMPILE_ARGS=$compile_args

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-backend.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out" "$work/status"

find "$data"/{node,pytorch-converted,pytorch-operator,simple} -mindepth 2 -maxdepth 2 \
  -name model.onnx 2>/dev/null | sort | grep -E -e "${NPUCC_BACKEND_FILTER:-.}" > "$work/models.txt" || true  # honest: an empty list is checked below (no model matches)
total=$(wc -l < "$work/models.txt")
sed -e 's|/model.onnx$||' -e 's|.*/\([^/]*\)/\([^/]*\)$|\1__\2|' "$work/models.txt" > "$work/models.txt.ids"
echo "backend suite: $total models under $data"

# One compile per model, two at a time. Each prints one status line
# "<exit status> <stderr lines> <stderr starts with npucc: error:> <id> <model>" (short single
# writes, so parallel lines do not interleave) and keeps stderr in status/<id>.err;
# <id> is "<group>__<test>".
compile_one() {
  local model=$1 work=$2
  local test_dir=${model%/model.onnx}
  local group=${test_dir%/*}
  local id="${group##*/}__${test_dir##*/}"
  local err="$work/status/$id.err"
  local rc=0
  # shellcheck disable=SC2086 # one optional word
  "$NPUCC" compile --no-cache $NPUCC_COMPILE_ARGS "$model" -o "$work/out/$id" > /dev/null 2> "$err" || rc=$?
  local lines=0 clean=0
  if [ -s "$err" ]; then
    lines=$(wc -l < "$err")
    [[ "$(head -c 14 "$err")" == "npucc: error: " ]] && clean=1
  fi
  echo "$rc $lines $clean $id $model"
}
export -f compile_one
export NPUCC
start=$SECONDS
xargs -a "$work/models.txt" -P "$jobs" -I{} bash -c 'compile_one "$1" "$2"' _ {} "$work" \
  > "$work/status.txt"
echo "compiled the suite in $((SECONDS - start)) s with $jobs jobs"

compiled=0
refused=0
bad=0
: > "$work/compiled.txt"
: > "$work/refused.txt"
while read -r rc lines clean id model; do
  err="$work/status/$id.err"
  if [ "$rc" = 0 ]; then
    if [ -f "$work/out/$id/$graph" ]; then
      compiled=$((compiled + 1))
      echo "$id $model" >> "$work/compiled.txt"
    else
      bad=$((bad + 1))
      echo "BAD $id: exit 0 but no $graph"
    fi
  elif [ "$rc" = 1 ] && [ "$lines" = 1 ] && [ "$clean" = 1 ]; then
    refused=$((refused + 1))
    echo "$id $(cat "$err")" >> "$work/refused.txt"
  else
    bad=$((bad + 1))
    if [ "$rc" -ge 128 ]; then
      echo "CRASH $id: killed by signal $((rc - 128)): $(head -c 300 "$err" | tr '\n' ' ')"
    else
      echo "BAD $id: exit $rc with $lines stderr line(s): $(head -c 300 "$err" | tr '\n' ' ')"
    fi
  fi
done < <(sort -k4 "$work/status.txt")

echo "compiled $compiled, refused $refused, crashed or badly refused $bad (of $total)"
# Old exports that once were refused and must compile: int64 Constants at opset 6, before
# Constant-9 allowed them (npucc lifts them into initializers).
must_compile="pytorch-converted__test_PixelShuffle pytorch-operator__test_operator_repeat pytorch-operator__test_operator_repeat_dim_overflow"
missing=0
for id in $must_compile; do
  if grep -qx "$id" "$work/models.txt.ids" && ! grep -q "^$id " "$work/compiled.txt"; then
    echo "FAIL $id: must compile: $(cat "$work/status/$id.err")"
    missing=$((missing + 1))
  fi
done
if [ "$refused" -gt 0 ]; then
  echo "top refusal reasons:"
  # Without the file name, quoted names and numbers, so alike refusals group.
  sed -e 's|^[^ ]* npucc: error: [^ ]*model.onnx: ||' -e 's/"[^"]*"/"…"/g' -e "s/'[^']*'/'…'/g" \
      -e 's/[0-9]\+/N/g' "$work/refused.txt" | cut -c1-110 | sort | uniq -c | sort -rn | head -12
  if [ -n "${NPUCC_TEST_VERBOSE:-}" ]; then
    cat "$work/refused.txt"
  fi
fi

# Every compiled graph must pass ONNX's own full checker and strict shape inference.
checker_failed=0
if [ "$compiled" -gt 0 ]; then
  awk -v out="$work/out" -v graph="$graph" '{ print out "/" $1 "/" graph }' "$work/compiled.txt" > "$work/all.txt"
  # Debian's ONNX (1.12) checks IR <= 8 and opset <= 17; fast1 raises a low graph to opset 22
  # (IR 10) where an op gains bfloat16, and ONNX Runtime judges those: every node must resolve
  # to a kernel, "Could not find an implementation" (bfloat16 on the CPU) being the one
  # error allowed, wherever ORT runs the original on the same seeded inputs (it cannot run
  # batchwise RNNs, sequence inputs, ai.onnx.preview.training ops, ...).
  "$python" - "$work/compiled.txt" "$work/out" "$graph" "$work/high.txt" "$work/newer.txt" \
    "$work/newer-originals.txt" <<'EOF'
import os, sys
import onnx
compiled, out, graph = sys.argv[1:4]
old, new, originals = (open(p, "w") for p in sys.argv[4:7])
for line in open(compiled):
    ident, original = line.split(" ", 1)
    path = os.path.join(out, ident, graph)
    model = onnx.load(path, load_external_data=False)
    opset = max([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] or [1])
    if model.ir_version > 8 or opset > 17:
        new.write(path + "\n")
        originals.write(original.strip() + "\n")
    else:
        old.write(path + "\n")
EOF
  start=$SECONDS
  "$python" "$SOURCE_DIR/tests/tools/onnx_checker.py" --quiet --list "$work/high.txt" \
    > "$work/checker.txt" 2>&1 || checker_failed=1
  sed -e "s|$work/out/||" "$work/checker.txt" | tail -n 40
  echo "(checker took $((SECONDS - start)) s)"
  if [ -s "$work/newer.txt" ]; then
    echo "$(wc -l < "$work/newer.txt") graphs beyond ONNX 1.12 (opset > 17 or IR > 8): loaded in ONNX Runtime"
    # In chunks: the Node binding has crashed after some hundreds of sessions in one process.
    levels() { # FILE_OF_MODELS -> "ok|allowed|ERROR MODEL LEVEL" lines
      split -l 60 "$1" "$1.chunk."
      for chunk in "$1".chunk.??; do
        (cd "$oracle" && xargs node run_levels.js --allow-missing-kernel --levels disabled,all \
          < "$chunk") 2>&1 | grep -v '^try ' || true  # honest: printing the checker's output; its verdicts are counted below
      done
    }
    levels "$work/newer-originals.txt" > "$work/newer-originals.log"
    levels "$work/newer.txt" > "$work/newer.log"
    "$python" - "$work/newer-originals.txt" "$work/newer.txt" "$work/newer-originals.log" \
      "$work/newer.log" <<'EOF' || checker_failed=1
import sys
originals = open(sys.argv[1]).read().split()
compiled = open(sys.argv[2]).read().split()
def passing(log):
    # "ok|allowed MODEL LEVEL" per level that ran; a crash leaves the rest without a line
    runs = {}
    for line in open(log):
        verdict, _, rest = line.rstrip("\n").partition(" ")
        if verdict in ("ok", "allowed"):
            model = rest.rsplit(" ", 1)[0]
            runs[model] = runs.get(model, 0) + 1
    return {model for model, count in runs.items() if count == 2}
original_ok, compiled_ok = passing(sys.argv[3]), passing(sys.argv[4])
judged = [c for o, c in zip(originals, compiled) if o in original_ok]
failed = [c for c in judged if c not in compiled_ok]
for c in failed:
    print("FAIL", c, "(ONNX Runtime runs the original, not this graph)")
print(f"ONNX Runtime: {len(judged) - len(failed)} of {len(judged)} graphs resolve every node "
      f"(up to a missing bfloat16 kernel); {len(originals) - len(judged)} whose original ORT "
      f"cannot run left out")
sys.exit(1 if failed else 0)
EOF
  fi
fi

# ONNX Runtime: one case per test_data_set of each compiled model.
ort_failed=0
if [[ "$mode" == fast1* ]]; then
  echo "ONNX Runtime has no bfloat16 kernels: fast1 low graphs are checked by ONNX's checker (opset <= 17) or loaded in ONNX Runtime (above), not run against the expected outputs"
else
"$python" - "$work/compiled.txt" "$work/out" "$graph" > "$work/cases.json" <<'EOF'
import glob, json, os, sys
cases = []
for line in open(sys.argv[1]):
    ident, model = line.split(" ", 1)
    model = model.strip()
    for data_set in sorted(glob.glob(os.path.join(os.path.dirname(model), "test_data_set_*"))):
        inputs = sorted(glob.glob(os.path.join(data_set, "input_*.pb")),
                        key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
        outputs = sorted(glob.glob(os.path.join(data_set, "output_*.pb")),
                         key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
        cases.append({"name": f"{ident}/{os.path.basename(data_set)}", "original": model,
                      "compiled": os.path.join(sys.argv[2], ident, sys.argv[3]),
                      "inputs": inputs, "expected": outputs})
json.dump(cases, sys.stdout)
EOF
start=$SECONDS
# The low graph computes in float16: it must load and run, not match to float32 tolerance.
compare_args=(--expected-rtol 1e-3 --expected-atol 1e-5)
if [ -n "$mode" ]; then
  compare_args=(--expected-rtol 1e30 --expected-atol 1e30 --allow-new-nonfinite)
fi
node "$oracle/compare.js" --quiet --cases "$work/cases.json" --json "$work/ort.json" \
  "${compare_args[@]}" > "$work/ort.txt" 2>&1 || ort_failed=1
grep '^FAIL' "$work/ort.txt" | head -n 40 || true  # honest: prints the failures; the counts decide
"$python" - "$work/ort.json" "$must_compile" <<'EOF' || ort_failed=1
import collections, json, re, sys
report = json.load(open(sys.argv[1]))
counts = report["counts"]
equal = counts["pass"]
considered = counts["pass"] + counts["fail"]
print(f"ORT-equal {equal} of {considered} cases where ONNX Runtime reproduces the expected "
      f"outputs from the original ({counts['skip']} cases skipped)")
def kind(reason):
    # Cut at the name of the model/node/input, so alike skips group.
    return re.sub(r"[\"'/][^ ]*|\d+", "…", reason)[:120]
reasons = collections.Counter(kind(c["reason"]) for c in report["cases"] if c["status"] == "skip")
for reason, n in reasons.most_common(8):
    print(f"  skipped {n}: {reason}")
# The old exports above must also reproduce their reference outputs, not be skipped.
must = sys.argv[2].split()
unmatched = [c["name"] for c in report["cases"]
             if c["name"].split("/")[0] in must and c["status"] != "pass"]
for name in unmatched:
    print(f"FAIL {name}: must reproduce its reference outputs")
sys.exit(1 if unmatched else 0)
EOF
echo "(ORT took $((SECONDS - start)) s)"
fi

status=0
if [ "$bad" -gt 0 ]; then
  echo "FAIL: $bad model(s) crashed or were refused without a clean one-line error"
  status=1
fi
if [ "$checker_failed" != 0 ]; then
  echo "FAIL: some compiled graphs fail ONNX's full checker (lines above)"
  status=1
fi
if [ "$ort_failed" != 0 ]; then
  echo "FAIL: ONNX Runtime gives different results from some compiled graphs (lines above)"
  status=1
fi
if [ "$missing" -gt 0 ]; then
  echo "FAIL: $missing model(s) that must compile were refused (lines above)"
  status=1
fi
if [ "$compiled" = 0 ]; then
  echo "FAIL: nothing compiled"
  status=1
fi
[ "$status" = 0 ] && echo "PASS: backend suite"
exit "$status"
