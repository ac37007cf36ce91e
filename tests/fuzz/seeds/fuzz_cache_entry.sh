#!/usr/bin/env bash
# Seeds the cache-entry corpus with the headers (entry.npucc) of a real cache.
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")/../../.." && pwd)
cache=$("$(dirname "$0")/make_cache.sh" "${NPUCC_SEED_CACHE:-$here/build-fuzz/seed-cache}")
n=0
while IFS= read -r header; do
  cp "$header" "$out/entry_$n"
  n=$((n + 1))
done < <(find "$cache" -name entry.npucc)
[ "$n" -gt 0 ] || { echo "seeds: the cache has no entries" >&2; exit 1; }
