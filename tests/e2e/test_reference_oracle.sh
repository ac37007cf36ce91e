#!/usr/bin/env bash
# Issue 45 item 3: a second oracle for the emulation. Every op npucc lowers (allow, infer and
# clear lists of src/precision/op_lists.cpp) in a tiny float32 model whose inputs hold
# overflow, underflow, subnormals and rounding ties (tests/oracle2/make_cases.py) is compiled
# at fast (float16) and fast1 (bfloat16) with --no-keep-io-types (so the op alone is lowered,
# inputs and outputs too) and --emit-emulation. Then low.onnx runs in ONNX's Python reference
# evaluator (onnx.reference, which computes float16 in NumPy and bfloat16 in ml_dtypes) and
# emulation.onnx in ONNX Runtime (tests/oracle2/run_emulation.js), and the outputs must agree
# within the op's tolerance (tests/oracle2/tolerances.py, which also lists, with the reason,
# each op the reference cannot run at a low type; compare_reference.py prints every one).
# Needs the shared test venv (scripts/install-test-deps: onnx 1.2x, ml_dtypes): a SKIP
# without it, and .ci/run fails the run when this suite is skipped.
set -euo pipefail
: "${NPUCC:?}" "${SOURCE_DIR:?}"
export NPUCC_CACHE_DISABLE=true
source "$(dirname "$0")/skip_common.sh"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
venv_python="${NPUCC_TEST_VENV:-$HOME/.cache/npucc-deps/venv}/bin/python"
if [ ! -x "$venv_python" ] || ! "$venv_python" -c 'import onnx.reference, ml_dtypes' 2>/dev/null; then
  skip_suite "no test venv with onnx.reference at $venv_python: run scripts/install-test-deps"
fi
if [ -n "${NPUCC_ORACLE2_KEEP:-}" ]; then # keep the cases and graphs there, to look into
  work=$NPUCC_ORACLE2_KEEP
  rm -rf "$work/compiled" && mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
here="$SOURCE_DIR/tests/oracle2"

"$venv_python" "$here/make_cases.py" "$work/cases" --op-lists "$SOURCE_DIR/src/precision/op_lists.cpp" \
  2>"$work/make.log" ||
  { echo "FAIL: make_cases.py: $(tail -3 "$work/make.log")"; exit 1; }
filter=${NPUCC_ORACLE2_FILTER:-}
jobs="$work/jobs.json"
"$venv_python" - "$work/cases/cases.json" "$filter" >"$work/list" <<'EOF'
import json, re, sys
for case in json.load(open(sys.argv[1])):
    if re.fullmatch(sys.argv[2] or ".*", case["name"]):
        for mode in case["modes"]:
            print(case["name"], mode, ",".join(case["flags"]),
                  *["input_%d.pb" % k for k in range(len(case["inputs"]))])
EOF
[ -s "$work/list" ] || { echo "FAIL: no case matches '$filter'"; exit 1; }
failures=0
echo "[" >"$jobs"
separator=""
while read -r name mode flags inputs; do
  out="$work/compiled/$name/$mode"
  IFS=, read -ra flag_list <<<"$flags"
  if ! "$NPUCC" compile "$work/cases/$name/model.onnx" -o "$out" --accelerate-train-mode "$mode|step" \
    "${flag_list[@]}" --emit-emulation --self-contained >"$work/compile.log" 2>&1; then
    echo "FAIL: $name $mode: npucc compile: $(tail -2 "$work/compile.log")"
    failures=$((failures + 1))
    continue
  fi
  files=$(for f in $inputs; do printf '"%s",' "$work/cases/$name/$f"; done)
  printf '%s{"graph": "%s", "inputs": [%s], "out": "%s"}\n' "$separator" "$out/emulation.onnx" \
    "${files%,}" "$out/ort.json" >>"$jobs"
  separator=","
done <"$work/list"
echo "]" >>"$jobs"
node "$here/run_emulation.js" "$jobs" || failures=$((failures + 1))
# compare_reference.py prints one line per case and mode and the reason of every limit.
"$venv_python" "$here/compare_reference.py" "$work/cases" "$work/compiled" --filter "$filter" ||
  failures=$((failures + 1))
suite_end "$failures"
