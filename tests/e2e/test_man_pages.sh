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
  awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{sub(/,$/, "", $1); print $1} on && /^$/{on=0}'
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

# Every help text: the summary of a command with subcommands names them all, an option
# with a set of values describes every value, and no option name carries CLI11's default
# display ("--keep-io-types,--no-keep-io-types{false}").
check_help() {
  local label=$1 help=$2 sub
  local subs
  subs=$(subcommands_of <"$help")
  if [ -n "$subs" ] && [ "$label" != npucc ]; then
    for sub in $subs; do
      head -n 1 "$help" | grep -qE "[:, ]$sub(,|$)" ||
        fail "the summary of $label --help does not name the subcommand $sub: $(head -n 1 "$help")"
    done
  fi
  grep -E -- '^ +-.*--[a-z0-9-]+\{' "$help" >"$work/braces" &&
    fail "$label --help shows a flag default after its name: $(cat "$work/braces")"
  /usr/bin/python3 - "$help" "$label" <<'EOF_PY' || fail "$label --help: an option's values are not all described"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
ok = True
for i, line in enumerate(lines):
    m = re.match(r"^  (\S.*?):\{([^}]*)\}\S*(.*)$", line)
    if not m:
        continue
    described = m.group(3)
    if i + 1 < len(lines) and re.match(r"^ {20,}\S", lines[i + 1]):
        described += " " + lines[i + 1]
    for value in m.group(2).split(","):
        if not re.search(r"\b%s\b" % re.escape(value), described):
            print("FAIL: %s: %s does not describe the value %s: %s" % (sys.argv[2], m.group(1), value, described.strip()))
            ok = False
sys.exit(0 if ok else 1)
EOF_PY
}
check_help npucc "$work/npucc.help"
for command in $(subcommands_of <"$work/npucc.help"); do
  "$NPUCC" "$command" --help >"$work/cmd.help" 2>&1 || { fail "npucc $command --help failed"; continue; }
  check_help "npucc $command" "$work/cmd.help"
  for sub in $(subcommands_of <"$work/cmd.help"); do
    "$NPUCC" "$command" "$sub" --help >"$work/sub.help" 2>&1 || { fail "npucc $command $sub --help failed"; continue; }
    check_help "npucc $command $sub" "$work/sub.help"
  done
done

# ENVIRONMENT in npucc.1 lists every variable the code reads: each NPUCC_* name in src/ and
# cli/, each name given to getenv, and the Ascend hook's variables npucc schedule reads.
render "$man_dir/npucc.1" | awk '/^ENVIRONMENT/{on=1; next} on && /^[A-Z]/{on=0} on' >"$work/environment.txt"
grep -qi "reads no environment variables" "$work/environment.txt" &&
  fail "npucc.1 ENVIRONMENT still says npucc reads no environment variables"
code_variables=$(
  {
    grep -rhoE '"NPUCC_[A-Z0-9_]+"' "$SOURCE_DIR/src" "$SOURCE_DIR/cli"
    grep -rhoE 'getenv\("[A-Z_][A-Z0-9_]*"\)' "$SOURCE_DIR/src" "$SOURCE_DIR/cli"
    grep -hoE '"(STEP|TOTAL|LOSS|TARGET)_[A-Z]+"' "$SOURCE_DIR/cli/cmd_schedule.cpp"
  } | grep -oE '[A-Z_][A-Z0-9_]+' | grep -vx getenv | sort -u
)
[ "$(wc -w <<<"$code_variables")" -ge 20 ] || fail "found only these variables in the code: $code_variables"
for variable in $code_variables STEP_NOW TOTAL_STEP LOSS_NOW TARGET_LOSS; do
  grep -qE "^ +$variable( |$)" "$work/environment.txt" ||
    fail "npucc.1 ENVIRONMENT does not list $variable (read by the code)"
done

echo "$checked command pages checked, $failures failures"
[ "$failures" -eq 0 ]
