#!/usr/bin/env bash
# `cache populate -j N` compiles in worker processes: the same entries as -j 1, one line
# per failed model, a worker killed mid-compile is one failed model (never a hang), and
# the workers die with populate.
source "$(dirname "$0")/cache_common.sh"
M="$WORK/models"; mkdir -p "$M/sub"
cp "$TESTDATA/models/ppocr_cls.onnx" "$TESTDATA/models/oww_hello_deepa.onnx" \
   "$TESTDATA/models/torch/lstm_tagger.onnx" "$TESTDATA/models/torch/transformer_encoder.onnx" "$M/"
cp "$TESTDATA/models/silero_vad_legacy.onnx" "$TESTDATA/models/torch/resnet_small.onnx" "$M/sub/"
NMODELS=6

# The files of every entry, one "path sha256" line each; entry.npucc without its
# creation time and the checksum over it, the only bytes two runs may not share.
entry_digest() {
  (cd "$1/entries" && find . -type f | sort | while read -r f; do
    if [ "$(basename "$f")" = entry.npucc ]; then
      echo "$f $(grep -v '^created \|^end ' "$f" | sha256sum | cut -d' ' -f1)"
    else
      echo "$f $(sha256sum <"$f" | cut -d' ' -f1)"
    fi
  done)
}
# descendants PID: every process below PID.
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do echo "$child"; descendants "$child"; done  # honest: pgrep exits 1 when a process has no child: an empty list
}
# only_npucc_lines FILE: every stderr line is npucc's own (no crash report, no trace).
only_npucc_lines() {
  if grep -v '^npucc: ' "$1" | grep -q .; then cat "$1" >&2; fail "$1 has lines not from npucc"; fi
}

# -j 2 and -j 1 fill two caches with byte-identical entries.
for j in 1 2; do
  "$NPUCC" cache init "$WORK/c$j" >/dev/null
  expect_status 0 timeout 600 "$NPUCC" cache populate -j "$j" "$M" --cache-dir "$WORK/c$j"
  contains "$WORK/out" "populate: $NMODELS compiled, 0 already cached, 0 bypassed, 0 failed"
  [ ! -s "$WORK/err" ] || { cat "$WORK/err" >&2; fail "-j $j printed on stderr"; }
  # Off a terminal, a line per model (issue 31): a long populate is not silent in a CI log.
  [ "$(grep -c "^\[[1-$NMODELS]/$NMODELS\] compiled $M/" "$WORK/out")" = "$NMODELS" ] ||
    { cat "$WORK/out" >&2; fail "-j $j: not one line per model"; }
  entry_digest "$WORK/c$j" >"$WORK/digest$j"
done
[ "$(grep -c entry.npucc "$WORK/digest1")" = "$NMODELS" ] || fail "want $NMODELS entries"
diff "$WORK/digest1" "$WORK/digest2" || fail "-j 2 stored other bytes than -j 1"
expect_status 0 "$NPUCC" cache stats --cache-dir "$WORK/c2" --json
[ "$(json_get "$WORK/out" "(d['misses'], d['stores'])")" = "($NMODELS, $NMODELS)" ] ||
  fail "stats of -j 2: $(cat "$WORK/out")"
expect_status 0 "$NPUCC" cache populate -j 2 "$M" --cache-dir "$WORK/c2" --json
[ "$(json_get "$WORK/out" "(d['compiled'], d['cached'], d['failed'])")" = "(0, $NMODELS, 0)" ] ||
  fail "second -j 2 populate"
cp "$WORK/out" "$WORK/second.json"
# A CI re-run is hits in the statistics (issue 31): one per model already cached.
expect_status 0 "$NPUCC" cache stats --cache-dir "$WORK/c2" --json
[ "$(json_get "$WORK/out" "(d['hits'], d['misses'])")" = "($NMODELS, $NMODELS)" ] ||
  fail "stats after a re-run: $(cat "$WORK/out")"
cp "$WORK/second.json" "$WORK/out"
[ "$(json_get "$WORK/out" "[m['model'] for m in d['models']]")" = \
  "$(json_get "$WORK/out" "sorted(m['model'] for m in d['models'])")" ] || fail "JSON items not in input order"
expect_status 0 "$NPUCC" cache verify --cache-dir "$WORK/c2"
pass "-j 2 and -j 1 store byte-identical entries; stats count each model once; a rerun compiles nothing"

# Failing models: one line each naming the model, the others go in, exit status 1.
# crash.onnx makes ONNX's shape inference crash (in its isolated child): still one line.
F="$WORK/failing"; mkdir -p "$F"
cp "$M"/*.onnx "$F/"
echo "not a model" >"$F/broken.onnx"
$PY - "$F/crash.onnx" <<'EOF'
import sys
from onnx import helper, TensorProto
# ConvTranspose with a rank-1 weight: ONNX 1.12's inference reads past its shape.
node = helper.make_node("ConvTranspose", ["x", "w"], ["y"])
graph = helper.make_graph([node], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
     helper.make_tensor_value_info("w", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])])
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
open(sys.argv[1], "wb").write(m.SerializeToString())
EOF
"$NPUCC" cache init "$WORK/cf" >/dev/null
expect_status 1 timeout 600 "$NPUCC" cache populate -j 2 "$F" --cache-dir "$WORK/cf"
contains "$WORK/out" "populate: 4 compiled, 0 already cached, 0 bypassed, 2 failed"
only_npucc_lines "$WORK/err"
[ "$(grep -c '^npucc: error: ' "$WORK/err")" = 2 ] || { cat "$WORK/err" >&2; fail "want two error lines"; }
contains "$WORK/err" "broken.onnx"
contains "$WORK/err" "crash.onnx: shape inference: ONNX crashed on this model (signal"
cp "$WORK/err" "$WORK/err-j2"
"$NPUCC" cache init "$WORK/cf1" >/dev/null
expect_status 1 timeout 600 "$NPUCC" cache populate -j 1 "$F" --cache-dir "$WORK/cf1"
diff <(sort "$WORK/err") <(sort "$WORK/err-j2" | sed "s|$WORK/cf|$WORK/cf1|g") ||
  fail "-j 2 reports failures unlike -j 1"
pass "failing models: one line each under -j 2 as under -j 1, the others stored, exit 1"

# stopped_populate NAME ARGS...: starts `cache populate ARGS` in the background, stopped
# in the first worker to reach a pass (util/test_point.h), and waits until it has stopped
# there: sets pid (populate's) and stopped (the stopped process's).
stopped_populate() {
  local note="$WORK/$1.stopped"; shift
  rm -f "$note"
  NPUCC_TEST_STOP_AT='pass:*' NPUCC_TEST_STOP_NOTE="$note" \
    "$NPUCC" cache populate "$@" >"$WORK/kout" 2>"$WORK/kerr" &
  pid=$!
  until [ "$(wc -l 2>/dev/null <"$note")" = 1 ] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
  stopped=$(awk '{ print $2 }' "$note" 2>/dev/null || true)  # honest: the note may not be written yet: polled until it is
  [ -n "$stopped" ] || { cat "$WORK/kerr" >&2; fail "populate ended without stopping at a pass"; }
  [ "$(ps -o ppid= -p "$stopped" | tr -d ' ')" = "$pid" ] || fail "the stopped process $stopped is not a worker of populate $pid"
}

# A worker killed mid-compile: its model fails in one line, the rest go in, no hang.
"$NPUCC" cache init "$WORK/ck" >/dev/null
stopped_populate ck -j 2 "$M" --cache-dir "$WORK/ck"
kill -9 "$stopped"
set +e; wait "$pid"; status=$?; set -e
[ "$status" = 1 ] || { cat "$WORK/kout" "$WORK/kerr" >&2; fail "populate with a killed worker exited $status, want 1"; }
only_npucc_lines "$WORK/kerr"
grep -q "^npucc: error: $M/.*\.onnx: the compile worker was killed by signal 9 (Killed) while compiling it" "$WORK/kerr" ||
  { cat "$WORK/kerr" >&2; fail "no one-line error for the killed worker"; }
[ "$(grep -c '^npucc: error: ' "$WORK/kerr")" = 1 ] || { cat "$WORK/kerr" >&2; fail "want one failed model"; }
contains "$WORK/kout" "$((NMODELS - 1)) compiled, 0 already cached, 0 bypassed, 1 failed"
expect_status 0 timeout 600 "$NPUCC" cache populate -j 2 "$M" --cache-dir "$WORK/ck"
contains "$WORK/out" "populate: 1 compiled, $((NMODELS - 1)) already cached, 0 bypassed, 0 failed"
expect_status 0 "$NPUCC" cache verify --cache-dir "$WORK/ck"
pass "a worker killed by signal 9 mid-compile: its model failed in one line, the rest stored, then filled"

# The workers (and their isolated ONNX children) die with populate: SIGTERM, SIGKILL.
# (Ctrl-C signals the whole foreground process group, workers included.) Populate is
# signalled while one of its workers is stopped in a compile: it cannot have finished.
for sig in TERM KILL; do
  "$NPUCC" cache init "$WORK/cs$sig" >/dev/null
  stopped_populate "cs$sig" -j 2 "$M" --cache-dir "$WORK/cs$sig"
  below=$(descendants "$pid")
  echo "$below" | grep -qx "$stopped" || fail "SIG$sig: the stopped worker is not below populate"
  kill -"$sig" "$pid"
  set +e; wait "$pid"; status=$?; set -e
  [ "$status" = $((128 + $(kill -l "$sig"))) ] || { cat "$WORK/kerr" >&2; fail "SIG$sig: populate exited $status"; }
  # SIGKILL leaves the workers to their parent-death signal: wait until they are gone.
  for _ in $(seq 1 500); do
    alive=""
    # A zombie is dead: reaping it is the job of whoever adopted it.
    for p in $below; do
      state=$(ps -o stat= -p "$p" 2>/dev/null || true)  # honest: a process already gone prints nothing: that is the state read
      if [ -n "$state" ] && [ "${state#Z}" = "$state" ]; then alive="$alive $p"; fi
    done
    [ -z "$alive" ] && break
    sleep 0.02
  done
  [ -z "$alive" ] || { ps -o pid,ppid,stat,args -p ${alive// /,} >&2 || true; fail "SIG$sig: processes left:$alive"; }  # honest: diagnostics before the fail on the same line
done
pass "SIGTERM and SIGKILL of populate stop its workers"
