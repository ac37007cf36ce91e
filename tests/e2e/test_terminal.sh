#!/usr/bin/env bash
# Terminal sessions in tmux: the progress display appears on a terminal (the graphs' write
# in bytes and percent) and never in a pipe or with --quiet; the generated bash (and zsh)
# completion completes subcommands, sub-subcommands, options and option values in a real
# interactive shell; output to a full disk is an error.
set -u
: "${NPUCC:?NPUCC must point at the npucc binary}"
source "$(dirname "$0")/skip_common.sh"
: "${TESTDATA:?TESTDATA must point at testdata/}"

if ! command -v tmux >/dev/null; then
  echo "FAIL: tmux is not installed (scripts/install-test-deps installs it)"
  exit 1
fi

work=$(mktemp -d)
socket="npucc-test-$$"
tmux_() { tmux -L "$socket" -f /dev/null "$@"; }
trap 'tmux_ kill-server 2>/dev/null; rm -rf "$work"' EXIT
failures=0
cases=0
fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

# npucc on PATH, as an installed user would have it.
mkdir -p "$work/bin"
ln -s "$NPUCC" "$work/bin/npucc"
model="$TESTDATA/models/ppocrv4_det.onnx"

# wait_for PANE PATTERN: polls the visible screen (up to 60 s) until PATTERN shows.
wait_for() {
  local i
  for ((i = 0; i < 600; i++)); do
    if tmux_ capture-pane -p -t "$1" | grep -q -- "$2"; then
      return 0
    fi
    sleep 0.1
  done
  echo "  screen of $1:"
  tmux_ capture-pane -p -t "$1" | sed 's/^/    | /'
  return 1
}

start_shell() { # NAME COMMAND...
  local name=$1
  shift
  tmux_ new-session -d -s "$name" -x 120 -y 40 \
    env -i PATH="$work/bin:/usr/bin:/bin" HOME="$work" TERM=xterm-256color "$@"
}

# --- progress on a terminal: every byte the pane receives is recorded ---
start_shell progress bash --norc --noprofile
tmux_ send-keys -t progress "PS1='$ '; cd $work" Enter
tmux_ pipe-pane -t progress -o "cat >> $work/pane.log"
tmux_ send-keys -t progress "npucc compile $model -o out1; echo EXIT=\$?" Enter
cases=$((cases + 1))
if wait_for progress "EXIT=0"; then
  grep -a -q "compile ppocrv4_det.onnx \[" "$work/pane.log" || fail "no progress line on the terminal"
  grep -a -q $'\033\\[K' "$work/pane.log" || fail "the progress line is never erased"
  # The graphs' write in bytes and percent (issue 31): its last frame is always drawn.
  grep -a -q "[0-9.]* [KMG]iB/[0-9.]* [KMG]iB 100%  writing graphs" "$work/pane.log" ||
    fail "no bytes written on the progress line: $(tr '\r' '\n' <"$work/pane.log" | cat -v | tail -5)"
  # Erased before the summary: the screen shows the summary, not a stale bar.
  tmux_ capture-pane -p -t progress | grep -q "compile ppocrv4_det.onnx \[" && fail "a stale progress line is left on screen"
else
  fail "compile on the terminal did not finish"
fi

# --quiet and pipes: nothing but the output asked for.
: >"$work/pane.log"
tmux_ send-keys -t progress "npucc --quiet compile $model -o out2; echo EXIT=\$?" Enter
cases=$((cases + 1))
wait_for progress "EXIT=0" || fail "quiet compile did not finish"
grep -a -q "ppocrv4_det.onnx \[" "$work/pane.log" && fail "--quiet still drew progress"
tmux_ send-keys -t progress "npucc compile $model -o out3 2>&1 | cat > piped.txt; echo PIPED=\$?" Enter
cases=$((cases + 1))
wait_for progress "PIPED=0" || fail "piped compile did not finish"
grep -a -q $'[\r\033]' "$work/piped.txt" && fail "control characters in a pipe: $(cat -v "$work/piped.txt")"
grep -q "^compiled \|^from the cache: " "$work/piped.txt" || fail "piped output lacks the summary: $(cat "$work/piped.txt")"
tmux_ kill-session -t progress

# --- bash completion, sourced as bash-completion would ---
"$NPUCC" completion bash >"$work/npucc.bash" || fail "npucc completion bash failed"
bash -n "$work/npucc.bash" || fail "the bash completion script has a syntax error"
start_shell bash bash --norc --noprofile
tmux_ send-keys -t bash "PS1='$ '; source $work/npucc.bash; cd $work" Enter

# complete_line SESSION TYPED PATTERN: types TYPED, presses Tab twice, expects PATTERN on screen.
complete_line() {
  cases=$((cases + 1))
  tmux_ send-keys -t "$1" "clear" Enter
  sleep 0.3
  tmux_ send-keys -t "$1" -l "$2"
  tmux_ send-keys -t "$1" Tab
  sleep 0.3
  tmux_ send-keys -t "$1" Tab
  if ! wait_for "$1" "$3"; then
    fail "$1: '$2<TAB>' did not show '$3'"
  fi
  tmux_ send-keys -t "$1" C-u
}

complete_line bash "npucc comp" "compile *completion"
complete_line bash "npucc conf" '^\$ npucc config *$'
complete_line bash "npucc config sh" '^\$ npucc config show *$'
if "$NPUCC" compile --help | grep -q -- --accelerate-train-mode; then
  # The second Tab goes on into the values, which all start with "fast".
  complete_line bash "npucc compile --acce" '^\$ npucc compile --accelerate-train-mode \(fast\)\? *$'
else
  complete_line bash "npucc compile --ext" '^\$ npucc compile --external-data *$'
fi
complete_line bash "npucc compile --precision-mode-v2 mixed_b" '^\$ npucc compile --precision-mode-v2 mixed_bfloat16 *$'
# A value holding '|' is inserted quoted, and a quoted prefix still matches.
complete_line bash "npucc schedule --accelerate-train-mode fast1\\|l" '^\$ npucc schedule --accelerate-train-mode fast1\\|loss *$'
complete_line bash "npucc --color " "always *auto *never"
complete_line bash "npucc --color=al" '^\$ npucc --color=always *$'
complete_line bash "npucc completion " "bash *zsh"
mkdir -p "$work/models" && touch "$work/models/only.onnx"
complete_line bash "npucc compile models/o" '^\$ npucc compile models/only.onnx *$'
if "$NPUCC" --help | grep -q "^  cache"; then
  complete_line bash "npucc cache " "verify"
fi
tmux_ kill-session -t bash

# --- zsh completion, when zsh is there ---
if command -v zsh >/dev/null; then
  mkdir -p "$work/zfunc"
  "$NPUCC" completion zsh >"$work/zfunc/_npucc" || fail "npucc completion zsh failed"
  start_shell zsh zsh -f
  tmux_ send-keys -t zsh "PS1='%% '; fpath=($work/zfunc \$fpath); autoload -U compinit; compinit -u -d $work/zcompdump; cd $work" Enter
  sleep 1
  complete_line zsh "npucc config sh" '^% npucc config show *$'
  complete_line zsh "npucc comp" "completion"
  complete_line zsh "npucc --color " "always"
  tmux_ kill-session -t zsh
else
  skip_part "zsh not installed; zsh completion not exercised"
fi

# Output that cannot be written (a full disk) is an error, not a silent success.
cases=$((cases + 1))
if "$NPUCC" completion bash >/dev/full 2>"$work/full.err"; then
  fail "npucc completion bash >/dev/full exited 0"
elif ! grep -q "^npucc: error: cannot write to standard output" "$work/full.err"; then
  fail "no error for a full standard output: $(cat "$work/full.err")"
fi

echo "$cases cases, $failures failures"
suite_end "$failures"
