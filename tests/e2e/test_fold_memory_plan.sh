#!/usr/bin/env bash
# The memory plan of the models whose shapes only static folding reveals: with every input
# fixed by --input-shape, ppocr_cls (Shape -> Cast -> Slice -> Concat -> Reshape), the torch
# transformer (Slice computed from the input's shape) and silero_vad_legacy (If branches that
# hide a static batch) must get a plan, with fold_shapes/fold_constants (and fold_if) at work;
# without --input-shape the reason must name the input whose dim is dynamic; with the fold
# passes left out it must say that inference, not the user, is stuck.
set -euo pipefail
# --no-cache: the cache key names the compiler by its version only, so a rebuilt npucc
# would be handed graphs an older build compiled.

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
models="$TESTDATA/models"
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-fold-plan.XXXXXX")
trap 'rm -rf "$work"' EXIT
no_folding=topological_sort,lift_constants,fold_cast_chains,eliminate_identity,eliminate_dead_code,deduplicate_initializers,remove_unused_opsets

status=0
expect() { # label, file, extended regex
  if grep -q -E "$3" "$2"; then
    echo "ok   $1"
  else
    echo "FAIL $1: no /$3/ in:"
    cat "$2"
    status=1
  fi
}

cases=(
  "ppocr_cls|ppocr_cls.onnx|x:1,3,48,192|x"
  "transformer|torch/transformer_encoder.onnx|tokens:2,16|tokens"
  "silero|silero_vad_legacy.onnx|input:1,512;h:2,1,64;c:2,1,64|input"
)
for entry in "${cases[@]}"; do
  IFS='|' read -r name model shape input <<< "$entry"
  "$NPUCC" compile --no-cache "$models/$model" -o "$work/$name.fixed" --input-shape "$shape" \
    > "$work/$name.fixed.log" 2>&1
  expect "$name: a plan once the inputs are fixed" "$work/$name.fixed.log" \
    "memory plan: arena [0-9.]+ [KM]?i?B for [0-9]+ tensors"
  expect "$name: folding did it" "$work/$name.fixed.log" "fold_constants [1-9][0-9]* nodes folded"
  "$NPUCC" compile --no-cache "$models/$model" -o "$work/$name.dynamic" > "$work/$name.dynamic.log" 2>&1
  expect "$name: dynamic input named" "$work/$name.dynamic.log" \
    "memory plan: unavailable: .*comes from input \"$input\"; fix it with --input-shape"
  "$NPUCC" compile --no-cache "$models/$model" -o "$work/$name.nofold" --input-shape "$shape" \
    --passes "$no_folding" > "$work/$name.nofold.log" 2>&1
  expect "$name: without folding, inference is stuck" "$work/$name.nofold.log" \
    "memory plan: unavailable: .*shape inference could not resolve it although every input is static"
done
expect "silero: the If branches taken are inlined" "$work/silero.fixed.log" "fold_if [1-9][0-9]* Ifs inlined"
[ "$status" = 0 ] && echo "PASS: folding gives the memory plan static shapes"
exit "$status"
