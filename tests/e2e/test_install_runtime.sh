#!/usr/bin/env bash
# The install carries its runtime (issue 44): `cmake --install` puts the ONNX Runtime
# library the build used in PREFIX/lib/npucc/ with its license, npucc (and the Python
# extension) find it through a run path relative to themselves, so a prefix copied to
# another path works for another user, whose HOME is elsewhere and who cannot read the
# builder's. NPUCC_ONNXRUNTIME_LIBRARY still overrides it. No run path names an absolute
# folder. Needs root (to run npucc as the user nobody) and setpriv.
set -uo pipefail
: "${NPUCC:?}" "${TESTDATA:?}"
build=$(dirname "$NPUCC")
if ! grep -q '^ONNXRUNTIME_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
  echo "skip: this build has no ONNX Runtime (scripts/install-onnxruntime, then configure again)"
  exit 77
fi
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "skip: needs root and setpriv (runs the installed npucc as the user nobody)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
nobody_group=$(id -gn nobody)

env -u DESTDIR cmake --install "$build" --prefix "$work/built/prefix" >"$work/install.log" ||
  { cat "$work/install.log"; echo "FAIL: cmake --install"; exit 1; }
prefix="$work/built/prefix"
lib=$(sed -n 's/^NPUCC_RUNTIME_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
[ -n "$lib" ] || lib=lib/npucc
for file in "$lib/libonnxruntime.so.1" "$lib/onnxruntime-LICENSE" "$lib/onnxruntime-ThirdPartyNotices.txt"; do
  [ -f "$prefix/$file" ] || fail "the install lacks $file"
done
grep -q "Microsoft" "$prefix/$lib/onnxruntime-LICENSE" 2>/dev/null || fail "onnxruntime-LICENSE is not ONNX Runtime's"
cmp -s "$prefix/$lib/libonnxruntime.so.1" \
  "$(sed -n 's/^ONNXRUNTIME_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")" ||
  fail "the installed library is not the one the build used"

# Every ELF file installed: run paths relative to it ($ORIGIN), none absolute.
elves=0
while IFS= read -r -d '' file; do
  head -c 4 "$file" | grep -q "ELF" || continue
  elves=$((elves + 1))
  readelf -d "$file" | grep -E '\((RPATH|RUNPATH)\)' >"$work/paths" || true # honest: no run path at all is a pass; the lines found are checked below
  if grep -v '\[\$ORIGIN[]/:]' "$work/paths" | grep -q .; then
    fail "$file has an absolute run path: $(cat "$work/paths")"
  fi
done < <(find "$prefix" -type f \( -perm -u+x -o -name '*.so' \) -print0)
readelf -d "$prefix/bin/npucc" | grep -qE '\((RPATH|RUNPATH)\).*\$ORIGIN' ||
  fail "bin/npucc has no \$ORIGIN run path: $(readelf -d "$prefix/bin/npucc" | grep -E 'RPATH|RUNPATH')"

# Moved elsewhere, run by nobody with HOME elsewhere: the builder's home is out of reach.
mv "$work/built" "$work/moved"
prefix="$work/moved/prefix"
install -d -m 700 -o nobody -g "$nobody_group" "$work/home"
cp "$TESTDATA/models/oww_hello_deepa.onnx" "$work/home/model.onnx"
chown nobody "$work/home/model.onnx"
as_nobody() {
  (cd "$work/home" && setpriv --reuid=nobody --regid="$nobody_group" --clear-groups \
    env -u NPUCC_ONNXRUNTIME_LIBRARY -u LD_LIBRARY_PATH HOME="$work/home" \
    XDG_CACHE_HOME="$work/home/.cache" TMPDIR="$work/home" "$@")
}
as_nobody "$prefix/bin/npucc" --version >"$work/version" 2>&1 || fail "--version: $(cat "$work/version")"
grep -qF "(C API 29, $prefix/$lib/libonnxruntime.so.1)" "$work/version" ||
  fail "--version does not name the moved prefix's library: $(cat "$work/version")"
if as_nobody "$prefix/bin/npucc" compile model.onnx -o out --accelerate-train-mode 'fast|step' \
  --check-accuracy >"$work/compile.out" 2>&1; then
  as_nobody /usr/bin/python3 -c "import json,sys; r=json.load(open('out/manifest.json'))['accuracy']['runtime']; sys.exit(not r.startswith('ONNX Runtime 1.'))" ||
    fail "the manifest names no ONNX Runtime: $(cat "$work/home/out/manifest.json")"
else
  fail "--check-accuracy from the moved prefix, as nobody: $(cat "$work/compile.out")"
fi

# The Python extension, when installed: from the moved prefix, as nobody, same library.
site=$(sed -n 's/^NPUCC_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
if grep -q '^NPUCC_PYTHON:BOOL=ON$' "$build/CMakeCache.txt" && [ -n "$site" ]; then
  as_nobody env PYTHONPATH="$prefix/$site" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c \
    "import npucc, sys; sys.exit(npucc.build_info()['onnxruntime']['library'] != sys.argv[1])" \
    "$prefix/$lib/libonnxruntime.so.1" >"$work/python.out" 2>&1 ||
    fail "the Python extension does not find the moved prefix's library: $(cat "$work/python.out")"
fi

# NPUCC_ONNXRUNTIME_LIBRARY overrides the carried library, in --version and in the check.
as_nobody env NPUCC_ONNXRUNTIME_LIBRARY="$work/nowhere/libonnxruntime.so.1" \
  "$prefix/bin/npucc" --version >"$work/version" 2>&1
grep -qF "ONNX Runtime not loaded (C API 29, $work/nowhere/libonnxruntime.so.1)" "$work/version" ||
  fail "--version ignores NPUCC_ONNXRUNTIME_LIBRARY: $(cat "$work/version")"
status=0
as_nobody env NPUCC_ONNXRUNTIME_LIBRARY="$work/nowhere/libonnxruntime.so.1" "$prefix/bin/npucc" \
  compile model.onnx -o out2 --accelerate-train-mode 'fast|step' --check-accuracy --no-cache \
  >"$work/override.out" 2>&1 || status=$?
[ "$status" != 0 ] && grep -qF "cannot load ONNX Runtime ($work/nowhere/libonnxruntime.so.1)" "$work/override.out" ||
  fail "NPUCC_ONNXRUNTIME_LIBRARY=nowhere: exit $status: $(cat "$work/override.out")"

[ $failures -eq 0 ] || exit 1
echo "install runtime: $elves ELF files with relative run paths; moved prefix, as nobody: --check-accuracy ok"
