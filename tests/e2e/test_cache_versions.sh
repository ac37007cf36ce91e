#!/usr/bin/env bash
# Two compiler versions sharing one cache. Builds a second npucc with
# -DNPUCC_VERSION_OVERRIDE=9.9.9 (only the npucc target, sharing ccache across build
# folders), or uses $NPUCC_OTHER_VERSION when set. Slow on a cold ccache: ctest label "slow"
# (ctest -LE slow skips it).
# cache_common.sh points HOME at a scratch folder: keep the real ccache.
export CCACHE_DIR="${CCACHE_DIR:-$(ccache -k cache_dir 2>/dev/null || echo "$HOME/.cache/ccache")}"
source "$(dirname "$0")/cache_common.sh"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
OTHER=${NPUCC_OTHER_VERSION:-}
if [ -z "$OTHER" ]; then
  # A sibling of the main build folder, configured alike, so that with paths made
  # relative (CCACHE_BASEDIR) every file not including version.h is a ccache hit.
  MAIN=$(cd "$(dirname "$NPUCC")" && pwd)
  B="${NPUCC_VERSION_BUILD_DIR:-$MAIN-version-test}"
  setting() { sed -n "s/^$1:[A-Z]*=//p" "$MAIN/CMakeCache.txt" 2>/dev/null; }
  export CCACHE_BASEDIR="$(dirname "$MAIN")" CCACHE_NOHASHDIR=1
  cmake -S "$SOURCE_DIR" -B "$B" -G Ninja -DNPUCC_VERSION_OVERRIDE=9.9.9 -DBUILD_TESTING=OFF \
    -DCMAKE_BUILD_TYPE="$(setting CMAKE_BUILD_TYPE)" -DNPUCC_WERROR="$(setting NPUCC_WERROR)" \
    >"$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; fail "configure"; }
  cmake --build "$B" --target npucc >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "build"; }
  OTHER="$B/npucc"
fi
"$OTHER" --version | grep -q 9.9.9 || fail "the second binary does not report 9.9.9"
V=$("$NPUCC" --version | awk '{print $2}')
[ "$V" != 9.9.9 ] || fail "the binary under test is already 9.9.9"

C="$WORK/cache"; "$NPUCC" cache init "$C" >/dev/null
M1="$TESTDATA/models/ppocr_cls.onnx"; M2="$TESTDATA/models/oww_hello_deepa.onnx"
"$NPUCC" -q compile "$M1" -o "$WORK/a1" --cache-dir "$C"
"$NPUCC" -q compile "$M2" -o "$WORK/a2" --cache-dir "$C"
# The other version misses the first one's entries and stores its own.
expect_status 0 "$OTHER" compile "$M1" -o "$WORK/b1" --cache-dir "$C"
contains "$WORK/out" "cache: miss: new key"
expect_status 0 "$OTHER" compile "$M1" -o "$WORK/b2" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
expect_status 0 "$NPUCC" compile "$M1" -o "$WORK/a3" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
pass "each version hits only its own entries"

expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "sorted((e['compiler_version'], e['state']) for e in d['entries'])")" = \
  "[('$V', 'ok'), ('$V', 'ok'), ('9.9.9', 'other-version')]" ] || fail "ls states"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C"
contains "$WORK/out" "1 entry belongs to other compiler versions"
contains "$WORK/out" "npucc cache invalidate"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --version 9.9.9 --json
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 1 ] || fail "ls --version"
expect_status 0 "$NPUCC" cache populate "$M1" --cache-dir "$C"
contains "$WORK/out" "1 entry belongs to other compiler versions"
# verify: another compiler version is not a problem.
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "ls shows the other version's entry as other-version; populate reports it"

# invalidate removes exactly those.
expect_status 0 "$NPUCC" cache invalidate --cache-dir "$C" --dry-run --json
[ "$(json_get "$WORK/out" "[r['compiler_version'] for r in d['removed']]")" = "['9.9.9']" ] || fail "dry run"
expect_status 0 "$NPUCC" cache invalidate --cache-dir "$C"
contains "$WORK/out" "removed 1 entry"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "sorted(e['compiler_version'] for e in d['entries'])")" = "['$V', '$V']" ] || fail "invalidate removed the wrong entries"
# From the other side, --version names one version; populate --invalidate sweeps first.
expect_status 0 "$OTHER" cache populate "$M1" "$M2" --cache-dir "$C"
expect_status 0 "$NPUCC" cache invalidate --version 9.9.9 --model oww_hello_deepa --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "len(d['removed'])")" = 1 ] || fail "invalidate --version --model"
expect_status 0 "$NPUCC" cache populate --invalidate "$M1" --cache-dir "$C"
contains "$WORK/out" "invalidated 1 entries"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "sorted(set(e['compiler_version'] for e in d['entries']))")" = "['$V']" ] || fail "populate --invalidate"
pass "invalidate removes exactly the other version's entries"
