#!/usr/bin/env bash
# Many processes, and processes killed at random moments, sharing one cache.
source "$(dirname "$0")/cache_common.sh"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
MODELS=("$TESTDATA/models/ppocr_cls.onnx" "$TESTDATA/models/oww_hello_deepa.onnx" "$TESTDATA/models/silero_vad_legacy.onnx")

# 8 processes compile the same models into one cache at once: all succeed, one entry
# per key, identical bytes everywhere.
pids=()
for p in $(seq 1 8); do
  (
    for m in "${MODELS[@]}"; do
      "$NPUCC" -q compile "$m" -o "$WORK/c$p/$(basename "$m" .onnx)" --cache-dir "$C" || exit 1
    done
  ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a concurrent compile failed"; done
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 3 ] || fail "want one entry per key (3)"
[ "$(json_get "$WORK/out" "sorted(set(e['state'] for e in d['entries']))")" = "['ok']" ] || fail "entry states"
for m in "${MODELS[@]}"; do
  name=$(basename "$m" .onnx)
  for p in $(seq 2 8); do
    for f in high.onnx manifest.json; do
      cmp "$WORK/c1/$name/$f" "$WORK/c$p/$name/$f" || fail "$name/$f differs between processes 1 and $p"
    done
  done
done
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "8 concurrent compiles: all succeed, 3 entries, identical bytes"

# Kill -9 compiles and populates at random moments; then verify is clean and every
# entry is complete. Every fourth round starts from an empty cache so stores get killed too.
K="$WORK/kcache"
"$NPUCC" cache init "$K" >/dev/null
start=$(now_ms); "$NPUCC" -q compile "${MODELS[0]}" -o "$WORK/probe" --cache-dir "$K" --no-cache; probe=$(( $(now_ms) - start ))
window=$(( probe * 3 / 2 + 50 ))
echo "compile takes ${probe} ms; killing within ${window} ms"
kills=0; round=0
# Cache hits finish far sooner than the probe's compile: the window shrinks after a kill
# that came too late and grows after one that landed, so kills keep landing at random
# moments whatever the machine's speed.
while [ "$kills" -lt 100 ] && [ "$round" -lt 1500 ]; do
  round=$((round + 1))
  if [ $((round % 4)) -eq 1 ]; then "$NPUCC" -q cache purge --all --cache-dir "$K" >/dev/null; fi
  out="$WORK/k/$round"
  if [ $((RANDOM % 3)) -eq 0 ]; then
    "$NPUCC" -q cache populate -j 2 "${MODELS[@]:0:2}" --cache-dir "$K" >/dev/null 2>&1 &
  else
    "$NPUCC" -q compile "${MODELS[$((RANDOM % 2))]}" -o "$out" --cache-dir "$K" >/dev/null 2>&1 &
  fi
  pid=$!
  delay=$((RANDOM % window))
  sleep "$(awk -v m="$delay" 'BEGIN { printf "%.3f", m / 1000 }')"
  if kill -9 "$pid" 2>/dev/null; then
    kills=$((kills + 1))
    window=$(( window * 5 / 4 + 1 ))
  else
    window=$(( window * 3 / 4 > 5 ? window * 3 / 4 : 5 ))
  fi
  wait "$pid" 2>/dev/null || true  # honest: reaps a compile that may have been killed on purpose
  # A killed compile may leave its staging folder beside the output, never a partial output.
  if [ -d "$out" ] && [ ! -f "$out/manifest.json" ]; then fail "round $round: output folder without manifest"; fi
done
echo "killed $kills of $round processes"
[ "$kills" -ge 100 ] || fail "only $kills kills landed; want at least 100"
expect_status 0 "$NPUCC" cache verify --cache-dir "$K" --json
[ "$(json_get "$WORK/out" "len(d['findings'])")" = 0 ] || fail "verify found problems after kills"
expect_status 0 "$NPUCC" cache ls --cache-dir "$K" --json
json_get "$WORK/out" "sorted(set(e['state'] for e in d['entries']))" | grep -qv "corrupt\|incomplete" || fail "broken entries"
entries=$(json_get "$WORK/out" "len(d['entries'])")
# Every surviving entry is complete: its hit reproduces the uncached compile.
for m in "${MODELS[@]:0:2}"; do
  name=$(basename "$m" .onnx)
  "$NPUCC" compile "$m" -o "$WORK/after/$name" --cache-dir "$K" | grep "cache:"
  "$NPUCC" -q compile "$m" -o "$WORK/fresh/$name" --no-cache
  cmp "$WORK/after/$name/high.onnx" "$WORK/fresh/$name/high.onnx" || fail "$name differs from a fresh compile"
done
expect_status 0 "$NPUCC" cache verify --cache-dir "$K"
# Leftover staging from killed processes is stale later; purge removes it then.
find "$K/tmp" -mindepth 1 -maxdepth 1 -exec touch -h -d '2 hours ago' {} +
expect_status 0 "$NPUCC" cache purge --cache-dir "$K"
[ -z "$(ls -A "$K/tmp")" ] || fail "stale temporaries left after purge"
pass "$kills kill -9s: verify clean, $entries surviving entries complete, stale staging purged"
