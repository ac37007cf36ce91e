#!/usr/bin/env bash
# `npucc schedule --state-file`: the one-way switch holds across separate calls and across
# a resumed run; a file npucc did not write, or saved under another mode, is refused and
# left untouched.
set -u
: "${NPUCC:?NPUCC must point at the npucc binary}"

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-schedule-state.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

mode='fast1|loss|1.1' # high once loss <= 1.1 * 1.0
# decide STATE_FILE LOSS: prints the decision (stdout) and keeps stderr in $work/err.
decide() {
  env -u LOSS_NOW -u TARGET_LOSS "$NPUCC" schedule --accelerate-train-mode "$mode" \
    --loss "$2" --final-loss 1.0 --state-file "$1" 2>"$work/err"
}
# expect WANT STATE_FILE LOSS
expect() {
  local got
  got=$(decide "$2" "$3")
  [[ $got == "$1" ]] || fail "loss $3 with $(basename "$2"): got '$got', wanted '$1' ($(cat "$work/err"))"
}

state="$work/state.json"
expect low "$state" 2.0
[[ -f $state ]] || fail "the first call did not create the state file"
grep -q '"format": "npucc-schedule-state"' "$state" || fail "state file lacks its format: $(cat "$state")"
cp "$state" "$work/before-switch.json" # the checkpoint a resumed run starts from
expect low "$state" 1.5
expect high "$state" 1.05
grep -q '"role": "high"' "$state" || fail "state file does not record the switch: $(cat "$state")"
# The loss rises back above the threshold: two more separate calls stay high.
expect high "$state" 3.0
expect high "$state" 2.5
# Without the state file each call answers on its own (the old behaviour).
got=$("$NPUCC" schedule --accelerate-train-mode "$mode" --loss 3.0 --final-loss 1.0)
[[ $got == low ]] || fail "without --state-file: got '$got', wanted low"
# A run resumed from the checkpoint taken before the switch runs low again.
expect low "$work/before-switch.json" 3.0
expect high "$work/before-switch.json" 1.0
# --json names the file.
"$NPUCC" schedule --accelerate-train-mode "$mode" --loss 3 --final-loss 1 --state-file "$state" \
  --json | grep -q "\"state_file\": \"$state\"" || fail "--json does not name the state file"

# refused WHY STATE_FILE ARGS...: exit 2, one line naming the file, the file left as it was.
refused() {
  local why=$1 file=$2
  shift 2
  local before status
  before=$(cat "$file" 2>/dev/null)
  env -u LOSS_NOW -u TARGET_LOSS "$NPUCC" schedule "$@" --state-file "$file" >/dev/null 2>"$work/err"
  status=$?
  [[ $status -eq 2 ]] || fail "$why: exit $status, wanted 2"
  [[ $(wc -l <"$work/err") -eq 1 ]] || fail "$why: not one line: $(cat "$work/err")"
  grep -qF -- "--state-file $file" "$work/err" || fail "$why: message does not name the file: $(cat "$work/err")"
  [[ $(cat "$file" 2>/dev/null) == "$before" ]] || fail "$why: the file was changed"
}
refused "another mode" "$state" --accelerate-train-mode 'fast1|loss|1.2' --loss 3 --final-loss 1
grep -q "remove this one to start the schedule over" "$work/err" || fail "another mode: no fix in $(cat "$work/err")"
refused "another trigger" "$state" --accelerate-train-mode 'fast1|step' --step 1 --total-step 10
printf '{"epoch": 3}\n' >"$work/foreign.json"
refused "a foreign JSON file" "$work/foreign.json" --accelerate-train-mode "$mode" --loss 1 --final-loss 1
printf 'not json at all' >"$work/corrupt.json"
refused "a corrupt file" "$work/corrupt.json" --accelerate-train-mode "$mode" --loss 1 --final-loss 1
printf '{"format":"npucc-schedule-state","format_version":1,"mode":"fast|loss","role":"high","switched":false}' \
  >"$work/damaged.json"
refused "a self-contradicting state" "$work/damaged.json" --accelerate-train-mode 'fast|loss' --loss 1 --final-loss 1
mkdir "$work/folder"
refused "a folder" "$work/folder" --accelerate-train-mode "$mode" --loss 1 --final-loss 1
# No temporary is left beside the state file.
leftovers=$(find "$work" -name '*.tmp.*')
[[ -z $leftovers ]] || fail "temporary files left: $leftovers"

echo "$failures failures"
[[ $failures -eq 0 ]]
