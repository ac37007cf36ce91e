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
# high.onnx, low.onnx, the weights.data they share and manifest.json
contains "$WORK/out" "^from the cache: .*ppocr_cls.onnx -> $WORK/h2 in [0-9.]* s, 4 files of entry [0-9a-f]\{12\} materialised by "
contains "$WORK/out" "cache: hit"
grep '^  precision: \|^  kept float32: ' "$WORK/out" >"$WORK/hit-precision"
cmp -s "$WORK/miss-precision" "$WORK/hit-precision" ||
  { diff "$WORK/miss-precision" "$WORK/hit-precision" >&2; fail "a hit's precision lines differ from the miss's"; }
if grep -q "^compiled " "$WORK/out"; then fail "a hit says it compiled"; fi
pass "a hit names its entry and transfer and prints the stored precision summary"

# --- Each conflict names the source of both values ---------------------------------
printf '{"precision_mode": "force_fp16"}\n' >"$WORK/opts.json"
expect_status 2 "$NPUCC" compile "$M" -o "$WORK/b" --no-cache --options "$WORK/opts.json" \
  --accelerate-train-mode 'fast|step'
contains "$WORK/err" "(from --accelerate-train-mode) cannot be combined with precision_mode \"force_fp16\" (from $WORK/opts.json: precision_mode)"
if grep -q "ppocr_cls.onnx" "$WORK/err"; then fail "the conflict is blamed on the model"; fi
NPUCC_PRECISION_MODE=force_fp16 expect_status 2 "$NPUCC" compile "$M" -o "$WORK/b" --no-cache \
  --accelerate-train-mode 'fast|step'
contains "$WORK/err" "precision_mode \"force_fp16\" (from NPUCC_PRECISION_MODE)"
mkdir -p "$WORK/conf"
printf '# mine\nprecision_mode = "force_fp16"\n' >"$WORK/conf/config.toml"
NPUCC_CONFIG="$WORK/conf/config.toml" NPUCC_ACCELERATE_TRAIN_MODE='fast1|loss' \
  expect_status 2 "$NPUCC" compile "$M" -o "$WORK/b" --no-cache
contains "$WORK/err" "accelerate_train_mode \"fast1|loss|1.05\" (from NPUCC_ACCELERATE_TRAIN_MODE) cannot be combined with precision_mode \"force_fp16\" (from $WORK/conf/config.toml:2)"
NPUCC_PRECISION_MODE_V2=fp16 expect_status 2 "$NPUCC" compile "$M" -o "$WORK/b" --no-cache \
  --precision-mode force_fp16
contains "$WORK/err" "precision_mode \"force_fp16\" (from --precision-mode) and precision_mode_v2 \"fp16\" (from NPUCC_PRECISION_MODE_V2) cannot be combined"
[ ! -e "$WORK/b" ] || fail "a refused compile wrote its output folder"
pass "precision conflicts name the flag, variable, config.toml line and options-file key"

# --- An empty command-line value overrides the environment and config.toml ---------
NPUCC_CACHE_DIR="$C" expect_status 2 "$NPUCC" compile "$M" -o "$WORK/e" --cache-dir ''
contains "$WORK/err" "--cache-dir '': the cache folder is empty (give a folder, or leave --cache-dir out"
expect_status 2 "$NPUCC" cache ls --cache-dir ' '
contains "$WORK/err" "the cache folder is empty"
NPUCC_ACCELERATE_TRAIN_MODE='fast|step' expect_status 0 "$NPUCC" compile "$M" -o "$WORK/e" \
  --no-cache --accelerate-train-mode ''
[ -f "$WORK/e/high.onnx" ] && [ ! -e "$WORK/e/low.onnx" ] || fail "--accelerate-train-mode '' still compiled a pair"
NPUCC_ACCELERATE_TRAIN_MODE='fast|step' expect_status 0 "$NPUCC" config show --accelerate-train-mode ''
contains "$WORK/out" "^accelerate_train_mode  *(unset)  \[command line (--accelerate-train-mode)\]"
NPUCC_PRECISION_MODE=force_fp16 expect_status 0 "$NPUCC" compile "$M" -o "$WORK/e" --no-cache \
  --precision-mode '' --accelerate-train-mode 'fast|step'
[ -f "$WORK/e/low.onnx" ] || fail "--precision-mode '' did not drop NPUCC_PRECISION_MODE"
NPUCC_CACHE_MAX_SIZE=1K expect_status 0 "$NPUCC" config show --max-size ''
contains "$WORK/out" "^cache.max_size  *unbounded  \[command line (--max-size)\]"
pass "'' on the command line: --cache-dir refused, other settings back to their defaults"

# --- One accelerate_train_mode parser: blanks are refused by every reader ----------
for reader in compile schedule; do
  if [ $reader = compile ]; then
    expect_status 2 "$NPUCC" compile "$M" -o "$WORK/t" --no-cache --accelerate-train-mode ' fast|step'
  else
    expect_status 2 "$NPUCC" schedule --accelerate-train-mode ' fast|step' --step 1 --total-step 9
  fi
  contains "$WORK/err" "accelerate_train_mode \" fast|step\": TYPE (field 1) is \" fast\": whitespace is not allowed"
done
NPUCC_ACCELERATE_TRAIN_MODE='fast|step ' expect_status 2 "$NPUCC" config show
contains "$WORK/err" "NPUCC_ACCELERATE_TRAIN_MODE: accelerate_train_mode \"fast|step \": TRIGGER (field 2)"
pass "compile, schedule and config refuse ' fast|step' alike"

# --- -o names a folder ---------------------------------------------------------------
expect_status 2 "$NPUCC" compile "$M" -o "$WORK/o/x.onnx" --no-cache
contains "$WORK/err" "o/x.onnx: names an .onnx file, not a folder (-o names the folder that gets high.onnx, low.onnx and manifest.json; try -o $WORK/o)"
[ ! -e "$WORK/o" ] || fail "-o x.onnx created something"
touch "$WORK/afile"
expect_status 2 "$NPUCC" compile "$M" -o "$WORK/afile" --cache-dir "$C"
contains "$WORK/err" "afile: exists and is not a folder"
mkdir -p "$WORK/dir.onnx"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/dir.onnx" --no-cache
pass "-o out/x.onnx and -o FILE are refused with a hint; an existing folder named *.onnx is used"

# --- --max-size that evicts the entry just stored ----------------------------------
C2="$WORK/small-cache"; "$NPUCC" cache init "$C2" >/dev/null
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/m" --cache-dir "$C2" --max-size 100K
contains "$WORK/err" "npucc: warning: evicted the cache entry just stored (.*) to keep the cache under its max size of 100.0 KiB; raise --max-size"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/m" --cache-dir "$C2" --max-size 100M
if grep -q "evicted" "$WORK/err"; then fail "warned without an eviction"; fi
# A limit that evicts earlier entries names them, not just the new one (issue 31).
expect_status 0 "$NPUCC" compile "$TESTDATA/models/oww_hello_deepa.onnx" -o "$WORK/m2" --cache-dir "$C2" --max-size 700K
contains "$WORK/err" "npucc: warning: evicted 1 other entry: ppocr_cls [0-9a-f]\{12\} (.*) to keep the cache under its max size of 700.0 KiB"
# A purge by size that would remove every entry asks for --all instead.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/m3" --cache-dir "$C2"
expect_status 2 "$NPUCC" cache purge --max-size 100 --cache-dir "$C2"
contains "$WORK/err" "--max-size 100 would remove every entry"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C2" --json
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 2 ] || fail "a refused purge removed entries"
pass "size limits name what they evict; a purge by size of every entry asks for --all"

# --- Bullets issue 19's config work and item 9 fixed: kept fixed -------------------
printf '{"op_select_implmode": "high_precision"}\n' >"$WORK/ignored.json"
for cmd in "compile $M -o $WORK/w --cache-dir $C" "cache populate $M --cache-dir $C" "cache ls --cache-dir $C"; do
  # shellcheck disable=SC2086
  expect_status 0 "$NPUCC" $cmd --options "$WORK/ignored.json"
  [ "$(grep -c "op_select_implmode .* ignored" "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "$cmd: the warning is not printed once"; }
done
printf '{"graph_compiler_cache_dir": "%s/missing"}\n' "$WORK" >"$WORK/dir.json"
expect_status 1 "$NPUCC" compile "$M" -o "$WORK/w" --options "$WORK/dir.json"
contains "$WORK/err" "the cache folder ($WORK/dir.json: graph_compiler_cache_dir) does not exist"
expect_status 0 "$NPUCC" cache --help
for word in ls stats verify invalidate purge populate explain init; do
  grep -q "^  $word\b" "$WORK/out" || fail "cache --help lacks $word"
done
expect_status 0 "$NPUCC" cache ls --help
contains "$WORK/out" "sort by key, model, size, created, used, version or state"
expect_status 0 "$NPUCC" compile --help
contains "$WORK/out" "^  --keep-io-types,--no-keep-io-types$"
if grep -q "{false}\|{true}" "$WORK/out"; then fail "a flag pair shows CLI11's default"; fi
pass "warnings once, the options file blamed for its cache folder, help lists every subcommand and value"

# --- Issue 31: repeated --input-shape joins; a missing -o says what it is for ----------
S="$TESTDATA/models/silero_vad_legacy.onnx"
expect_status 0 "$NPUCC" compile "$S" -o "$WORK/sj1" --no-cache --input-shape 'input:1,512' \
  --input-shape 'h:2,1,64' --input-shape 'c:2,1,64'
expect_status 0 "$NPUCC" compile "$S" -o "$WORK/sj2" --no-cache --input-shape 'input:1,512;h:2,1,64;c:2,1,64'
cmp "$WORK/sj1/high.onnx" "$WORK/sj2/high.onnx" || fail "three --input-shape flags differ from one joined list"
expect_status 2 "$NPUCC" compile "$M"
contains "$WORK/err" "\`npucc compile\` needs -o OUTDIR, the folder that gets the graphs and manifest.json"
pass "--input-shape repeated joins as one list; a missing -o says what it is for"

# --- Issue 31: one --model rule for ls and invalidate ---------------------------------
C3="$WORK/model-rule"; "$NPUCC" cache init "$C3" >/dev/null
"$NPUCC" -q compile "$M" -o "$WORK/mr1" --cache-dir "$C3"
"$NPUCC" -q compile "$TESTDATA/models/ppocrv4_det.onnx" -o "$WORK/mr2" --cache-dir "$C3"
for pattern in 'ppocr*' ppocr_cls.onnx ppocr_cls; do
  expect_status 0 "$NPUCC" cache ls --model "$pattern" --cache-dir "$C3" --json
  ls_count=$(json_get "$WORK/out" "len(d['entries'])")
  expect_status 0 "$NPUCC" cache invalidate --model "$pattern" --dry-run --cache-dir "$C3" --json
  [ "$(json_get "$WORK/out" "len(d['removed'])")" = "$ls_count" ] ||
    fail "--model $pattern: ls lists $ls_count, invalidate selects $(json_get "$WORK/out" "len(d['removed'])")"
  [ "$ls_count" -ge 1 ] || fail "--model $pattern matches nothing"
done
expect_status 0 "$NPUCC" cache invalidate --model nosuch --dry-run --cache-dir "$C3"
contains "$WORK/out" "no entry matches --model nosuch (\`npucc cache ls\` lists the models)"
pass "--model: the same entries for ls and invalidate, a file name selects its model, no match says so"
