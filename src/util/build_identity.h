#pragma once

#include <string>

namespace npucc::util {

// What identifies the code that turns a model into bytes, for the cache key: the GNU build
// ID (a hash of the linked code the linker writes into the ELF notes) of the object that
// holds npucc's code (the executable; the extension module under Python) and of each loaded
// ONNX library, or, for one built without a build ID, the SHA-256 of its file. Two builds
// of one version that can emit different bytes differ here; reading it costs no hashing
// where build IDs exist. Computed once per process:
//   "npucc=<hex> libonnx.so.1=<hex> libonnx_proto.so.1=<hex>"
const std::string& build_identity();

} // namespace npucc::util
