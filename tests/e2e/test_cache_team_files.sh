#!/usr/bin/env bash
# Issue 42, findings 1 and 5: in a team cache (tests/e2e/team_common.sh: a reader R with the
# key, a member M without it), the member cannot stall the reader by swapping a name the
# reader opens for a FIFO, and a models file's sample_inputs is checked as its other paths.
#
# 1. Stall by FIFO swap. The member keeps exchanging a name in the cache with a FIFO of
#    theirs (renameat2(RENAME_EXCHANGE), tests/e2e/swap_flipper.py) while the reader
#    compiles NPUCC_TEAM_FIFO_TRIES times (default 20), each under `timeout`: a compile that
#    opens the FIFO without O_NONBLOCK waits for a writer forever. The names: CACHEDIR.TAG
#    (read by every compile), the signed entry's entry.sig (read by a keyed hit), and its
#    high.onnx (copied out by a hit). Each compile must end, either delivering the right
#    graph or refusing in one line; never time out.
# 5. A models file's sample_inputs: outside its folder (../, absolute, a link out), a FIFO
#    (populate used to wait on it forever), and a path the reader cannot read (it used to
#    be "internal error: filesystem error") are each refused in one line naming the key.
#
# Proof that every check can fail (2026-12-06), NPUCC_TEAM_KEEP_GOING=1, against main's
# binary (bd1ceee = 608ba00 + the manifest_reader build fix) and this branch:
#
# finding                                   check  main (bd1ceee)                        branch
# ----------------------------------------  -----  ------------------------------------  ------
# 1 CACHEDIR.TAG swapped with a FIFO        1a     FAIL hung: compile 10 of 20 (1st run),  pass
#                                                  cache stats 81 of 200 (2nd run)
# 1 entry.sig swapped, keyed verify         1b     FAIL hung: run 5, then 22, of 200       pass
# 1 high.onnx swapped, keyed verify         1c     FAIL hung: run 27, then 8, of 200       pass
# 5 sample_inputs = ../../../../etc/hostname 5a    FAIL read: "not a folder or a .npz"     pass
# 5 sample_inputs = /etc/hostname           5b     FAIL read: "not a folder or a .npz"     pass
# 5 sample_inputs = a link out              5c     FAIL read: "not a folder or a .npz"     pass
# 5 sample_inputs = a FIFO                  5d     FAIL populate hung (timeout 30 s)       pass
# 5 sample_inputs unreadable (0700 folder)  5e     FAIL "internal error: filesystem error" pass
#
# A keyless hit delivering a swapped high.onnx was tried too (20 compiles): main did not
# hang, because the first swap a hit sees makes the entry corrupt and the recompile
# replaces the folder with the member's FIFO in it; 1c covers the same open.
source "$(dirname "$0")/team_common.sh"

TRIES=${NPUCC_TEAM_FIFO_TRIES:-200}

# flipping NAME: the member exchanges NAME (in the cache) with a FIFO of theirs beside it,
# as fast as it can, until stop_flipping; an even number of swaps per round, so NAME is
# as it was when it stops.
flipping() {
  local name=$1
  rm -f "$PAUSE/flip-started" "$PAUSE/flip-stop"
  as "$M" sh -c "[ -p '$name.fifo' ] || mkfifo -m 664 '$name.fifo'"
  as "$M" /usr/bin/python3 "$FLIPPER" "$name" "$name.fifo" "$PAUSE/flip-started" "$PAUSE/flip-stop" &
  FLIPPER_PID=$!
  wait_for "$PAUSE/flip-started" "$FLIPPER_PID"
}
stop_flipping() {
  touch "$PAUSE/flip-stop"
  wait "$FLIPPER_PID" || true # honest: the flipper ends by its stop file; its status says nothing of npucc
}

# runs_through_swaps WHAT N CHECK ARGS...: npucc ARGS run N times by the reader while the
# member flips; none may hang (timeout 10 s each, far above a hit's or a verify's). After
# each run, CHECK RC judges its outcome (out and err in $WORK).
runs_through_swaps() {
  local what=$1 n=$2 check=$3; shift 3
  local i rc
  for i in $(seq "$n"); do
    set +e
    as "$R" timeout -k 5 10 "$NPUCC" "$@" >"$WORK/out" 2>"$WORK/err"
    rc=$?; set -e
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      stop_flipping
      fail "$what: run $i of $n hung in npucc $1 (killed by timeout after 10 s)"
    fi
    "$check" "$rc" || { stop_flipping; fail "$what: run $i of $n: $(head -c 300 "$WORK/err")"; }
  done
  stop_flipping
}
# A compile's outcome: B's graph, or one error line.
compiled_b() {
  if [ "$1" = 0 ]; then
    [ "$(sha "$RH/fifo/high.onnx")" = "$GOOD" ]
  else
    [ "$(grep -c '^npucc: error' "$WORK/err")" = 1 ]
  fi
}
# A verify's outcome: 0 (the entry checks out) or 3 (a finding: the FIFO was seen), never
# anything else.
verified() { [ "$1" = 0 ] || [ "$1" = 3 ]; }

# A fresh team cache holding B's entry (signed with the key), and B's graph's digest.
cache_with_entry() {
  team_cache "$WORK/cache-$1"
  reader compile "$B" -o "$RH/ref-$1" --cache-key-file "$KEY"
  [ "$RC" = 0 ] || { cat "$WORK/err"; fail "the first compile failed"; }
  GOOD=$(sha "$RH/ref-$1/high.onnx")
  local key; key=$(json_get "$RH/ref-$1/manifest.json" "d['cache_key']")
  E="$C/entries/${key:0:2}/$key"
  [ -f "$E/entry.sig" ] || fail "no entry.sig in $E"
}

# 1a. CACHEDIR.TAG, which every command reads to know the folder is a cache: compiles
# (20), then cache stats (TRIES).
check_fifo_tag() {
  cache_with_entry tag
  flipping "$C/CACHEDIR.TAG"
  runs_through_swaps "CACHEDIR.TAG swapped with a FIFO" 20 compiled_b compile "$B" -o "$RH/fifo"
  flipping "$C/CACHEDIR.TAG"
  runs_through_swaps "CACHEDIR.TAG swapped with a FIFO" "$TRIES" true cache stats
  pass "a member swapping CACHEDIR.TAG with a FIFO stalls no compile nor cache stats"
}
# fifo_in_entry NAME: the signed entry's NAME swapped with a FIFO while the reader verifies
# with the key (every file opened and hashed, entry.sig read), TRIES times.
check_fifo_entry() {
  cache_with_entry "entry-${1%%.*}"
  flipping "$E/$1"
  runs_through_swaps "the entry's $1 swapped with a FIFO" "$TRIES" verified cache verify --cache-key-file "$KEY"
  pass "a member swapping a signed entry's $1 with a FIFO stalls no keyed verify"
}

# 5. A models file's sample_inputs, as its other paths: inside its folder, a regular file
# or folder, readable; refused in one line naming the key, nothing of the file printed.
MF="$RH/ci"; as "$R" mkdir -p "$MF"
cp "$B" "$MF/m.onnx"; chown "$R:$TEAM" "$MF/m.onnx"
SECRET=$(as "$R" head -c 32 "$KEY")
as "$R" ln -s "$RH" "$MF/out"          # a folder link out of the models file's folder
as "$R" mkfifo "$MF/fifo"
install -d -m 700 -o root "$MF/locked" # the reader cannot enter it
# check_samples_value VALUE WHY: populate refuses sample_inputs = VALUE before reading it.
check_samples_value() {
  local v=$1 why=${2//_/ }
  team_cache "$WORK/cache-samples"
  as "$R" sh -c "printf '[[model]]\npath = \"m.onnx\"\nsample_inputs = \"%s\"\n' '$v' >'$MF/models.toml'"
  set +e
  as "$R" timeout -k 5 30 "$NPUCC" cache populate --models "$MF/models.toml" \
    --accelerate-train-mode 'fast|step|0.9' >"$WORK/out" 2>"$WORK/err"
  RC=$?; set -e
  [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "sample_inputs = $v: populate hung"
  [ "$RC" != 0 ] || { cat "$WORK/out"; fail "sample_inputs = $v: populate accepted it"; }
  ! grep -q "internal error" "$WORK/err" || { cat "$WORK/err"; fail "sample_inputs = $v: an internal error"; }
  ! grep -q "$SECRET" "$WORK/out" "$WORK/err" || fail "sample_inputs = $v: the key's contents were printed"
  contains "$WORK/err" "$why"
  contains "$WORK/err" "sample_inputs"
  [ "$(grep -c . "$WORK/err")" -le 2 ] || { cat "$WORK/err"; fail "sample_inputs = $v: more than an error and a hint"; }
  pass "a models file's sample_inputs = \"$v\" is refused in one line"
}

CHECKS=(
  "1a check_fifo_tag" "1b check_fifo_entry entry.sig" "1c check_fifo_entry high.onnx"
  "5a check_samples_value ../../../../etc/hostname is_not_inside"
  "5b check_samples_value /etc/hostname is_not_inside"
  "5c check_samples_value out/key leads_outside"
  "5d check_samples_value fifo neither_a_regular_file_nor_a_folder"
  "5e check_samples_value locked/s.npz cannot_be_read"
)
run_checks
