#!/usr/bin/env bash
# --link-mode: how a hit's outputs (and a miss's) share the entry's files. The default
# (auto) copies, except hard links to entry files the user cannot change, so editing an
# output in place (as onnxsim-style tools do, opening it r+b) never corrupts the cache.
source "$(dirname "$0")/cache_common.sh"
M="$TESTDATA/models/ppocr_cls.onnx"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
links() { stat -c %h "$1"; }
# edit_in_place FILE: overwrites bytes in the middle of FILE through the same inode.
edit_in_place() {
  chmod u+w "$1"
  $PY -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(200); f.write(b"\xff" * 64)' "$1"
}

# 1. The default: a miss and a hit both leave the user files of their own, writable.
for run in miss hit; do
  expect_status 0 "$NPUCC" compile "$M" -o "$WORK/$run" --cache-dir "$C"
  contains "$WORK/out" "cache: $run"
  for f in high.onnx manifest.json; do
    [ "$(links "$WORK/$run/$f")" = 1 ] || fail "default $run: $f has $(links "$WORK/$run/$f") links"
    [ -w "$WORK/$run/$f" ] || fail "default $run: $f is not writable"
  done
done
contains "$WORK/out" "materialised by \(copy\|reflink\)"
cp "$WORK/hit/high.onnx" "$WORK/reference.onnx"
edit_in_place "$WORK/hit/high.onnx"
edit_in_place "$WORK/miss/high.onnx"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/again" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
cmp "$WORK/again/high.onnx" "$WORK/reference.onnx" || fail "an edited output reached the entry"
pass "default: outputs are copies; editing them in place leaves the entry intact"

# 2. hardlink: one inode shared by the entry and every output, read-only.
H="$WORK/hcache"
"$NPUCC" cache init "$H" >/dev/null
for run in miss hit; do
  expect_status 0 "$NPUCC" compile "$M" -o "$WORK/h-$run" --cache-dir "$H" --link-mode hardlink
  contains "$WORK/out" "cache: $run"
  [ "$(links "$WORK/h-$run/high.onnx")" -ge 2 ] || fail "hardlink $run: high.onnx not linked"
  [ "$(stat -c %a "$WORK/h-$run/high.onnx")" = 444 ] || fail "hardlink $run: output not read-only"
done
contains "$WORK/out" "materialised by hard link"
# What the default protects against: an edit through one link reaches the entry.
edit_in_place "$WORK/h-hit/high.onnx"
expect_status 3 "$NPUCC" cache verify --cache-dir "$H"
pass "hardlink: outputs share the entry's read-only inode (an edit in place damages it)"

# 3. Where the setting comes from: --link-mode, else NPUCC_CACHE_LINK_MODE, else config.toml.
L="$WORK/lcache"
"$NPUCC" cache init "$L" >/dev/null
NPUCC_CACHE_LINK_MODE=hardlink expect_status 0 "$NPUCC" compile "$M" -o "$WORK/env" --cache-dir "$L"
[ "$(links "$WORK/env/high.onnx")" -ge 2 ] || fail "NPUCC_CACHE_LINK_MODE=hardlink did not link"
NPUCC_CACHE_LINK_MODE=hardlink expect_status 0 "$NPUCC" compile "$M" -o "$WORK/flag" --cache-dir "$L" \
  --link-mode copy
[ "$(links "$WORK/flag/high.onnx")" = 1 ] || fail "--link-mode copy did not override the variable"
mkdir -p "$HOME/.config/npucc"
printf '[cache]\nlink_mode = "hardlink"\n' >"$HOME/.config/npucc/config.toml"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/toml" --cache-dir "$L"
[ "$(links "$WORK/toml/high.onnx")" -ge 2 ] || fail "config.toml link_mode = hardlink did not link"
expect_status 0 "$NPUCC" config show
contains "$WORK/out" "link_mode"
rm "$HOME/.config/npucc/config.toml"
expect_status 2 "$NPUCC" compile "$M" -o "$WORK/bad" --cache-dir "$L" --link-mode symlink
contains "$WORK/err" '--link-mode: "symlink" is not a valid cache.link_mode (valid values: auto, copy, hardlink)'
NPUCC_CACHE_LINK_MODE=soft expect_status 2 "$NPUCC" compile "$M" -o "$WORK/bad" --cache-dir "$L"
contains "$WORK/err" 'NPUCC_CACHE_LINK_MODE'
[ ! -e "$WORK/bad" ] || fail "a refused link mode still wrote the output folder"
pass "link mode from the flag, the variable and config.toml; bad values named with their source"

# 4. auto links to entry files the user cannot change: another user's, in a group cache.
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ] && getent group users >/dev/null; then
  G="$WORK/gcache"
  mkdir "$G"; chgrp users "$G"
  "$NPUCC" -q cache init --shared group "$G"
  "$NPUCC" -q compile "$M" -o "$WORK/g-root" --cache-dir "$G" >/dev/null # root's entry, 0444
  chmod 711 "$WORK"
  out="$WORK/nobody"; mkdir -p "$out"; chown nobody "$out"
  as_member() { setpriv --reuid=nobody --regid=nogroup --groups=users env HOME="$out" "$@"; }
  expect_status 0 as_member "$NPUCC" compile "$M" -o "$out/hit" --cache-dir "$G"
  # Linux's fs.protected_hardlinks (1 by default) lets a user link only to files they own
  # or could write: there the kernel refuses the link and auto copies instead.
  if [ "$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null || echo 1)" = 0 ]; then
    contains "$WORK/out" "cache: hit: materialised by hard link"
    [ "$(links "$out/hit/high.onnx")" -ge 2 ] || fail "auto did not link to another user's entry"
    if as_member $PY -c 'import sys; open(sys.argv[1], "r+b")' "$out/hit/high.onnx" 2>/dev/null; then
      fail "the group member can write the linked entry file"
    fi
    how="hard links"
  else
    contains "$WORK/out" "cache: hit: materialised by \(copy\|reflink\)"
    [ "$(links "$out/hit/high.onnx")" = 1 ] || fail "a refused link left a linked output"
    how="copies (fs.protected_hardlinks refuses the link)"
  fi
  expect_status 0 as_member "$NPUCC" compile "$M" -o "$out/forced" --cache-dir "$G" --link-mode hardlink
  contains "$WORK/out" "cache: hit"
  expect_status 0 as_member "$NPUCC" compile "$M" -o "$out/copy" --cache-dir "$G" --link-mode copy
  [ "$(links "$out/copy/high.onnx")" = 1 ] || fail "--link-mode copy linked"
  pass "auto in another user's group cache: $how; a refused hardlink falls back to a copy"
else
  skip_part "not root (or no 'users' group), cannot run as another user"
fi
suite_end
