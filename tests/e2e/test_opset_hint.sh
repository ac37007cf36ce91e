#!/usr/bin/env bash
# A model whose opset keeps most of its low graph float32 says so (issue 31): ppocr_cls at
# opset 9 keeps its BatchNormalizations float32 in the float16 precision mode
# allow_mix_precision (BatchNormalization-9 ties the statistics' type to the input's), and
# the report names --target-opset 15 with about the count that compile really gets (an
# estimate: the passes run after a real raise); the manifest and --json carry it. No hint
# when --target-opset is given, when fast or fast1 raises its low graph itself (fast to 15
# for its BatchNormalizations, about as many low nodes as --target-opset 15 gives), or when a
# raise would lower nothing.
set -euo pipefail
: "${NPUCC:?}" "${TESTDATA:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NPUCC_CACHE_DISABLE=true
model="$TESTDATA/models/ppocr_cls.onnx"
tools="$(cd "$(dirname "$0")/../tools" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }

# compile NAME ARGS...: compiles into $work/NAME, its report in $work/NAME.out.
compile() {
  local name=$1
  shift
  "$NPUCC" compile "$@" -o "$work/$name" >"$work/$name.out" 2>"$work/$name.err" ||
    fail "$name: compile failed: $(cat "$work/$name.err")"
}

# near A B LIMIT: A and B are whole numbers at most LIMIT apart.
near() {
  [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && (($1 - $2 <= $3 && $2 - $1 <= $3))
}

# report_json NAME EXPR: a Python expression over the manifest's precision report `r`.
report_json() {
  /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['precision_report']; print($2)" \
    "$work/$1/manifest.json"
}

mode=(--precision-mode allow_mix_precision) # one float16 graph, which is never raised
compile fast "$model" "${mode[@]}"
hint=$(grep '^  opset: ' "$work/fast.out" || true)  # honest: no hint gives an empty string, which the case below fails
case "$hint" in
*"35 BatchNormalization stay float32 for their schema; --target-opset 15 lowers about "*) ;;
*) fail "allow_mix_precision at opset 9: no --target-opset hint: $(cat "$work/fast.out")" ;;
esac

# The hint's low nodes and casts are --target-opset 15's, within a few (with and without
# --input-shape, which lets the passes fold more).
for shape in "" "--input-shape x:1,3,48,192"; do
  # shellcheck disable=SC2086
  compile hinted "$model" "${mode[@]}" $shape
  # shellcheck disable=SC2086
  compile raised "$model" "${mode[@]}" --target-opset 15 $shape
  promised=$(sed -n 's/.* lowers about \([0-9]*\) of .* inserts about \([0-9]*\) casts .*/\1 \2/p' \
    "$work/hinted.out")
  got=$(sed -n 's/^  precision: float16 (mixed): \([0-9]*\) of .*/\1/p; s/^  casts inserted \([0-9]*\),.*/\1/p' \
    "$work/raised.out" | xargs)
  read -r low casts <<<"${promised:-x x}"
  read -r real_low real_casts <<<"${got:-y y}"
  near "$low" "$real_low" 2 && near "$casts" "$real_casts" 4 ||
    fail "${shape:-no shape}: the hint promises '$promised' (low, casts), --target-opset 15 gives '$got'"
  # ... and as ONNX's own reader counts the raised low graph (npucc's report aside): nodes
  # writing only float16, and the Cast nodes it adds to the original's.
  read -r f16_nodes low_casts <<<"$(/usr/bin/python3 "$tools/onnx_node_types.py" "$work/raised/low.onnx" --count float16)"
  # fast raises its own low graph to 15 (the high graph stays at 9): as many low nodes.
  # shellcheck disable=SC2086
  compile fast_raised "$model" --accelerate-train-mode 'fast|step|0.9' $shape
  grep -q "^  opset: low graph raised from 9 to 15 (BatchNormalization" "$work/fast_raised.out" ||
    fail "fast: no raise of its low graph: $(cat "$work/fast_raised.out")"
  grep -q -- "--target-opset 15" "$work/fast_raised.out" && fail "fast: a hint beside its raise"
  fast_low=$(sed -n 's/^  precision: float16 (mixed): \([0-9]*\) of .*/\1/p' "$work/fast_raised.out")
  near "$real_low" "$fast_low" 2 || fail "fast's raise lowers ${fast_low:-?} nodes, --target-opset 15 $real_low"
  opsets=$(/usr/bin/python3 -c "import onnx,sys
print(*[{o.domain: o.version for o in onnx.load(f, load_external_data=False).opset_import}[''] for f in sys.argv[1:]])" \
    "$work/fast_raised/high.onnx" "$work/fast_raised/low.onnx")
  [ "$opsets" = "9 15" ] || fail "fast: high and low graphs at opsets '$opsets', expected '9 15'"
  read -r _ model_casts <<<"$(/usr/bin/python3 "$tools/onnx_node_types.py" "$model" --count float16)"
  near "$low" "$f16_nodes" 2 && near "$casts" $((low_casts - model_casts)) 4 ||
    fail "${shape:-no shape}: the hint promises '$promised' (low, casts); ONNX's reader counts $f16_nodes float16 nodes and $((low_casts - model_casts)) new casts in the raised low graph"
done
grep -q '^  opset: .*--target-opset' "$work/raised.out" &&
  fail "--target-opset 15 given: still a hint: $(cat "$work/raised.out")"

# The manifest (and so --json) carries it.
[ "$(report_json fast "r['target_opset_hint']['target_opset'], r['target_opset_hint']['schema_float32']")" = \
  "15 {'BatchNormalization': 35}" ] || fail "manifest: $(report_json fast "r.get('target_opset_hint')")"
"$NPUCC" compile "$model" -o "$work/json" "${mode[@]}" --json \
  >"$work/json.out" 2>"$work/json.err" || fail "--json: $(cat "$work/json.err")"
/usr/bin/python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['precision_report']['target_opset_hint']['target_opset'] == 15" \
  "$work/json.out" || fail "--json lacks the hint"

# fast1 raises its own low graph: its own line, no hint.
compile fast1 "$model" --accelerate-train-mode 'fast1|step|0.9'
grep -q "opset: low graph raised from 9 to 22" "$work/fast1.out" || fail "fast1: $(cat "$work/fast1.out")"
grep -q -- "--target-opset 15" "$work/fast1.out" && fail "fast1: a hint beside its raise"

# A model a raise would not help (oww_hello_deepa, opset 13: Gemm and elementwise ops).
compile mlp "$TESTDATA/models/oww_hello_deepa.onnx" --accelerate-train-mode 'fast|step|0.9'
grep -q -- "--target-opset" "$work/mlp.out" && fail "oww_hello_deepa: a hint: $(cat "$work/mlp.out")"
[ "$(report_json mlp "'target_opset_hint' in r")" = False ] || fail "oww_hello_deepa: hint in the manifest"

echo "PASS: an opset that holds nodes float32 names the --target-opset that lowers them"
