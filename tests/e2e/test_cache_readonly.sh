#!/usr/bin/env bash
# Shared caches: --read-only consumers (hits used, misses compiled but nothing written,
# modifying commands refused), also as another user on a cache they cannot write; and
# the modes entries are written with (private by default, group: setgid 2770 whatever
# the umask, world: readable by all).
source "$(dirname "$0")/cache_common.sh"
unset NPUCC_CACHE_KEY_FILE NPUCC_CACHE_READ_ONLY NPUCC_CACHE_SHARED
C="$WORK/cache"
A="$TESTDATA/models/ppocr_cls.onnx"
B="$TESTDATA/models/oww_hello_deepa.onnx"
mode() { stat -c '%a' "$1"; }
# A snapshot of everything in the cache: names, kinds, sizes, modes, times, inodes.
snapshot() { (cd "$1" && find . -printf '%p %y %s %m %T@ %C@ %i %n\n' | sort); }

# 1. Default: private to the writer, whatever the umask.
"$NPUCC" cache init "$C" >/dev/null
(umask 000 && "$NPUCC" -q compile "$A" -o "$WORK/a" --cache-dir "$C")
key=$(json_get "$WORK/a/manifest.json" "d['cache_key']")
E="$C/entries/${key:0:2}/$key"
for d in "$C/entries" "$C/entries/${key:0:2}" "$E" "$C/lock" "$C/tmp" "$C/models"; do
  [ "$(mode "$d")" = 700 ] || fail "private: $d has mode $(mode "$d"), want 700"
done
for f in "$E"/*; do
  [ "$(mode "$f")" = 444 ] || fail "private: $f has mode $(mode "$f"), want 444"
done
[ "$(mode "$C/stats")" = 600 ] || fail "private: stats has mode $(mode "$C/stats")"
[ "$(mode "$C/lock/stats")" = 600 ] || fail "private: lock/stats has mode $(mode "$C/lock/stats")"
pass "entries are private by default (folders 700, files 444, mutable files 600) even under umask 000"

# 2. Group sharing: init --shared group marks the folder; every writer, whatever its
#    umask, then writes setgid group-writable folders and group-writable mutable files.
G="$WORK/group-cache"
"$NPUCC" cache init --shared group "$G" >/dev/null
[ "$(mode "$G")" = 2770 ] || fail "init --shared group: root mode $(mode "$G")"
(umask 077 && "$NPUCC" -q compile "$A" -o "$WORK/g" --cache-dir "$G")
GE="$G/entries/${key:0:2}/$key"
for d in "$G/entries" "$G/entries/${key:0:2}" "$GE" "$G/lock" "$G/tmp" "$G/models"; do
  [ "$(mode "$d")" = 2770 ] || fail "group: $d has mode $(mode "$d"), want 2770"
done
for f in "$GE"/*; do
  [ "$(mode "$f")" = 444 ] || fail "group: $f has mode $(mode "$f"), want 444"
done
for f in "$G/stats" "$G/lock/stats"; do
  [ "$(mode "$f")" = 660 ] || fail "group: $f has mode $(mode "$f"), want 660"
done
expect_status 0 "$NPUCC" config show --cache-shared group --json
[ "$(json_get "$WORK/out" "d['settings']['cache.shared']['source']")" = "command line" ] || fail "config show"
expect_status 2 "$NPUCC" compile "$A" -o "$WORK/bad" --cache-dir "$G" --cache-shared grop
contains "$WORK/err" 'did you mean "group"'
pass "a group cache (init --shared group) gets 2770 folders and 660 mutable files under umask 077"

# 3. World-readable publishing (one writer, e.g. CI; consumers under other user ids).
W="$WORK/world-cache"
"$NPUCC" cache init --shared world "$W" >/dev/null
[ "$(mode "$W")" = 755 ] && [ "$(mode "$W/entries")" = 755 ] || fail "init --shared world: $(mode "$W/entries")"
(umask 077 && NPUCC_CACHE_SHARED=world "$NPUCC" -q compile "$A" -o "$WORK/w" --cache-dir "$W")
WE="$W/entries/${key:0:2}/$key"
[ "$(mode "$WE")" = 755 ] || fail "world: entry mode $(mode "$WE")"
[ "$(mode "$W/stats")" = 644 ] || fail "world: stats mode $(mode "$W/stats")"
pass "NPUCC_CACHE_SHARED=world publishes readable entries (755 folders)"

# 4. --read-only on a cache folder nobody may write (chmod -w; root ignores modes, so
#    the snapshot is what proves nothing was written): a hit is used, a miss is compiled
#    into the output folder only, no statistics, no lock file, no model index.
chmod -R a-w "$W"
before=$(snapshot "$W")
expect_status 0 "$NPUCC" compile "$A" -o "$WORK/ro-hit" --cache-dir "$W" --read-only
contains "$WORK/out" "cache: hit"
cmp "$WORK/ro-hit/high.onnx" "$WORK/w/high.onnx" || fail "read-only hit differs"
expect_status 0 "$NPUCC" compile "$B" -o "$WORK/ro-miss" --cache-dir "$W" --read-only
contains "$WORK/out" "cache: miss: new key (read-only cache: not stored)"
[ -s "$WORK/ro-miss/manifest.json" ] || fail "read-only miss wrote no output"
[ ! -s "$WORK/err" ] || fail "read-only miss warned: $(cat "$WORK/err")"
NPUCC_CACHE_READ_ONLY=1 expect_status 0 "$NPUCC" compile "$B" -o "$WORK/ro-miss2" --cache-dir "$W"
contains "$WORK/out" "read-only cache: not stored"
NPUCC_CACHE_READ_ONLY=1 expect_status 0 "$NPUCC" cache ls --cache-dir "$W"
NPUCC_CACHE_READ_ONLY=1 expect_status 0 "$NPUCC" cache stats --cache-dir "$W"
NPUCC_CACHE_READ_ONLY=1 expect_status 0 "$NPUCC" cache verify --cache-dir "$W"
NPUCC_CACHE_READ_ONLY=1 expect_status 0 "$NPUCC" cache purge --all --dry-run --cache-dir "$W"
[ "$(snapshot "$W")" = "$before" ] || { diff <(echo "$before") <(snapshot "$W") >&2; fail "read-only use changed the cache"; }
pass "--read-only: hits used, misses compiled and not stored, the cache untouched"

# 5. Modifying commands refuse with one line, whatever carries the setting.
mkdir -p "$HOME/.config/npucc"
printf '[cache]\nread_only = true\n' >"$HOME/.config/npucc/config.toml"
for cmd in "cache purge --all" "cache clean --all" "cache invalidate" "cache verify --fix" \
           "cache stats --zero" "cache populate $B"; do
  expect_status 1 "$NPUCC" $cmd --cache-dir "$W"
  [ "$(grep -c . "$WORK/err")" = 1 ] || fail "$cmd: want one error line, got: $(cat "$WORK/err")"
  contains "$WORK/err" "^npucc: error: .*read-only.*(drop --read-only"
done
rm "$HOME/.config/npucc/config.toml"
expect_status 1 "$NPUCC" cache purge --all --read-only --cache-dir "$W"
contains "$WORK/err" "cache purge: .* is used read-only; nothing changed"
[ "$(snapshot "$W")" = "$before" ] || fail "a refused command changed the cache"
pass "purge, clean, invalidate, verify --fix, stats --zero and populate refuse when read-only"

# 6. Another user who cannot write the cache (nobody): --read-only works for hits and
#    misses and writes nothing.
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  # Folders writable again (section 4's chmod -R a-w), entry files left 0444: an entry file
  # of another mode is corrupt (npucc-cache(1)), and a hit needs a whole entry.
  find "$W" -type d -exec chmod u+w {} +; chmod 755 "$W"
  before=$(snapshot "$W")
  chmod 711 "$WORK" # mktemp made it 0700
  out="$WORK/nobody"; mkdir -p "$out"; chown nobody "$out"
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$out" "$@"; }
  expect_status 0 as_nobody "$NPUCC" compile "$A" -o "$out/hit" --cache-dir "$W" --read-only
  contains "$WORK/out" "cache: hit"
  expect_status 0 as_nobody "$NPUCC" compile "$B" -o "$out/miss" --cache-dir "$W" --read-only
  contains "$WORK/out" "read-only cache: not stored"
  [ "$(snapshot "$W")" = "$before" ] || fail "nobody's read-only use changed the cache"
  # The private cache of section 1 is not readable by others at all.
  expect_status 0 as_nobody "$NPUCC" compile "$A" -o "$out/private" --cache-dir "$C" --read-only
  if grep -q "cache: hit" "$WORK/out"; then fail "another user read a private cache"; fi
  pass "another user reads a world cache with --read-only and cannot read a private one"
else
  skip_part "not root, cannot run as another user"
fi
suite_end
