#!/usr/bin/env bash
# `cache populate --models FILE`: per-model compile options from a TOML file of [[model]]
# tables. One --input-shape for four models fails three of them (the report in issue 20);
# each model with its own input_shape, all four compile, and each entry is the one a
# compile with the same options hits. The command line fills in what a table leaves out.
# Unknown keys, wrong types and paths outside the file's folder are errors with FILE:LINE.
source "$(dirname "$0")/cache_common.sh"
D="$WORK/ci"; mkdir -p "$D/models"
for m in ppocr_cls ppocrv4_det silero_vad_legacy oww_hello_deepa; do
  cp "$TESTDATA/models/$m.onnx" "$D/models/"
done
SILERO_SHAPE='input:1,512;h:2,1,64;c:2,1,64'
CLS_NODE=$($PY -c "import onnx,sys; m=onnx.load(sys.argv[1]); print([n.name for n in m.graph.node if n.op_type=='Conv'][0])" "$D/models/ppocr_cls.onnx")
echo "$CLS_NODE" >"$D/keep.txt"
cat >"$D/models.toml" <<'EOF'
# one table per model; paths are relative to this file's folder
[[model]]
path = "models/ppocr_cls.onnx"
input_shape = ["x:1,3,48,192"]
accelerate_train_mode = "fast|step|0.9"
keep_dtype = "keep.txt"

[[model]]
path = "models/ppocrv4_det.onnx"
input_shape = "x:1,3,640,640"

[[model]]
path = "models/silero_vad_legacy.onnx"
input_shape = ["input:1,512", "h:2,1,64", "c:2,1,64"]
accelerate_train_mode = ""   # not lowered, whatever the command line says

[[model]]
path = "models/oww_hello_deepa.onnx"
keep_io_types = false
EOF

# --- the report: one --input-shape for every model fails 3 of 4 ---
"$NPUCC" cache init "$WORK/c1" >/dev/null
expect_status 1 "$NPUCC" cache populate "$D/models" --input-shape "$SILERO_SHAPE" --cache-dir "$WORK/c1"
contains "$WORK/out" "populate: 1 compiled, 0 already cached, 0 bypassed, 3 failed"
pass "one --input-shape for four models: 3 of 4 fail"

# --- per-model options: all four compile (from another folder: paths are the file's) ---
"$NPUCC" cache init "$WORK/c2" >/dev/null
mkdir -p "$WORK/elsewhere"
(cd "$WORK/elsewhere" && expect_status 0 "$NPUCC" cache populate --models ../ci/models.toml \
   --cache-dir "$WORK/c2" --accelerate-train-mode 'fast1|step|0.5' -j 2)
contains "$WORK/out" "populate: 4 compiled, 0 already cached, 0 bypassed, 0 failed"
[ ! -s "$WORK/err" ] || { cat "$WORK/err" >&2; fail "populate --models printed on stderr"; }
pass "--models: each model with its own input_shape, all four compile"

# --- each entry is the one the matching compile hits: the table's options, else the
# command line's (fast1 for det and oww); "" unsets the command line's value ---
hit() {
  local model=$1; shift
  expect_status 0 "$NPUCC" compile "$D/models/$model.onnx" -o "$WORK/out-$model" --cache-dir "$WORK/c2" "$@"
  contains "$WORK/out" "cache: hit"
}
hit ppocr_cls --input-shape 'x:1,3,48,192' --accelerate-train-mode 'fast|step|0.9' --keep-dtype "$D/keep.txt"
hit ppocrv4_det --input-shape 'x:1,3,640,640' --accelerate-train-mode 'fast1|step|0.5'
hit silero_vad_legacy --input-shape "$SILERO_SHAPE"
hit oww_hello_deepa --accelerate-train-mode 'fast1|step|0.5' --no-keep-io-types
expect_status 0 "$NPUCC" cache explain "$D/models/ppocrv4_det.onnx" --input-shape 'x:1,3,640,640' \
  --accelerate-train-mode 'fast1|step|0.5' --cache-dir "$WORK/c2"
contains "$WORK/out" "^cache     hit"
pass "every entry is what compile with the same options hits; the command line fills in"

# --- a second run: all cached; a model named on the command line takes the command
# line's options only (oww keeps its io types there: a new key) ---
expect_status 0 "$NPUCC" cache populate "$D/models/oww_hello_deepa.onnx" \
  --models "$D/models.toml" --cache-dir "$WORK/c2" --accelerate-train-mode 'fast1|step|0.5'
contains "$WORK/out" "populate: 1 compiled, 4 already cached, 0 bypassed, 0 failed"
pass "a second run: the file's models already cached; MODEL_OR_DIR beside --models"

# --- errors: FILE:LINE, one line, exit 2, nothing compiled ---
before=$("$NPUCC" cache ls --cache-dir "$WORK/c2" | tail -1)
# bad TEXT MESSAGE [STATUS]: a models file of TEXT is refused with MESSAGE, exit STATUS (2: a
# bad value; 1: not the TOML subset, as for config.toml).
bad() {
  printf '%b' "$1" >"$D/bad.toml"
  expect_status "${3:-2}" "$NPUCC" cache populate --models "$D/bad.toml" --cache-dir "$WORK/c2"
  contains "$WORK/err" "$2"
  [ "$(grep -c . "$WORK/err")" = 1 ] || { cat "$WORK/err" >&2; fail "more than one line for: $1"; }
}
bad '[[model]]\npath = "models/ppocr_cls.onnx"\ninput_shap = "x:1,3,48,192"\n' \
  "bad.toml:3: unknown key \"input_shap\" in \[\[model\]\] (did you mean \"input_shape\"?)"
bad '[[model]]\npath = "models/ppocr_cls.onnx"\n\nkeep_io_types = "no"\n' \
  "bad.toml:4: keep_io_types must be a boolean (true or false), not a string"
bad '[[model]]\npath = "models/ppocr_cls.onnx"\ntarget_opset = "22"\n' \
  "bad.toml:3: target_opset must be an integer, not a string"
bad '[[model]]\npath = "models/ppocr_cls.onnx"\naccelerate_train_mode = ["fast|step|0.9"]\n' \
  "bad.toml:3: accelerate_train_mode must be a string, not an array of strings"
bad '[[model]]\npath = "models/ppocr_cls.onnx"\naccelerate_train_mode = "fast|stp|0.9"\n' \
  "bad.toml:3: accelerate_train_mode \"fast|stp|0.9\": TRIGGER"
bad '[[model]]\npath = "models/ppocr_cls.onnx"\ninput_shape = "x:1,three"\n' \
  "bad.toml:3: input_shape: dimension \"three\""
bad '[[model]]\npath = "../ci/models/ppocr_cls.onnx"\n' \
  "bad.toml:2: path \"../ci/models/ppocr_cls.onnx\" is not inside $D, the folder of $D/bad.toml"
bad '[[model]]\npath = "/etc/hostname"\n' "bad.toml:2: path \"/etc/hostname\" is not inside"
bad '[[model]]\npath = "models/missing.onnx"\n' "bad.toml:2: path \"models/missing.onnx\": no such file"
bad '[[model]]\ninput_shape = "x:1"\n' "bad.toml:1: \[\[model\]\] without a path"
bad 'path = "models/ppocr_cls.onnx"\n' "bad.toml:1: \"path\" is outside a \[\[model\]\] table"
bad '[[modell]]\npath = "models/ppocr_cls.onnx"\n' "bad.toml:1: unknown table \[\[modell\]\]"
bad '[[model]]\npath = "models/ppocr_cls.onnx"\npath = "models/ppocr_cls.onnx"\n' \
  "bad.toml:3: key \"model.path\" is given twice in this \[\[model\]\]" 1
bad '[[model]]\npath = "models/ppocr_cls.onnx"\ninput_shape = ["x:1,3,48,192",\n' \
  "bad.toml:3: an array must end on the line it starts on" 1
bad '# nothing\n' "bad.toml: no \[\[model\]\] table"
[ "$before" = "$("$NPUCC" cache ls --cache-dir "$WORK/c2" | tail -1)" ] || fail "a refused file changed the cache"
expect_status 2 "$NPUCC" cache populate --cache-dir "$WORK/c2"
contains "$WORK/err" "no models given"
pass "unknown keys (did you mean), wrong types, escaping or missing paths: FILE:LINE, one line"
