#!/usr/bin/env bash
# Black-box: `npucc config show` reports each setting's value and source, with the
# precedence command line > options file > environment > config file > default; bad files
# and values are errors naming the file and line or the variable.
set -u
: "${NPUCC:?NPUCC must point at the npucc binary}"
: "${TESTDATA:?TESTDATA must point at testdata/}"
PY=/usr/bin/python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
home="$work/home"
mkdir -p "$home/.config/npucc"
failures=0
cases=0

fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

# run ARGS...: runs npucc in a clean environment (HOME=$home plus $extra_env); sets out, err, status.
extra_env=()
run() {
  out=$(env -i PATH="$PATH" HOME="$home" "${extra_env[@]}" "$NPUCC" "$@" 2>"$work/err")
  status=$?
  err=$(cat "$work/err")
  cases=$((cases + 1))
}

# field SETTING KEY: reads settings[SETTING][KEY] from the last JSON output; a boolean or a
# number as JSON writes it (false, 2.5), null as "".
field() {
  printf '%s' "$out" | "$PY" -c 'import json,sys; v=json.load(sys.stdin)["settings"][sys.argv[1]][sys.argv[2]]; print("" if v is None else v if isinstance(v, str) else json.dumps(v))' "$1" "$2"
}

expect_setting() { # SETTING VALUE SOURCE [ORIGIN]
  local value source origin
  value=$(field "$1" value) source=$(field "$1" source) origin=$(field "$1" origin)
  if [[ $status -ne 0 || $value != "$2" || $source != "$3" || ( $# -ge 4 && $origin != "$4" ) ]]; then
    fail "${FUNCNAME[1]}: $1 = '$value' from $source ($origin), wanted '$2' from $3 (${4:-any}); status $status; $err"
  fi
}

expect_error() { # STATUS PATTERN
  if [[ $status -ne $1 ]] || ! grep -q -- "$2" <<<"$err"; then
    fail "wanted exit $1 and stderr matching '$2', got exit $status: $err"
  fi
}

# 1. defaults
run config show --json
expect_setting cache.dir "$home/.cache/npucc" default ""
expect_setting color auto default
expect_setting cache.disable false default
[[ $(field precision_mode value) == "" ]] || fail "precision_mode should be unset"

# 2. the config file, with its line number as origin
cat >"$home/.config/npucc/config.toml" <<'TOML'
# npucc settings
precision_mode = "force_fp16"

[cache]
dir = "shared-cache"   # relative: from this file's folder
max_size = "2G"
TOML
run config show --json
expect_setting cache.dir "$home/.config/npucc/shared-cache" "config file" "$home/.config/npucc/config.toml:5"
expect_setting cache.max_size 2G "config file"
[[ $(field cache.max_size bytes) == 2147483648 ]] || fail "cache.max_size bytes: $(field cache.max_size bytes)"
expect_setting precision_mode force_fp16 "config file" "$home/.config/npucc/config.toml:2"
# A cache folder named by the file, missing: the error blames the file's line, not a variable.
run cache stats
expect_error 1 "shared-cache: the cache folder ($home/.config/npucc/config.toml:5) does not exist"

# 3. environment over the file
extra_env=(NPUCC_CACHE_DIR=/env/cache NPUCC_PRECISION_MODE_V2=origin)
run config show --json
expect_setting cache.dir /env/cache environment NPUCC_CACHE_DIR
expect_setting precision_mode_v2 origin environment NPUCC_PRECISION_MODE_V2
expect_setting precision_mode force_fp16 "config file"

# 4. an Ascend options file over the environment, but for the cache folder (issue 42: an
# options file may come with a checkout, NPUCC_CACHE_DIR with the job); unused Ascend keys warn
cat >"$work/npu_options.json" <<'JSON'
{"graph_compiler_cache_dir": "opt-cache", "accelerate_train_mode": "fast|step", "precision_mode": "",
 "modify_mixlist": "lists/ops.json", "iterations_per_loop": "10"}
JSON
run config show --json --options "$work/npu_options.json"
expect_setting cache.dir /env/cache environment NPUCC_CACHE_DIR
grep -q "npucc: warning: .*graph_compiler_cache_dir ignored: NPUCC_CACHE_DIR is set" <<<"$err" ||
  fail "no warning for the ignored graph_compiler_cache_dir: $err"
saved_env=("${extra_env[@]}") extra_env=(NPUCC_PRECISION_MODE_V2=origin)
run config show --json --options "$work/npu_options.json"
extra_env=("${saved_env[@]}")
expect_setting cache.dir "$work/opt-cache" "options file" "$work/npu_options.json: graph_compiler_cache_dir"
expect_setting accelerate_train_mode "fast|step" "options file"
expect_setting modify_mixlist "$work/lists/ops.json" "options file"
expect_setting precision_mode force_fp16 "config file" # "" in the options file means unset
grep -q "npucc: warning: .*iterations_per_loop (10) does not apply" <<<"$err" || fail "no warning for iterations_per_loop: $err"
run --quiet config show --json --options "$work/npu_options.json"
[[ -z $err ]] || fail "--quiet should silence warnings: $err"
# A compile reads its settings once, for the compile and for the cache: one warning.
echo '{"iterations_per_loop": "10"}' >"$work/loop_options.json"
saved_env=("${extra_env[@]}") extra_env=() # NPUCC_PRECISION_MODE_V2 would clash with the file's precision_mode
run compile "$TESTDATA/models/ppocr_cls.onnx" -o "$work/out" --no-cache --options "$work/loop_options.json"
[[ $status -eq 0 && $(grep -c "iterations_per_loop (10) does not apply" <<<"$err") == 1 ]] ||
  fail "compile: wanted exit 0 and the warning once, got exit $status: $err"
extra_env=("${saved_env[@]}")

# 5. the command line over everything; Ascend's spelling is an alias
run config show --json --options "$work/npu_options.json" --cache-dir /cli/cache --no-cache
expect_setting cache.dir /cli/cache "command line" --cache-dir
expect_setting cache.disable true "command line"
run config show --json --graph-compiler-cache-dir /cli/ascend
expect_setting cache.dir /cli/ascend "command line"
run --color never config show --json
expect_setting color never "command line" --color
extra_env=(NO_COLOR=1)
run config show --json
expect_setting color never environment NO_COLOR

# 6. the table form names each source
extra_env=(NPUCC_CACHE_DIR=/env/cache)
run config show --accelerate-train-mode "fast1|loss|1.1"
grep -q "^cache.dir  *\\/env\\/cache  \\[environment (NPUCC_CACHE_DIR)\\]$" <<<"$out" || fail "table: $out"
grep -q "^accelerate_train_mode  *fast1|loss|1.1  \\[command line (--accelerate-train-mode)\\]$" <<<"$out" ||
  fail "table: $out"
grep -q "^config file: $home/.config/npucc/config.toml$" <<<"$out" || fail "table header: $out"
extra_env=()

# 7. errors name their source
printf '[cache]\ndri = "x"\n' >"$home/.config/npucc/config.toml"
run config show
expect_error 2 "config.toml:2: unknown setting \"cache.dri\" (did you mean \"cache.dir\"?)"
printf 'color = never\n' >"$home/.config/npucc/config.toml"
run config show
expect_error 1 "config.toml:1: expected a value"
rm "$home/.config/npucc/config.toml"
extra_env=(NPUCC_CACHE_MAX_SIZE=lots)
run config show
expect_error 2 "NPUCC_CACHE_MAX_SIZE: \"lots\" is not a size"
extra_env=(NPUCC_PRECISION_MODE=allow_fp32_to_fp61)
run config show
expect_error 2 "NPUCC_PRECISION_MODE: "
extra_env=()
echo '{"graph_compiler_cahce_dir": "x"}' >"$work/typo.json"
run config show --options "$work/typo.json"
expect_error 2 "unknown option \"graph_compiler_cahce_dir\" (did you mean \"graph_compiler_cache_dir\"?)"
echo '{"precision_mode": ' >"$work/broken.json"
run config show --options "$work/broken.json"
expect_error 1 "broken.json: not valid JSON: line"
run config show --options "$work/missing.json"
expect_error 1 "missing.json"
run config show --accelerate-train-mode "fast|sometimes"
expect_error 2 "^npucc: error: --accelerate-train-mode: "

# 8. where the file is looked for
run config path
[[ $out == "$home/.config/npucc/config.toml" ]] || fail "config path: $out"
extra_env=(XDG_CONFIG_HOME=/xdg)
run config path
[[ $out == /xdg/npucc/config.toml ]] || fail "config path with XDG_CONFIG_HOME: $out"
extra_env=(NPUCC_CONFIG="$work/missing.toml")
run config show
expect_error 1 "NPUCC_CONFIG names $work/missing.toml, which does not exist"
extra_env=()

# 9. the error prefix is red only when asked for or on a terminal
run --color always config show --options "$work/missing.json"
grep -q $'\033\\[1;31mnpucc: error:' <<<"$err" || fail "--color always: no red error prefix: $err"
run config show --options "$work/missing.json"
grep -q $'\033' <<<"$err" && fail "colour in a pipe: $err"

echo "$cases cases, $failures failures"
[[ $failures -eq 0 ]]
