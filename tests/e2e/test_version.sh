#!/usr/bin/env bash
# `npucc --version` names everything that decides the output (issue 44), in one line and
# with --json; each fact is checked against a source npucc did not write: git for the
# commit, dpkg for the ONNX and protobuf libraries, ONNX Runtime's own C API (through
# Python's ctypes) for the runtime's version, CMake's cache for the build type.
source "$(dirname "$0")/cache_common.sh"
build=$(dirname "$NPUCC")
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

expect_status 0 "$NPUCC" --version
line=$(cat "$WORK/out")
[ "$(wc -l <"$WORK/out")" = 1 ] || fail "--version is not one line: $line"
expect_status 0 "$NPUCC" --version --json
cp "$WORK/out" "$WORK/version.json"
valid_json npucc-version "$WORK/version.json"
j() { json_get "$WORK/version.json" "$1"; }

# npucc: the version CMake was given, the commit git knows, the build type CMake used.
version=$(j "d['npucc']['version']")
[ "$(cut -d' ' -f1-2 <<<"$line")" = "npucc $version" ] || fail "the line does not start 'npucc $version': $line"
grep -q "VERSION $version " "$SOURCE_DIR/CMakeLists.txt" || [ -n "$(cached NPUCC_VERSION_OVERRIDE)" ] ||
  fail "version $version is not the project's"
commit=$(j "d['npucc']['commit']")
if git -C "$SOURCE_DIR" rev-parse HEAD >/dev/null 2>&1; then
  # HEAD, or an ancestor when commits were made after the build.
  git -C "$SOURCE_DIR" merge-base --is-ancestor "$commit" HEAD 2>/dev/null ||
    fail "commit $commit is not HEAD ($(git -C "$SOURCE_DIR" rev-parse --short=12 HEAD)) or before it"
fi
modified=$(j "d['npucc']['commit_modified']")
suffix=""
[ "$modified" = True ] && suffix=", modified"
build_type=$(cached CMAKE_BUILD_TYPE)
[ "$(j "d['npucc']['build_type']")" = "${build_type:-none}" ] || fail "build type: $(j "d['npucc']") vs $build_type"
grep -qF "(commit $commit$suffix; ${build_type:-none} build, " <<<"$line" || fail "commit and build type: $line"
pass "npucc $version, commit $commit$suffix, ${build_type:-none}"

# ONNX and protobuf: the versions of Debian's development packages the build used.
deb_version() { dpkg-query -W -f='${Version}' "$1" | sed 's/^[0-9]*://; s/[-+~].*//'; }
onnx=$(deb_version libonnx-dev)
protobuf=$(deb_version libprotobuf-dev)
[ "$(j "d['onnx']['version']")" = "$onnx" ] || fail "ONNX $(j "d['onnx']") vs libonnx-dev $onnx"
[ "$(j "d['protobuf']['version']")" = "$protobuf" ] || fail "protobuf $(j "d['protobuf']") vs libprotobuf-dev $protobuf"
grep -qF ") ONNX $onnx, protobuf $protobuf, " <<<"$line" || fail "ONNX and protobuf: $line"
pass "ONNX $onnx, protobuf $protobuf"

# ONNX Runtime: the library it names says the same version through its own C API.
if [ "$(j "d['onnxruntime']['built_with']")" = False ]; then
  grep -qF "ONNX Runtime: none (built without ONNX Runtime" <<<"$line" || fail "a build without it: $line"
  pass "built without ONNX Runtime, and says so"
  exit 0
fi
library=$(j "d['onnxruntime']['library']")
ort=$(j "d['onnxruntime']['version']")
[ "$ort" != None ] || fail "ONNX Runtime did not load: $(j "d['onnxruntime']['problem']")"
said=$($PY - "$library" <<'EOF'
import ctypes, sys
class ApiBase(ctypes.Structure):
    _fields_ = [("GetApi", ctypes.c_void_p), ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p))]
library = ctypes.CDLL(sys.argv[1])
library.OrtGetApiBase.restype = ctypes.POINTER(ApiBase)
print(library.OrtGetApiBase().contents.GetVersionString().decode())
EOF
)
[ "$ort" = "$said" ] || fail "ONNX Runtime $ort, but $library says $said"
api=$(sed -n 's/^#define ORT_API_VERSION \([0-9]*\)$/\1/p' "$(cached ONNXRUNTIME_INCLUDE_DIR)/onnxruntime_c_api.h")
[ "$(j "d['onnxruntime']['c_api']")" = "$api" ] || fail "C API $(j "d['onnxruntime']") vs the headers' $api"
grep -qF ", ONNX Runtime $said (C API $api, $library)" <<<"$line" || fail "ONNX Runtime: $line"
[ "$(j "d['onnxruntime']['problem']")" = None ] || fail "a problem with a loaded runtime"
pass "ONNX Runtime $said, C API $api, $library"

# One that does not load: named, with why, and --version still succeeds.
NPUCC_ONNXRUNTIME_LIBRARY="$WORK/none.so" expect_status 0 "$NPUCC" --version --json
valid_json npucc-version "$WORK/out"
[ "$(json_get "$WORK/out" "(d['onnxruntime']['library'], d['onnxruntime']['version'])")" = "('$WORK/none.so', None)" ] ||
  fail "NPUCC_ONNXRUNTIME_LIBRARY: $(cat "$WORK/out")"
json_get "$WORK/out" "d['onnxruntime']['problem']" | grep -qF "cannot load ONNX Runtime ($WORK/none.so)" ||
  fail "the problem: $(cat "$WORK/out")"
NPUCC_ONNXRUNTIME_LIBRARY="$WORK/none.so" expect_status 0 "$NPUCC" --version
grep -qF "ONNX Runtime not loaded (C API $api, $WORK/none.so): cannot load ONNX Runtime" "$WORK/out" ||
  fail "the line: $(cat "$WORK/out")"
pass "a library that does not load is named with why"

# --version elsewhere on the line gives the same line; --json without --version is refused.
expect_status 0 "$NPUCC" -q --version
[ "$(cat "$WORK/out")" = "$line" ] || fail "-q --version: $(cat "$WORK/out")"
expect_status 2 "$NPUCC" --json
[ "$(wc -l <"$WORK/err")" = 1 ] || fail "--json alone: $(cat "$WORK/err")"
pass "-q --version; --json alone refused"
