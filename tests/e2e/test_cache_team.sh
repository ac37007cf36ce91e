#!/usr/bin/env bash
# Issue 30: a team cache no member can subvert. Two unprivileged users in one group share
# a cache made as the README says: a reader (who holds the cache key in the signed parts)
# and a member who does not. Each attack of the issue is tried as the member and must
# fail: poisoned input digests (with and without a key), a tmp/ or entries/<kk> swap
# during purge and eviction, a stray swap during verify --fix, a member-writable inode
# behind a hard-linked output, a forged manifest deleting a user's file, a held lock
# stalling a compile or a purge, a models file reading (and printing) a file outside its
# folder, and huge values echoed in errors. Races are driven by the documented debug hook
# NPUCC_DEBUG_PAUSE (npucc-cache(1)): npucc pauses at a named point until a file appears.
# Needs root (to create the users; every npucc here runs as one of them) and setpriv.
source "$(dirname "$0")/cache_common.sh"
unset NPUCC_CACHE_KEY_FILE NPUCC_CACHE_READ_ONLY NPUCC_CACHE_SHARED NPUCC_CACHE_LOCK_TIMEOUT
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v useradd >/dev/null; then
  echo "skip: needs root, setpriv and useradd (creates two users and a group)"
  exit 0
fi
TEAM="npct$$"; R="npcr$$"; M="npcm$$"
cleanup() {
  local status=$?
  userdel "$R" 2>/dev/null || true
  userdel "$M" 2>/dev/null || true
  groupdel "$TEAM" 2>/dev/null || true
  if [ $status -eq 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi
}
trap cleanup EXIT
groupadd "$TEAM"
useradd -M -N -g "$TEAM" -d /nonexistent -s /usr/sbin/nologin "$R"
useradd -M -N -g "$TEAM" -d /nonexistent -s /usr/sbin/nologin "$M"
chmod 755 "$WORK"
for u in "$R" "$M"; do install -d -m 700 -o "$u" -g "$TEAM" "$WORK/home-$u"; done
RH="$WORK/home-$R"; MH="$WORK/home-$M"
# as USER command...: runs it as USER (group TEAM only), umask 077, in USER's home.
as() {
  local u=$1; shift
  (cd "$WORK/home-$u" && umask 077 &&
    setpriv --reuid="$u" --regid="$TEAM" --clear-groups \
      env HOME="$WORK/home-$u" XDG_CACHE_HOME="$WORK/home-$u/.cache" "$@")
}
sha() { sha256sum "$1" | cut -c1-64; }
# wait_for FILE: until FILE exists (an observable state, not a time), at most ~60 s.
wait_for() {
  local i
  for i in $(seq 1200); do [ -e "$1" ] && return 0; sleep 0.05; done
  fail "$1 never appeared"
}
settle() { sleep 2.2; } # inputs older than the racy margin, so digests are recorded
PAUSE="$WORK/pause"; install -d -m 777 "$PAUSE"

# 8. The team recipe (README -> docs/ci-and-sharing.md), as written, with the member running init.
C="$WORK/team-cache"
install -d -m 2770 -g "$TEAM" "$C"
as "$M" "$NPUCC" cache init --shared group "$C" >"$WORK/out" 2>"$WORK/err" ||
  { cat "$WORK/err"; fail "init --shared group by a member on a 2770 folder failed"; }
[ "$(stat -c %a "$C")" = 2770 ] && [ "$(stat -c %a "$C/entries")" = 2770 ] || fail "modes"
export NPUCC_CACHE_DIR="$C"
pass "the team recipe works for a non-root member (folder already 2770)"

# The reader's private project: two models, and the key only the reader can read.
P="$RH/proj"; as "$R" mkdir -p "$P"
cp "$TESTDATA/models/oww_hello_deepa.onnx" "$TESTDATA/models/ppocr_cls.onnx" "$P/"
chown "$R:$TEAM" "$P"/*.onnx
as "$R" sh -c 'openssl rand -hex 32 >"$HOME/key"'
KEY="$RH/key"
A="$P/oww_hello_deepa.onnx"; B="$P/ppocr_cls.onnx"
SA=$(sha "$A"); SB=$(sha "$B")
settle

# reader ARGS...: a compile as the reader, its status, output and error kept.
reader() { set +e; as "$R" "$NPUCC" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?; set -e; }

# 1. Poisoned input digests. The member rewrites the digest naming A's bytes to name B's.
# poison CACHE: as the member, every digest file of CACHE that names A's SHA-256 now names
# B's; a file the member cannot write is replaced by the member's own copy.
poison() {
  local n=0 f
  for f in "$1"/digests/*/*; do
    grep -q "^sha256 $SA\$" "$f" 2>/dev/null || continue
    as "$M" sh -c "sed 's/^sha256 $SA\$/sha256 $SB/' '$f' >'$f.x' && chmod 664 '$f.x' && mv -f '$f.x' '$f'"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "no digest of A recorded in $1"
}
# poison_check LABEL [ARGS...]: A compiled after the poisoning is A's graph, not B's.
poison_check() {
  local label=$1; shift
  reader compile "$A" -o "$RH/a2-$label" "$@"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "$label: compile after poisoning failed"; }
  if grep -q "by recorded digest" "$WORK/out"; then
    cat "$WORK/out"; fail "$label: a poisoned digest was used"
  fi
  cmp -s "$RH/a2-$label/high.onnx" "$RH/a1-$label/high.onnx" ||
    fail "$label: A compiled to another model's graph after its digest was poisoned"
}
for mode in key nokey; do
  args=(); [ $mode = key ] && args=(--cache-key-file "$KEY")
  CD="$WORK/cache-$mode"; install -d -m 2770 -g "$TEAM" "$CD"
  as "$M" "$NPUCC" cache init --shared group "$CD" >/dev/null
  reader compile "$A" -o "$RH/a1-$mode" --cache-dir "$CD" "${args[@]}"; [ "$RC" = 0 ] || fail "$(cat "$WORK/err")"
  reader compile "$B" -o "$RH/b1-$mode" --cache-dir "$CD" "${args[@]}"; [ "$RC" = 0 ] || fail "$(cat "$WORK/err")"
  reader compile "$A" -o "$RH/a0-$mode" --cache-dir "$CD" "${args[@]}"
  contains "$WORK/out" "1 file by recorded digest"
  poison "$CD"
  poison_check "$mode" --cache-dir "$CD" "${args[@]}"
  poison "$CD" # the compile above recorded A's digest afresh
  reader cache explain "$A" --cache-dir "$CD" "${args[@]}"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "$mode: explain failed"; }
  ! grep -q "its recorded digest is used" "$WORK/out" ||
    { cat "$WORK/out"; fail "$mode: explain says the poisoned digest would be used"; }
  contains "$WORK/out" "not used"
done
# The digest poisoned before explain is still there (explain records nothing).
reader cache verify --cache-dir "$WORK/cache-key" --cache-key-file "$KEY"
[ "$RC" = 3 ] || { cat "$WORK/out" "$WORK/err"; fail "verify with the key: want 3, got $RC"; }
contains "$WORK/out" "input digest whose signature does not check"
reader cache verify --fix --cache-dir "$WORK/cache-key" --cache-key-file "$KEY"
reader compile "$A" -o "$RH/a3" --cache-dir "$WORK/cache-key" --cache-key-file "$KEY"
cmp -s "$RH/a3/high.onnx" "$RH/a1-key/high.onnx" || fail "after verify --fix: wrong graph"
pass "a poisoned input digest is never used: with a key (unsigned), without (another user's)"

# 3. Hard links only to 0444 entry files owned by the reader or the cache's owner.
# The member replaces the entry's high.onnx with an own copy, same bytes: first mode
# 0664, then 0444 (which the member, its owner, may chmod back later).
reader compile "$B" -o "$RH/h0" --link-mode hardlink --cache-key-file "$KEY"
key=$(json_get "$RH/h0/manifest.json" "d['cache_key']")
E="$C/entries/${key:0:2}/$key"
for mode in 664 444; do
  as "$M" sh -c "cp '$E/high.onnx' '$E/h.x' && chmod $mode '$E/h.x' && mv -f '$E/h.x' '$E/high.onnx'"
  theirs=$(stat -c %i "$E/high.onnx")
  rm -rf "$RH/h1"
  reader compile "$B" -o "$RH/h1" --link-mode hardlink --cache-key-file "$KEY"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "hardlink $mode: compile failed"; }
  before=$(sha "$RH/h1/high.onnx")
  as "$M" sh -c "chmod u+w '$E/high.onnx' && printf x >>'$E/high.onnx'" 2>/dev/null || true
  [ "$(sha "$RH/h1/high.onnx")" = "$before" ] ||
    fail "hardlink $mode: the member's write changed the reader's high.onnx"
  [ "$(stat -c %i "$RH/h1/high.onnx")" != "$theirs" ] ||
    fail "hardlink $mode: the output shares the member's inode"
  reader cache purge --all
  reader compile "$B" -o "$RH/h0-$mode" --link-mode hardlink --cache-key-file "$KEY"
done
pass "a hit links only 0444 files of the reader or the cache's owner; others are copied"

# 4. A forged entry's manifest (no key) never widens what a compile deletes.
reader compile "$B" -o "$RH/m0"
key=$(json_get "$RH/m0/manifest.json" "d['cache_key']")
E="$C/entries/${key:0:2}/$key"
as "$M" /usr/bin/python3 - "$E" <<'EOF'
import hashlib, json, os, sys
e = sys.argv[1]
m = json.load(open(os.path.join(e, "manifest.json")))
m["graphs"][0].setdefault("external_data", []).append({"file": "notes.txt"})
data = json.dumps(m, indent=2).encode()
tmp = os.path.join(e, "m.x"); open(tmp, "wb").write(data); os.chmod(tmp, 0o444)
os.replace(tmp, os.path.join(e, "manifest.json"))
lines = open(os.path.join(e, "entry.npucc")).read().split("\n")
out = []
for line in lines:
    p = line.split(" ")
    if p[0] == "file" and p[3] == "manifest.json":
        line = "file %s %d manifest.json" % (hashlib.sha256(data).hexdigest(), len(data))
    if p[0] == "end":
        break
    out.append(line)
body = "\n".join(out) + "\n"
body += "end " + hashlib.sha256(body.encode()).hexdigest() + "\n"
tmp = os.path.join(e, "h.x"); open(tmp, "w").write(body); os.chmod(tmp, 0o444)
os.replace(tmp, os.path.join(e, "entry.npucc"))
EOF
reader compile "$B" -o "$RH/m1"
contains "$WORK/out" "cache: hit"
as "$R" sh -c "echo mine >'$RH/m1/notes.txt'"
reader compile "$B" -o "$RH/m1" --no-cache
[ "$RC" = 0 ] || { cat "$WORK/err"; fail "compile into the folder failed"; }
[ -f "$RH/m1/notes.txt" ] || fail "a forged manifest made the compile delete the user's notes.txt"
reader cache purge --all >/dev/null
pass "a delivered manifest never makes a compile delete a file npucc does not write"

# 5. No member can stall another. hold LOCK: the member holds lock/LOCK until released.
hold() {
  rm -f "$PAUSE/held" "$PAUSE/release"
  as "$M" flock -x "$C/lock/$1" sh -c \
    "touch '$PAUSE/held'; i=0; while [ ! -e '$PAUSE/release' ] && [ \$i -lt 2400 ]; do sleep 0.05; i=\$((i+1)); done" &
  HOLDER=$!
  wait_for "$PAUSE/held"
}
release() { touch "$PAUSE/release"; wait "$HOLDER"; }
reader compile "$B" -o "$RH/s0"     # makes lock/stats, group-writable
reader cache purge --older-than 30d # makes lock/cleanup
hold stats
set +e; as "$R" timeout 30 "$NPUCC" compile "$B" -o "$RH/s1" >"$WORK/out" 2>"$WORK/err"; RC=$?; set -e
release
[ "$RC" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "a held lock/stats stalled or failed a compile ($RC)"; }
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "statistics not updated"
hold cleanup
set +e
as "$R" env NPUCC_CACHE_LOCK_TIMEOUT=1 timeout 30 "$NPUCC" cache purge --older-than 30d >"$WORK/out" 2>"$WORK/err"
RC=$?; set -e
release
[ "$RC" != 124 ] || fail "a held lock/cleanup stalled purge past its timeout"
[ "$RC" != 0 ] || fail "purge reported success though it could not take lock/cleanup"
[ "$(grep -c "error:" "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "want one error line"; }
contains "$WORK/err" "lock/cleanup is held by another process"
reader cache purge --older-than 30d
[ "$RC" = 0 ] || { cat "$WORK/err"; fail "purge after the lock was released"; }
pass "a held statistics lock is skipped with a note; a held cleanup lock fails purge in one line"

# 2. Swaps during sweeps. The reader's private folder holds old files whose names the
# member can guess; the member pauses the reader's sweep (NPUCC_DEBUG_PAUSE), swaps a
# cache folder for a link to that folder, and lets it go on.
V="$RH/victim"
# victim: a fresh private folder with an old file, an old folder with a file, and (for
# the eviction) a folder named like an entry, each two hours old.
victim() {
  rm -rf "$V"
  as "$R" sh -c "mkdir -p '$V/old' '$V/$1' && echo 1 >'$V/data.bin' && echo 2 >'$V/old/f' &&
    echo 3 >'$V/$1/manifest.json' && chmod 770 '$V' &&
    touch -h -d '2 hours ago' '$V/data.bin' '$V/old/f' '$V/old' '$V/$1/manifest.json' '$V/$1'"
}
victim_intact() {
  [ -f "$V/data.bin" ] && [ -f "$V/old/f" ] && [ -f "$V/$1/manifest.json" ] ||
    fail "$2: files outside the cache were deleted: $(find "$V" | tr '\n' ' ')"
}
# paused POINT LABEL SWAP -- npucc-args...: runs npucc as the reader paused at POINT,
# runs SWAP as the member there, lets it go on; RC, out and err as reader() keeps them.
paused() {
  local point=$1 swap=$3; shift 4
  rm -f "$PAUSE/$point.reached" "$PAUSE/$point.go"
  set +e
  as "$R" env NPUCC_DEBUG_PAUSE="$point" NPUCC_DEBUG_PAUSE_DIR="$PAUSE" timeout 120 "$NPUCC" "$@" \
    >"$WORK/out" 2>"$WORK/err" &
  local pid=$!
  set -e
  wait_for "$PAUSE/$point.reached"
  as "$M" sh -c "$swap"
  touch "$PAUSE/$point.go"
  set +e; wait $pid; RC=$?; set -e
}
# 2a. purge: tmp/ swapped for a link after it was listed.
reader compile "$B" -o "$RH/p0"
key=$(json_get "$RH/p0/manifest.json" "d['cache_key']")
victim "$key"
as "$M" sh -c "mkdir '$C/tmp/old' && touch '$C/tmp/data.bin' '$C/tmp/old/f' &&
  touch -h -d '2 hours ago' '$C/tmp/data.bin' '$C/tmp/old/f' '$C/tmp/old'"
paused purge-tmp "tmp swap" "mv '$C/tmp' '$C/tmp.away' && ln -s '$V' '$C/tmp'" -- cache purge --older-than 30d
victim_intact "$key" "purge with tmp/ swapped"
[ "$RC" != 0 ] || fail "purge with tmp/ swapped reported success"
contains "$WORK/err" "was renamed or replaced while it was swept"
as "$M" sh -c "rm '$C/tmp' && mv '$C/tmp.away' '$C/tmp'"
# 2b. eviction: entries/<kk> swapped for a link to a folder holding a folder named KEY.
kk=${key:0:2}
paused evict "entries swap" "mv '$C/entries/$kk' '$C/kk.away' && ln -s '$V' '$C/entries/$kk'" -- cache purge --all
victim_intact "$key" "purge --all with entries/$kk swapped"
contains "$WORK/err" "not a folder (a link?)"
as "$M" sh -c "rm '$C/entries/$kk' && mv '$C/kk.away' '$C/entries/$kk'"
# 2c. verify --fix: a stray in models/<kk>/ found, then models/<kk> swapped for a link.
reader cache purge --all
as "$M" sh -c "mkdir -m 2770 '$C/models/aa' && echo junk >'$C/models/aa/data.bin'"
victim "$key"
paused verify-stray "verify swap" "mv '$C/models/aa' '$C/aa.away' && ln -s '$V' '$C/models/aa'" -- cache verify --fix
victim_intact "$key" "verify --fix with models/aa swapped"
contains "$WORK/err" "not a folder (a link?)"
as "$M" sh -c "rm -f '$C/models/aa' && rm -rf '$C/aa.away'"
pass "sweeps (purge's tmp/, eviction, verify --fix) never follow a folder swapped for a link"

# 6. A models file names only files inside its folder, regular, bounded, never echoed.
MF="$RH/ci"; as "$R" mkdir -p "$MF"
cp "$B" "$MF/m.onnx"; chown "$R:$TEAM" "$MF/m.onnx"
SECRET=$(as "$R" head -c 32 "$KEY")
models_case() { # LABEL KEY VALUE: populate must refuse in one line naming KEY, echoing no secret
  local label=$1 k=$2 v=$3
  as "$R" sh -c "printf '[[model]]\npath = \"m.onnx\"\n%s = \"%s\"\n' '$k' '$v' >'$MF/models.toml'"
  set +e
  as "$R" timeout 30 "$NPUCC" cache populate --models "$MF/models.toml" --accelerate-train-mode 'fast|step|0.9' \
    >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  [ "$RC" != 124 ] || fail "$label: populate hung"
  [ "$RC" != 0 ] || { cat "$WORK/out"; fail "$label: populate accepted it"; }
  ! grep -q "$SECRET" "$WORK/out" "$WORK/err" || fail "$label: the key's contents were printed"
  contains "$WORK/err" "$k"
}
models_case "absolute keep_dtype" keep_dtype "$KEY"
models_case "keep_dtype outside" keep_dtype "../key"
as "$R" ln -s "$KEY" "$MF/link"
models_case "keep_dtype symlink out" keep_dtype "link"
models_case "mixlist symlink out" modify_mixlist "link"
as "$R" mkfifo "$MF/fifo"
models_case "keep_dtype FIFO" keep_dtype "fifo"
as "$R" ln -s "$B" "$MF/out.onnx"
as "$R" sh -c "printf '[[model]]\npath = \"out.onnx\"\n' >'$MF/models.toml'"
reader cache populate --models "$MF/models.toml"
[ "$RC" != 0 ] || fail "a model path that is a symlink out of the folder was compiled"
contains "$WORK/err" "leads outside"
# The same for a file an --options file names.
for v in "$KEY" link fifo; do
  as "$R" sh -c "printf '{\"modify_mixlist\": \"%s\"}' '$v' >'$MF/opts.json'"
  set +e
  as "$R" timeout 30 "$NPUCC" compile "$B" -o "$RH/o1" --no-cache --options "$MF/opts.json" \
    >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  [ "$RC" != 124 ] || fail "options file, modify_mixlist $v: compile hung"
  [ "$RC" != 0 ] || fail "options file, modify_mixlist $v: accepted"
  ! grep -q "$SECRET" "$WORK/out" "$WORK/err" || fail "options file, $v: the key's contents were printed"
  contains "$WORK/err" "modify_mixlist"
done
pass "a models or options file cannot read, print or hang on a file outside its folder"

# 7. Bounded inputs: a 100 MB string in a models file, a 100 KB shard variable.
as "$R" /usr/bin/python3 -c "
open('$MF/models.toml', 'w').write('[[model]]\npath = \"m.onnx\"\ninput_shape = \"' + 'x' * 100000000 + '\"\n')"
reader cache populate --models "$MF/models.toml"
[ "$RC" != 0 ] || fail "a 100 MB string was accepted"
[ "$(wc -c <"$WORK/err")" -lt 2000 ] || fail "a 100 MB string was echoed: $(wc -c <"$WORK/err") bytes"
rm -f "$MF/models.toml"
big=$(head -c 100000 /dev/zero | tr '\0' 7)
set +e
as "$R" env NPUCC_SHARD_INDEX="x$big" NPUCC_SHARD_COUNT=2 "$NPUCC" cache populate "$MF" --shard auto \
  >"$WORK/out" 2>"$WORK/err"
RC=$?; set -e
[ "$RC" != 0 ] || fail "a bad NPUCC_SHARD_INDEX was accepted"
[ "$(wc -c <"$WORK/err")" -lt 2000 ] || fail "NPUCC_SHARD_INDEX was echoed whole: $(wc -c <"$WORK/err") bytes"
pass "huge values in a models file or a shard variable are refused in a short line"
