#!/usr/bin/env bash
# `npucc completion`: the generated functions are called the way bash calls them
# (COMP_WORDS, COMP_CWORD, then COMPREPLY is read) and, in zsh, with words/CURRENT and
# compadd/_files recording what they are given. Enumerated options offer the values their
# validating code accepts, `cache` offers every subcommand and the clean alias, and a MODEL
# completes to *.onnx files and folders.
set -uo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
source "$(dirname "$0")/skip_common.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-completion.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

"$NPUCC" completion bash >"$work/npucc.bash" || fail "npucc completion bash failed"
"$NPUCC" completion zsh >"$work/_npucc" || fail "npucc completion zsh failed"
mkdir -p "$work/files/models.d" "$work/files/out"
touch "$work/files/a.onnx" "$work/files/b.onnx" "$work/files/notes.txt" "$work/files/model.onnx.data"

# bash_complete WORD...: the words of the line, the last being the one under the cursor;
# prints COMPREPLY one per line, sorted.
bash_complete() {
  (
    cd "$work/files" || exit 1
    # shellcheck disable=SC1091
    source "$work/npucc.bash"
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    _npucc npucc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort
  )
}

# expect_words LABEL "WANTED WORDS" ACTUAL: every wanted word is offered, and, with
# EXACT=1, nothing else.
expect_words() {
  local label=$1 wanted=$2 actual=$3 word
  for word in $wanted; do
    grep -qxF -- "$word" <<<"$actual" || fail "$label: '$word' not offered (got: $(echo $actual))"
  done
  if [[ ${EXACT:-0} == 1 ]]; then
    local count
    count=$(grep -c . <<<"$actual")
    [[ $count -eq $(wc -w <<<"$wanted") ]] || fail "$label: offered more than '$wanted': $(echo $actual)"
  fi
}

modes_v1="force_fp32 allow_fp32_to_fp16 force_fp16 must_keep_origin_dtype allow_mix_precision
  cube_fp16in_fp32out allow_mix_precision_fp16 allow_mix_precision_bf16 allow_fp32_to_bf16"
modes_v2="fp16 origin cube_fp16in_fp32out mixed_float16 mixed_bfloat16"
EXACT=1 expect_words "compile --precision-mode" "$modes_v1" "$(bash_complete npucc compile --precision-mode "")"
EXACT=1 expect_words "compile --precision-mode-v2" "$modes_v2" "$(bash_complete npucc compile --precision-mode-v2 "")"
EXACT=1 expect_words "--precision-mode allow_mix" "allow_mix_precision allow_mix_precision_fp16 allow_mix_precision_bf16" \
  "$(bash_complete npucc compile --precision-mode allow_mix)"
expect_words "compile --accelerate-train-mode" "fast|step fast|loss fast1|step fast1|loss fast|step|0.9 fast1|loss|1.05" \
  "$(bash_complete npucc compile --accelerate-train-mode "")"
expect_words "schedule --accelerate-train-mode" "fast|step fast1|loss" \
  "$(bash_complete npucc schedule --accelerate-train-mode "")"
# What the user typed is compared without its shell quoting (fast\|l, 'fast1|).
EXACT=1 expect_words "--accelerate-train-mode fast\\|l" "fast|loss fast|loss|1.05" \
  "$(bash_complete npucc compile --accelerate-train-mode 'fast\|l')"
EXACT=1 expect_words "--accelerate-train-mode 'fast1|s" "fast1|step fast1|step|0.9" \
  "$(bash_complete npucc compile --accelerate-train-mode "'fast1|s")"
EXACT=1 expect_words "compile --cache-shared" "auto no group world" "$(bash_complete npucc compile --cache-shared "")"
EXACT=1 expect_words "compile --link-mode" "auto copy hardlink" "$(bash_complete npucc compile --link-mode "")"
EXACT=1 expect_words "cache ls --sort" "key model size created used version state" \
  "$(bash_complete npucc cache ls --sort "")"
EXACT=1 expect_words "--color=" "never auto always" "$(bash_complete npucc --color = "")"

# cache: every subcommand of `npucc cache --help`, and the clean alias.
cache_subs=$("$NPUCC" cache --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{sub(/,$/, "", $1); print $1} on && /^$/{on=0}')
[[ $(wc -w <<<"$cache_subs") -ge 8 ]] || fail "npucc cache --help lists only: $cache_subs"
expect_words "cache" "$cache_subs clean" "$(bash_complete npucc cache "")"
EXACT=1 expect_words "cache cl" "clean" "$(bash_complete npucc cache cl)"
# After the alias the purge options complete.
expect_words "cache clean --" "--all --older-than --dry-run" "$(bash_complete npucc cache clean --)"
EXACT=1 expect_words "cache clean --cache-shared" "auto no group world" \
  "$(bash_complete npucc cache clean --cache-shared "")"

# MODEL: *.onnx files and folders, not other files.
EXACT=1 expect_words "compile MODEL" "a.onnx b.onnx models.d out" "$(bash_complete npucc compile "")"
EXACT=1 expect_words "inspect MODEL" "a.onnx b.onnx models.d out" "$(bash_complete npucc inspect --nodes "")"
EXACT=1 expect_words "compile a" "a.onnx" "$(bash_complete npucc compile -o out a)"
EXACT=1 expect_words "cache explain MODEL" "a.onnx b.onnx models.d out" "$(bash_complete npucc cache explain "")"
EXACT=1 expect_words "cache populate MODEL_OR_DIR" "a.onnx b.onnx models.d out" \
  "$(bash_complete npucc cache populate "")"
EXACT=1 expect_words "cache init DIR" "models.d out" "$(bash_complete npucc cache init "")"
# --shard: auto is the one word (K/N is typed); after it, models again.
expect_words "cache populate --" "--shard --models --jobs" "$(bash_complete npucc cache populate --)"
EXACT=1 expect_words "cache populate --shard" "auto" "$(bash_complete npucc cache populate --shard "")"
EXACT=1 expect_words "cache populate --shard 2/4 MODEL_OR_DIR" "a.onnx b.onnx models.d out" \
  "$(bash_complete npucc cache populate --shard 2/4 "")"
# A value option without a list still completes file names.
expect_words "--keep-dtype FILE" "notes.txt a.onnx" "$(bash_complete npucc compile --keep-dtype "")"

# --- zsh: the same functions, with compadd and _files recording their arguments ---
if command -v zsh >/dev/null; then
  zsh_complete() {
    (
      cd "$work/files" || exit 1
      zsh -f -c '
        compadd() { while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -P ]] && shift; shift; done
                    [[ $1 == -- ]] && shift; print -l -- "$@"; }
        _files() { print -r -- "_files $*"; }
        source "$1" >/dev/null 2>&1 # it completes once as it loads: not a completion call
        shift
        words=("$@"); CURRENT=$#
        _npucc_main' zsh "$work/_npucc" "$@" | sort
    )
  }
  zsh -f -n "$work/_npucc" || fail "the zsh completion script has a syntax error"
  EXACT=1 expect_words "zsh --precision-mode-v2" "$modes_v2" "$(zsh_complete npucc compile --precision-mode-v2 "")"
  expect_words "zsh --accelerate-train-mode" "fast|step fast1|loss|1.05" \
    "$(zsh_complete npucc schedule --accelerate-train-mode "")"
  EXACT=1 expect_words "zsh --cache-shared=" "auto no group world" "$(zsh_complete npucc compile --cache-shared=)"
  expect_words "zsh cache" "$cache_subs clean" "$(zsh_complete npucc cache "")"
  expect_words "zsh cache clean --" "--all --dry-run" "$(zsh_complete npucc cache clean --)"
  EXACT=1 expect_words "zsh --shard" "auto" "$(zsh_complete npucc cache populate --shard "")"
  [[ $(zsh_complete npucc compile "") == "_files -g *.onnx" ]] ||
    fail "zsh compile MODEL: $(zsh_complete npucc compile "")"
  [[ $(zsh_complete npucc cache init "") == "_files -/" ]] ||
    fail "zsh cache init DIR: $(zsh_complete npucc cache init "")"
else
  skip_part "zsh not installed; the zsh completion was not exercised"
fi

echo "$failures failures"
suite_end "$failures"
