#!/usr/bin/env bash
# Issue 18: npucc never destroys, hides or misreports what is not its own. Folder trees are
# compared byte for byte before and after; permissions are tried as an unprivileged user.
source "$(dirname "$0")/cache_common.sh"
M="$TESTDATA/models/oww_hello_deepa.onnx"
M2="$TESTDATA/models/ppocr_cls.onnx"
# Refused removals: as root, through an unprivileged user; otherwise, read-only shards.
if [ "$(id -u)" = 0 ]; then NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups); else NOBODY=(); fi
lock_shards() { [ "$(id -u)" = 0 ] || chmod a-w "$1" "$1"/lock "$1"/entries/?? "$1"/models/??; }
unlock_shards() { [ "$(id -u)" = 0 ] || chmod u+w "$1" "$1"/lock "$1"/entries/?? "$1"/models/??; }

# tree DIR: every path with its type, size, mode and owner, and every file's SHA-256.
tree() {
  (cd "$1" && find . -printf '%p %y %s %m %U %l\n' | LC_ALL=C sort &&
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
}
same_tree() { # same_tree BEFORE_FILE DIR WHAT
  tree "$2" >"$WORK/tree.after"
  cmp -s "$1" "$WORK/tree.after" || { diff "$1" "$WORK/tree.after" >&2; fail "$3 changed $2"; }
}

# --- 1. a cache folder is recognised before it is touched ---
H="$WORK/userdata"; mkdir -p "$H/docs/deep"
echo precious >"$H/docs/a.txt"; echo deeper >"$H/docs/deep/b.txt"; echo x >"$H/notes"
tree "$H" >"$WORK/tree.user"
for cmd in "cache ls" "cache ls --json" "cache stats" "cache stats --zero" "cache verify" \
  "cache verify --fix" "cache verify --fix --dry-run" "cache purge --all" \
  "cache purge --all --dry-run" "cache purge" "cache invalidate" "cache invalidate --dry-run" \
  "cache invalidate --key abcd" "cache populate $M"; do
  # shellcheck disable=SC2086
  expect_status 1 "$NPUCC" $cmd --cache-dir "$H"
  contains "$WORK/err" "not an npucc cache: $H (it is not empty and npucc did not make it a cache; point --cache-dir at a new or empty folder)"
  same_tree "$WORK/tree.user" "$H" "$cmd"
done
expect_status 1 "$NPUCC" compile "$M" -o "$WORK/o-user" --cache-dir "$H"
contains "$WORK/err" "not an npucc cache: $H"
NPUCC_CACHE_DIR="$H" expect_status 1 "$NPUCC" compile "$M" -o "$WORK/o-user"
[ ! -e "$WORK/o-user" ] || fail "a compile refused its cache but wrote its output"
expect_status 1 "$NPUCC" cache init "$H"
contains "$WORK/err" "not an npucc cache: $H (it is not empty"
same_tree "$WORK/tree.user" "$H" "cache init"
# The default folder: created by a compile only where nothing is, never by a listing.
expect_status 1 "$NPUCC" cache ls
[ ! -e "$XDG_CACHE_HOME/npucc" ] || fail "cache ls created the default folder"
mkdir -p "$XDG_CACHE_HOME/npucc"; echo mine >"$XDG_CACHE_HOME/npucc/mine"
expect_status 1 "$NPUCC" compile "$M" -o "$WORK/o-d0"
contains "$WORK/err" "not an npucc cache: $XDG_CACHE_HOME/npucc"
[ "$(ls -A "$XDG_CACHE_HOME/npucc")" = mine ] || fail "a compile wrote into a used default folder"
rm "$XDG_CACHE_HOME/npucc/mine"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o-d1"
[ -f "$XDG_CACHE_HOME/npucc/CACHEDIR.TAG" ] || fail "the empty default folder did not become a cache"
pass "non-cache folders: every command refuses and writes nothing; init only into an empty folder"

# Read-only commands write nothing, not even missing layout folders.
C="$WORK/cache"; expect_status 0 "$NPUCC" cache init "$C"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o1" --cache-dir "$C"
rm -rf "$C/tmp" "$C/lock" "$C/models"
tree "$C" >"$WORK/tree.c"
for cmd in "cache ls" "cache ls --json" "cache stats" "cache stats --json" "cache verify" \
  "cache verify --fix --dry-run" "cache purge --all --dry-run" "cache invalidate --dry-run"; do
  # shellcheck disable=SC2086
  expect_status 0 "$NPUCC" $cmd --cache-dir "$C"
  same_tree "$WORK/tree.c" "$C" "$cmd"
done
pass "read-only commands leave the cache byte for byte as it was"

# A cache made by an earlier npucc (the same tag, no stamps/ or models/) is still one.
O="$WORK/oldcache"; mkdir -p "$O/entries" "$O/tmp" "$O/lock"
printf 'Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by npucc.\n# For information about cache directory tags see https://bford.info/cachedir/\n' >"$O/CACHEDIR.TAG"
expect_status 0 "$NPUCC" cache ls --cache-dir "$O"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o-old" --cache-dir "$O"
# Another program's CACHEDIR.TAG is not npucc's.
X="$WORK/othertool"; mkdir -p "$X/entries"
printf 'Signature: 8a477f597d28d172789f06886806bc55\n# created by ccache\n' >"$X/CACHEDIR.TAG"
expect_status 1 "$NPUCC" cache purge --all --cache-dir "$X"
contains "$WORK/err" "not an npucc cache"
pass "an earlier npucc's cache is recognised; another tool's tagged cache is not"

# verify --fix and eviction remove only the layout's own names, never a foreign folder.
mkdir -p "$C/docs/inner" "$C/entries/zz/sub" "$C/lock/dir"
echo keep >"$C/docs/inner/f"; echo keep >"$C/entries/zz/sub/f"; echo keep >"$C/lock/dir/f"
echo keep >"$C/README"
E=$(find "$C/entries" -mindepth 2 -maxdepth 2 -name '????????????????????????????????????????????????????????????????' | head -1)
mkdir "$E/foreign"; echo keep >"$E/foreign/f"
expect_status 3 "$NPUCC" cache verify --fix --cache-dir "$C"
for f in docs/inner/f entries/zz/sub/f lock/dir/f README; do
  [ "$(cat "$C/$f")" = keep ] || fail "verify --fix removed $f"
done
contains "$WORK/out" "README: is a file, not expected in the cache folder  \[left alone"
expect_status 1 "$NPUCC" cache purge --all --cache-dir "$C"
contains "$WORK/err" "foreign: a folder npucc did not write; entry left alone"
[ "$(cat "$E/foreign/f")" = keep ] || fail "eviction recursed into a foreign folder"
contains "$WORK/out" "removed 0 entries, 0 B"
rm -rf "$C/docs" "$C/entries/zz" "$C/lock/dir" "$C/README" "$E/foreign"
pass "verify --fix and purge leave foreign folders and names alone"

# --- 2. a failure is reported as a failure ---
chmod 755 "$WORK"
S="$WORK/shared"; expect_status 0 "$NPUCC" cache init --shared world "$S"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o2" --cache-dir "$S" --cache-shared world
expect_status 0 "$NPUCC" compile "$M2" -o "$WORK/o3" --cache-dir "$S" --cache-shared world
lock_shards "$S"
tree "$S" >"$WORK/tree.s"
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache purge --all --cache-dir "$S" --cache-shared world
contains "$WORK/out" "removed 0 entries, 0 B"
contains "$WORK/err" "cannot remove: Permission denied"
[ "$(grep -c 'npucc: error: .*entries/../[0-9a-f]\{64\}: cannot remove: Permission denied' "$WORK/err")" = 2 ] ||
  { cat "$WORK/err"; fail "want one error per entry, naming it"; }
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache purge --all --json --cache-dir "$S" --cache-shared world
[ "$(json_get "$WORK/out" "(len(d['removed']), d['freed_bytes'], len([f for f in d['failures'] if '/entries/' in f]))")" = "(0, 0, 2)" ] ||
  { cat "$WORK/out"; fail "purge --json counted what it did not remove"; }
KEY=$("$NPUCC" cache ls --json --cache-dir "$S" | json_get /dev/stdin "d['entries'][0]['key']")
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache invalidate --key "$KEY" --cache-dir "$S" --cache-shared world
contains "$WORK/out" "removed 0 entries"
contains "$WORK/err" "$KEY: cannot remove: Permission denied"
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache invalidate --key "$KEY" --json --cache-dir "$S" --cache-shared world
[ "$(json_get "$WORK/out" "(len(d['removed']), len(d['failures']))")" = "(0, 1)" ] || fail "invalidate --json"
same_tree "$WORK/tree.s" "$S" "a refused purge"
unlock_shards "$S"
expect_status 0 "$NPUCC" cache invalidate --key "$KEY" --cache-dir "$S"
contains "$WORK/out" "removed 1 entry"
pass "refused removals: an error per entry naming it and the reason, exit 1, nothing counted"
# verify --fix that may not remove a broken entry says so, and exits 1.
E=$(find "$S/entries" -mindepth 2 -maxdepth 2 -type d | head -1)
chmod u+w "$E/high.onnx"; printf 'X' | dd of="$E/high.onnx" bs=1 seek=100 conv=notrunc 2>/dev/null
chmod 444 "$E/high.onnx"; lock_shards "$S"
tree "$S" >"$WORK/tree.s"
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache verify --fix --cache-dir "$S" --cache-shared world
contains "$WORK/out" "  \[not removed\]"
contains "$WORK/err" "${E##*/}: cannot remove: Permission denied"
same_tree "$WORK/tree.s" "$S" "a refused verify --fix"
unlock_shards "$S"
pass "verify --fix: a refused removal is an error, not a fix"

# --- 3. one compile owns its output folder ---
C3="$WORK/c3"; expect_status 0 "$NPUCC" cache init "$C3"
OUT="$WORK/owned"
expect_status 0 "$NPUCC" compile "$M" -o "$OUT" --cache-dir "$C3" \
  --accelerate-train-mode 'fast|step|0.6' --emit-emulation
[ -f "$OUT/low.onnx" ] && [ -f "$OUT/emulation.onnx" ] || fail "the first compile wrote no pair"
echo mine >"$OUT/notes.txt"; mkdir "$OUT/data"; echo mine >"$OUT/data/x"
expect_status 0 "$NPUCC" compile "$M2" -o "$OUT" --cache-dir "$C3"
listed=$($PY -c "import json,sys; m=json.load(open(sys.argv[1])); print(' '.join(sorted(['manifest.json']+[g['file'] for g in m['graphs']]+[d['file'] for g in m['graphs'] for d in g['external_data']])))" "$OUT/manifest.json")
[ "$(cd "$OUT" && ls | grep -v -e '^notes.txt$' -e '^data$' | LC_ALL=C sort | xargs)" = "$listed" ] ||
  { ls -la "$OUT"; fail "the output folder mixes two compiles"; }
[ "$(cat "$OUT/notes.txt" "$OUT/data/x")" = "$(printf 'mine\nmine')" ] || fail "a user's file in -o was touched"
pass "a second compile removes what the first one's manifest listed, and only that"

F="$WORK/foreign"; mkdir -p "$F"; echo "someone's graph" >"$F/high.onnx"
tree "$F" >"$WORK/tree.f"
expect_status 1 "$NPUCC" compile "$M" -o "$F" --cache-dir "$C3"
contains "$WORK/err" "$F/high.onnx: exists and was not written by an npucc compile"
contains "$WORK/err" "--force"
same_tree "$WORK/tree.f" "$F" "a refused compile"
expect_status 1 "$NPUCC" compile "$M" -o "$F" --no-cache
same_tree "$WORK/tree.f" "$F" "a refused compile (--no-cache)"
expect_status 0 "$NPUCC" compile "$M" -o "$F" --cache-dir "$C3" --force
[ -f "$F/manifest.json" ] && ! grep -q "someone's" "$F/high.onnx" || fail "--force did not replace it"
pass "a file npucc did not write is refused without --force, replaced with it"

I="$WORK/inplace"; mkdir -p "$I"; cp "$M" "$I/high.onnx"
tree "$I" >"$WORK/tree.i"
for use in "--cache-dir $C3" --no-cache "--cache-dir $C3 --force"; do
  # shellcheck disable=SC2086
  expect_status 1 "$NPUCC" compile "$I/high.onnx" -o "$I" $use
  contains "$WORK/err" "$I/high.onnx: input file is also an output"
  same_tree "$WORK/tree.i" "$I" "compiling a model onto itself"
done
# The same file under another name (a hard link), and a model an old manifest lists.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/i2" --cache-dir "$C3"
ln "$WORK/i2/high.onnx" "$WORK/linked.onnx"
expect_status 1 "$NPUCC" compile "$WORK/linked.onnx" -o "$WORK/i2" --cache-dir "$C3" --force
contains "$WORK/err" "input file is also an output (the same file as $WORK/i2/high.onnx)"
pass "an input inside the output set is refused, also through a hard link"

# Atomic publish: a reader that sees a manifest sees exactly its files, never half of two.
A="$WORK/atomic"
expect_status 0 "$NPUCC" compile "$M" -o "$A" --cache-dir "$C3" --accelerate-train-mode 'fast|step|0.6'
$PY - "$A" "$WORK/reader.stop" >"$WORK/reader.out" 2>&1 <<'PYEOF' &
import hashlib, json, os, sys, time
out, stop = sys.argv[1], sys.argv[2]
checked = 0
while not os.path.exists(stop):
    try:
        st = os.stat(os.path.join(out, "manifest.json"))
        m = json.load(open(os.path.join(out, "manifest.json")))
        files = {g["file"]: g["sha256"] for g in m["graphs"]}
        digests = {f: hashlib.sha256(open(os.path.join(out, f), "rb").read()).hexdigest() for f in files}
        names = set(os.listdir(out))
        if os.stat(os.path.join(out, "manifest.json")).st_ino != st.st_ino:
            continue  # replaced while we looked: look again
    except (FileNotFoundError, json.JSONDecodeError):
        continue
    checked += 1
    bad = [f for f in files if digests[f] != files[f]]
    extra = {n for n in names if n.endswith(".onnx")} - set(files)
    if bad or extra:
        print("MIXED", bad, extra); sys.exit(1)
print("checked", checked)
PYEOF
reader=$!
for i in 1 2 3 4 5 6; do
  "$NPUCC" -q compile "$M2" -o "$A" --cache-dir "$C3" >/dev/null
  "$NPUCC" -q compile "$M" -o "$A" --cache-dir "$C3" --accelerate-train-mode 'fast|step|0.6' >/dev/null
done
touch "$WORK/reader.stop"; wait "$reader" || { cat "$WORK/reader.out"; fail "a reader saw two compiles mixed"; }
grep -q "checked [1-9]" "$WORK/reader.out" || { cat "$WORK/reader.out"; fail "the reader checked nothing"; }
pass "publishing is atomic for a reader that goes by manifest.json ($(cat "$WORK/reader.out"))"

# --- 4. the manifest names the model compiled now, also on a hit ---
cp "$M" "$WORK/renamed.onnx"
expect_status 0 "$NPUCC" compile "$WORK/renamed.onnx" -o "$WORK/r1" --cache-dir "$C3"
contains "$WORK/out" "cache: hit"
[ "$(json_get "$WORK/r1/manifest.json" "d['model']['file']")" = renamed.onnx ] || fail "a hit's manifest names another model"
cp "$TESTDATA/models/silero_vad_legacy.onnx" "$WORK/fresh_name.onnx"
expect_status 0 "$NPUCC" compile "$WORK/fresh_name.onnx" -o "$WORK/r2" --cache-dir "$C3"
expect_status 0 "$NPUCC" cache ls --model fresh_name --cache-dir "$C3"
contains "$WORK/out" "1 entry"
[ "$(json_get "$WORK/r2/manifest.json" "d['model']['file']")" = fresh_name.onnx ] || fail "a miss's manifest"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C3"
pass "manifests name the input compiled now (hit and miss); cache ls finds a new entry by its name"

# --- 5. processes: every child is reaped; Ctrl-C and SIGTERM stop cleanly ---
REAP=("$PY" "$(dirname "$0")/subreaper.py")
C5="$WORK/c5"; expect_status 0 "$NPUCC" cache init "$C5"
"${REAP[@]}" -- "$NPUCC" -q compile "$M" -o "$WORK/p1" --cache-dir "$C5" >"$WORK/reap"
contains "$WORK/reap" "orphans 0"
"${REAP[@]}" -- "$NPUCC" -q compile "$M2" -o "$WORK/p2" --no-cache >"$WORK/reap"
contains "$WORK/reap" "orphans 0"
mkdir -p "$WORK/many"
for i in $(seq 1 40); do
  # A doc_string field appended: the same graph, other bytes, another cache key.
  cp "$TESTDATA/models/ppocrv4_det.onnx" "$WORK/many/m$i.onnx"; printf '\x32\x02%02d' "$i" >>"$WORK/many/m$i.onnx"
done
"${REAP[@]}" -- "$NPUCC" -q cache populate -j 2 "$WORK/many/m1.onnx" "$WORK/many/m2.onnx" \
  "$WORK/many/m3.onnx" --cache-dir "$C5" >"$WORK/reap"
contains "$WORK/reap" "status 0"
contains "$WORK/reap" "orphans 0"
pass "compile and populate -j 2 leave no unreaped child behind"

for how in "INT 130 2" "TERM 143 2" "INT 130 1"; do
  set -- $how
  expect_status 0 "$NPUCC" -q cache purge --all --cache-dir "$C5"
  # The signal once the first entry is stored: 39 models are still to come.
  "${REAP[@]}" --signal "$1" --when "$C5/entries/*/*" --after 0.05 -- "$NPUCC" cache populate -j "$3" "$WORK/many" \
    --cache-dir "$C5" >"$WORK/reap" 2>"$WORK/reap.err"
  contains "$WORK/reap" "status $2"
  contains "$WORK/reap" "orphans 0"
  $PY -c "import sys; t=float(open(sys.argv[1]).read().split('stopped_in ')[1].split()[0]); sys.exit(t >= 1.0)" "$WORK/reap" ||
    { cat "$WORK/reap"; fail "populate took a second or more to stop"; }
  grep -q "^npucc: interrupted: [0-9]* of 40 compiled$" "$WORK/reap.err" || { cat "$WORK/reap.err"; fail "no interrupted line"; }
  [ "$(grep -c interrupted "$WORK/reap.err")" = 1 ] || { cat "$WORK/reap.err"; fail "more than one interrupted line"; }
  done_n=$(sed -n 's/^npucc: interrupted: \([0-9]*\) of 40 compiled$/\1/p' "$WORK/reap.err")
  [ "$done_n" -lt 40 ] || fail "the signal came after the end: make the run longer"
  [ -z "$(ls -A "$C5/tmp")" ] || { ls -la "$C5/tmp"; fail "SIG$1 left staging folders"; }
  expect_status 0 "$NPUCC" cache verify --cache-dir "$C5"
  pass "SIG$1 in populate -j $3: exit $2 in $(sed -n 's/stopped_in //p' "$WORK/reap") s, $done_n of 40, no staging left, no orphans"
done
# A second Ctrl-C does not wait for the cleanup.
expect_status 0 "$NPUCC" -q cache purge --all --cache-dir "$C5"
"${REAP[@]}" --signal INT --when "$C5/entries/*/*" --after 0.05 --again 0.001 -- "$NPUCC" cache populate -j 2 "$WORK/many" \
  --cache-dir "$C5" >"$WORK/reap" 2>"$WORK/reap.err"
contains "$WORK/reap" "status 130"
rm -rf "${C5:?}/tmp/"* # killed at once, the workers left their staging to a later purge
pass "a second Ctrl-C ends populate at once"

$PY "$(dirname "$0")/make_big_model.py" "$WORK/big.onnx" 32768
for use in --no-cache "--cache-dir $C5"; do
  # shellcheck disable=SC2086
  # The signal once the graphs are being written (the staging folder beside -o exists).
  "${REAP[@]}" --signal INT --when "$WORK/bigout.tmp.*" --after 0.05 -- "$NPUCC" compile "$WORK/big.onnx" -o "$WORK/bigout" \
    --accelerate-train-mode 'fast|step' $use >"$WORK/reap" 2>"$WORK/reap.err"
  contains "$WORK/reap" "status 130"
  contains "$WORK/reap" "orphans 0"
  contains "$WORK/reap.err" "npucc: interrupted: 0 of 1 compiled"
  [ -z "$(cd "$WORK" && ls -d bigout* 2>/dev/null)" ] || { ls -la "$WORK"; fail "compile left its staging folder"; }
  [ -z "$(ls -A "$C5/tmp")" ] || { ls -la "$C5/tmp"; fail "compile left cache staging"; }
done
rm -f "$WORK/big.onnx"
pass "Ctrl-C in compile: exit 130, staging removed, the ONNX worker reaped"

# --- 6. control characters from names are escaped in text, exact in JSON ---
C6="$WORK/c6"; expect_status 0 "$NPUCC" cache init "$C6"
EVIL=$(printf 'evil\033]0;pwned\007\033[31m\tred\r\302\233x')
mkdir -p "$WORK/evil"; cp "$M" "$WORK/evil/$EVIL.onnx"; echo "not a model" >"$WORK/evil/${EVIL}2.onnx"
# no_controls FILE: no byte below 0x20 but newline, none of DEL or C1 (UTF-8 0xc2 0x80-0x9f).
no_controls() {
  $PY - "$1" <<'PYEOF' || { cat -v "$1" >&2; fail "control characters reach the terminal in $1"; }
import sys
data = open(sys.argv[1], "rb").read()
bad = [b for b in data if (b < 0x20 and b not in (0x0a,)) or b == 0x7f]
bad += [i for i in range(len(data) - 1) if data[i] == 0xc2 and 0x80 <= data[i + 1] <= 0x9f]
sys.exit(1 if bad else 0)
PYEOF
}
expect_status 0 "$NPUCC" -v compile "$WORK/evil/$EVIL.onnx" -o "$WORK/e1" --cache-dir "$C6"
no_controls "$WORK/out"; no_controls "$WORK/err"
contains "$WORK/out" 'evil\\x1b]0;pwned\\x07\\x1b\[31m\\x09red\\x0d\\xc2\\x9bx.onnx'
expect_status 0 "$NPUCC" compile "$WORK/evil/$EVIL.onnx" -o "$WORK/e2" --cache-dir "$C6"
no_controls "$WORK/out"
expect_status 1 "$NPUCC" compile "$WORK/evil/${EVIL}2.onnx" -o "$WORK/e3" --cache-dir "$C6"
no_controls "$WORK/err"; contains "$WORK/err" 'evil\\x1b'
expect_status 0 "$NPUCC" cache ls --cache-dir "$C6"
no_controls "$WORK/out"; contains "$WORK/out" 'evil\\x1b'
expect_status 0 "$NPUCC" cache ls --json --cache-dir "$C6"
[ "$(json_get "$WORK/out" "d['entries'][0]['model']")" = "$EVIL" ] || fail "cache ls --json does not give the exact name"
expect_status 1 "$NPUCC" -v cache populate "$WORK/evil" --cache-dir "$C6"
no_controls "$WORK/out"; no_controls "$WORK/err"
expect_status 0 "$NPUCC" cache invalidate --model "$EVIL" --dry-run --cache-dir "$C6"
no_controls "$WORK/out"; contains "$WORK/out" "would remove 1 entry"
explained "$WORK/evil/$EVIL.onnx"
no_controls "$WORK/out"
# A forged entry header (anyone who may write a shared cache can write one).
KEY6=$("$NPUCC" cache ls --json --cache-dir "$C6" | json_get /dev/stdin "d['entries'][0]['key']")
H6="$C6/entries/${KEY6:0:2}/$KEY6/entry.npucc"; chmod u+w "$H6"
$PY - "$H6" <<'PYEOF'
import sys
p = sys.argv[1]; t = open(p, "rb").read()
t = t.replace(b"\ncompiler ", b"\ncompiler 0.1\x1b[2J", 1)
open(p, "wb").write(t)
PYEOF
for cmd in "cache ls" "cache verify" "cache invalidate --dry-run --version x" "cache purge --all --dry-run"; do
  # shellcheck disable=SC2086
  set +e; "$NPUCC" $cmd --cache-dir "$C6" >"$WORK/out" 2>"$WORK/err"; set -e
  no_controls "$WORK/out"; no_controls "$WORK/err"
done
pass "names with escapes: escaped in compile, errors, ls, populate, invalidate, explain and verify; exact in JSON"

# --- 7. modes in a group-shared cache come from the storage layer, whatever the umask ---
# modes_ok DIR: every folder 2770; entry files 0444; mutable files (stats, locks, stamps)
# 0660; input digests without a key and model indexes 0640 (each user's own: issues 30, 42).
modes_ok() {
  local bad
  bad=$(cd "$1" && find . -mindepth 1 -type d ! -perm 2770 -printf '%m %p\n'
        find . -path './entries/*' -type f ! -perm 0444 -printf '%m %p\n'
        find . \( -path './digests/*' -o -path './models/*' \) -type f ! -perm 0640 -printf '%m %p\n'
        find . -type f ! -path './entries/*' ! -path './digests/*' ! -path './models/*' \
          ! -name CACHEDIR.TAG ! -perm 0660 -printf '%m %p\n')
  [ -z "$bad" ] || { echo "$bad" >&2; fail "modes in the group cache ($2)"; }
}
G="$WORK/group"
(umask 077
  "$NPUCC" -q cache init --shared group "$G"
  "$NPUCC" -q compile "$M" -o "$WORK/g1" --cache-dir "$G" >/dev/null   # miss: entry, index
  "$NPUCC" -q compile "$M" -o "$WORK/g2" --cache-dir "$G" >/dev/null   # hit: stamp
  "$NPUCC" -q cache populate "$M2" --cache-dir "$G" >/dev/null)
[ -d "$G/stamps" ] && [ -n "$(find "$G/stamps" -type f)" ] || fail "no stamp was written"
[ "$(stat -c %a "$G")" = 2770 ] || fail "the cache folder is $(stat -c %a "$G")"
modes_ok "$G" "umask 077"
pass "umask 077, init --shared group: every folder 2770, entry files 0444, digests and indexes 0640, the rest 0660"

# --- 9. the key covers the compiler build, not only its version ---
C9="$WORK/c9"; expect_status 0 "$NPUCC" cache init "$C9"
cp "$NPUCC" "$WORK/npucc-other"
# Another build of the same version: the same binary with another build ID.
$PY - "$WORK/npucc-other" "$(readelf -n "$NPUCC" | sed -n 's/.*Build ID: //p')" <<'PYEOF'
import sys
path, build_id = sys.argv[1], bytes.fromhex(sys.argv[2])
data = bytearray(open(path, "rb").read())
at = data.find(build_id)
assert at > 0 and data.find(build_id, at + 1) < 0, "the build ID is not in the file once"
data[at] ^= 0xff
open(path, "wb").write(bytes(data))
PYEOF
explained "$M"
contains "$WORK/out" "^build     [0-9a-f]\{64\}  npucc=[0-9a-f]\{40\} libonnx.so.1=[0-9a-f]\{40\}"
k1=$(sed -n 's/^key *//p' "$WORK/out"); b1=$(sed -n 's/^build *//p' "$WORK/out")
expect_status 3 "$WORK/npucc-other" cache explain "$M"
k2=$(sed -n 's/^key *//p' "$WORK/out"); b2=$(sed -n 's/^build *//p' "$WORK/out")
[ "$k1" != "$k2" ] && [ "$b1" != "$b2" ] || fail "two builds share a key"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/k1" --cache-dir "$C9"
expect_status 0 "$WORK/npucc-other" compile "$M" -o "$WORK/k2" --cache-dir "$C9"
contains "$WORK/out" "cache: miss: new key"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/k3" --cache-dir "$C9"
contains "$WORK/out" "cache: hit"
# Without a build ID, the executable's SHA-256 stands in.
if objcopy --remove-section .note.gnu.build-id "$NPUCC" "$WORK/npucc-noid" 2>/dev/null; then
  expect_status 3 "$WORK/npucc-noid" cache explain "$M"
  contains "$WORK/out" "npucc=sha256:$(sha256sum "$WORK/npucc-noid" | cut -c1-64)"
fi
rm -f "$WORK/npucc-other" "$WORK/npucc-noid"
pass "cache explain shows the build; another build of the same version misses"
