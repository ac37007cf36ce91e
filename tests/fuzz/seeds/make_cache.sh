#!/usr/bin/env bash
# Fills a compile cache from the real models with the npucc binary in $NPUCC (default:
# build-fuzz/npucc, else build/npucc) and prints the cache folder: real cache entries
# and manifests seed fuzz_cache_entry and fuzz_manifest. The models are compiled in
# several precision configurations, so the manifests carry every graph role. The cache is
# made once per SCRATCH_DIR (both seed scripts share build-fuzz/seed-cache).
#   make_cache.sh SCRATCH_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
scratch=$1
npucc=${NPUCC:-}
if [ -z "$npucc" ]; then
  for candidate in "$here/build-fuzz/npucc" "$here/build/npucc"; do
    if [ -x "$candidate" ]; then
      npucc=$candidate
      break
    fi
  done
fi
[ -n "$npucc" ] || { echo "seeds: no npucc binary (set NPUCC)" >&2; exit 1; }
cache="$scratch/cache"
if [ -f "$scratch/complete" ]; then
  echo "$cache"
  exit 0
fi
mkdir -p "$cache"
n=0
compile() {
  n=$((n + 1))
  # A model a configuration refuses is no seed: skip it quietly.
  ASAN_OPTIONS=detect_leaks=0 "$npucc" compile "$@" --cache-dir "$cache" \
    -o "$scratch/out_$n" >/dev/null 2>&1 || true
}
for model in "$here"/testdata/models/*.onnx "$here"/testdata/models/torch/*.onnx; do
  # The large models add nothing to a manifest's structure but minutes of compiling.
  [ -f "$model" ] && [ "$(stat -c %s "$model")" -lt 1000000 ] || continue
  compile "$model"
  compile "$model" --accelerate-train-mode "fast|step|0.9" --emit-emulation
  compile "$model" --accelerate-train-mode "fast1|loss|1.05"
  compile "$model" --precision-mode-v2 fp16 --no-keep-io-types
done
touch "$scratch/complete"
echo "$cache"
