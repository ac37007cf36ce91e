#!/usr/bin/env bash
# Issue 18: npucc never destroys, hides or misreports what is not its own. Folder trees are
# compared byte for byte before and after; permissions are tried as an unprivileged user.
source "$(dirname "$0")/cache_common.sh"
M="$TESTDATA/models/oww_hello_deepa.onnx"
M2="$TESTDATA/models/ppocr_cls.onnx"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

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
  contains "$WORK/err" "not an npucc cache: $H (run npucc cache init $H)"
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
contains "$WORK/out" "README: unexpected a file in the cache folder  \[left alone"
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
tree "$S" >"$WORK/tree.s"
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache purge --all --cache-dir "$S"
contains "$WORK/out" "removed 0 entries, 0 B"
contains "$WORK/err" "cannot remove: Permission denied"
[ "$(grep -c 'npucc: error: .*entries/../[0-9a-f]\{64\}: cannot remove: Permission denied' "$WORK/err")" = 2 ] ||
  { cat "$WORK/err"; fail "want one error per entry, naming it"; }
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache purge --all --json --cache-dir "$S"
[ "$(json_get "$WORK/out" "(len(d['removed']), d['freed_bytes'], len([f for f in d['failures'] if '/entries/' in f]))")" = "(0, 0, 2)" ] ||
  { cat "$WORK/out"; fail "purge --json counted what it did not remove"; }
KEY=$("$NPUCC" cache ls --json --cache-dir "$S" | json_get /dev/stdin "d[0]['key']")
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache invalidate --key "$KEY" --cache-dir "$S"
contains "$WORK/out" "removed 0 entries"
contains "$WORK/err" "$KEY: cannot remove: Permission denied"
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache invalidate --key "$KEY" --json --cache-dir "$S"
[ "$(json_get "$WORK/out" "(len(d['removed']), len(d['failures']))")" = "(0, 1)" ] || fail "invalidate --json"
same_tree "$WORK/tree.s" "$S" "a refused purge"
expect_status 0 "$NPUCC" cache invalidate --key "$KEY" --cache-dir "$S"
contains "$WORK/out" "removed 1 entry"
pass "refused removals: an error per entry naming it and the reason, exit 1, nothing counted"
# verify --fix that may not remove a broken entry says so, and exits 1.
E=$(find "$S/entries" -mindepth 2 -maxdepth 2 -type d | head -1)
printf 'X' | dd of="$E/high.onnx" bs=1 seek=100 conv=notrunc 2>/dev/null # root writes 0444
tree "$S" >"$WORK/tree.s"
expect_status 1 "${NOBODY[@]}" "$NPUCC" cache verify --fix --cache-dir "$S"
contains "$WORK/out" "  \[not removed\]"
contains "$WORK/err" "${E##*/}: cannot remove: Permission denied"
same_tree "$WORK/tree.s" "$S" "a refused verify --fix"
pass "verify --fix: a refused removal is an error, not a fix"
