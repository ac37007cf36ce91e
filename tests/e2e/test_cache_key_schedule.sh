#!/usr/bin/env bash
# The cache key covers only what changes the outputs (issue 32): accelerate_train_mode's
# trigger and ratio (the schedule) and an --input-shape equal to the model's declared shape
# share one entry; each hit's manifest states its own request's schedule. The TYPE (fast,
# fast1) and a named dim given a value still make entries of their own. Entries keyed by
# the previous scheme (npucc-cache-key/1) are cleanly missed, never misread. That the
# schedule may be left out is shown by compiling each schedule afresh (--no-cache): the
# graphs are byte-identical.
source "$(dirname "$0")/cache_common.sh"
unset NPUCC_CACHE_KEY_FILE NPUCC_CACHE_READ_ONLY NPUCC_CACHE_SHARED
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
M="$TESTDATA/models/oww_hello_deepa.onnx" # one input, onnx::Flatten_0, declared [1,25,96]
DECLARED='onnx::Flatten_0:1,25,96'

# compile_to DIR OUTCOME ARGS...: compile M into DIR, expecting "cache: OUTCOME".
compile_to() {
  local dir=$1 outcome=$2; shift 2
  expect_status 0 "$NPUCC" compile "$M" -o "$WORK/$dir" --cache-dir "$C" "$@"
  contains "$WORK/out" "cache: $outcome"
  valid_json npucc-manifest "$WORK/$dir/manifest.json"
}
entries() { "$NPUCC" cache ls --cache-dir "$C" --json >"$WORK/ls.json"; json_get "$WORK/ls.json" "len(d['entries'])"; }
# schedule_of DIR: the manifest's schedule as "mode trigger ratio".
schedule_of() { json_get "$WORK/$1/manifest.json" "' '.join(str(d['schedule'][k]) for k in ('mode', 'trigger', 'ratio'))"; }
omitted_of() { json_get "$WORK/$1/manifest.json" "[(c['name'], c['value']) for c in d['cache_key_components'] if not c['in_key']]"; }

# --- four requests that differ only in the schedule or a no-op shape: one entry ---
compile_to s09 "miss: new key" --accelerate-train-mode 'fast|step|0.9'
compile_to s08 hit --accelerate-train-mode 'fast|step|0.8'
compile_to loss hit --accelerate-train-mode 'fast|loss'
compile_to shape hit --accelerate-train-mode 'fast|step|0.9' --input-shape "$DECLARED"
[ "$(entries)" = 1 ] || { cat "$WORK/ls.json"; fail "want 1 entry after 4 compiles"; }
pass "ratio, trigger and a declared --input-shape share one entry (3 hits)"

[ "$(schedule_of s09)" = "fast|step|0.9 step 0.9" ] || fail "s09: $(schedule_of s09)"
[ "$(schedule_of s08)" = "fast|step|0.8 step 0.8" ] || fail "s08: $(schedule_of s08)"
[ "$(schedule_of loss)" = "fast|loss|1.05 loss 1.05" ] || fail "loss: $(schedule_of loss)"
[ "$(schedule_of shape)" = "fast|step|0.9 step 0.9" ] || fail "shape: $(schedule_of shape)"
contains "$WORK/s08/manifest.json" 'floor(total_step \* 0.8)'
contains "$WORK/loss/manifest.json" 'final_loss \* 1.05'
# The switch rule the schedule command applies is the requested one.
# decision DIR: what `npucc schedule` decides at step 80 of 100 under DIR's manifest's mode.
decision() {
  expect_status 0 "$NPUCC" schedule --accelerate-train-mode "$(json_get "$WORK/$1/manifest.json" "d['schedule']['mode']")" \
    --step 80 --total-step 100 --json
  json_get "$WORK/out" "d['decision']"
}
[ "$(decision s08)" = high ] || fail "0.8 at step 80 of 100: not high"
[ "$(decision s09)" = low ] || fail "0.9 at step 80 of 100: not low"
[ "$(omitted_of s08)" = "[('schedule', 'fast|step|0.8')]" ] || fail "s08 components: $(omitted_of s08)"
[ "$(omitted_of shape)" = "[('schedule', 'fast|step|0.9'), ('input_shapes', '$DECLARED')]" ] \
  || fail "shape components: $(omitted_of shape)"
pass "each manifest states its own requested schedule and what its key left out"

for dir in s08 loss shape; do
  for graph in high.onnx low.onnx; do
    cmp "$WORK/s09/$graph" "$WORK/$dir/$graph" || fail "$dir/$graph differs from s09's"
  done
  [ "$(json_get "$WORK/$dir/manifest.json" "d['cache_key']")" = \
    "$(json_get "$WORK/s09/manifest.json" "d['cache_key']")" ] || fail "$dir: another key"
done
# The entry keeps what its compile stored: materialising restated the copies only.
KEY=$(json_get "$WORK/s09/manifest.json" "d['cache_key']")
E="$C/entries/${KEY:0:2}/$KEY"
[ "$(json_get "$E/manifest.json" "d['schedule']['mode']")" = "fast|step|0.9" ] || fail "the entry's manifest changed"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
contains "$WORK/out" "no problems"
pass "the high and low graphs are byte-identical; the entry itself is untouched and verifies"

# --- the rule itself: the schedule is left out of the key because it changes no graph. Each
# schedule compiled afresh (--no-cache, nothing shared) writes the same files byte for byte,
# for both types (the hits above are copies of one entry, so they cannot show it) ---
for type in fast fast1; do
  first=""
  for schedule in 'step|0.9' 'step|0.8' 'step|0.2' 'loss' 'loss|1.2'; do
    dir="fresh-$type-${schedule//[|.]/_}"
    expect_status 0 "$NPUCC" compile "$M" -o "$WORK/$dir" --no-cache --emit-emulation \
      --accelerate-train-mode "$type|$schedule"
    [ -n "$first" ] || { first=$dir; continue; }
    [ "$(cd "$WORK/$dir" && ls)" = "$(cd "$WORK/$first" && ls)" ] || fail "$dir: other files than $first"
    for file in $(cd "$WORK/$dir" && ls | grep -v '^manifest.json$'); do
      cmp "$WORK/$first/$file" "$WORK/$dir/$file" || fail "$type|$schedule: $file differs from $first's"
    done
  done
done
for graph in high.onnx low.onnx; do
  cmp "$WORK/fresh-fast-step_0_9/$graph" "$WORK/s09/$graph" || fail "the cached $graph is not a fresh compile's"
done
pass "every schedule of fast and fast1, compiled with --no-cache, writes byte-identical graphs"

# --- the TYPE and a named dim given a value are still part of the key ---
compile_to fast1 "miss: new key" --accelerate-train-mode 'fast1|step|0.9'
[ "$(entries)" = 2 ] || fail "fast and fast1 share an entry"
P="$TESTDATA/models/ppocr_cls.onnx" # x: [N, 3, H, W]
expect_status 0 "$NPUCC" compile "$P" -o "$WORK/p1" --cache-dir "$C"
contains "$WORK/out" "cache: miss: new key"
expect_status 0 "$NPUCC" compile "$P" -o "$WORK/p2" --cache-dir "$C" --input-shape 'x:-1,3,-1,-1'
contains "$WORK/out" "cache: hit"
expect_status 0 "$NPUCC" compile "$P" -o "$WORK/p3" --cache-dir "$C" --input-shape 'x:1,3,48,192'
contains "$WORK/out" "cache: miss: new key"
[ "$(entries)" = 4 ] || fail "want 4 entries: fast, fast1, ppocr_cls twice"
pass "fast and fast1 are 2 entries; -1 for named dims is a no-op, a value for them is not"

# --- explain says what is left out of the key ---
expect_status 0 "$NPUCC" cache explain "$M" -o "$WORK/x" --cache-dir "$C" \
  --accelerate-train-mode 'fast|loss|1.2' --input-shape "$DECLARED"
contains "$WORK/out" "^cache     hit: "
contains "$WORK/out" "^schedule   fast|loss|1.2: trigger and ratio: not part of the key (written at materialisation); its type fast is$"
contains "$WORK/out" "^input_shapes $DECLARED: equal to the model's declared shape: not part of the key$"
expect_status 0 "$NPUCC" cache explain "$M" -o "$WORK/x" --cache-dir "$C" \
  --accelerate-train-mode 'fast|loss|1.2' --input-shape "$DECLARED" --json
valid_json npucc-cache-explain "$WORK/out"
[ "$(json_get "$WORK/out" "[c['name'] for c in d['components'] if not c['in_key']]")" = "['schedule', 'input_shapes']" ] \
  || fail "explain --json: $(cat "$WORK/out")"
pass "cache explain lists the schedule and a no-op shape as not part of the key"

# --- a signed cache: the entry is authenticated, the schedule comes from the request ---
K="$WORK/key"; openssl rand -hex 32 >"$K"; chmod 600 "$K"
S="$WORK/signed"; "$NPUCC" cache init "$S" >/dev/null
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" compile "$M" -o "$WORK/g1" --cache-dir "$S" --accelerate-train-mode 'fast|step|0.9'
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" compile "$M" -o "$WORK/g2" --cache-dir "$S" --accelerate-train-mode 'fast|step|0.5'
contains "$WORK/out" "cache: hit"
[ ! -s "$WORK/err" ] || fail "a signed hit warned: $(cat "$WORK/err")"
[ "$(json_get "$WORK/g2/manifest.json" "d['schedule']['ratio']")" = 0.5 ] || fail "signed hit: ratio"
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" cache verify --cache-dir "$S"
contains "$WORK/out" "no problems"
pass "a signed entry hits for another ratio, and still verifies"

# --- an entry of the previous key scheme (npucc-cache-key/1): cleanly missed ---
# The key is recomputed here from the manifest's components as npucc-cache(1) documents
# it; then the same entry is written again as /1 wrote it: its whole accelerate_train_mode
# in the options, under the key /1 computed.
OLD=$($PY - "$E" "$C/entries" <<'PYEOF'
import hashlib, json, os, shutil, sys
entry, entries = sys.argv[1], sys.argv[2]
sha = lambda text: hashlib.sha256(text.encode()).hexdigest()
canonical = lambda value: json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
manifest = json.load(open(os.path.join(entry, "manifest.json")))
components = [c for c in manifest["cache_key_components"] if c["in_key"]]
def key_of(parts):
    return sha("npucc-cache-key\n" + "".join(f"{c['name']}:{c['digest']}\n" for c in parts))
assert key_of(components) == manifest["cache_key"], "the documented key algorithm disagrees"
options = next(c for c in components if c["name"] == "options")["value"]
assert sha(canonical(options)) == next(c for c in components if c["name"] == "options")["digest"]
options["precision"]["accelerate_train_mode"] = manifest["schedule"]["mode"]
del options["precision"]["accelerate_train_mode_type"]
old = []
for c in components:
    c = {"name": c["name"], "digest": c["digest"], "value": c["value"]}  # /1 had no in_key
    if c["name"] == "format":
        c["value"], c["digest"] = "npucc-cache-key/1", sha("npucc-cache-key/1")
    if c["name"] == "options":
        c["value"], c["digest"] = options, sha(canonical(options))
    old.append(c)
key = key_of(old)
manifest.update(cache_key=key, cache_key_components=old, options=options)
target = os.path.join(entries, key[:2], key)
os.makedirs(target)
for name in os.listdir(entry):
    if name not in ("entry.npucc", "manifest.json"):
        shutil.copyfile(os.path.join(entry, name), os.path.join(target, name))
text = json.dumps(manifest, indent=2) + "\n"
open(os.path.join(target, "manifest.json"), "w").write(text)
lines = []
for line in open(os.path.join(entry, "entry.npucc")).read().split("\n"):
    if line.startswith("key "):
        line = "key " + key
    elif line.startswith("options "):
        line = "options " + canonical(options)
    elif line.startswith("file ") and line.endswith(" manifest.json"):
        line = f"file {sha(text)} {len(text.encode())} manifest.json"
    elif line.startswith("end "):
        break
    lines.append(line)
body = "\n".join(lines) + "\n"
open(os.path.join(target, "entry.npucc"), "w").write(body + "end " + sha(body) + "\n")
for name in os.listdir(target):
    os.chmod(os.path.join(target, name), 0o444)
print(key)
PYEOF
)
[ -f "$C/entries/${OLD:0:2}/$OLD/entry.npucc" ] || fail "the /1 entry was not written"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
contains "$WORK/out" "no problems"
expect_status 0 "$NPUCC" cache invalidate --key "$KEY" --cache-dir "$C"
expect_status 3 "$NPUCC" cache explain "$M" -o "$WORK/o1" --cache-dir "$C" --accelerate-train-mode 'fast|step|0.9' --json
[ "$(json_get "$WORK/out" "[e['differing'] for e in d['nearest'] if e['key'] == '$OLD']")" = "[['format', 'options']]" ] \
  || fail "explain of the /1 entry: $(json_get "$WORK/out" "d['nearest']")"
compile_to o1 "miss: new key" --accelerate-train-mode 'fast|step|0.8'
[ "$(schedule_of o1)" = "fast|step|0.8 step 0.8" ] || fail "after the /1 entry: $(schedule_of o1)"
[ "$(json_get "$WORK/o1/manifest.json" "d['cache_key']")" = "$KEY" ] || fail "not the /2 key"
[ -d "$C/entries/${OLD:0:2}/$OLD" ] || fail "the /1 entry was removed"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "an entry of key scheme /1 reads as an entry (ls, verify) and is missed, never served"
