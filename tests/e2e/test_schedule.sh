#!/usr/bin/env bash
# Black-box table for `npucc schedule`: decisions, the Ascend environment fallback, usage errors.
set -u
: "${NPUCC:?NPUCC must point at the npucc binary}"

failures=0
cases=0

# check EXPECTED_STATUS EXPECTED_STDOUT STDERR_PATTERN -- [VAR=value ...] -- ARGS...
# EXPECTED_STDOUT and STDERR_PATTERN may be "" to skip that comparison.
check() {
  local want_status=$1 want_out=$2 want_err=$3
  shift 4
  local env_vars=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    env_vars+=("$1")
    shift
  done
  shift
  cases=$((cases + 1))
  local out err status
  err=$(mktemp)
  # A clean environment apart from the listed variables, so a stray STEP_NOW cannot leak in.
  out=$(env -u STEP_NOW -u TOTAL_STEP -u LOSS_NOW -u TARGET_LOSS "${env_vars[@]}" \
    "$NPUCC" schedule "$@" 2>"$err")
  status=$?
  local problem=""
  if [[ $status -ne $want_status ]]; then
    problem="exit $status, wanted $want_status"
  elif [[ -n $want_out && $out != "$want_out" ]]; then
    problem="stdout '$out', wanted '$want_out'"
  elif [[ -n $want_err ]] && ! grep -q -- "$want_err" "$err"; then
    problem="stderr lacks '$want_err'"
  fi
  if [[ -n $problem ]]; then
    failures=$((failures + 1))
    echo "FAIL: ${env_vars[*]} npucc schedule $*: $problem"
    sed 's/^/  stderr: /' "$err"
  fi
  rm -f "$err"
}

m=--accelerate-train-mode

# Step rule: floor(10000 * 0.9) = 9000.
check 0 low "" -- -- $m 'fast|step|0.9' --step 8999 --total-step 10000
check 0 high "" -- -- $m 'fast|step|0.9' --step 9000 --total-step 10000
check 0 high "" -- -- $m 'fast|step' --step 9000 --total-step 10000
check 0 low "" -- -- $m 'fast|step' --step 0 --total-step 10000
check 0 high "" -- -- $m 'fast|step|0.2' --step 2000 --total-step 10000
check 0 low "" -- -- $m 'fast|step|0.2' --step 1999 --total-step 10000
check 0 low "" -- -- $m 'fast|step|0.29' --step 28 --total-step 100
check 0 high "" -- -- $m 'fast|step|0.29' --step 29 --total-step 100
# Last-loop guard: step + iterations_per_loop >= total_step.
check 0 low "" -- -- $m 'fast|step|0.9' --step 7999 --total-step 10000 --iterations-per-loop 2000
check 0 high "" -- -- $m 'fast|step|0.9' --step 8000 --total-step 10000 --iterations-per-loop 2000
check 0 high "" -- -- $m 'fast1|step|0.9' --step 8 --total-step 10 --iterations-per-loop 2
# Loss rule: loss != 0 and loss <= final_loss * ratio (Ascend's own test values).
check 0 high "" -- -- $m 'fast1|loss|1.1' --loss 1.21 --final-loss 1.1
check 0 low "" -- -- $m 'fast1|loss|1.1' --loss 1.22 --final-loss 1.1
check 0 low "" -- -- $m 'fast1|loss|1.1' --loss 0 --final-loss 1.1
check 0 high "" -- -- $m 'fast|loss' --loss 1.05 --final-loss 1
check 0 low "" -- -- $m 'fast|loss' --loss 1.051 --final-loss 1
check 0 high "" -- -- $m 'fast|loss' --loss 2.5e-3 --final-loss 0.01
# Ascend's environment variables when the flags are absent; flags win over them.
check 0 high "" -- STEP_NOW=9000 TOTAL_STEP=10000 -- $m 'fast|step'
check 0 low "" -- STEP_NOW=8999 TOTAL_STEP=10000 -- $m 'fast|step'
check 0 low "" -- STEP_NOW=9000 TOTAL_STEP=10000 -- $m 'fast|step' --step 10
check 0 high "" -- STEP_NOW=9000 -- $m 'fast|step' --total-step 10000
check 0 high "" -- LOSS_NOW=1.21 TARGET_LOSS=1.1 -- $m 'fast1|loss|1.1'
check 0 low "" -- LOSS_NOW=0.0 TARGET_LOSS=1.1 -- $m 'fast1|loss|1.1'
# The hook may set both kinds; only the trigger's variables are read.
check 0 high "" -- STEP_NOW=1 TOTAL_STEP=2 LOSS_NOW=1.21 TARGET_LOSS=1.1 -- $m 'fast1|loss|1.1'

# Usage errors: exit 2 with a message naming the problem.
check 2 "" "cannot be mixed" -- -- $m 'fast|step' --step 1 --total-step 10 --loss 1
check 2 "" "switches on step" -- -- $m 'fast|step' --loss 1 --final-loss 1
check 2 "" "switches on loss" -- -- $m 'fast|loss' --step 1 --total-step 10
check 2 "" "switches on loss" -- -- $m 'fast|loss' --iterations-per-loop 10
check 2 "" "missing --total-step" -- -- $m 'fast|step' --step 1
check 2 "" "TARGET_LOSS is not set" -- LOSS_NOW=1 -- $m 'fast|loss'
check 2 "" "not a whole number" -- -- $m 'fast|step' --step 1.5 --total-step 10
check 2 "" 'STEP_NOW="abc" (environment) is not a whole number' -- STEP_NOW=abc TOTAL_STEP=10 -- $m 'fast|step'
check 2 "" "is not a number" -- -- $m 'fast|loss' --loss 0x1p0 --final-loss 1
check 2 "" "total step 0 must be at least 1" -- -- $m 'fast|step' --step 0 --total-step 0
check 2 "" "step -1 must not be negative" -- -- $m 'fast|step' --step -1 --total-step 10
check 2 "" "iterations per loop 0" -- -- $m 'fast|step' --step 1 --total-step 10 --iterations-per-loop 0
check 2 "" "loss nan must be a finite number" -- -- $m 'fast|loss' --loss nan --final-loss 1
check 2 "" 'LOSS_NOW="inf"' -- LOSS_NOW=inf TARGET_LOSS=1 -- $m 'fast|loss'
check 2 "" "final loss 0 must be" -- -- $m 'fast|loss' --loss 1 --final-loss 0
check 2 "" "out of range" -- -- $m 'fast|step|0.91' --step 1 --total-step 10
check 2 "" 'did you mean "step"' -- -- $m 'fast|stepxx' --step 1 --total-step 10
check 2 "" "whitespace is not allowed" -- -- $m 'fast| step' --step 1 --total-step 10
check 2 "" "accelerate-train-mode is required" -- -- --step 1 --total-step 10

# --json carries the decision, threshold, mode, trigger, ratio and inputs.
json_check() {
  local program=$1
  shift
  cases=$((cases + 1))
  local out
  if ! out=$(env -u STEP_NOW -u TOTAL_STEP -u LOSS_NOW -u TARGET_LOSS "$NPUCC" schedule "$@" --json); then
    failures=$((failures + 1))
    echo "FAIL: npucc schedule $* --json exited non-zero"
    return
  fi
  if ! /usr/bin/python3 -c "import json, sys; d = json.loads(sys.stdin.read()); $program" <<<"$out"; then
    failures=$((failures + 1))
    echo "FAIL: npucc schedule $* --json: assertion failed on:"
    echo "$out"
  fi
}
json_check 'assert d["decision"] == "low" and d["threshold"] == 9000 and d["mode"] == "fast|step|0.9" and d["trigger"] == "step" and d["ratio"] == 0.9 and d["inputs"] == {"step": 8999, "total_step": 10000, "iterations_per_loop": 1}, d' \
  $m 'fast|step' --step 8999 --total-step 10000
json_check 'assert d["decision"] == "high" and abs(d["threshold"] - 1.21) < 1e-12 and d["type"] == "fast1" and d["low_precision"] == "bfloat16" and d["trigger"] == "loss" and d["inputs"]["loss"] == 1.21 and d["sources"]["loss"] == "--loss", d' \
  $m 'fast1|loss|1.1' --loss 1.21 --final-loss 1.1

echo "$cases cases, $failures failed"
[[ $failures -eq 0 ]]
