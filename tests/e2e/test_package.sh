#!/usr/bin/env bash
# `cpack -G DEB` in the build folder makes a Debian package holding the binary, the man
# pages and the shell completions, with shared-library Depends, and its binary runs.
set -u
: "${NPUCC:?NPUCC must point at the npucc binary}"

build=$(dirname "$NPUCC")
if [[ ! -f $build/CPackConfig.cmake ]]; then
  echo "FAIL: no CPackConfig.cmake in $build"
  exit 1
fi
for tool in cpack dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed"; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

if ! (cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1); then
  cat "$work/cpack.log"
  echo "FAIL: cpack -G DEB failed"
  exit 1
fi
deb=$(ls "$work"/out/npucc_*.deb 2>/dev/null | head -n 1)
if [[ -z $deb ]]; then
  ls -R "$work/out"
  echo "FAIL: no npucc_*.deb produced"
  exit 1
fi

dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./||' >"$work/contents"
# The ONNX Runtime library npucc carries, with its license (lib/npucc/, test_install_runtime.sh).
if grep -q '^ONNXRUNTIME_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
  for file in libonnxruntime.so.1 onnxruntime-LICENSE onnxruntime-ThirdPartyNotices.txt; do
    grep -q "^usr/lib/\(x86_64-linux-gnu/\)\?npucc/$file$" "$work/contents" || fail "lib/npucc/$file is not in the package"
  done
fi
for path in usr/bin/npucc usr/share/man/man1/npucc.1 usr/share/bash-completion/completions/npucc \
  usr/share/zsh/site-functions/_npucc usr/include/npucc/config.h usr/include/npucc/version.h; do
  grep -qx "$path" "$work/contents" || fail "$path is not in the package"
done
for page in "$(dirname "$0")"/../../man/npucc-*.[17]; do
  [[ -e $page ]] || continue
  section=${page##*.}
  grep -qx "usr/share/man/man$section/$(basename "$page")" "$work/contents" || fail "man page $(basename "$page") missing"
done

version=$("$NPUCC" --version | awk '{print $2}')
[[ $(dpkg-deb -f "$deb" Package) == npucc ]] || fail "Package: $(dpkg-deb -f "$deb" Package)"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "Version $(dpkg-deb -f "$deb" Version), binary says $version"
depends=$(dpkg-deb -f "$deb" Depends)
grep -q "libprotobuf" <<<"$depends" || fail "Depends lacks protobuf: '$depends'"
grep -q "libc6" <<<"$depends" || fail "Depends lacks libc6: '$depends'"
# Opened at run time by the remote cache (util/shared_library.h): not found by dpkg-shlibdeps.
grep -q "libcurl4" <<<"$depends" || fail "Depends lacks libcurl4: '$depends'"
grep -q "libhiredis" <<<"$depends" || fail "Depends lacks hiredis: '$depends'"

# The Python package (python/), when the build has it: installed where Debian's python3
# looks, with a Depends on the python3 it was built for.
site=usr/lib/python3/dist-packages/npucc
python_built=no
grep -q '^NPUCC_PYTHON:BOOL=ON$' "$build/CMakeCache.txt" && python_built=yes
if [[ $python_built == yes ]]; then
  for path in $site/__init__.py $site/__init__.pyi $site/py.typed; do
    grep -qx "$path" "$work/contents" || fail "$path is not in the package"
  done
  grep -qx "$site/_npucc\.cpython-.*\.so" "$work/contents" || fail "the extension _npucc is not in the package"
  grep -q "python3 (>= 3\.[0-9]*~), python3 (<< 3\.[0-9]*)" <<<"$depends" || fail "Depends lacks python3: '$depends'"
fi

# The packaged files work: the binary runs and the completion is the one it generates.
dpkg-deb -x "$deb" "$work/root"
if [[ $python_built == yes ]]; then
  (cd "$work" && PYTHONPATH="$work/root/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
    'import npucc, sys; sys.exit(npucc.__version__ != sys.argv[1] or not npucc.__file__.startswith(sys.argv[2]))' \
    "$version" "$work/root/") || fail "the packaged Python module does not import"
fi
"$work/root/usr/bin/npucc" --version | grep -q "^npucc $version (commit " || fail "the packaged binary does not run"
cmp -s "$work/root/usr/share/bash-completion/completions/npucc" <("$work/root/usr/bin/npucc" completion bash) ||
  fail "the packaged bash completion differs from \`npucc completion bash\`"

echo "package $(basename "$deb"): $(wc -l <"$work/contents") entries, Depends: $depends"
[[ $failures -eq 0 ]]
