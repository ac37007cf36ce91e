#!/usr/bin/env bash
# Seeds the model-reader corpus: the real models and the small backend-suite models.
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
out=$1
cp "$here"/testdata/models/*.onnx "$out"/ 2>/dev/null || true
n=0
for model in /usr/share/libonnx-testdata/data/*/*/model.onnx; do
  [ -f "$model" ] || continue
  size=$(stat -c %s "$model")
  if [ "$size" -lt 65536 ]; then
    cp "$model" "$out/backend_$n.onnx"
    n=$((n + 1))
  fi
done
