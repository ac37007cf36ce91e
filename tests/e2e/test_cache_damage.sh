#!/usr/bin/env bash
# Damaged entries, planted symlinks and ".." names, and a full disk.
source "$(dirname "$0")/cache_common.sh"
C="$WORK/cache"
M="$TESTDATA/models/ppocr_cls.onnx"
"$NPUCC" cache init "$C" >/dev/null
"$NPUCC" -q compile "$M" -o "$WORK/o" --cache-dir "$C" --link-mode hardlink
key=$(json_get "$WORK/o/manifest.json" "d['cache_key']")
E="$C/entries/${key:0:2}/$key"
[ -f "$E/entry.npucc" ] || fail "entry not at $E"
# With --link-mode hardlink the miss linked its outputs into the entry (one write): same inode.
[ "$(stat -c %i "$WORK/o/high.onnx")" = "$(stat -c %i "$E/high.onnx")" ] || fail "output not linked into the entry"
[ "$(stat -c %a "$WORK/o/high.onnx")" = 444 ] || fail "linked output is not read-only"
# Damage in place reaches every link of the inode: keep a reference copy to compare with.
cp "$WORK/o/high.onnx" "$WORK/reference.onnx"

damage() {
  local how=$1 file=$2
  chmod u+w "$E/$file"
  case $how in
    flip) $PY -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xff; open(p,'wb').write(b)" "$E/$file" ;;
    truncate) truncate -s 100 "$E/$file" ;;
    delete) rm -f "$E/$file" ;;
  esac
}
for case in "flip high.onnx corrupt" "truncate high.onnx truncated" "delete high.onnx incomplete" \
            "flip manifest.json corrupt" "flip entry.npucc corrupt" "delete entry.npucc incomplete"; do
  set -- $case
  damage "$1" "$2"
  expect_status 3 "$NPUCC" cache verify --cache-dir "$C" --json
  valid_json npucc-cache-verify "$WORK/out"
  [ "$(json_get "$WORK/out" "[f['kind'] for f in d['findings']]")" = "['$3']" ] || fail "$1 $2: want $3"
  expect_status 0 "$NPUCC" compile "$M" -o "$WORK/r" --cache-dir "$C"
  contains "$WORK/out" "cache: miss: .* entry replaced"
  cmp "$WORK/r/high.onnx" "$WORK/reference.onnx" || fail "$1 $2: repaired output differs"
  expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
  rm -rf "$WORK/r"
  pass "$1 $2: verify reports $3, compile treats it as a miss and repairs it"
done

# verify --fix removes what it finds (and --dry-run does not).
damage truncate high.onnx
expect_status 3 "$NPUCC" cache verify --fix --dry-run --cache-dir "$C"
[ -d "$E" ] || fail "--dry-run removed the entry"
# Nothing is left broken, so --fix succeeds (CI runs it to repair a cache).
expect_status 0 "$NPUCC" cache verify --fix --cache-dir "$C"
contains "$WORK/out" "removed"
[ ! -e "$E" ] || fail "--fix left the entry"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "verify --fix removes broken entries and exits 0, --dry-run only reports (exit 3)"

# A foreign format version is reported.
"$NPUCC" -q compile "$M" -o "$WORK/r2" --cache-dir "$C"
chmod u+w "$E/entry.npucc"; printf 'npucc-cache-entry 99\nfuture\n' > "$E/entry.npucc"
expect_status 3 "$NPUCC" cache verify --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "[f['kind'] for f in d['findings']]")" = "['foreign-version']" ] || fail "foreign"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C"
contains "$WORK/out" "foreign"
expect_status 0 "$NPUCC" -q cache verify --fix --cache-dir "$C"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "another cache format is reported as foreign-version"

# Planted symlinks and ".." names: nothing outside is read, written or deleted.
OUT="$WORK/outside"; mkdir -p "$OUT/dir"; echo secret > "$OUT/secret"; echo keep > "$OUT/dir/keep"
echo old > "$OUT/dir/bait.tmp.1.2"; touch -d '3 hours ago' "$OUT/dir/bait.tmp.1.2" "$OUT/dir"
before=$(cd "$OUT" && find . -printf '%p %s %m\n' | sort | sha256sum)
"$NPUCC" -q compile "$M" -o "$WORK/s1" --cache-dir "$C"
ln -s "$OUT/dir" "$C/entries/zz"
mkdir -p "$C/entries/ab"; ln -s "$OUT/dir" "$C/entries/ab/ab$(printf '0%.0s' $(seq 62))"
ln -s "$OUT/secret" "$E/planted"
ln -s "$OUT" "$C/stray-link"
ln -s "$OUT/dir" "$C/models/ef"
ln -s "$OUT/dir" "$C/tmp/old-staging"; touch -h -d '3 hours ago' "$C/tmp/old-staging"
# An entry whose header (with a valid checksum) names a file outside the entry.
F="$C/entries/cd/cd$(printf '1%.0s' $(seq 62))"; mkdir -p "$F"
$PY - "$F/entry.npucc" "${F##*/}" <<'PYEOF'
import hashlib, sys
body = ("npucc-cache-entry 1\ncompiler 0.1.0\ncreated 1\nkey %s\nmodel m\nvariants x\noptions {}\n"
        "files 1\nfile %s 7 ../../../../outside/secret\n") % (sys.argv[2], hashlib.sha256(b"secret\n").hexdigest())
open(sys.argv[1], "w").write(body + "end " + hashlib.sha256(body.encode()).hexdigest() + "\n")
PYEOF
expect_status 3 "$NPUCC" cache verify --cache-dir "$C" --json
valid_json npucc-cache-verify "$WORK/out"
[ "$(json_get "$WORK/out" "len(d['findings'])")" = 6 ] || { cat "$WORK/out"; fail "want 6 findings"; }
contains "$WORK/out" "unsafe"
# An entry holding a name its header does not list is not used (issue 42): replaced, the
# planted link removed as a link.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/s2" --cache-dir "$C"
contains "$WORK/out" "cache: miss: corrupt entry replaced (it holds planted, which its header does not list)"
[ ! -L "$E/planted" ] || fail "the planted link is still in the entry"
[ -f "$OUT/secret" ] || fail "the planted link's target was removed"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/s2" --cache-dir "$C" --force
contains "$WORK/out" "cache: hit"
[ ! -L "$WORK/s2/planted" ] && [ ! -e "$WORK/s2/planted" ] || fail "a planted link was materialised"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C"
expect_status 0 "$NPUCC" cache purge --all --cache-dir "$C"
# A name the layout does not define is reported and left alone (it may be the user's):
# --fix exits 3 while it is there.
expect_status 3 "$NPUCC" cache verify --fix --cache-dir "$C"
contains "$WORK/out" "stray-link: is a symlink, not expected in the cache folder  \[left alone"
expect_status 3 "$NPUCC" cache verify --cache-dir "$C"
contains "$WORK/out" "stray-link: is a symlink, not expected in the cache folder  \[left alone"
[ "$(grep -c . "$WORK/out")" = 2 ] || { cat "$WORK/out"; fail "want only the foreign link left"; }
rm "$C/stray-link"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
# A layout folder replaced by a link to the outside is refused, not written through.
rm -rf "$C/tmp"; ln -s "$OUT/dir" "$C/tmp"
expect_status 1 "$NPUCC" compile "$M" -o "$WORK/s3" --cache-dir "$C"
contains "$WORK/err" "symlink"
after=$(cd "$OUT" && find . -printf '%p %s %m\n' | sort | sha256sum)
[ "$before" = "$after" ] || fail "something outside the cache changed"
rm "$C/tmp"
pass "planted symlinks and .. names: reported, removed as links, nothing outside touched"

# A full disk: a clear error and no partial entry. A real one, through the command line, where
# a tmpfs can be mounted; tests/unit/test_util_disk.cpp proves the same with a fake disk everywhere.
SMALL="$WORK/small"; mkdir -p "$SMALL"
if mount -t tmpfs -o size=2m tmpfs "$SMALL" 2>/dev/null; then
  trap 'umount "$SMALL" 2>/dev/null || true; status=$?; rm -rf "$WORK"' EXIT  # honest: cleanup at exit, after the checks
  BIG="$TESTDATA/models/ppocrv4_det.onnx" # 4.7 MB: its compiled graph cannot fit 2 MB
  "$NPUCC" cache init "$SMALL/cache" >/dev/null
  expect_status 0 "$NPUCC" compile "$BIG" -o "$WORK/full1" --cache-dir "$SMALL/cache"
  contains "$WORK/err" "warning: not stored in the cache"
  contains "$WORK/err" "No space left on device"
  [ -f "$WORK/full1/manifest.json" ] || fail "the compile's output is missing"
  [ -z "$(find "$SMALL/cache/entries" -mindepth 1 -type f)" ] || fail "partial entry on a full disk"
  [ -z "$(ls -A "$SMALL/cache/tmp")" ] || fail "staging left on a full disk"
  expect_status 0 "$NPUCC" cache verify --cache-dir "$SMALL/cache"
  expect_status 1 "$NPUCC" compile "$BIG" -o "$SMALL/out" --no-cache
  contains "$WORK/err" "No space left on device"
  [ -z "$(ls -A "$SMALL" | grep -v '^cache$')" ] || fail "partial output on a full disk: $(ls -A "$SMALL")"
  expect_status 0 "$NPUCC" cache stats --cache-dir "$SMALL/cache" --json
  [ "$(json_get "$WORK/out" "d['store_errors']")" = 1 ] || fail "store error not counted"
  umount "$SMALL"
  pass "full disk: clear error, no partial entry or output"
else
  skip_part "cannot mount a tmpfs here (needs root and mount permission); full-disk case not run"
fi
suite_end
