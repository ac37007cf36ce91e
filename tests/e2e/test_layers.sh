#!/usr/bin/env bash
# The layering of src/ and cli/ (tests/tools/check_layers.py): no cycle between folders,
# the storage layer (src/cache) includes only model/, util/ and itself, and the runtime floor
# (src/runtime) only util/ and itself, a public header counts as the folder it stands on
# (npucc/cache.h: pipeline), the public types include only model/ and util/, the cached
# compile (src/pipeline) nothing of precision/, the key (src/key) only its floors, never
# included by src/compiler or src/output, and the writers (src/output) only api, model/,
# runtime/ and util/. Runs the check
# on this tree, then on small planted trees to show it fails, naming the include, on each
# kind of break (and passes a clean one).
set -u
: "${SOURCE_DIR:?SOURCE_DIR must point at the source tree}"
PY=/usr/bin/python3
check="$SOURCE_DIR/tests/tools/check_layers.py"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
fail() { failed+=("$*") && echo "FAIL: $*"; }

# plant TREE FILE INCLUDE...: writes TREE/FILE with one #include "INCLUDE" line each.
plant() {
  local tree=$1 file=$2
  shift 2
  mkdir -p "$(dirname "$work/$tree/$file")"
  for include in "$@"; do
    echo "#include \"$include\""
  done >>"$work/$tree/$file"
}

# expect_failure TREE TEXT...: the check fails on TREE and its message holds every TEXT.
expect_failure() {
  local tree=$1
  shift
  "$PY" "$check" "$work/$tree" >"$work/out" 2>"$work/err"
  local status=$?
  if [ "$status" -ne 1 ]; then
    fail "$tree: exit status $status, expected 1 ($(cat "$work/err"))"
    return
  fi
  for text in "$@"; do
    if ! grep -qF -- "$text" "$work/err"; then
      fail "$tree: message lacks '$text': $(cat "$work/err")"
    fi
  done
}

# This tree.
if ! "$PY" "$check" "$SOURCE_DIR" >"$work/out" 2>"$work/err"; then
  fail "the source tree breaks its layering:"
  cat "$work/err"
fi

# A clean planted tree passes: layers downward only, public headers from anywhere.
plant clean src/pipeline/run.cpp "cache/store.h" "compiler/compile.h" "npucc/cache.h"
plant clean src/compiler/compile.cpp "check/validate.h" "model/read.h"
plant clean src/cache/store.cpp "cache/store.h" "model/read.h" "util/files.h" "npucc/error.h"
plant clean src/cache/remote/tier.cpp "cache/store.h" "util/files.h"
plant clean cli/main.cpp "app.h" "pipeline/run.h"
if ! "$PY" "$check" "$work/clean" >"$work/out" 2>"$work/err"; then
  fail "a clean tree fails: $(cat "$work/err")"
fi

# A cycle of two folders names both includes.
plant two src/compiler/compiler.cpp "precision/rewrite.h"
plant two src/precision/rewrite.cpp "compiler/validate.h"
expect_failure two "compiler -> precision -> compiler" \
  'src/compiler/compiler.cpp:1 includes "precision/rewrite.h"' \
  'src/precision/rewrite.cpp:1 includes "compiler/validate.h"'

# A longer cycle, through a subfolder, found from any of its folders.
plant three src/config/value.cpp "cache/remote/transport.h"
plant three src/cache/remote/bundle.cpp "cache/entry.h"
plant three src/cache/settings.cpp "util/strings.h" "config/value.h"
expect_failure three "cache -> config -> cache/remote -> cache" \
  'src/cache/settings.cpp:2 includes "config/value.h"'

# A folder and its own subfolder, each including the other.
plant sub src/cache/run.cpp "cache/remote/tier.h"
plant sub src/cache/remote/tier.cpp "cache/local.h"
expect_failure sub "cache -> cache/remote -> cache"

# The storage layer including a folder above it, with no cycle.
plant upward src/cache/compile_cached.cpp "model/read.h" "compiler/prepared_compile.h"
plant upward src/cache/remote/tier.cpp "precision/counts.h"
expect_failure upward \
  'src/cache/compile_cached.cpp:2: #include "compiler/prepared_compile.h"' \
  'src/cache/remote/tier.cpp:1: #include "precision/counts.h"'
if grep -q "cycle" "$work/err"; then
  fail "upward: an upward include reported as a cycle: $(cat "$work/err")"
fi

# The runtime floor including anything but util/ and itself.
plant floor src/runtime/ort.cpp "runtime/tensor.h" "util/strings.h" "npucc/error.h"
plant floor src/runtime/process.cpp "precision/emulation.h"
plant floor src/accuracy/check.cpp "runtime/runtime.h" "precision/emulation.h"
expect_failure floor 'src/runtime/process.cpp:1: #include "precision/emulation.h": the runtime floor'
if grep -q "ort.cpp\|accuracy/check.cpp" "$work/err"; then
  fail "floor: an allowed include reported: $(cat "$work/err")"
fi

# The cached compile reaching into the precision rewrite (its counts come through compiler/).
plant pipeline src/pipeline/cache_key.cpp "compiler/overflow_counts.h" "precision/overflow_prescan.h"
expect_failure pipeline \
  'src/pipeline/cache_key.cpp:2: #include "precision/overflow_prescan.h": the cached compile'
if grep -q "cache_key.cpp:1:" "$work/err"; then
  fail "pipeline: an allowed include reported: $(cat "$work/err")"
fi

# The key reaching above its floors (the cached compile, the option table), and the
# compile including the key; the key's own floors are allowed.
plant key src/key/key_of.cpp "cache/input_digests.h" "precision/low_graph_opset.h" \
  "pipeline/cache_lookup.h" "config/option_table.h"
plant key src/compiler/graph_writing.cpp "output/manifest.h" "key/key_options.h"
plant key src/output/manifest.cpp "npucc/cache_key.h" "key/cache_key.h"
expect_failure key \
  'src/key/key_of.cpp:3: #include "pipeline/cache_lookup.h": the key (src/key)' \
  'src/key/key_of.cpp:4: #include "config/option_table.h": the key' \
  'src/compiler/graph_writing.cpp:2: #include "key/key_options.h": src/compiler never includes the key' \
  'src/output/manifest.cpp:2: #include "key/cache_key.h": src/output never includes the key'
if grep -q "key_of.cpp:[12]:\|graph_writing.cpp:1:\|manifest.cpp:1:" "$work/err"; then
  fail "key: an allowed include reported: $(cat "$work/err")"
fi

# The writers reaching into the compile or the accuracy search; their floors are allowed.
plant output src/output/graph_writer.cpp "model/graph_walk.h" "npucc/compile.h" \
  "runtime/runtime.h" "compiler/prepared_compile.h" "accuracy/repair.h"
expect_failure output \
  'src/output/graph_writer.cpp:4: #include "compiler/prepared_compile.h": the writers (src/output)' \
  'src/output/graph_writer.cpp:5: #include "accuracy/repair.h": the writers'
if grep -q "graph_writer.cpp:[123]:" "$work/err"; then
  fail "output: an allowed include reported: $(cat "$work/err")"
fi

# Public headers are not exempt: one stands on a folder (npucc/cache.h is the cached
# compile, above storage), the storage layer may take only its own (npucc/cache_config.h).
plant public src/cache/store.cpp "npucc/cache_config.h" "npucc/model.h" "npucc/cache.h"
plant public src/cache/remote/tier.cpp "npucc/compile.h"
expect_failure public \
  'src/cache/store.cpp:3: #include "npucc/cache.h": the storage layer' \
  'not pipeline/' \
  'src/cache/remote/tier.cpp:1: #include "npucc/compile.h": the storage layer'
if grep -q "store.cpp:[12]:" "$work/err"; then
  fail "public: an allowed public header reported: $(cat "$work/err")"
fi

# A public type reaching up, and a public header's own includes checked as its floor's.
plant types include/npucc/compile.h "npucc/model.h" "npucc/config.h"
plant types include/npucc/cache_config.h "npucc/cache.h"
mkdir -p "$work/types/src"
expect_failure types \
  'include/npucc/compile.h:2: #include "npucc/config.h": the public types' \
  'include/npucc/cache_config.h:1: #include "npucc/cache.h": the storage layer'

# The storage layer reaching protobuf through an allowed folder's header.
plant heavy src/cache/index.cpp "model/read.h"
plant heavy src/model/read.h "model/proto.h"
echo "#include <onnx/onnx_pb.h>" >"$work/heavy/src/model/proto.h"
plant heavy src/cache/store.cpp "model/graph_files.h"
expect_failure heavy \
  "src/cache/index.cpp reaches <onnx/onnx_pb.h> through model/read.h -> model/proto.h"
if grep -q "store.cpp" "$work/err"; then
  fail "heavy: a light model/ header reported: $(cat "$work/err")"
fi

# A new public header without a floor is refused, naming the table to add it to.
plant unknown src/compiler/run.cpp "npucc/new_api.h"
expect_failure unknown "include/npucc/new_api.h: a public header without a floor" "PUBLIC_FLOORS"

# Not a source tree.
mkdir -p "$work/empty"
"$PY" "$check" "$work/empty" >"$work/out" 2>"$work/err"
status=$?
if [ "$status" -ne 2 ] || ! grep -q "has no src/ folder" "$work/err"; then
  fail "a folder without src/: status $status, $(cat "$work/err")"
fi

if [ "${#failed[@]}" -ne 0 ]; then
  echo "${#failed[@]} failure(s)"
  exit 1
fi
echo "layers: ok"
