#!/usr/bin/env bash
# Ctrl-C and SIGTERM at every test point of a compile (util/test_point.h): the output
# folder holds the earlier compile or the new one, whole; no staging folder and no process
# survives; the same command then succeeds without --force (interrupt_points.py).
source "$(dirname "$0")/cache_common.sh"
POINTS=("$PY" "$(dirname "$0")/interrupt_points.py")
M="$TESTDATA/models/ppocr_cls.onnx"
MODE=(--accelerate-train-mode 'fast|step|0.9')
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
: >"$WORK/all-points"

# run_points NAME ARGS...: interrupt_points.py, its log kept and its points collected.
run_points() {
  local name=$1; shift
  "${POINTS[@]}" "$@" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log" >&2; fail "$name"; }
  sed -n 's/^[0-9]* \([^:]*\): .*/\1/p' "$WORK/$name.log" >>"$WORK/all-points"
  pass "$name: $(tail -1 "$WORK/$name.log")"
}

# A first compile, no cache: nothing, or the whole compile.
run_points first-compile --first --out "$WORK/a" -- \
  "$NPUCC" compile "$M" -o "$WORK/a" "${MODE[@]}" --no-cache
# A re-compile over an earlier one with another graph set (emulation.onnx goes): the
# earlier compile, manifest included, or the new one.
run_points recompile --out "$WORK/b" \
  --setup "compile $M -o $WORK/b ${MODE[*]} --emit-emulation --no-cache" -- \
  "$NPUCC" compile "$M" -o "$WORK/b" "${MODE[@]}" --no-cache
# Through the cache: a miss (the cache emptied first) and a hit, over an earlier compile.
"$NPUCC" -q compile "$M" -o "$WORK/c" "${MODE[@]}" --no-cache
run_points cache-miss --out "$WORK/c" --cache "$C" \
  --setup "cache purge --all --cache-dir $C" -- \
  "$NPUCC" compile "$M" -o "$WORK/c" "${MODE[@]}" --emit-emulation --cache-dir "$C"
run_points cache-hit --out "$WORK/c" --cache "$C" -- \
  "$NPUCC" compile "$M" -o "$WORK/c" "${MODE[@]}" --emit-emulation --cache-dir "$C"

distinct=$(sort -u "$WORK/all-points" | grep -c .)
[ "$distinct" -ge 50 ] || { sort -u "$WORK/all-points" >&2; fail "only $distinct distinct points interrupted; want at least 50"; }
pass "interrupted at $(grep -c . "$WORK/all-points") points, $distinct distinct"
