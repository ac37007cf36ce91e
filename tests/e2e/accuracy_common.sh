# Shared by the accuracy suites (test_accuracy.sh, test_accuracy_repair.sh): a scratch
# folder, failure counting, the manifest's accuracy object as `a`, and one-line errors.
# Sourced after `set -uo pipefail`; needs NPUCC, TESTDATA, SOURCE_DIR.
: "${NPUCC:?}" "${TESTDATA:?}" "${SOURCE_DIR:?}"
PY=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache-home"
# Where npucc writes the graphs it hands to ONNX Runtime (output/runtime_graph_file.h):
# no_graph_files_left checks that none outlives a compile.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# json FILE EXPR: a Python expression over the manifest's accuracy object `a` (and `m`).
json() {
  "$PY" -c "import json,sys; m=json.load(open(sys.argv[1])); a=m.get('accuracy', {}); assert $2, $2" "$1" \
    2>/dev/null
}

# expect_error NAME STATUS TEXT ARGS...: exit STATUS, one line on stderr holding TEXT, no
# output folder.
expect_error() {
  local name=$1 status_wanted=$2 text=$3
  shift 3
  local out="$work/err-$name" status=0
  "$NPUCC" compile -o "$out" "$@" >"$out.stdout" 2>"$out.stderr" || status=$?
  if [ "$status" != "$status_wanted" ]; then
    fail "$name: exit status $status, expected $status_wanted ($(cat "$out.stderr"))"
  elif ! grep -qF -- "$text" "$out.stderr"; then
    fail "$name: message lacks '$text': $(cat "$out.stderr")"
  elif [ "$(wc -l <"$out.stderr")" != 1 ]; then
    fail "$name: $(wc -l <"$out.stderr") lines on stderr: $(cat "$out.stderr")"
  elif [ -e "$out" ]; then
    fail "$name: output folder left behind"
  fi
}

# no_graph_files_left WHEN: fails when a graph written for ONNX Runtime is still in $TMPDIR.
no_graph_files_left() {
  local left
  left=$(ls "$TMPDIR" | grep -E '^npucc-(graph|inputs)' | head -3)
  [ -z "$left" ] || fail "$1: graph files left in \$TMPDIR: $left"
}

# with_accuracy_models: ORACLE, the accuracy oracle (tests/oracle; failing when it is not
# installed), and the models of tests/tools/make_accuracy_models.py in $m.
with_accuracy_models() {
  ORACLE="$SOURCE_DIR/tests/oracle/accuracy_check.js"
  [ -d "$SOURCE_DIR/tests/oracle/node_modules/onnxruntime-node" ] ||
    fail "tests/oracle/node_modules is missing: run scripts/install-deps"
  m="$work/m"
  "$PY" "$SOURCE_DIR/tests/tools/make_accuracy_models.py" "$m" || { echo "FAIL: generator"; exit 1; }
}
