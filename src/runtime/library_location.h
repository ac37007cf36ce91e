#pragma once

#include <string>

// Where ONNX Runtime's library is, and what it is, for the runtime process that loads it
// (ort_session.cpp), the cache key (library_identity) and `npucc --version`. npucc finds
// it as the dynamic linker would find a library npucc itself needed: an install carries it
// in lib/npucc/ beside bin/, and npucc's run path ($ORIGIN/../lib/npucc) names that folder
// relative to the binary, so a copied or packaged prefix works for every user.
namespace npucc::runtime {

// NPUCC_ONNXRUNTIME_LIBRARY when set; else the first absolute folder of this module's
// library search path (LD_LIBRARY_PATH, then the run path of npucc or of the Python
// extension, $ORIGIN expanded, then the system's folders) holding libonnxruntime.so.1; else
// that bare name, which then fails to load with the dynamic linker's message. Empty when
// npucc was built without ONNX Runtime. Loads nothing.
std::string onnxruntime_library_path();

// What `npucc --version` says of ONNX Runtime.
struct OnnxRuntimeReport {
  bool built_with = false; // false: built without its headers, --check-accuracy unavailable
  int c_api = 0;           // the C API version npucc asks for (ORT_API_VERSION of its headers)
  std::string library;     // onnxruntime_library_path()
  std::string version;     // what the loaded library says ("1.30.0"); empty if it did not load
  std::string problem;     // why it did not load, in one line
};

// Loads the library in a runtime process (as --check-accuracy would) and asks its version.
OnnxRuntimeReport report_onnxruntime();

} // namespace npucc::runtime
