#pragma once

#include <string>

// `npucc --version` and npucc.build_info(): everything that decides npucc's output, in the
// line users paste into bug reports and as JSON (tests/schemas/npucc-version.schema.json).
// Both load ONNX Runtime in a runtime process to ask its version, as --check-accuracy
// would load it.
namespace npucc::compiler {

// "npucc 0.1.0 (commit 608ba00f1234; RelWithDebInfo build, GCC 12.2.0) ONNX 1.12.0,
// protobuf 3.21.12, ONNX Runtime 1.30.0 (C API 29, /usr/lib/npucc/libonnxruntime.so.1)":
// one line, its first two words the name and version.
std::string version_line();

// The same, as a JSON document (two-space indented).
std::string version_json();

} // namespace npucc::compiler
