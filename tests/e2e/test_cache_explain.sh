#!/usr/bin/env bash
# `npucc cache explain` takes a compile command with `compile` changed to `cache explain`:
# it prints the key's components, says whether the cache holds the key, and for a miss
# which components (and options) differ from the nearest entries of the model. It writes
# nothing, neither to the cache nor to -o.
source "$(dirname "$0")/cache_common.sh"
SCHEMA_CHECK="$PY $SOURCE_DIR/tests/tools/validate_json.py npucc-cache-explain"
C="$WORK/c"
"$NPUCC" cache init "$C" >/dev/null
mkdir -p "$WORK/m"
M="$WORK/m/m.onnx"
$PY "$(dirname "$0")/make_external_matmul_model.py" "$M"
# explain_json NAME STATUS args...: explain --json into $WORK/NAME.json, exiting STATUS (0 for
# a hit, 3 for anything else), checked against its schema.
explain_json() {
  local name=$1 status=$2; shift 2
  expect_status "$status" "$NPUCC" cache explain "$@" --json
  cp "$WORK/out" "$WORK/$name.json"
  $SCHEMA_CHECK "$WORK/$name.json" || fail "$name.json does not match npucc-cache-explain"
}
# snapshot DIR: every name below DIR with its size, mode and modification time.
snapshot() { (cd "$1" && find . -printf '%p %s %m %T@\n' | sort); }

# --- explain takes exactly compile's options ---
options_of() { "$NPUCC" "$@" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }
diff <(options_of compile) <(options_of cache explain) || fail "explain's options differ from compile's"
pass "cache explain has the option set of compile"

# --- an empty cache: a miss, and no entry of the model ---
explain_json empty 3 "$M" -o "$WORK/o1" --cache-dir "$C"
[ "$(json_get "$WORK/empty.json" "d['cache']['lookup']")" = miss ] || fail "empty cache: not a miss"
[ "$(json_get "$WORK/empty.json" "len(d['nearest'])")" = 0 ] || fail "empty cache: nearest entries"
[ "$(json_get "$WORK/empty.json" "d['cache']['checked']")" = True ] || fail "empty cache: not checked"
expect_status 3 "$NPUCC" cache explain "$M" -o "$WORK/o1" --cache-dir "$C"
contains "$WORK/out" "^cache     miss: no entry under this key in .* (0 entries)"
contains "$WORK/out" "^no other entries of model m in the cache"
pass "an empty cache: a miss with no entries of the model"

# --- a hit: the pasted compile command ---
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o1" --cache-dir "$C"
KEY=$(json_get "$WORK/o1/manifest.json" "d['cache_key']")
[ "$(json_get "$WORK/o1/manifest.json" "len(d['cache_key_components'])")" = 6 ] \
  || fail "the manifest lacks the key's components"
explain_json hit 0 "$M" -o "$WORK/o1" --cache-dir "$C"
[ "$(json_get "$WORK/hit.json" "d['key']")" = "$KEY" ] || fail "explain's key is not the compile's"
[ "$(json_get "$WORK/hit.json" "d['cache']['lookup']")" = hit ] || fail "not a hit"
[ "$(json_get "$WORK/hit.json" "[c['value'] for c in d['components'] if c['name']=='options'][0]['external_data']")" = auto ] \
  || fail "the options component is not an object"
expect_status 0 "$NPUCC" cache explain "$M" -o "$WORK/o1" --cache-dir "$C"
contains "$WORK/out" "^key       $KEY"
contains "$WORK/out" "^cache     hit: the key is in "
head -1 "$WORK/out" | grep -q "^cache     hit: " || fail "the verdict is not the first line: $(head -1 "$WORK/out")"
pass "the key a compile stored is a hit (exit 0, the verdict first), and the same key"

# --- explain writes nothing: not the cache, not -o (existing or not) ---
before_cache=$(snapshot "$C"); before_out=$(snapshot "$WORK/o1")
for args in "-o $WORK/o1" "-o $WORK/new-out" "-o $WORK/o1 --accelerate-train-mode fast|step|0.9"; do
  # shellcheck disable=SC2086
  set +e; "$NPUCC" cache explain "$M" --cache-dir "$C" $args >"$WORK/out" 2>"$WORK/err"; status=$?; set -e
  [ "$status" = 0 ] || [ "$status" = 3 ] || { cat "$WORK/err" >&2; fail "explain $args exited $status"; }
done
[ "$before_cache" = "$(snapshot "$C")" ] || fail "explain changed the cache folder"
[ "$before_out" = "$(snapshot "$WORK/o1")" ] || fail "explain changed the -o folder"
[ ! -e "$WORK/new-out" ] || fail "explain created the -o folder"
pass "explain writes nothing to the cache or to -o"

# --- a miss after an option change names the option, old -> new ---
explain_json option 3 "$M" -o "$WORK/o2" --cache-dir "$C" --accelerate-train-mode 'fast|step|0.9'
[ "$(json_get "$WORK/option.json" "d['cache']['lookup']")" = miss ] || fail "option change: not a miss"
[ "$(json_get "$WORK/option.json" "d['nearest'][0]['key']")" = "$KEY" ] || fail "nearest is not the entry"
[ "$(json_get "$WORK/option.json" "d['nearest'][0]['differing']")" = "['options']" ] \
  || fail "option change: $(json_get "$WORK/option.json" "d['nearest'][0]['differing']")"
[ "$(json_get "$WORK/option.json" "[(o['recorded'], o['current']) for o in d['nearest'][0]['options'] if o['name']=='precision.accelerate_train_mode_type'][0]")" = "('', 'fast')" ] \
  || fail "option change: the option is not named with its values"
expect_status 3 "$NPUCC" cache explain "$M" -o "$WORK/o2" --cache-dir "$C" --accelerate-train-mode 'fast|step|0.9'
contains "$WORK/out" "^nearest entries of model m (1 of 1 under other keys):"
contains "$WORK/out" "^  ${KEY:0:12}  created .*  differs in options$"
contains "$WORK/out" '^    option precision.accelerate_train_mode_type: "" -> "fast"$'
pass "a miss after an option change names the option, old -> new"

# --- a miss after a change of the model's bytes ---
cp -r "$WORK/m" "$WORK/m2"
$PY - "$WORK/m2/m.onnx" <<'PYEOF'
import sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False); m.doc_string = "changed"
open(sys.argv[1], "wb").write(m.SerializeToString())
PYEOF
explain_json model 3 "$WORK/m2/m.onnx" -o "$WORK/o3" --cache-dir "$C"
[ "$(json_get "$WORK/model.json" "d['nearest'][0]['differing']")" = "['model']" ] \
  || fail "model change: $(json_get "$WORK/model.json" "d['nearest'][0]['differing']")"
expect_status 3 "$NPUCC" cache explain "$WORK/m2/m.onnx" -o "$WORK/o3" --cache-dir "$C"
contains "$WORK/out" "differs in model$"
contains "$WORK/out" "^    model: m.onnx, [0-9]* bytes -> m.onnx, [0-9]* bytes"
pass "a miss after a model byte change names the model"

# --- a miss after a change of the external data ---
cp -r "$WORK/m" "$WORK/m3"
$PY -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[100]^=1; open(p,'wb').write(b)" "$WORK/m3/weights.bin"
explain_json external 3 "$WORK/m3/m.onnx" -o "$WORK/o4" --cache-dir "$C"
[ "$(json_get "$WORK/external.json" "d['nearest'][0]['differing']")" = "['external']" ] \
  || fail "external change: $(json_get "$WORK/external.json" "d['nearest'][0]['differing']")"
expect_status 3 "$NPUCC" cache explain "$WORK/m3/m.onnx" -o "$WORK/o4" --cache-dir "$C"
contains "$WORK/out" "differs in external$"
contains "$WORK/out" "^    external: 1 file(s), 16384 bytes (sha256 [0-9a-f]\{12\}) -> 1 file(s), 16384 bytes (sha256 [0-9a-f]\{12\})$"
pass "a miss after an external data change names the external data"

# --- nearest first: with two entries, the one differing in one component leads ---
expect_status 0 "$NPUCC" compile "$WORK/m2/m.onnx" -o "$WORK/o5" --cache-dir "$C" --passes topological_sort
explain_json two 3 "$WORK/m2/m.onnx" -o "$WORK/o6" --cache-dir "$C" --accelerate-train-mode 'fast|step|0.9'
[ "$(json_get "$WORK/two.json" "[e['differing'] for e in d['nearest']]")" = "[['options'], ['model', 'options']]" ] \
  || fail "ranking: $(json_get "$WORK/two.json" "[e['differing'] for e in d['nearest']]")"
[ "$(json_get "$WORK/two.json" "d['cache']['model_entries']")" = 2 ] || fail "two entries of the model"
pass "the nearest entry (fewest differing components) comes first"

# --- not checked: --no-cache, a missing cache folder; a remote tier is never asked ---
expect_status 3 "$NPUCC" cache explain "$M" -o "$WORK/o1" --no-cache
contains "$WORK/out" "^cache     not checked: the cache is not used"
explain_json missing 3 "$M" -o "$WORK/o1" --cache-dir "$WORK/nowhere"
[ "$(json_get "$WORK/missing.json" "d['cache']['checked']")" = False ] || fail "a missing folder was checked"
contains "$WORK/missing.json" "does not exist"
[ ! -e "$WORK/nowhere" ] || fail "explain created the cache folder"
explain_json remote 0 "$M" -o "$WORK/o1" --cache-dir "$C" --remote-cache http://127.0.0.1:9/npucc
[ "$(json_get "$WORK/remote.json" "(d['remote']['url'], d['remote']['checked'], d['cache']['lookup'])")" = \
  "('http://127.0.0.1:9/npucc', False, 'hit')" ] || fail "remote: $(cat "$WORK/remote.json")"
expect_status 0 "$NPUCC" cache explain "$M" -o "$WORK/o1" --cache-dir "$C" --remote-cache http://127.0.0.1:9/npucc
contains "$WORK/out" "^remote    http://127.0.0.1:9/npucc: not checked"
pass "--no-cache and a missing folder: not checked; a remote tier: named, not asked"

# --- a model with a custom op bypasses the cache: explain says so, naming the op ---
$PY "$(dirname "$0")/make_custom_op_model.py" "$WORK/custom.onnx"
explain_json bypass 3 "$WORK/custom.onnx" -o "$WORK/oc" --cache-dir "$C"
[ "$(json_get "$WORK/bypass.json" "d['cache']['lookup']")" = bypass ] || fail "custom op: not a bypass"
expect_status 3 "$NPUCC" cache explain "$WORK/custom.onnx" -o "$WORK/oc" --cache-dir "$C"
contains "$WORK/out" "^cache     bypass: custom op com.acme::Magic"
pass "a model the cache bypasses: explain names the op"
