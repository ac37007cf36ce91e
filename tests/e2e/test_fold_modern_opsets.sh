#!/usr/bin/env bash
# The passes at opsets 18 to 26, judged by ONNX Runtime. npucc compiles, from
# make_fold_modern_models.py:
# - models exercising what the passes fold at opsets 18-21 and what they must leave alone:
#   high.onnx must keep the model's own IR version and opsets, have folded what the model
#   says (so the test cannot pass by folding nothing), keep the rest, and keep the IR-10
#   fields the ONNX 1.12 protobuf does not know (function and node overload, metadata_props);
# - Shape(op(...)) for ops of opsets 18-26 whose shape inference is npucc's own (folded when
#   inference makes the shape static);
# - the bundled torch models raised to opset 21: the passes and the memory plan must do
#   what they do at opset 17.
# `inspect` must report each model's IR version, opsets and op counts as the onnx package
# reads them. ONNX Runtime, not npucc, then judges every high.onnx against its original.
set -euo pipefail
# --no-cache: the cache key names the compiler by its version only, so a rebuilt npucc
# would be handed graphs an older build compiled.

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
PYTHON=/usr/bin/python3
source "$(dirname "$0")/oracle_common.sh" # sets oracle
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-fold-modern.XXXXXX")
trap 'rm -rf "$work"' EXIT

make="$SOURCE_DIR/tests/e2e/make_fold_modern_models.py"
"$PYTHON" "$make" "$work/models" > "$work/made.txt"
# Shape(op(...)) for the ops whose inference is npucc's own: the shapes fold_shapes folds
# must be those ONNX Runtime computes. "-": nothing must fold (inference decides).
"$PYTHON" "$make" "$work/models" --shapes >> "$work/made.txt"

status=0
pairs=()
shapes_folded=0
while read -r name gone kept; do
  if ! "$NPUCC" compile --no-cache "$work/models/$name.onnx" -o "$work/out/$name" > "$work/$name.log" 2>&1; then
    echo "FAIL $name: npucc compile"
    cat "$work/$name.log"
    status=1
    continue
  fi
  if ! "$PYTHON" - "$work/models/$name.onnx" "$work/out/$name/high.onnx" "$gone" "$kept" <<'PY'; then
import collections, sys
import onnx

original, compiled = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
gone = [op for op in sys.argv[3].split(",") if op != "-"]
kept = sys.argv[4].split(",")
problems = []
if compiled.ir_version != original.ir_version:
    problems.append(f"ir_version {compiled.ir_version}, not {original.ir_version}")
imports = lambda m: sorted((o.domain, o.version) for o in m.opset_import)
if imports(compiled) != imports(original):
    problems.append(f"opsets {imports(compiled)}, not {imports(original)}")
ops = collections.Counter(n.op_type for n in compiled.graph.node)
problems += [f"{op} was not folded" for op in gone if ops[op]]
problems += [f"{op} is gone" for op in kept if not ops[op]]

def unknown(message):
    return sorted((f.field_number, f.data) for f in message.UnknownFields())

# The IR-10 fields (function overload 13, metadata_props 14 and 9, node overload 8) must be
# where the original had them.
for before, after in zip(original.functions, compiled.functions):
    if unknown(before) != unknown(after):
        problems.append(f"function {before.name}: fields {unknown(after)}, not {unknown(before)}")
    for a, b in zip(before.node, after.node):
        if unknown(a) != unknown(b):
            problems.append(f"function node {a.op_type}: fields {unknown(b)}, not {unknown(a)}")
if len(original.functions) != len(compiled.functions):
    problems.append(f"{len(compiled.functions)} functions, not {len(original.functions)}")
for node in original.graph.node:
    if unknown(node):
        same = [n for n in compiled.graph.node if n.op_type == node.op_type]
        if not same or unknown(same[0]) != unknown(node):
            problems.append(f"{node.op_type}: lost fields {unknown(node)}")
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
PY
    echo "FAIL $name: high.onnx (above)"
    status=1
  else
    if [ "$gone" != - ]; then
      echo "ok   $name: folded ${gone//,/ }; kept ${kept//,/ }"
    elif grep -q "fold_shapes [1-9]" "$work/$name.log"; then
      echo "ok   $name: the shape of $kept's output folded"
      shapes_folded=$((shapes_folded + 1))
    else
      echo "ok   $name: the shape of $kept's output left to run time (not static)"
    fi
  fi
  # The one chain to skip: Cast(Cast(img -> double) -> float16) reads img directly.
  if [ "$name" = pad_resize_if19 ] && ! grep -q "fold_cast_chains [1-9]" "$work/$name.log"; then
    echo "FAIL $name: fold_cast_chains changed nothing"
    status=1
  fi
  # inspect on the original: its IR version, opsets and op counts as the onnx package reads
  # them, every op known at its opset (Attention has a schema from 23 on, and so on).
  if ! "$NPUCC" inspect --json "$work/models/$name.onnx" > "$work/$name.json" 2> "$work/$name.err" ||
    ! "$PYTHON" - "$work/models/$name.onnx" "$work/$name.json" <<'PY'; then
import collections, json, sys
import onnx

model, report = onnx.load(sys.argv[1]), json.load(open(sys.argv[2]))
problems = []
if report["model"]["ir_version"] != model.ir_version:
    problems.append(f"ir_version {report['model']['ir_version']}")
opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
if report["model"]["opsets"] != opsets:
    problems.append(f"opsets {report['model']['opsets']}, not {opsets}")
counted = collections.Counter(n.op_type for n in model.graph.node)
for graph in [a.g for n in model.graph.node for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]:
    counted.update(n.op_type for n in graph.node)
reported = {op["op_type"]: op["count"] for op in report["ops"]}
if reported != dict(counted):
    problems.append(f"ops {reported}, not {dict(counted)}")
if report["unregistered_ops"]:
    problems.append(f"ops without a schema: {report['unregistered_ops']}")
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
PY
    echo "FAIL $name: npucc inspect $(cat "$work/$name.err")"
    status=1
  fi
  pairs+=("$work/models/$name.onnx" "$work/out/$name/high.onnx")
done < "$work/made.txt"

# The bundled torch models (opset 17) raised to opset 21 as exporters write it now: with
# their inputs fixed, the passes must do the same work as at opset 17 (deduplication and
# dead code aside: the raised models hold one initializer per Reduce* axes input), and the
# memory plan must be the same.
: "${TESTDATA:?set TESTDATA to the testdata folder}"
raised=()
for entry in "transformer_encoder|tokens:2,16" "lstm_tagger|features:1,8,20" "resnet_small|image:2,3,64,64"; do
  IFS='|' read -r name shape <<< "$entry"
  "$PYTHON" "$make" --raise "$TESTDATA/models/torch/$name.onnx" "$work/models/${name}_21.onnx" 21
  for variant in "$TESTDATA/models/torch/$name.onnx|17" "$work/models/${name}_21.onnx|21"; do
    IFS='|' read -r model opset <<< "$variant"
    if ! "$NPUCC" compile --no-cache "$model" -o "$work/out/${name}_$opset" --input-shape "$shape" -v \
      > "$work/${name}_$opset.log" 2>&1; then
      echo "FAIL $name at opset $opset: npucc compile"
      cat "$work/${name}_$opset.log"
      status=1
    fi
    grep -o -E "(lift_constants|fold_[a-z_]+|eliminate_identity) [0-9]+" \
      "$work/${name}_$opset.log" | sort -u > "$work/${name}_$opset.passes" || true  # honest: a log without passes gives an empty list, compared below
    grep -E "memory plan:" "$work/${name}_$opset.log" > "$work/${name}_$opset.plan" || true  # honest: a log without a plan gives an empty file, compared below
  done
  if ! diff "$work/${name}_17.passes" "$work/${name}_21.passes" > /dev/null ||
    ! diff "$work/${name}_17.plan" "$work/${name}_21.plan" > /dev/null; then
    echo "FAIL $name: the passes or the memory plan differ at opset 21:"
    diff "$work/${name}_17.passes" "$work/${name}_21.passes" || true  # honest: printed for the reader; not a check
    diff "$work/${name}_17.plan" "$work/${name}_21.plan" || true  # honest: printed for the reader; not a check
    status=1
  else
    changes=$(paste -sd, "$work/${name}_21.passes" | sed 's/,/, /g')
    echo "ok   $name at opset 21: as at 17 (${changes:-no pass changes anything}; same memory plan)"
  fi
  raised+=("{\"name\":\"${name}_21\",\"original\":\"$work/models/${name}_21.onnx\",\"compiled\":\"$work/out/${name}_21/high.onnx\",\"shapes\":{\"${shape%%:*}\":[${shape#*:}]}}")
done
(IFS=','; echo "[${raised[*]}]") > "$work/raised.json"
# As test_ort_equivalence judges the bundled models (tokens in the vocabulary's range).
if ! node "$oracle/compare.js" --strict --cases "$work/raised.json" --range tokens=0,99 \
  --max-rel 1e-5 --abs-floor 1e-6 --scale-floor 1e-3 > "$work/ort_raised.txt" 2>&1; then
  status=1
fi
grep -E '^(PASS|FAIL|SKIP|oracle)' "$work/ort_raised.txt" || true  # honest: prints the oracle's lines; its exit status decides

if [ "${#pairs[@]}" -gt 0 ]; then
  if ! node "$oracle/compare.js" --strict --max-rel 1e-5 "${pairs[@]}" > "$work/ort.txt" 2>&1; then
    status=1
  fi
  grep -E '^(PASS|FAIL|SKIP|oracle)' "$work/ort.txt" || true  # honest: prints the oracle's lines; its exit status decides
  grep -E '^  ' "$work/ort.txt" | grep -v 'max_rel=0 ' || true  # honest: prints the non-zero errors, if any; not a check
fi
# With npucc's inference for opsets 18-26 (src/schemas) all 22 shapes are static.
echo "fold_shapes folded the output shape of $shapes_folded of the ops with npucc's own inference"
if [ "$shapes_folded" -lt 22 ]; then
  echo "FAIL: fewer than 22 shapes folded: inference or fold_shapes lost something"
  status=1
fi
[ "$status" = 0 ] && echo "PASS: ONNX Runtime computes what the originals do from the folded opset 18-26 graphs"
exit "$status"
