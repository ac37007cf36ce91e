# Sourced by tests/e2e/test_cache_*.sh: assertions and a fresh work folder.
set -euo pipefail
: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/npucc-e2e-cache.XXXXXX")
source "$(dirname "${BASH_SOURCE[0]}")/skip_common.sh"
trap 'status=$?; if [ $status -eq 0 ] || [ $status -eq 77 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi' EXIT
export HOME="$WORK/home" XDG_CACHE_HOME="$WORK/xdg"
unset NPUCC_CACHE_DIR NPUCC_CACHE_MAX_SIZE NPUCC_CACHE_LINK_MODE NPUCC_DIGEST_CACHE
mkdir -p "$HOME"
PY=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
# expect_status N command...: runs the command and checks its exit status.
expect_status() {
  local want=$1; shift
  set +e; "$@" >"$WORK/out" 2>"$WORK/err"; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$* exited $got, want $want"; }
}
# explained ARGS...: `npucc cache explain ARGS` where the verdict is not the point: exit 0
# (a hit) or 3 (no hit), output in $WORK/out.
explained() {
  set +e; "$NPUCC" cache explain "$@" >"$WORK/out" 2>"$WORK/err"; local got=$?; set -e
  [ "$got" = 0 ] || [ "$got" = 3 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "cache explain $* exited $got"; }
}
contains() { grep -q -- "$2" "$1" || { cat "$1" >&2; fail "$1 lacks: $2"; }; }
json_get() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# valid_json FORMAT FILE: FILE is a valid FORMAT document (tests/schemas/FORMAT.schema.json).
valid_json() {
  $PY "$(dirname "${BASH_SOURCE[0]}")/../tools/validate_json.py" "$1" "$2" ||
    { cat "$2" >&2; fail "$2: not a valid $1 document"; }
}
now_ms() { date +%s%3N; }
# cpu_ms command...: runs it (output discarded) and prints its user+system CPU time in ms.
cpu_ms() {
  local TIMEFORMAT='%3U %3S'
  { time "$@" >/dev/null 2>&1; } 2>"$WORK/time"
  awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$WORK/time"
}
