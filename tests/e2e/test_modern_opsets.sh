#!/usr/bin/env bash
# Modern ONNX (issue 17): the opset 18-26 corpus (tests/tools/make_opset_corpus.py: a model per
# ai.onnx operator version introduced in opsets 18 to 26, the element types newer than ONNX 1.12,
# IR 9/10 function fields, whole models, the bundled real models of $TESTDATA raised to opset 22 /
# IR 10) is generated into a temporary folder, each model is
# compiled by npucc three ways (plain; 'fast|step|0.9' --emit-emulation; 'fast1|loss|1.05'
# --emit-emulation), and ONNX Runtime 1.30 (tests/oracle/run_corpus.js) runs the original and
# every graph at the four optimisation levels: high equal to the original, low graphs run
# (output names, shapes, types, no new NaN/Inf; a bfloat16 one allowed only "Could not find an
# implementation"), emulation cosine >= 0.99; the low graphs' accuracy is the emulation's to
# show (ORT computes most float16 ops in float32), and ONNX's reader
# (tests/tools/check_emulation.py) checks each emulation rounds every value its low graph holds.
#
# A model with an element type newer than ONNX 1.12 may be refused instead, if npucc says so in
# one line naming the type, exits non-zero and writes no output folder (so may GroupNormalization-18,
# which ONNX deprecated, naming the op); the four models nobody can
# know (opset 27, IR 14, element type 27, an undefined op) must be refused that way, naming the
# opset, IR version, type or op. Any other refusal fails the model. One line per model, then
# "N passed, N failed".
#
# NPUCC_CORPUS_FILTER=REGEX runs only the models whose name matches (e.g. '^(Conv|Attention)-').
# NPUCC_CORPUS_KEEP=DIR keeps the corpus, npucc's output and the logs in DIR.
set -euo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
if [ -n "${NPUCC_CORPUS_KEEP:-}" ]; then
  work="$NPUCC_CORPUS_KEEP"
  rm -rf "$work" && mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-corpus.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
jobs=${NPUCC_CORPUS_JOBS:-2}
status=0

# Writes NAME<TAB>MODE<TAB>ok|refused|fail<TAB>MESSAGE for one compile to stdout.
#   $1 npucc binary  $2 model  $3 name  $4 mode  $5 output folder
#   $6 refusal: never | may | must   $7 words of which a refusal must hold one (a,b)
compile_one() {
  local npucc=$1 model=$2 name=$3 mode=$4 out=$5 refuse=$6 names=$7
  local args=(compile "$model" -o "$out" --no-cache)
  case "$mode" in
    fast) args+=(--accelerate-train-mode 'fast|step|0.9' --emit-emulation) ;;
    fast1) args+=(--accelerate-train-mode 'fast1|loss|1.05' --emit-emulation) ;;
  esac
  local log="$out.log" rc=0
  mkdir -p "$(dirname "$out")"
  "$npucc" "${args[@]}" > "$log" 2>&1 || rc=$?
  # the message without the model's path (its file name may hold the type's name)
  local first text
  text=$(sed "s|$model|MODEL.onnx|g" "$log")
  first=$(printf '%s\n' "$text" | grep -m1 . | tr '\t' ' ' || true)  # honest: an empty log gives an empty line, judged below
  if [ "$rc" = 0 ] && [ "$refuse" = must ]; then
    printf '%s\t%s\tfail\tcompiled a model npucc cannot know (it must refuse it naming %s)\n' \
      "$name" "$mode" "$names"
    return
  fi
  if [ "$rc" = 0 ]; then
    local role missing=""
    local roles=(high)
    [ "$mode" != plain ] && roles+=(low emulation)
    for role in "${roles[@]}"; do
      [ -f "$out/$role.onnx" ] || missing+=" $role.onnx"
    done
    [ -f "$out/manifest.json" ] || missing+=" manifest.json"
    if [ -n "$missing" ]; then
      printf '%s\t%s\tfail\texit 0 but missing:%s\n' "$name" "$mode" "$missing"
    else
      printf '%s\t%s\tok\t\n' "$name" "$mode"
    fi
    return
  fi
  # A refusal is accepted only where the case allows it (new element types) or requires it, and
  # only as one line naming one of its words, with no output folder left behind.
  local lines named=""
  lines=$(printf '%s\n' "$text" | grep -c . || true)  # honest: grep -c prints 0 and exits 1 when there is none: the count is checked
  local t
  for t in ${names//,/ }; do
    printf '%s\n' "$text" | grep -qiw -- "$t" && named=$t
  done
  if [ "$refuse" = never ]; then
    printf '%s\t%s\tfail\texit %s: %s\n' "$name" "$mode" "$rc" "$first"
  elif [ "$lines" != 1 ]; then
    printf '%s\t%s\tfail\trefused in %s lines, not one: %s\n' "$name" "$mode" "$lines" "$first"
  elif [ -z "$named" ]; then
    printf '%s\t%s\tfail\trefusal does not name %s: %s\n' "$name" "$mode" "$names" "$first"
  elif [ -e "$out" ]; then
    printf '%s\t%s\tfail\trefused but left %s behind: %s\n' "$name" "$mode" "$out" "$first"
  else
    printf '%s\t%s\trefused\t%s\n' "$name" "$mode" "$first"
  fi
}
export -f compile_one

echo "== corpus (tests/tools/make_opset_corpus.py${NPUCC_CORPUS_FILTER:+, filter $NPUCC_CORPUS_FILTER})"
gen=(/usr/bin/python3 "$SOURCE_DIR/tests/tools/make_opset_corpus.py" "$work/corpus")
# the bundled real models too, raised to opset 22 / IR 10 (and the transformer to 20)
[ -n "${TESTDATA:-}" ] && gen+=(--testdata "$TESTDATA")
[ -n "${NPUCC_CORPUS_FILTER:-}" ] && gen+=(--only "$NPUCC_CORPUS_FILTER")
"${gen[@]}"
/usr/bin/python3 - "$work/corpus/cases.json" > "$work/models.tsv" <<'EOF'
import json, sys
for c in json.load(open(sys.argv[1]))['cases']:
    print(f"{c['name']}\t{c['model']}\t{c['refuse']}\t{','.join(c['refusal_names'])}")
EOF
count=$(grep -c . "$work/models.tsv" || true)  # honest: grep -c prints 0 and exits 1 when there is none: the count is checked
if [ "$count" = 0 ]; then
  echo "FAIL: no model matches NPUCC_CORPUS_FILTER=${NPUCC_CORPUS_FILTER:-}"
  exit 1
fi

echo "== npucc compile: $count models x 3 (plain, fast, fast1), $jobs at a time"
while IFS=$'\t' read -r name model refuse names; do
  for mode in plain fast fast1; do
    printf '%s\0' "$NPUCC" "$work/corpus/$model" "$name" "$mode" "$work/out/$name/$mode" "$refuse" "$names"
  done
done < "$work/models.tsv" | xargs -0 -n 7 -P "$jobs" bash -c 'compile_one "$@"' _ > "$work/compile.tsv"
for s in ok refused fail; do
  printf '  %s: %s\n' "$s" "$(awk -F'\t' -v s="$s" '$3 == s' "$work/compile.tsv" | wc -l)"
done
# the most common failure messages, so a half-done schema registry shows where it stands
awk -F'\t' '$3 == "fail" { print $4 }' "$work/compile.tsv" |
  sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | sed -n '1,5s/^/  /p'

echo "== ONNX Runtime: originals and npucc's graphs at disabled, basic, extended, all"
node "$oracle/run_corpus.js" "$work/corpus" --compiled "$work/out" --compile-log "$work/compile.tsv" \
  --json "$work/report.json" || status=1
# The low graphs are judged on their emulations (ORT computes most float16 ops in float32):
# ONNX's reader checks that each emulation rounds every value its low graph holds low.
pairs=()
for low in "$work"/out/*/fast/low.onnx "$work"/out/*/fast1/low.onnx; do
  [ -f "$low" ] && [ -f "${low%low.onnx}emulation.onnx" ] && pairs+=("$low" "${low%low.onnx}emulation.onnx")
done
echo "== ONNX's reader: ${#pairs[@]} low and emulation graph files, every low value rounded"
if [ "${#pairs[@]}" = 0 ]; then
  echo "FAIL: no low graph to check against its emulation"
  status=1
else
  /usr/bin/python3 "$SOURCE_DIR/tests/tools/check_emulation.py" "${pairs[@]}" || status=1
fi

# The oracle must be able to fail: a "compiled" graph with one weight scaled by 1.0001 (high),
# negated (emulation) or NaN (low: it must run without new NaN/Inf) must fail, the original
# itself must pass as high, and the refusal check must
# reject a refusal that does not name the type or takes two lines.
echo "== self-check"
self="$work/self"
mkdir -p "$self/out/Conv-22/plain" "$self/out/Conv-22/fast" "$self/out/Gelu-20/plain"
/usr/bin/python3 "$SOURCE_DIR/tests/tools/make_opset_corpus.py" "$self/corpus" --only '^(Conv-22|Gelu-20)$' > /dev/null
/usr/bin/python3 - "$self/corpus/Conv-22.onnx" "$self/out/Conv-22" <<'EOF'
import sys
import onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1])
weight = next(t for t in model.graph.initializer if t.name == 'W')
original = numpy_helper.to_array(weight)
weight.CopyFrom(numpy_helper.from_array(original * 1.0001, 'W'))
onnx.save(model, f'{sys.argv[2]}/plain/high.onnx')
onnx.save(model, f'{sys.argv[2]}/fast/high.onnx')
weight.CopyFrom(numpy_helper.from_array(-original, 'W'))
onnx.save(model, f'{sys.argv[2]}/fast/emulation.onnx')
weight.CopyFrom(numpy_helper.from_array(original * float('nan'), 'W'))
onnx.save(model, f'{sys.argv[2]}/fast/low.onnx')
EOF
cp "$self/corpus/Gelu-20.onnx" "$self/out/Gelu-20/plain/high.onnx"
if node "$oracle/run_corpus.js" "$self/corpus" --compiled "$self/out" --json "$self/report.json" \
    > "$self/report.txt"; then
  echo "FAIL: run_corpus.js passed a weight scaled by 1.0001, a negated one and a NaN one"
  status=1
fi
if ! /usr/bin/python3 - "$self/report.json" <<'EOF'; then
import json, sys
cases = {c['name']: c for c in json.load(open(sys.argv[1]))['cases']}
conv, gelu = cases['Conv-22']['problems'], cases['Gelu-20']['problems']
assert gelu == [], f'the original itself as high.onnx: {gelu}'
for want in ['plain/high at disabled: Y: max rel diff', 'fast/high at all: Y: max rel diff',
             'fast/low at extended: Y: ', 'fast/emulation at basic: Y: cosine']:
    assert any(p.startswith(want) for p in conv), f'not reported: {want}'
EOF
  echo "FAIL: run_corpus.js did not judge the self-check graphs as expected:"
  sed 's/^/  /' "$self/report.txt"
  status=1
fi
grep -m1 '^FAIL' "$self/report.txt" | sed 's/^/  caught as expected: /' || true  # honest: prints what the self-check caught; checked above
fake="$self/fake-npucc"
check_refusal() {  # $1 what the fake npucc prints, $2 expected status, $3 policy (may)
  printf '#!/bin/sh\nprintf "%s"\nexit 1\n' "$1" > "$fake" && chmod +x "$fake"
  local got
  got=$(compile_one "$fake" "$self/corpus/Conv-22.onnx" X plain "$self/refused/X" "${3:-may}" int4 | cut -f3)
  if [ "$got" != "$2" ]; then
    echo "FAIL: a refusal printing '$1' was judged $got, not $2"
    status=1
  fi
}
check_refusal 'npucc: X.onnx: element type int4 is not supported\n' refused
check_refusal 'npucc: X.onnx: opset 21 is newer than npucc supports\n' fail
check_refusal 'npucc: element type int4 is not supported\nsee npucc-compile(1)\n' fail
check_refusal 'npucc: element type int4 is not supported\n' fail never
check_refusal 'npucc: element type uint4 is not supported\n' fail
printf '#!/bin/sh\nmkdir -p "$4"\n' > "$fake"
if [ "$(compile_one "$fake" "$self/corpus/Conv-22.onnx" X plain "$self/refused/Y" must 27 | cut -f3)" != fail ]; then
  echo "FAIL: a compile that succeeds on a model npucc must refuse was not judged a failure"
  status=1
fi

if [ "$status" = 0 ]; then
  echo "PASS: every model of the corpus compiles (or is refused as allowed) and matches ONNX Runtime"
fi
exit "$status"
