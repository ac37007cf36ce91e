#!/usr/bin/env bash
# Man pages: every man/*.1 renders without groff warnings, and the pages stay in sync
# with the CLI: every long option in `npucc --help` appears in npucc.1, every
# subcommand is named in npucc.1, and every long option of `npucc WORDS --help`
# appears in man/npucc-WORDS.1 (npucc-cache-ls.1 <-> `npucc cache ls`). A command
# with subcommands but without pages of their own (npucc-cache.1 documenting every
# `npucc cache ...`) has its subcommands' options checked against its own page.
set -uo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
man_dir="$SOURCE_DIR/man"

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-man.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Plain text of a page: no hyphenation, wide lines, no overstriking, ASCII hyphens.
render() {
  groff -man -Tascii -P-cbou -rHY=0 -rLL=250n "$1" 2>/dev/null
}

# Long options of a help text (CLI11 lists them as "-x,--name" or "--name").
long_options() {
  grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' | sed 's/^[ ,]//' | sort -u
}

# Subcommands listed in a CLI11 help text.
subcommands_of() {
  awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'
}

# check_options PAGE HELP_TEXT_FILE LABEL
check_options() {
  local page=$1 help=$2 label=$3
  local text="$work/$(basename "$page").txt"
  render "$page" >"$text"
  local option
  for option in $(long_options <"$help"); do
    grep -qF -- "$option" "$text" || fail "$(basename "$page") does not mention $option (from $label --help)"
  done
}

pages=("$man_dir"/*.1)
[ -e "${pages[0]}" ] || { echo "FAIL: no man pages in $man_dir"; exit 1; }
for page in "${pages[@]}"; do
  warnings=$(groff -ww -man -Tutf8 "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "$(basename "$page"): groff warnings: $warnings"
  if ! man -l "$page" >/dev/null 2>"$work/man.err" </dev/null; then
    fail "$(basename "$page"): man -l failed: $(cat "$work/man.err")"
  fi
  render "$page" | grep -q '^NAME' || fail "$(basename "$page"): no NAME section"
done

# The overview page: global options and every subcommand.
"$NPUCC" --help >"$work/npucc.help" 2>&1 || fail "npucc --help failed"
check_options "$man_dir/npucc.1" "$work/npucc.help" "npucc"
render "$man_dir/npucc.1" >"$work/npucc.txt"
for command in $(subcommands_of <"$work/npucc.help"); do
  grep -qE "^ +$command( |$)" "$work/npucc.txt" ||
    fail "npucc.1 does not list the command \"$command\""
  if ! compgen -G "$man_dir/npucc-$command.1" >/dev/null &&
    ! compgen -G "$man_dir/npucc-$command-*.1" >/dev/null; then
    fail "no man page man/npucc-$command.1 for the command \"$command\""
  fi
done

# One page per command (or per sub-subcommand).
checked=0
for page in "$man_dir"/npucc-*.1; do
  name=$(basename "$page" .1)
  read -r -a words <<<"$(echo "${name#npucc-}" | tr '-' ' ')"
  # Each word must be a subcommand of the command before it: npucc-cache-ls.1 is
  # `npucc cache ls` (a positional argument would make `npucc compile x --help` work).
  command=()
  cp "$work/npucc.help" "$work/help"
  known=1
  for word in "${words[@]}"; do
    if ! subcommands_of <"$work/help" | grep -qxF -- "$word"; then
      known=0
      break
    fi
    command+=("$word")
    "$NPUCC" "${command[@]}" --help >"$work/help" 2>/dev/null || { known=0; break; }
  done
  if [ "$known" = 0 ]; then
    fail "$(basename "$page"): no command \"npucc ${words[*]}\""
    continue
  fi
  check_options "$page" "$work/help" "npucc ${command[*]}"
  checked=$((checked + 1))
  for sub in $(subcommands_of <"$work/help"); do
    [ -e "$man_dir/$name-$sub.1" ] && continue
    "$NPUCC" "${command[@]}" "$sub" --help >"$work/subhelp" 2>/dev/null ||
      { fail "npucc ${command[*]} $sub --help failed"; continue; }
    check_options "$page" "$work/subhelp" "npucc ${command[*]} $sub"
  done
done
[ "$checked" -ge 2 ] || fail "expected at least the compile and inspect pages, checked $checked"

echo "$checked command pages checked, $failures failures"
[ "$failures" -eq 0 ]
