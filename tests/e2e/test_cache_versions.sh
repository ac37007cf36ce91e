#!/usr/bin/env bash
# Two compiler versions sharing one cache. The second version is npucc_other_version: the
# same objects linked with another version string (9.9.9, tests/tools/other_version.cpp),
# built with the tests; ctest passes it as NPUCC_OTHER_VERSION.
source "$(dirname "$0")/cache_common.sh"
OTHER=${NPUCC_OTHER_VERSION:-$(dirname "$NPUCC")/tests/npucc_other_version}
[ -x "$OTHER" ] || fail "no second npucc at $OTHER: build the npucc_other_version target (or set NPUCC_OTHER_VERSION)"
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
