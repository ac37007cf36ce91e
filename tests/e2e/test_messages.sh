#!/usr/bin/env bash
# Messages a new user meets in the first hour (issue 20 item 2): each names the full
# command, the real source of a value and the fix, on the real binary.
source "$(dirname "$0")/cache_common.sh"
M="$TESTDATA/models/ppocr_cls.onnx"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
cd "$WORK"

# --- Unknown options: "did you mean" with the full command path -------------------
expect_status 2 "$NPUCC" cache ls --sortt model --cache-dir "$C"
contains "$WORK/err" "unknown option --sortt for \`npucc cache ls\` (did you mean --sort?)"
# A misspelt required option is the misspelling, not the required option missing.
expect_status 2 "$NPUCC" schedule --acelerate-train-mode 'fast|step' --step 1 --total-step 9
contains "$WORK/err" "unknown option --acelerate-train-mode for \`npucc schedule\` (did you mean --accelerate-train-mode?)"
expect_status 2 "$NPUCC" schedule --acelerate-train-mode='fast|step'
contains "$WORK/err" "did you mean --accelerate-train-mode?"
expect_status 2 "$NPUCC" cache verify --fx --cache-dir "$C"
contains "$WORK/err" "unknown option --fx for \`npucc cache verify\` (did you mean --fix?)"
expect_status 2 "$NPUCC" cache ls --zzzzzzzzzzzz
contains "$WORK/err" "unknown option --zzzzzzzzzzzz for \`npucc cache ls\` (see \`npucc cache ls --help\`)"
# Hints name the full command.
expect_status 2 "$NPUCC" cache ls --sort
contains "$WORK/err" "(see \`npucc cache ls --help\`)"
expect_status 2 "$NPUCC" cache ls stray-word
contains "$WORK/err" "unexpected argument \"stray-word\" for \`npucc cache ls\` (see \`npucc cache ls --help\`)"
expect_status 2 "$NPUCC" schedule --step 1
contains "$WORK/err" "(see \`npucc schedule --help\`)"
if grep -q "not expected" "$WORK/err"; then fail "CLI11's wording leaked"; fi
pass "unknown options: did you mean, with the full command path"

# --- Key prefixes and verify ------------------------------------------------------
expect_status 2 "$NPUCC" cache invalidate --key zz --cache-dir "$C"
contains "$WORK/err" "--key zz: not hex"
expect_status 2 "$NPUCC" cache invalidate --key abc --cache-dir "$C"
contains "$WORK/err" "--key abc: too short"
expect_status 0 "$NPUCC" cache invalidate --key ABCD --cache-dir "$C"
pass "--key: not hex, too short; upper case is accepted"

expect_status 0 "$NPUCC" compile "$M" -o "$WORK/v" --cache-dir "$C"
ln -s /nonexistent "$C/entries/planted"
expect_status 3 "$NPUCC" cache verify --cache-dir "$C"
contains "$WORK/out" "planted: is a symlink, not expected in entries/"
expect_status 0 "$NPUCC" cache verify --fix --cache-dir "$C"
contains "$WORK/out" "\[removed\]"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "verify says \"is a symlink\"; --fix exits 0 once nothing is left broken"

# --- A hit prints what it delivered and the precision summary ---------------------
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/h1" --cache-dir "$C" --accelerate-train-mode 'fast|step'
grep '^  precision: \|^  kept float32: ' "$WORK/out" >"$WORK/miss-precision"
[ -s "$WORK/miss-precision" ] || fail "a miss printed no precision lines"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/h2" --cache-dir "$C" --accelerate-train-mode 'fast|step'
contains "$WORK/out" "^from the cache: .*ppocr_cls.onnx -> $WORK/h2 in [0-9.]* s, 3 files of entry [0-9a-f]\{12\} materialised by "
contains "$WORK/out" "cache: hit"
grep '^  precision: \|^  kept float32: ' "$WORK/out" >"$WORK/hit-precision"
cmp -s "$WORK/miss-precision" "$WORK/hit-precision" ||
  { diff "$WORK/miss-precision" "$WORK/hit-precision" >&2; fail "a hit's precision lines differ from the miss's"; }
if grep -q "^compiled " "$WORK/out"; then fail "a hit says it compiled"; fi
pass "a hit names its entry and transfer and prints the stored precision summary"
