# Sourced by the two-user suites (tests/e2e/test_cache_team*.sh), after their header: two
# unprivileged users in one group, a reader R (who holds the cache key, in a 0700 home) and a
# member M (who does not), each run through `as USER command...`; team_cache DIR makes a
# team cache as the README says; reader ARGS... runs npucc as the reader. run_checks runs
# the suite's CHECKS array, each check alone in a subshell (NPUCC_TEAM_ONLY=ID,... runs some,
# NPUCC_TEAM_KEEP_GOING=1 runs all and prints a summary).
# Needs root (to create the users; every npucc here runs as one of them) and setpriv.
source "$(dirname "$0")/cache_common.sh"
unset NPUCC_CACHE_KEY_FILE NPUCC_CACHE_READ_ONLY NPUCC_CACHE_SHARED NPUCC_CACHE_LOCK_TIMEOUT
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v useradd >/dev/null; then
  skip_suite "needs root, setpriv and useradd (creates two users and a group)"
fi
FLIPPER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/swap_flipper.py"
TEAM="npct$$"; R="npcr$$"; M="npcm$$"
cleanup() {
  local status=$?
  userdel "$R" 2>/dev/null || true  # honest: cleanup at exit, after the checks
  userdel "$M" 2>/dev/null || true  # honest: cleanup at exit, after the checks
  groupdel "$TEAM" 2>/dev/null || true  # honest: cleanup at exit, after the checks
  if [ $status -eq 0 ] || [ $status -eq 77 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi
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
# wait_for FILE [PID]: until FILE exists (an observable state, not a time), at most ~60 s;
# a PID that ends first means FILE will never come.
wait_for() {
  local i
  for i in $(seq 1200); do
    [ -e "$1" ] && return 0
    if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
      [ -e "$1" ] && return 0
      fail "$1 never appeared: the process ended first (an npucc without the NPUCC_DEBUG_PAUSE hook?)"
    fi
    sleep 0.05
  done
  fail "$1 never appeared"
}
settle() { sleep 2.2; } # inputs older than the racy margin, so digests are recorded
PAUSE="$WORK/pause"; install -d -m 777 "$PAUSE"
LINKS="$WORK/links"; install -d -m 700 -o "$M" -g "$TEAM" "$LINKS" # the member's swap links

# team_cache DIR: a team cache made as the README says (the member runs init on a 2770
# folder); an npucc that cannot (before issue 30) has root run init instead, so that
# every other check still tests its own finding. Becomes the cache of the calling check.
team_cache() {
  install -d -m 2770 -g "$TEAM" "$1"
  as "$M" "$NPUCC" cache init --shared group "$1" >/dev/null 2>&1 ||
    (umask 022 && "$NPUCC" cache init --shared group "$1" >/dev/null)
  C=$1
  export NPUCC_CACHE_DIR="$1"
}

# The reader's private project: two models, and the key only the reader can read.
P="$RH/proj"; as "$R" mkdir -p "$P"
cp "$TESTDATA/models/oww_hello_deepa.onnx" "$TESTDATA/models/ppocr_cls.onnx" "$P/"
chown "$R:$TEAM" "$P"/*.onnx
as "$R" sh -c 'openssl rand -hex 32 >"$HOME/key"'
KEY="$RH/key"
A="$P/oww_hello_deepa.onnx"; B="$P/ppocr_cls.onnx"
SA=$(sha "$A"); SB=$(sha "$B")
settle

# reader ARGS...: npucc as the reader, its status, output and error kept.
reader() { set +e; as "$R" "$NPUCC" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?; set -e; }


# run_checks: runs every "ID function args..." of CHECKS; exits non-zero when one failed.
run_checks() {
  local entry id status words
  RESULTS=()
  for entry in "${CHECKS[@]}"; do
    read -r -a words <<<"$entry"
    id=${words[0]}
    if [ -n "${NPUCC_TEAM_ONLY:-}" ] && [[ ",$NPUCC_TEAM_ONLY," != *",$id,"* ]]; then
      continue
    fi
    set +e; (set -e; "${words[@]:1}"); status=$?; set -e
    if [ $status = 0 ]; then
      RESULTS+=("$id pass")
    else
      RESULTS+=("$id FAIL")
      [ "${NPUCC_TEAM_KEEP_GOING:-0}" = 1 ] || exit 1
    fi
  done
  echo "team checks ($NPUCC):"
  printf '  %s\n' "${RESULTS[@]}"
  ! printf '%s\n' "${RESULTS[@]}" | grep -q FAIL
}
