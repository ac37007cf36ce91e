#!/usr/bin/env bash
# Seeds the model-reader corpus: the small real models and backend-suite models.
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
out=$1
# Only small models: every input runs the whole pipeline, and libFuzzer truncates
# inputs to -max_len (64 KiB) anyway.
for model in "$here"/testdata/models/*.onnx; do
  if [ -f "$model" ] && [ "$(stat -c %s "$model")" -lt 65536 ]; then
    cp "$model" "$out"/
  fi
done
n=0
for model in /usr/share/libonnx-testdata/data/*/*/model.onnx; do
  [ -f "$model" ] || continue
  size=$(stat -c %s "$model")
  if [ "$size" -lt 65536 ]; then
    cp "$model" "$out/backend_$n.onnx"
    n=$((n + 1))
  fi
done
