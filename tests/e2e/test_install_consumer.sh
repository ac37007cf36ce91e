#!/usr/bin/env bash
# `cmake --install` puts the binary, man pages, headers, library and CMake package in
# a prefix; a separate project then builds against find_package(npucc) and runs.
set -euo pipefail
build_dir=$(dirname "$NPUCC")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/npucc"
test -f "$work/prefix/share/man/man1/npucc.1"
test -f "$work/prefix/include/npucc/version.h"
cmake -S "$SOURCE_DIR/tests/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer" "$TESTDATA/models/oww_hello_deepa.onnx" | tee "$work/out.txt"
grep -q "nodes" "$work/out.txt"
"$work/prefix/bin/npucc" --version
