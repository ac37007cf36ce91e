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
# One backend model in four: each input runs the whole compile (several forked
# checker/inference runs under ASan, a few per second on a shared machine), and a
# thousand seeds would take a 10-minute run just to load; the ops are spread across
# the suite's folders, so a quarter still covers nearly all of them.
n=0
i=0
for model in /usr/share/libonnx-testdata/data/*/*/model.onnx; do
  [ -f "$model" ] || continue
  i=$((i + 1))
  [ $((i % 4)) -eq 0 ] || continue
  size=$(stat -c %s "$model")
  if [ "$size" -lt 65536 ]; then
    cp "$model" "$out/backend_$n.onnx"
    n=$((n + 1))
  fi
done
