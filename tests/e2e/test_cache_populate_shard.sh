#!/usr/bin/env bash
# `cache populate --shard K/N` across machines (issue 21 item 4): three shards of one folder
# of 13 models, each into its own local cache behind one redis-server on loopback, take
# disjoint sets that together are the folder; a fourth machine with an empty cache then
# hits every model from the remote and compiles none. `--shard auto` reads GitLab's,
# Kubernetes', Slurm's and npucc's own variables; bad values are one clear error, exit 2.
source "$(dirname "$0")/cache_common.sh"
source "$(dirname "$0")/remote_common.sh"

# 7 bundled models (torch/ in a subfolder) and 6 small generated ones: the split gives
# each of 3 shards some (6, 2 and 5 models; the hash is pinned in the unit tests).
M="$WORK/checkout/models"
mkdir -p "$M/generated"
cp "$TESTDATA"/models/*.onnx "$M/"
cp -r "$TESTDATA/models/torch" "$M/"
$PY - "$M/generated" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
for i in range(6):
    graph = h.make_graph([h.make_node("Add", ["x", "c"], ["y"])], f"add_{i}",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 8])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 8])],
                         [nh.from_array(np.full([1, 8], i, np.float32), "c")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, f"{sys.argv[1]}/add_{i}.onnx")
EOF
ALL=$(cd "$M" && find . -name '*.onnx' | sed 's|^\./||' | sort)
TOTAL=$(echo "$ALL" | wc -l)
[ "$TOTAL" = 13 ] || fail "want 13 models, have $TOTAL"

# models_of JSON: the models a populate --json run listed, relative to $M, sorted.
models_of() {
  json_get "$1" "'\n'.join(sorted(m['model'] for m in d['models']))" | sed "s|^$M/||"
}
# The environment without any shard variable of any engine (the CI running this test may
# set some).
clean_env() {
  env -u NPUCC_SHARD_INDEX -u NPUCC_SHARD_COUNT -u CI_NODE_INDEX -u CI_NODE_TOTAL \
    -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT \
    -u SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_MAX -u SLURM_ARRAY_TASK_STEP -u GITHUB_ACTIONS "$@"
}

start_redis
CLI=$(command -v redis-cli || echo /usr/bin/redis-cli)
objects() { "$CLI" -p "$PORT" -n 3 --scan --pattern 'npucc:bundle:*' | wc -l; }

# 1. Three machines, one shard each, one remote: disjoint, together the folder.
: >"$WORK/taken"
for k in 1 2 3; do
  "$NPUCC" -q cache init "$WORK/s$k"
  expect_status 0 "$NPUCC" cache populate "$M" --shard "$k/3" -j 2 --json --cache-dir "$WORK/s$k" \
    --remote-cache "$URL"
  cp "$WORK/out" "$WORK/s$k.json"
  [ "$(json_get "$WORK/out" "(d['shard']['number'], d['shard']['count'], d['shard']['source'], d['shard']['models_total'])")" = \
    "($k, 3, '--shard', 13)" ] || fail "shard $k/3: $(json_get "$WORK/out" "d['shard']")"
  taken=$(json_get "$WORK/out" "len(d['models'])")
  [ "$taken" -ge 1 ] || fail "shard $k/3 took no model"
  [ "$(json_get "$WORK/out" "(d['shard']['models'], d['compiled'], d['failed'])")" = "($taken, $taken, 0)" ] ||
    fail "shard $k/3 did not compile its $taken models: $(cat "$WORK/out")"
  models_of "$WORK/s$k.json" >"$WORK/s$k.models"
  cat "$WORK/s$k.models" >>"$WORK/taken"
done
[ "$(sort "$WORK/taken")" = "$ALL" ] ||
  fail "the shards' models are not the folder's, each once: $(sort "$WORK/taken" | uniq -c | tr '\n' ' ')"
[ "$(sort "$WORK/taken" | uniq -d)" = "" ] || fail "a model in two shards"
[ "$(objects)" = 13 ] || fail "the shards uploaded $(objects) objects, want 13"
pass "3 shards: $(wc -l <"$WORK/s1.models"), $(wc -l <"$WORK/s2.models") and $(wc -l <"$WORK/s3.models") models, disjoint, together all 13, all uploaded"

# 2. The text summary names the shard; a second run compiles nothing.
expect_status 0 "$NPUCC" cache populate "$M" --shard 2/3 --cache-dir "$WORK/s2"
n2=$(wc -l <"$WORK/s2.models")
contains "$WORK/out" "^shard 2/3 from --shard: $n2 of 13 models ($((13 - n2)) for the other shards)$"
contains "$WORK/out" "^populate: 0 compiled, $n2 already cached, 0 bypassed, 0 failed$"
pass "the summary names the shard and counts its models only"

# 3. The split does not depend on where the checkout is or how the folder is named: a
# copy elsewhere, given as a relative path, splits alike; so do the paths of a models file.
mkdir -p "$WORK/other"
cp -r "$M" "$WORK/other/m"
(cd "$WORK/other" && expect_status 0 "$NPUCC" cache populate m --shard 2/3 --json --cache-dir "$WORK/s2")
[ "$(json_get "$WORK/out" "'\n'.join(sorted(m['model'] for m in d['models']))" | sed 's|^m/||')" = \
  "$(cat "$WORK/s2.models")" ] || fail "a copy of the folder elsewhere split differently"
for model in $ALL; do
  printf '[[model]]\npath = "%s"\n' "$model"
done >"$M/models.toml"
(cd "$WORK/other" && expect_status 0 "$NPUCC" cache populate --models "$M/models.toml" --shard 2/3 \
  --json --cache-dir "$WORK/s2")
[ "$(models_of "$WORK/out")" = "$(cat "$WORK/s2.models")" ] || fail "--models split differently"
[ "$(json_get "$WORK/out" "d['cached']")" = "$n2" ] || fail "--models: not the folder's entries"
pass "the same split from a copy elsewhere and from a models file"

# 4. A training machine with an empty cache and the same remote: every model a remote hit.
"$NPUCC" -q cache init "$WORK/s4"
for model in $ALL; do
  out=${model%.onnx}
  expect_status 0 "$NPUCC" compile "$M/$model" -o "$WORK/out4/${out//\//_}" --cache-dir "$WORK/s4" \
    --remote-cache "$URL" --remote-read-only
  contains "$WORK/out" "cache: hit: from the remote cache"
done
[ "$(remote_stat "$WORK/s4" hits)" = 13 ] || fail "want 13 remote hits, have $(remote_stat "$WORK/s4" hits)"
[ "$(remote_stat "$WORK/s4" misses)" = 0 ] || fail "a remote miss on the fourth machine"
expect_status 0 "$NPUCC" cache populate "$M" --cache-dir "$WORK/s4"
contains "$WORK/out" "^populate: 0 compiled, 13 already cached, 0 bypassed, 0 failed$"
pass "a fourth machine hits all 13 models from the remote, compiling none"

# 5. --shard auto: the shard of each engine's variables, and the summary names them.
auto_is() { # auto_is K JSON_SOURCE VAR=VALUE...: --shard auto picks shard K/3 of $M
  local k=$1 source=$2
  shift 2
  clean_env "$@" "$NPUCC" cache populate "$M" --shard auto --json --cache-dir "$WORK/s$k" \
    >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "--shard auto with $*"; }
  [ "$(json_get "$WORK/out" "(d['shard']['number'], d['shard']['source'])")" = "($k, '$source')" ] ||
    fail "--shard auto with $*: $(json_get "$WORK/out" "d['shard']")"
  [ "$(models_of "$WORK/out")" = "$(cat "$WORK/s$k.models")" ] || fail "--shard auto with $*: other models"
}
auto_is 2 CI_NODE_INDEX/CI_NODE_TOTAL CI_NODE_INDEX=2 CI_NODE_TOTAL=3
auto_is 3 SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 \
  SLURM_ARRAY_TASK_MAX=12 SLURM_ARRAY_TASK_COUNT=3
auto_is 2 SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=0 \
  SLURM_ARRAY_TASK_STEP=4 SLURM_ARRAY_TASK_COUNT=3
auto_is 1 JOB_COMPLETION_INDEX/NPUCC_SHARD_COUNT JOB_COMPLETION_INDEX=0 NPUCC_SHARD_COUNT=3
auto_is 3 NPUCC_SHARD_INDEX/NPUCC_SHARD_COUNT GITHUB_ACTIONS=true NPUCC_SHARD_INDEX=3 NPUCC_SHARD_COUNT=3 \
  CI_NODE_INDEX=1 CI_NODE_TOTAL=2
clean_env CI_NODE_INDEX=1 CI_NODE_TOTAL=3 "$NPUCC" cache populate "$M" --shard auto --cache-dir "$WORK/s1" \
  >"$WORK/out" 2>&1 || fail "--shard auto, text"
contains "$WORK/out" "^shard 1/3 from CI_NODE_INDEX/CI_NODE_TOTAL: $(wc -l <"$WORK/s1.models") of 13 models"
pass "--shard auto: GitLab, Slurm (from SLURM_ARRAY_TASK_MIN, in steps), Kubernetes, NPUCC_SHARD_*"

# 6. Bad values: one line naming --shard or the variable, exit 2, nothing compiled.
entries_before=$("$NPUCC" cache ls --json --cache-dir "$WORK/s1" | json_get /dev/stdin "len(d['entries'])")
refused() { # refused MESSAGE ARGS...: populate ARGS is refused with MESSAGE
  local message=$1
  shift
  clean_env "$@" >"$WORK/out" 2>"$WORK/err"
  local status=$?
  [ "$status" = 2 ] || { cat "$WORK/out" "$WORK/err"; fail "$*: exit $status, want 2"; }
  [ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "$*: want one line on stderr"; }
  [ ! -s "$WORK/out" ] || fail "$*: printed on stdout"
  contains "$WORK/err" "^npucc: error: $message"
}
set +e
P=("$NPUCC" cache populate "$M" --cache-dir "$WORK/s1")
refused "--shard 0/4: K counts from 1, not 0 (give --shard K/N with K from 1 to N" "${P[@]}" --shard 0/4
refused "--shard 5/4: K is above N" "${P[@]}" --shard 5/4
refused "--shard 2/0: N must be at least 1" "${P[@]}" --shard 2/0
refused "--shard a/b: not K/N" "${P[@]}" --shard a/b
refused "--shard : not K/N" "${P[@]}" --shard ''
refused "--shard auto: no shard index in the environment" "${P[@]}" --shard auto
refused "--shard auto: .*NPUCC_SHARD_INDEX: \${{ matrix.shard }}" GITHUB_ACTIONS=true "${P[@]}" --shard auto
refused "--shard auto: CI_NODE_INDEX is set but CI_NODE_TOTAL is not" CI_NODE_INDEX=2 "${P[@]}" --shard auto
refused "--shard auto: CI_NODE_INDEX=4 is outside 1..3 (CI_NODE_TOTAL=3)" CI_NODE_INDEX=4 CI_NODE_TOTAL=3 \
  "${P[@]}" --shard auto
refused "--shard auto: CI_NODE_TOTAL=\"three\" is not a whole number" CI_NODE_INDEX=1 CI_NODE_TOTAL=three \
  "${P[@]}" --shard auto
refused "--shard auto: JOB_COMPLETION_INDEX is set but NPUCC_SHARD_COUNT is not" JOB_COMPLETION_INDEX=0 \
  "${P[@]}" --shard auto
refused "--shard auto: SLURM_ARRAY_TASK_ID=2 is not an ID of the array from SLURM_ARRAY_TASK_MIN=3" \
  SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_COUNT=3 "${P[@]}" --shard auto
refused "--shard auto: CI_NODE_INDEX (GitLab) and SLURM_ARRAY_TASK_ID (Slurm) are both set" \
  CI_NODE_INDEX=1 CI_NODE_TOTAL=3 SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
  "${P[@]}" --shard auto
set -e
[ "$("$NPUCC" cache ls --json --cache-dir "$WORK/s1" | json_get /dev/stdin "len(d['entries'])")" = "$entries_before" ] ||
  fail "a refused run changed the cache"
pass "bad --shard values and environments: one line each, exit 2, nothing compiled"
