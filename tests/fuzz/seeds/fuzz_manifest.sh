#!/usr/bin/env bash
# Seeds the manifest corpus with the manifest.json files of a real cache.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")/../../.." && pwd)
cache=$("$(dirname "$0")/make_cache.sh" "${NPUCC_SEED_CACHE:-$here/build-fuzz/seed-cache}")
n=0
while IFS= read -r manifest; do
  cp "$manifest" "$out/manifest_$n.json"
  n=$((n + 1))
done < <(find "$cache" -name manifest.json)
[ "$n" -gt 0 ] || { echo "seeds: the cache has no manifests" >&2; exit 1; }
