#!/usr/bin/env bash
# Damaged and hostile models (tests/tools/make_hostile_models.py): `npucc compile` and
# `npucc inspect` must refuse each with exit status 1 (not 0, not a signal, not a hang),
# exactly one stderr line "npucc: error: ..." naming the file, and no output folder or
# staging folder left behind.
# Set NPUCC_VALGRIND=1 to run every case under valgrind as well (slow).
set -uo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
PYTHON=/usr/bin/python3

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$PYTHON" "$SOURCE_DIR/tests/tools/make_hostile_models.py" "$work/gen" \
  "$TESTDATA/models/ppocr_cls.onnx" || { echo "FAIL: generator failed"; exit 1; }

failures=0
cases=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

runner=()
if [ "${NPUCC_VALGRIND:-0}" = 1 ]; then
  runner=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)
fi

# check NAME MODEL COMMAND...: runs the command with a time limit and checks the contract.
check() {
  local name=$1 model=$2
  shift 2
  local err="$work/stderr"
  cases=$((cases + 1))
  timeout 120 "${runner[@]}" "$@" >"$work/stdout" 2>"$err"
  local status=$?
  if [ "$status" -eq 124 ]; then
    fail "$name: timed out (hang?)"
    return
  fi
  if [ "$status" -ne 1 ]; then
    fail "$name: exit status $status, expected 1; stderr: $(head -c 600 "$err")"
    return
  fi
  local lines
  lines=$(wc -l <"$err")
  if [ "$lines" -ne 1 ]; then
    fail "$name: $lines lines on stderr, expected 1: $(head -c 600 "$err")"
  fi
  if ! head -n 1 "$err" | grep -q '^npucc: error: '; then
    fail "$name: stderr does not start with 'npucc: error: ': $(head -c 300 "$err")"
  fi
  if ! grep -qF "$(basename "$model")" "$err"; then
    fail "$name: error does not name $(basename "$model"): $(head -c 300 "$err")"
  fi
}

count=0
for model in "$work"/gen/models/*.onnx; do
  count=$((count + 1))
  name=$(basename "$model" .onnx)
  out_parent="$work/out/$name"
  mkdir -p "$out_parent"
  check "compile $name" "$model" "$NPUCC" compile "$model" -o "$out_parent/compiled"
  leftover=$(ls -A "$out_parent")
  if [ -n "$leftover" ]; then
    fail "compile $name: left files behind: $leftover"
  fi
  check "inspect $name" "$model" "$NPUCC" inspect "$model"
  check "inspect --json $name" "$model" "$NPUCC" inspect --json "$model"
  # --input-shape must not help a hostile model past the checks.
  if [ "$name" = huge_input_dim ]; then
    check "inspect $name --input-shape" "$model" "$NPUCC" inspect "$model" --input-shape "x:-1"
  fi
done

# The 2^40 dim can also arrive through --input-shape on a healthy model.
sil="$TESTDATA/models/silero_vad_legacy.onnx"
check "inspect --input-shape 2^40" "$sil" "$NPUCC" inspect "$sil" \
  --input-shape "input:1099511627776,1099511627776"
check "compile --input-shape 2^40" "$sil" "$NPUCC" compile "$sil" -o "$work/out/sil/compiled" \
  --input-shape "input:1099511627776,1099511627776"
if [ -n "$(ls -A "$work/out/sil" 2>/dev/null)" ]; then
  fail "compile --input-shape 2^40: left files behind"
fi

if [ "$count" -lt 20 ]; then
  fail "expected at least 20 hostile models, the generator wrote $count"
fi
echo "$cases checks on $count hostile models, $failures failures"
[ "$failures" -eq 0 ]
