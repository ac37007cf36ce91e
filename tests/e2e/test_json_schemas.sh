#!/usr/bin/env bash
# Every JSON document npucc writes, produced by the real binary and checked against its
# schema (tests/schemas/FORMAT.schema.json, with python3-jsonschema): each --json output,
# the manifest and the schedule state file. Then every command whose help offers --json
# must have been checked here, so a new document cannot go without a schema.
source "$(dirname "$0")/cache_common.sh"
source "$(dirname "$0")/remote_common.sh"
VALIDATE="$(dirname "$0")/../tools/validate_json.py"
SCHEMAS="$(dirname "$0")/../schemas"
CLS="$TESTDATA/models/ppocr_cls.onnx"
OWW="$TESTDATA/models/oww_hello_deepa.onnx"
SILERO="$TESTDATA/models/silero_vad_legacy.onnx"
C="$WORK/cache"
COVERED=() # the command paths ("cache ls") whose --json document was validated

# validate FORMAT FILE COMMAND: FILE must be a valid FORMAT document.
validate() {
  $PY "$VALIDATE" "$1" "$2" 2>"$WORK/invalid" ||
    { cat "$2" "$WORK/invalid" >&2; fail "$3: not a valid $1 document"; }
  COVERED+=("$3")
}
# json_of FORMAT STATUS COMMAND ARGS...: runs `npucc COMMAND ARGS... --json`, wants STATUS
# ("any": whatever it is), validates standard output (kept in $WORK/FORMAT.N.json, the last
# in $WORK/out).
documents=0
json_of() {
  local format=$1 status=$2 command=$3
  shift 3
  if [ "$status" = any ]; then
    # shellcheck disable=SC2086 # COMMAND is one or two words
    "$NPUCC" $command "$@" --json >"$WORK/out" 2>"$WORK/err" || true  # honest: status any: the document is validated whatever the exit
  else
    # shellcheck disable=SC2086
    expect_status "$status" "$NPUCC" $command "$@" --json
  fi
  documents=$((documents + 1))
  cp "$WORK/out" "$WORK/$format.$documents.json"
  validate "$format" "$WORK/out" "$command"
}

# 1. compile: the manifest of a single graph, of a pair with emulation, of a fast1 pair
# (its low graph's opset report), each from --json and from the folder.
"$NPUCC" -q cache init "$C"
json_of npucc-manifest 0 compile "$OWW" -o "$WORK/single" --cache-dir "$C"
validate npucc-manifest "$WORK/single/manifest.json" "compile"
[ "$(json_get "$WORK/out" "[g['role'] for g in d['graphs']]")" = "['high']" ] || fail "single graph"
json_of npucc-manifest 0 compile "$CLS" -o "$WORK/pair" --cache-dir "$C" \
  --accelerate-train-mode 'fast|step' --emit-emulation
validate npucc-manifest "$WORK/pair/manifest.json" "compile"
[ "$(json_get "$WORK/out" "[g['role'] for g in d['graphs']]")" = "['high', 'low', 'emulation']" ] ||
  fail "pair with emulation: $(json_get "$WORK/out" "[g['role'] for g in d['graphs']]")"
json_of npucc-manifest 0 compile "$OWW" -o "$WORK/fast1" --no-cache --accelerate-train-mode 'fast1|loss'
[ "$(json_get "$WORK/out" "'opset' in d['precision_report']")" = True ] || fail "fast1: no opset report"
pass "the manifest of a single graph, a pair with emulation and a fast1 pair"

# 2. inspect, inspect --nodes (a model with If bodies).
json_of npucc-inspect 0 inspect "$CLS"
json_of npucc-inspect-nodes 0 inspect --nodes "$SILERO"
[ "$(json_get "$WORK/out" "len(set(n['graph'] for n in d['nodes'])) > 1")" = True ] || fail "no subgraph nodes"
pass "inspect, inspect --nodes"

# 3. cache ls: typed entries (variants a list, options an object), and an empty filter.
json_of npucc-cache-ls 0 "cache ls" --cache-dir "$C"
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 2 ] || fail "ls: want 2 entries"
[ "$(json_get "$WORK/out" "sorted(v['role'] for e in d['entries'] for v in e['variants'] if e['model'] == 'ppocr_cls')")" = \
  "['emulation', 'high', 'low']" ] || fail "ls: variants"
[ "$(json_get "$WORK/out" "[e['options']['precision']['emit_emulation'] for e in d['entries'] if e['model'] == 'ppocr_cls']")" = \
  "[True]" ] || fail "ls: options is not an object"
json_of npucc-cache-ls 0 "cache ls" --cache-dir "$C" --model 'zz*'
[ "$(json_get "$WORK/out" "d['entries']")" = "[]" ] || fail "ls --model zz*"
pass "cache ls"

# 4. populate: compiled, cached and failed models.
mkdir -p "$WORK/models"
cp "$OWW" "$CLS" "$WORK/models/"
echo "not a model" >"$WORK/models/broken.onnx"
json_of npucc-cache-populate 1 "cache populate" "$WORK/models" --cache-dir "$C" -j 1
[ "$(json_get "$WORK/out" "sorted(m['status'] for m in d['models'])")" = "['cached', 'compiled', 'failed']" ] ||
  fail "populate statuses: $(json_get "$WORK/out" "sorted(m['status'] for m in d['models'])")"
[ "$(json_get "$WORK/out" "'shard' in d")" = False ] || fail "populate without --shard has a shard"
# With --shard: its models only, and the shard object (oww alone is shard 2 of 2).
json_of npucc-cache-populate 0 "cache populate" "$WORK/models" --cache-dir "$C" -j 1 --shard 2/2
[ "$(json_get "$WORK/out" "d['shard'] == {'number': 2, 'count': 2, 'source': '--shard', 'models': 1,
  'models_total': 3} and [m['status'] for m in d['models']] == ['cached']")" = True ] ||
  fail "populate --shard: $(cat "$WORK/out")"
pass "cache populate, and with --shard"

# 5. stats; verify clean, damaged, fixed; invalidate and purge, dry and real.
json_of npucc-cache-stats 0 "cache stats" --cache-dir "$C"
json_of npucc-cache-verify 0 "cache verify" --cache-dir "$C"
entry=$(dirname "$(find "$C/entries" -name emulation.onnx)") # the pair's entry
chmod u+w "$entry/high.onnx" "$entry"
printf 'x' >>"$entry/high.onnx"
echo stray >"$C/entries/stray.txt"
json_of npucc-cache-verify 3 "cache verify" --cache-dir "$C"
[ "$(json_get "$WORK/out" "len(d['findings'])")" = 2 ] || fail "verify: want 2 findings"
# verify --fix's exit status is not this test's business (test_cache_damage.sh has it).
json_of npucc-cache-verify any "cache verify" --cache-dir "$C" --fix
[ "$(json_get "$WORK/out" "[f['fixed'] for f in d['findings']]")" = "[True, True]" ] || fail "verify --fix"
json_of npucc-cache-invalidate 0 "cache invalidate" --cache-dir "$C" --model oww_hello_deepa --dry-run
[ "$(json_get "$WORK/out" "(d['dry_run'], len(d['removed']))")" = "(True, 1)" ] || fail "invalidate --dry-run"
json_of npucc-cache-invalidate 0 "cache invalidate" --cache-dir "$C" --model oww_hello_deepa
json_of npucc-cache-purge 0 "cache purge" --cache-dir "$C" --all --dry-run
json_of npucc-cache-purge 0 "cache purge" --cache-dir "$C" --all
[ "$(json_get "$WORK/out" "(d['dry_run'], d['freed_bytes'] > 0)")" = "(False, True)" ] || fail "purge --all"
json_of npucc-cache-stats 0 "cache stats" --cache-dir "$C"
[ "$(json_get "$WORK/out" "(d['entries'], d['misses'] >= 3, d['max_size'])")" = "(0, True, None)" ] ||
  fail "stats after purge"
pass "cache stats, verify (clean, damaged, fixed), invalidate, purge"

# 6. the remote tier: ls --remote (Redis can list) and stats with a remote.
start_redis
"$NPUCC" -q compile "$OWW" -o "$WORK/remote" --cache-dir "$C" --remote-cache "$URL"
json_of npucc-cache-ls-remote 0 "cache ls" --remote --remote-cache "$URL" --cache-dir "$C"
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 1 ] || fail "ls --remote: want 1 object"
NPUCC_CACHE_MAX_SIZE=1G json_of npucc-cache-stats 0 "cache stats" --cache-dir "$C" --remote-cache "$URL"
[ "$(json_get "$WORK/out" "(d['remote']['url'], d['remote']['uploads'], d['max_size'])")" = \
  "('$URL', 1, 1073741824)" ] || fail "stats with a remote: $(cat "$WORK/out")"
pass "cache ls --remote, stats with a remote"

# 7. schedule, step and loss, and its state file.
json_of npucc-schedule 0 schedule --accelerate-train-mode 'fast|step' --step 10 --total-step 100
STEP_NOW=95 TOTAL_STEP=100 json_of npucc-schedule 0 schedule --accelerate-train-mode 'fast|step|0.9' \
  --state-file "$WORK/step.state"
[ "$(json_get "$WORK/out" "(d['decision'], d['sources']['step'])")" = "('high', 'STEP_NOW')" ] || fail "schedule step"
validate npucc-schedule-state "$WORK/step.state" "schedule"
json_of npucc-schedule 0 schedule --accelerate-train-mode 'fast1|loss|1.1' --loss 3.5 --final-loss 1 \
  --state-file "$WORK/loss.state"
[ "$(json_get "$WORK/out" "(d['decision'], d['inputs']['loss'])")" = "('low', 3.5)" ] || fail "schedule loss"
validate npucc-schedule-state "$WORK/loss.state" "schedule"
pass "schedule (step, loss) and the state file"

# 8. config show: defaults typed (booleans, the remote timeouts' 2 and 5), then a config
# file and the environment.
json_of npucc-config-show 0 "config show"
[ "$(json_get "$WORK/out" "[d['settings'][k]['value'] for k in ('cache.disable', 'cache.read_only', 'cache.remote_read_only', 'cache.remote_connect_timeout', 'cache.remote_timeout')] == [False, False, False, 2, 60]")" = \
  True ] || fail "config show defaults: $(cat "$WORK/out")"
mkdir -p "$HOME/.config/npucc"
printf '[cache]\nread_only = true\nmax_size = "2G"\nremote_timeout = "0.5"\n' >"$HOME/.config/npucc/config.toml"
NPUCC_CACHE_DISABLE=1 NPUCC_REMOTE_CACHE_CONNECT_TIMEOUT=3 json_of npucc-config-show 0 "config show" \
  --precision-mode allow_mix_precision
[ "$(json_get "$WORK/out" "[d['settings'][k]['value'] for k in ('cache.disable', 'cache.read_only', 'cache.remote_connect_timeout', 'cache.remote_timeout', 'cache.max_size')] == [True, True, 3, 0.5, '2G']")" = \
  True ] || fail "config show with a file and the environment: $(cat "$WORK/out")"
[ "$(json_get "$WORK/out" "(d['config_file_found'], d['settings']['cache.max_size']['bytes'])")" = "(True, 2147483648)" ] ||
  fail "config show: file found, max_size bytes"
rm "$HOME/.config/npucc/config.toml"
pass "config show"

# 9. cache explain
json_of npucc-cache-explain any "cache explain" "$OWW" --cache-dir "$C"
pass "cache explain"

# 9c. compare: emulated with samples, a target and validation sets; plain on random inputs.
"$PY" "$(dirname "$0")/../tools/make_compare_models.py" "$WORK/cmp" || fail "make_compare_models.py"
json_of npucc-compare 0 compare "$WORK/cmp/ref.onnx" "$WORK/cmp/f16_io.onnx" \
  --sample-inputs "$WORK/cmp/samples" --validation-inputs "$WORK/cmp/samples/set0.npz" \
  --accuracy-target 'y_small:cosine>=0.9'
[ "$(json_get "$WORK/out" "(d['accuracy']['meets_target'], len(d['conversions']))")" = "(True, 5)" ] ||
  fail "compare: target or conversions"
json_of npucc-compare 0 compare "$WORK/cmp/ref.onnx" "$WORK/cmp/f16.onnx" --run plain
# With the per-node drift report (its "drift": the npucc-drift schema, by $ref), emulated and
# plain, and the drift file it writes.
json_of npucc-compare 0 compare "$WORK/cmp/ref.onnx" "$WORK/cmp/f16.onnx" \
  --sample-inputs "$WORK/cmp/samples" --accuracy-report nodes --drift-json "$WORK/cmp/drift.json"
[ "$(json_get "$WORK/out" "len(d['drift']['values'])")" = 7 ] || fail "compare: drift values"
validate npucc-drift "$WORK/cmp/drift.json" "compare --drift-json"
json_of npucc-compare 0 compare "$WORK/cmp/ref.onnx" "$WORK/cmp/f16.onnx" --run plain \
  --sample-inputs "$WORK/cmp/samples" --accuracy-report nodes
pass "compare"

# 9b. npucc --version --json (the top level's help offers --json for it: its path is "").
expect_status 0 "$NPUCC" --version --json
validate npucc-version "$WORK/out" ""
pass "--version --json"

# 10. every command whose help offers --json was checked above.
commands_of() { # the subcommands a --help output lists
  sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p'
}
walk() { # PATH...: prints each command path under PATH whose help offers --json
  local help sub
  help=$("$NPUCC" "$@" --help)
  if grep -q -- '--json' <<<"$help"; then
    echo "$*"
  fi
  for sub in $(commands_of <<<"$help"); do
    walk "$@" "$sub"
  done
}
offered=$(walk)
[ -n "$offered" ] || fail "no command offers --json: the help walk is broken"
missing=0
while IFS= read -r path; do
  printf '%s\n' "${COVERED[@]}" | grep -qx -- "$path" || { echo "FAIL: npucc $path --json has no schema check here" >&2; missing=1; }
done <<<"$offered"
[ "$missing" = 0 ] || fail "add each command above to tests/e2e/test_json_schemas.sh with a schema"
pass "$(wc -l <<<"$offered") commands offer --json, each checked ($documents documents)"
