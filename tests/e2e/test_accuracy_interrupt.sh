#!/usr/bin/env bash
# Issue 41 item 5: SIGINT, SIGTERM or SIGHUP, to npucc alone or to its whole process group,
# at any moment of an accuracy check and its repair, always ends npucc with exit 128 + N and
# one line, "npucc: interrupted: K of 1 compiled", and leaves no process, nothing in TMPDIR,
# no staging beside the output folder and nothing in the cache's tmp/
# (interrupt_anytime.py has the checks: it is the runs' subreaper, each run gets a fresh
# TMPDIR, output folder and cache). The signal comes at delays spread over one whole run
# (no assertion on time): `timeout -s SIG` (which signals npucc, then its group, as a CI
# runner's cancel does), setsid + kill -SIG -PGID, and kill -SIG PID. The model is
# make_runtime_file_models.py's 4 MB overflow MLP on make_accuracy_models.py's samples, with
# --accuracy-target: the repair that follows the check is most of each run (18 graph runs,
# each graph written to TMPDIR for ONNX Runtime). Since the activation-range rule (issue 43),
# the low graph is rebuilt and run again before any search, which then has nothing to do on
# this model: each run is the check, the rule's run of the high graph and the rebuilt
# graph's runs, every graph still written to TMPDIR.
#
# Shown to fail on main (608ba00), interrupt_anytime.py --keep-going 1, two rounds:
#   timeout INT  round 1: 1 of 20 broken: exit 130 with no line, npucc-graph.tmp.*.onnx left
#                in TMPDIR (npucc got SIGINT twice, and SA_RESETHAND made the second one
#                kill it mid-cleanup); round 2: 2 of 20: three "npucc: interrupted" lines
#                (runtime children forked with the handler inherited, signalled before they
#                reset it), and a process left behind
#   group TERM   round 1: 1 of 10 (a process left behind); round 2: 0 of 10
#   alone TERM   round 1: 1 of 10 (three "interrupted" lines); round 2: 0 of 10
#   group HUP    9 and 10 of 10; alone HUP 10 and 9 of 10: no line (SIGHUP was not
#                handled), the runtime and ONNX workers left running
#   group INT    0 of 10 both rounds
# The SIGHUP rows fail every time; the others are races, as the issue saw them (2-3 of
# 10-12 runs). With the fix: 0 broken in every mode, in every round run.
source "$(dirname "$0")/cache_common.sh"
ANYTIME=("$PY" "$(dirname "$0")/interrupt_anytime.py")
M="$WORK/models"
"$PY" "$(dirname "$0")/../tools/make_accuracy_models.py" "$M" >/dev/null
"$PY" "$(dirname "$0")/make_runtime_file_models.py" "$M"
REPAIR=("$NPUCC" compile "$M/wide_overflow.onnx" -o "{out}" --cache-dir "{cache}"
  --accelerate-train-mode 'fast|step|0.9' --sample-inputs "$M/samples" --accuracy-target 'cosine>=0.999')

# Uninterrupted, the rule rebuilds the low graph (else the runs below would interrupt a plain
# compile).
"$NPUCC" compile "$M/wide_overflow.onnx" -o "$WORK/whole" --no-cache --accelerate-train-mode 'fast|step|0.9' \
  --sample-inputs "$M/samples" --accuracy-target 'cosine>=0.999' >"$WORK/whole.out" 2>&1 ||
  { cat "$WORK/whole.out" >&2; fail "the uninterrupted repair failed"; }
contains "$WORK/whole.out" "met after the rule, no search"

# interrupt VIA SIGNAL RUNS
interrupt() {
  "${ANYTIME[@]}" --via "$1" --signal "$2" --runs "$3" --work "$WORK/runs" -- "${REPAIR[@]}" \
    >"$WORK/$1-$2.log" 2>&1 || { cat "$WORK/$1-$2.log" >&2; fail "$1 SIG$2"; }
  pass "$1 SIG$2: $(tail -1 "$WORK/$1-$2.log")"
}
interrupt timeout INT 20
interrupt group INT 10
interrupt group TERM 10
interrupt group HUP 10
interrupt alone TERM 10
interrupt alone HUP 10
