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
#
# Each check runs alone (a subshell, its own cache), so that one finding's failure says
# nothing of another's. NPUCC_TEAM_KEEP_GOING=1 runs every check and prints a summary
# instead of stopping at the first failure; NPUCC_TEAM_ONLY=ID,... runs some (IDs below).
# NPUCC_TEAM_RACE_TRIES=N drives the swap checks (2a-2c) without the debug hook: a member
# process swaps the folder for a link as fast as it can (swap_flipper.py) during N sweeps,
# which is how an npucc built before the hook is shown to lose files (a few hundred tries).
#
# Proof that every check can fail (2026-12-02): this suite run with NPUCC_TEAM_KEEP_GOING=1
# against d42ebe3 (the last commit before the issue-30 work) and against main (b92e87a):
#
# finding                                   check  d42ebe3 (old)                   main (new)
# ----------------------------------------  -----  ------------------------------  ---------------------
# 8 team recipe: a member's init (2770)     8      FAIL chmod: not permitted       pass
# 1 poisoned digest, with a key (unsigned)  1a     FAIL poisoned digest used       pass
# 1 poisoned digest, no key (another's)     1b     FAIL poisoned digest used       pass
# 1 verify with the key names it            1c     FAIL verify: exit 0             pass
# 3 hard link to a member's 0664 file       3a     FAIL member's write reached it  pass
# 3 hard link to a member's 0444 file       3b     FAIL member's write reached it  pass
# 4 forged manifest widens deletions        4      FAIL user's notes.txt deleted   pass
# 5 held lock/stats stalls a compile        5a     FAIL stalled (timeout 20 s)     pass
# 5 held lock/cleanup stalls purge          5b     FAIL stalled (timeout 20 s)     pass
# 2 purge: tmp/ swapped for a link          2a     FAIL race, try 3 of 300         pass (+100 race tries)
# 2 eviction: entries/<kk> swapped          2b     FAIL race, try 11 of 300        pass (+100 race tries)
# 2 verify --fix: models/<kk> swapped       2c     FAIL race, try 15 of 300        pass (+100 race tries)
# 6 models file keep_dtype = /abs/key       6a     FAIL key's contents printed     pass
# 6 models file keep_dtype = ../key         6b     FAIL key's contents printed     pass
# 6 models file keep_dtype = link out       6c     FAIL key's contents printed     pass
# 6 models file modify_mixlist = link out   6d     FAIL key read (3 bytes quoted)  pass
# 6 models file keep_dtype = FIFO           6e     FAIL hung (timeout 30 s)        pass
# 6 models file model path = link out       6f     FAIL compiled                   pass
# 6 options file modify_mixlist = /abs/key  6g     FAIL key read (3 bytes quoted)  pass
# 6 options file modify_mixlist = link out  6h     FAIL key read (3 bytes quoted)  pass
# 6 options file modify_mixlist = FIFO      6i     FAIL hung (timeout 30 s)        pass
# 7 100 MB string in a models file          7a     FAIL echoed: 100,000,188 bytes  pass
# 7 100 KB NPUCC_SHARD_INDEX                7b     FAIL echoed: 100,112 bytes      pass
#
# The old binary has no NPUCC_DEBUG_PAUSE hook (2a-2c stop: "never reached"); with
# NPUCC_TEAM_RACE_TRIES=300 the member's swapping lost the reader's files on the tries shown.
# 3b once passed on the old binary only because the kernel (fs.protected_hardlinks=1)
# refused the reader a link to a file it can neither own nor write; the reader now runs it
# with CAP_FOWNER (reader_fowner), which lifts that, so only npucc's rule refuses the link
# (issue 47: a one-line break of that rule fails 3b).
# 8's failure leaves the old binary's caches made by root (team_cache), so that the others
# still test their own finding.
source "$(dirname "$0")/team_common.sh"

# 8. The team recipe (README -> docs/ci-and-sharing.md), as written, with the member running init.
check_recipe() {
  local c="$WORK/team-cache"
  install -d -m 2770 -g "$TEAM" "$c"
  as "$M" "$NPUCC" cache init --shared group "$c" >"$WORK/out" 2>"$WORK/err" ||
    { cat "$WORK/err"; fail "init --shared group by a member on a 2770 folder failed"; }
  [ "$(stat -c %a "$c")" = 2770 ] && [ "$(stat -c %a "$c/entries")" = 2770 ] || fail "modes"
  [ "$(stat -c %a "$c/CACHEDIR.TAG")" = 644 ] || fail "CACHEDIR.TAG is not 0644 (umask 077)"
  pass "the team recipe works for a non-root member (folder already 2770)"
}

# 1. Poisoned input digests. The member rewrites the digest naming A's bytes to name B's.
# poison: as the member, every digest file of the cache that names A's SHA-256 now names
# B's; a file the member cannot write is replaced by the member's own copy.
poison() {
  local n=0 f
  for f in "$C"/digests/*/*; do
    grep -q "^sha256 $SA\$" "$f" 2>/dev/null || continue
    # A sample hint (npucc-input-sample) is poisoned too, but only orders the work: it decides
    # no entry, and verify need not remove it.
    head -1 "$f" | grep -qx 'npucc-input-digest 1' && echo "$f" >>"$WORK/poisoned" && n=$((n + 1))
    as "$M" sh -c "sed 's/^sha256 $SA\$/sha256 $SB/' '$f' >'$f.x' && chmod 664 '$f.x' && mv -f '$f.x' '$f'"
  done
  [ "$n" -gt 0 ] || fail "no digest of A recorded in $C"
}
# poisoned MODE NAME: a cache NAME (with the key or not) where A and B are compiled, A's
# digest recorded and then poisoned; ARGS holds the key option.
poisoned() {
  args=(); [ "$1" = key ] && args=(--cache-key-file "$KEY")
  team_cache "$WORK/cache-$2"
  rm -f "$WORK/poisoned"
  reader compile "$A" -o "$RH/a1-$1" "${args[@]}"; [ "$RC" = 0 ] || fail "$(cat "$WORK/err")"
  reader compile "$B" -o "$RH/b1-$1" "${args[@]}"; [ "$RC" = 0 ] || fail "$(cat "$WORK/err")"
  reader compile "$A" -o "$RH/a0-$1" "${args[@]}"
  contains "$WORK/out" "1 file by recorded digest"
  poison
}
# A compiled after the poisoning is A's graph, not B's; explain does not use the digest.
check_poison() {
  local mode=$1
  poisoned "$mode" "$mode"
  reader compile "$A" -o "$RH/a2-$mode" "${args[@]}"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "$mode: compile after poisoning failed"; }
  if grep -q "by recorded digest" "$WORK/out"; then
    cat "$WORK/out"; fail "$mode: a poisoned digest was used"
  fi
  cmp -s "$RH/a2-$mode/high.onnx" "$RH/a1-$mode/high.onnx" ||
    fail "$mode: A compiled to another model's graph after its digest was poisoned"
  poison # the compile above recorded A's digest afresh
  reader cache explain "$A" "${args[@]}"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "$mode: explain failed"; }
  ! grep -q "its recorded digest is used" "$WORK/out" ||
    { cat "$WORK/out"; fail "$mode: explain says the poisoned digest would be used"; }
  contains "$WORK/out" "not used"
  pass "a poisoned input digest is never used ($mode: $([ "$mode" = key ] && echo unsigned || echo "another user's"))"
}
# verify with the key reports the poisoned digest; --fix removes it.
check_poison_verify() {
  poisoned key verify
  reader cache verify --cache-key-file "$KEY"
  [ "$RC" = 3 ] || { cat "$WORK/out" "$WORK/err"; fail "verify with the key: want 3, got $RC"; }
  contains "$WORK/out" "input digest whose signature does not check"
  reader cache verify --fix --cache-key-file "$KEY"
  [ "$RC" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "verify --fix with the key: want 0 (all removed), got $RC"; }
  local f
  while read -r f; do
    ! grep -qs "^sha256 $SB\$" "$f" || fail "verify --fix left the poisoned digest $f"
  done <"$WORK/poisoned"
  reader cache verify --cache-key-file "$KEY"
  [ "$RC" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "verify after --fix: want 0 (nothing left), got $RC"; }
  reader compile "$A" -o "$RH/a3" --cache-key-file "$KEY"
  cmp -s "$RH/a3/high.onnx" "$RH/a1-key/high.onnx" || fail "after verify --fix: wrong graph"
  pass "verify with the key reports a poisoned digest; --fix removes it"
}

# reader_fowner ARGS...: reader() with CAP_FOWNER, which lifts fs.protected_hardlinks for
# it. With protected_hardlinks=1 (every distribution's default) the kernel refuses the
# reader a link to a member's 0444 file before npucc decides anything, so 3b could not fail;
# with CAP_FOWNER the kernel allows the link and only npucc's own rule can refuse it.
reader_fowner() {
  set +e
  (cd "$RH" && umask 077 &&
    setpriv --reuid="$R" --regid="$TEAM" --clear-groups --inh-caps +fowner --ambient-caps +fowner \
      env HOME="$RH" XDG_CACHE_HOME="$RH/.cache" "$NPUCC" "$@") >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
}

# 3. Hard links only to 0444 entry files owned by the reader or the cache's owner.
# The member replaces the entry's high.onnx with an own copy, same bytes, of MODE: 0664,
# or 0444 (which the member, its owner, may chmod back later).
# The member keeps a link of its own to its file (in its 0700 LINKS), so that its later
# write reaches the inode wherever npucc leaves it; a write that fails fails the check.
check_hardlink() {
  local mode=$1
  team_cache "$WORK/cache-link-$mode"
  reader compile "$B" -o "$RH/h0-$mode" --link-mode hardlink --cache-key-file "$KEY"
  local key; key=$(json_get "$RH/h0-$mode/manifest.json" "d['cache_key']")
  local e="$C/entries/${key:0:2}/$key" mine="$LINKS/mine-$mode"
  as "$M" sh -c "cp '$e/high.onnx' '$e/h.x' && chmod $mode '$e/h.x' && ln -f '$e/h.x' '$mine' &&
    mv -f '$e/h.x' '$e/high.onnx'"
  local theirs; theirs=$(stat -c %i "$e/high.onnx")
  reader_fowner compile "$B" -o "$RH/h1-$mode" --link-mode hardlink --cache-key-file "$KEY"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "hardlink $mode: compile failed"; }
  local before; before=$(sha "$RH/h1-$mode/high.onnx")
  as "$M" sh -c "chmod u+w '$mine' && printf x >>'$mine'" ||
    fail "hardlink $mode: the member could not write its own file (the attack did not run)"
  [ "$(sha "$RH/h1-$mode/high.onnx")" = "$before" ] ||
    fail "hardlink $mode: the member's write changed the reader's high.onnx"
  [ "$(stat -c %i "$RH/h1-$mode/high.onnx")" != "$theirs" ] ||
    fail "hardlink $mode: the output shares the member's inode"
  pass "a hit links only 0444 files of the reader or the cache's owner (a member's $mode file is copied)"
}

# 4. A forged entry's manifest (no key) never widens what a compile deletes.
check_manifest() {
  team_cache "$WORK/cache-manifest"
  reader compile "$B" -o "$RH/m0"
  local key; key=$(json_get "$RH/m0/manifest.json" "d['cache_key']")
  as "$M" /usr/bin/python3 - "$C/entries/${key:0:2}/$key" <<'EOF'
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
  pass "a delivered manifest never makes a compile delete a file npucc does not write"
}

# 5. No member can stall another. hold LOCK: the member holds lock/LOCK until released.
hold() {
  rm -f "$PAUSE/held" "$PAUSE/release"
  as "$M" flock -x "$C/lock/$1" sh -c \
    "touch '$PAUSE/held'; i=0; while [ ! -e '$PAUSE/release' ] && [ \$i -lt 2400 ]; do sleep 0.05; i=\$((i+1)); done" &
  HOLDER=$!
  wait_for "$PAUSE/held"
}
release() { touch "$PAUSE/release"; wait "$HOLDER"; }
check_stats_lock() {
  team_cache "$WORK/cache-stats"
  reader compile "$B" -o "$RH/s0" # makes lock/stats, group-writable
  hold stats
  set +e; as "$R" timeout 20 "$NPUCC" compile "$B" -o "$RH/s1" >"$WORK/out" 2>"$WORK/err"; RC=$?; set -e
  release
  [ "$RC" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "a held lock/stats stalled or failed a compile ($RC)"; }
  contains "$WORK/out" "cache: hit"
  contains "$WORK/out" "statistics not updated"
  pass "a held statistics lock is skipped with a note"
}
check_cleanup_lock() {
  team_cache "$WORK/cache-cleanup"
  reader compile "$B" -o "$RH/c0"
  reader cache purge --older-than 30d # makes lock/cleanup
  hold cleanup
  set +e
  as "$R" env NPUCC_CACHE_LOCK_TIMEOUT=1 timeout 20 "$NPUCC" cache purge --older-than 30d >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  release
  [ "$RC" != 124 ] || fail "a held lock/cleanup stalled purge past its timeout"
  [ "$RC" != 0 ] || fail "purge reported success though it could not take lock/cleanup"
  [ "$(grep -c "error:" "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "want one error line"; }
  contains "$WORK/err" "lock/cleanup is held by another process"
  reader cache purge --older-than 30d
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "purge after the lock was released"; }
  pass "a held cleanup lock fails purge in one line"
}

# 2. Swaps during sweeps. The reader's private folder holds old files whose names the
# member can guess; the member swaps a cache folder for a link to that folder while the
# reader's sweep runs: at a debug pause, or (NPUCC_TEAM_RACE_TRIES) racing it.
V="$RH/victim"
# victim KEY: a fresh private folder with an old file, an old folder with a file, and (for
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
# swept POINT FOLDER KEY LABEL SETUP -- npucc-args...: runs the reader's npucc sweep while
# the member swaps FOLDER (of the cache) for a link to the victim folder; the function
# SETUP puts back what the sweep finds. RC, out and err as reader() keeps them.
swept() {
  local point=$1 folder=$2 key=$3 label=$4 setup=$5; shift 6
  local tries=${NPUCC_TEAM_RACE_TRIES:-0} i
  if [ "$tries" = 0 ]; then
    victim "$key"; "$setup"
    paused "$point" "mv '$folder' '$folder.away' && ln -s '$V' '$folder'" "$@"
    victim_intact "$key" "$label"
    as "$M" sh -c "rm -f '$folder' && mv '$folder.away' '$folder'"
    return
  fi
  for i in $(seq "$tries"); do
    victim "$key"; "$setup"
    raced "$folder" "$@"
    victim_intact "$key" "$label (race, try $i of $tries)"
  done
}
# paused POINT SWAP npucc-args...: npucc as the reader paused at POINT, SWAP run as the
# member there, then it goes on.
paused() {
  local point=$1 swap=$2; shift 2
  rm -f "$PAUSE/$point.reached" "$PAUSE/$point.go"
  set +e
  as "$R" env NPUCC_DEBUG_PAUSE="$point" NPUCC_DEBUG_PAUSE_DIR="$PAUSE" timeout 120 "$NPUCC" "$@" \
    >"$WORK/out" 2>"$WORK/err" &
  local pid=$!
  set -e
  wait_for "$PAUSE/$point.reached" $pid
  as "$M" sh -c "$swap"
  touch "$PAUSE/$point.go"
  set +e; wait $pid; RC=$?; set -e
}
# raced FOLDER npucc-args...: npucc as the reader while the member swaps FOLDER with a
# link to the victim folder back and forth; both put back in place afterwards.
raced() {
  local folder=$1; shift
  local link="$LINKS/flip"
  as "$M" sh -c "rm -f '$link' && ln -s '$V' '$link'"
  rm -f "$PAUSE/flipping" "$PAUSE/stop"
  as "$M" /usr/bin/python3 "$FLIPPER" "$folder" "$link" "$PAUSE/flipping" "$PAUSE/stop" &
  local flipper=$!
  wait_for "$PAUSE/flipping" $flipper
  set +e; as "$R" timeout 60 "$NPUCC" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?; set -e
  touch "$PAUSE/stop"; wait $flipper
  if [ -L "$folder" ] || [ ! -e "$folder" ]; then # an odd number of swaps, or the link removed
    as "$M" sh -c "rm -f '$folder' && mv '$link' '$folder'"
  fi
}
# An entry of B, its key in KEY_B.
entry_of_b() {
  reader compile "$B" -o "$RH/p0"
  KEY_B=$(json_get "$RH/p0/manifest.json" "d['cache_key']")
}
# 2a. purge: tmp/ swapped for a link after it was listed. stale_tmp: the member's old
# files in tmp/, named as the victim's.
stale_tmp() {
  as "$M" sh -c "mkdir -p '$C/tmp/old' && touch '$C/tmp/data.bin' '$C/tmp/old/f' &&
    touch -h -d '2 hours ago' '$C/tmp/data.bin' '$C/tmp/old/f' '$C/tmp/old'"
}
check_swap_tmp() {
  team_cache "$WORK/cache-swap-tmp"
  entry_of_b
  swept purge-tmp "$C/tmp" "$KEY_B" "purge with tmp/ swapped" stale_tmp -- cache purge --older-than 30d
  if [ "${NPUCC_TEAM_RACE_TRIES:-0}" = 0 ]; then
    [ "$RC" != 0 ] || fail "purge with tmp/ swapped reported success"
    contains "$WORK/err" "was renamed or replaced while it was swept"
  fi
  pass "purge never follows tmp/ swapped for a link"
}
# 2b. eviction: entries/<kk> swapped for a link to a folder holding a folder named KEY.
# entry_back: B's entry as the reader stored it (each try's purge --all removed it).
entry_back() {
  [ -d "$C/entries/${KEY_B:0:2}/$KEY_B" ] || cp -a "$WORK/entry-saved" "$C/entries/${KEY_B:0:2}/$KEY_B"
}
check_swap_evict() {
  team_cache "$WORK/cache-swap-evict"
  entry_of_b
  local kk=${KEY_B:0:2}
  rm -rf "$WORK/entry-saved"; cp -a "$C/entries/$kk/$KEY_B" "$WORK/entry-saved"
  swept evict "$C/entries/$kk" "$KEY_B" "purge --all with entries/$kk swapped" entry_back -- cache purge --all
  [ "${NPUCC_TEAM_RACE_TRIES:-0}" != 0 ] || contains "$WORK/err" "not a folder (a link?)"
  pass "eviction never follows entries/<kk> swapped for a link"
}
# 2c. verify --fix: a stray in models/<kk>/ found, then models/<kk> swapped for a link.
stray_model() { as "$M" sh -c "mkdir -p -m 2770 '$C/models/aa' && echo junk >'$C/models/aa/data.bin'"; }
check_swap_verify() {
  team_cache "$WORK/cache-swap-verify"
  swept verify-stray "$C/models/aa" k "verify --fix with models/aa swapped" stray_model -- cache verify --fix
  [ "${NPUCC_TEAM_RACE_TRIES:-0}" != 0 ] || contains "$WORK/err" "not a folder (a link?)"
  pass "verify --fix never follows models/<kk> swapped for a link"
}

# 6. A models file names only files inside its folder, regular, bounded, never echoed.
MF="$RH/ci"; as "$R" mkdir -p "$MF"
cp "$B" "$MF/m.onnx"; chown "$R:$TEAM" "$MF/m.onnx"
SECRET=$(as "$R" head -c 32 "$KEY")
as "$R" ln -s "$KEY" "$MF/link"
as "$R" mkfifo "$MF/fifo"
as "$R" ln -s "$B" "$MF/out.onnx"
# check_models_value KEY VALUE WHY: populate refuses KEY = VALUE before reading it: in one
# line naming KEY and saying WHY (the file is outside the folder, or not a regular file),
# nothing of the file printed.
check_models_value() {
  local k=$1 v=$2 why=${3//_/ }
  team_cache "$WORK/cache-models"
  as "$R" sh -c "printf '[[model]]\npath = \"m.onnx\"\n%s = \"%s\"\n' '$k' '$v' >'$MF/models.toml'"
  set +e
  as "$R" timeout 30 "$NPUCC" cache populate --models "$MF/models.toml" --accelerate-train-mode 'fast|step|0.9' \
    >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  [ "$RC" != 124 ] || fail "$k = $v: populate hung"
  [ "$RC" != 0 ] || { cat "$WORK/out"; fail "$k = $v: populate accepted it"; }
  ! grep -q "$SECRET" "$WORK/out" "$WORK/err" || fail "$k = $v: the key's contents were printed"
  contains "$WORK/err" "$why"
  contains "$WORK/err" "$k"
  [ "$(grep -c . "$WORK/err")" -le 2 ] || { cat "$WORK/err"; fail "$k = $v: more than an error and a hint"; }
  pass "a models file's $k = \"$v\" is refused in one line, nothing of it printed"
}
check_models_path() {
  team_cache "$WORK/cache-models"
  as "$R" sh -c "printf '[[model]]\npath = \"out.onnx\"\n' >'$MF/models.toml'"
  reader cache populate --models "$MF/models.toml"
  [ "$RC" != 0 ] || fail "a model path that is a symlink out of the folder was compiled"
  contains "$WORK/err" "leads outside"
  pass "a models file's model path that leads outside its folder is refused"
}
# The same for a file an --options file names (a lowering mode: modify_mixlist applies).
check_options_value() {
  local v=$1 why=${2//_/ }
  as "$R" sh -c "printf '{\"modify_mixlist\": \"%s\"}' '$v' >'$MF/opts.json'"
  set +e
  as "$R" timeout 30 "$NPUCC" compile "$B" -o "$RH/o1" --no-cache --options "$MF/opts.json" \
    --accelerate-train-mode 'fast|step|0.9' \
    >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  [ "$RC" != 124 ] || fail "options file, modify_mixlist $v: compile hung"
  [ "$RC" != 0 ] || fail "options file, modify_mixlist $v: accepted"
  ! grep -q "$SECRET" "$WORK/out" "$WORK/err" || fail "options file, $v: the key's contents were printed"
  contains "$WORK/err" "$why"
  contains "$WORK/err" "modify_mixlist"
  pass "an options file's modify_mixlist = \"$v\" is refused, nothing of it printed"
}

# 7. Bounded inputs: a 100 MB string in a models file, a 100 KB shard variable.
check_huge_string() {
  team_cache "$WORK/cache-models"
  as "$R" /usr/bin/python3 -c "
open('$MF/big.toml', 'w').write('[[model]]\npath = \"m.onnx\"\ninput_shape = \"' + 'x' * 100000000 + '\"\n')"
  reader cache populate --models "$MF/big.toml"
  rm -f "$MF/big.toml"
  [ "$RC" != 0 ] || fail "a 100 MB string was accepted"
  [ "$(wc -c <"$WORK/err")" -lt 2000 ] || fail "a 100 MB string was echoed: $(wc -c <"$WORK/err") bytes"
  pass "a huge value in a models file is refused in a short line"
}
check_huge_shard() {
  team_cache "$WORK/cache-models"
  local big; big=$(head -c 100000 /dev/zero | tr '\0' 7)
  set +e
  as "$R" env NPUCC_SHARD_INDEX="x$big" NPUCC_SHARD_COUNT=2 "$NPUCC" cache populate "$MF" --shard auto \
    >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  [ "$RC" != 0 ] || fail "a bad NPUCC_SHARD_INDEX was accepted"
  [ "$(wc -c <"$WORK/err")" -lt 2000 ] || fail "NPUCC_SHARD_INDEX was echoed whole: $(wc -c <"$WORK/err") bytes"
  pass "a huge shard variable is refused in a short line"
}

# The checks: ID, then the command. Each runs in a subshell, so a failed one ends alone.
CHECKS=(
  "8 check_recipe"
  "1a check_poison key" "1b check_poison nokey" "1c check_poison_verify"
  "3a check_hardlink 664" "3b check_hardlink 444"
  "4 check_manifest"
  "5a check_stats_lock" "5b check_cleanup_lock"
  "2a check_swap_tmp" "2b check_swap_evict" "2c check_swap_verify"
  "6a check_models_value keep_dtype $KEY is_not_inside" "6b check_models_value keep_dtype ../key is_not_inside"
  "6c check_models_value keep_dtype link leads_outside" "6d check_models_value modify_mixlist link leads_outside"
  "6e check_models_value keep_dtype fifo not_a_regular_file" "6f check_models_path"
  "6g check_options_value $KEY is_not_inside" "6h check_options_value link leads_outside"
  "6i check_options_value fifo not_a_regular_file"
  "7a check_huge_string" "7b check_huge_shard"
)
run_checks
