#!/usr/bin/env bash
# Ctrl-C and SIGTERM at the test points of a compile (util/test_point.h), each point name
# once: the output folder holds the earlier compile or the new one, whole; no staging
# folder and no process survives; the same command then succeeds without --force
# (interrupt_points.py has the checks).
source "$(dirname "$0")/cache_common.sh"
POINTS=("$PY" "$(dirname "$0")/interrupt_points.py")
M="$TESTDATA/models/ppocr_cls.onnx"
MODE=(--accelerate-train-mode 'fast|step|0.9')
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
ALL="$WORK/all-points"
: >"$ALL"

# run_points NAME ARGS...: interrupt_points.py --each-name, its log kept, its points in $ALL.
run_points() {
  local name=$1; shift
  "${POINTS[@]}" --each-name --record "$ALL" "$@" >"$WORK/$name.log" 2>&1 ||
    { cat "$WORK/$name.log" >&2; fail "$name"; }
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
# Through the cache, over an earlier compile: a miss (the cache emptied first; the points
# the compiles above covered are skipped) and a hit.
"$NPUCC" -q compile "$M" -o "$WORK/c" "${MODE[@]}" --no-cache
cp "$ALL" "$WORK/covered"
run_points cache-miss --out "$WORK/c" --cache "$C" --skip-names "$WORK/covered" \
  --setup "cache purge --all --cache-dir $C" -- \
  "$NPUCC" compile "$M" -o "$WORK/c" "${MODE[@]}" --emit-emulation --cache-dir "$C"
run_points cache-hit --out "$WORK/c" --cache "$C" -- \
  "$NPUCC" compile "$M" -o "$WORK/c" "${MODE[@]}" --emit-emulation --cache-dir "$C"

distinct=$(sort -u "$ALL" | grep -c .)
[ "$distinct" -ge 50 ] || { sort -u "$ALL" >&2; fail "only $distinct distinct points interrupted; want at least 50"; }
pass "interrupted at $(grep -c . "$ALL") points, $distinct distinct"
