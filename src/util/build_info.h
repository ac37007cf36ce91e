#pragma once

#include <string>

// What this npucc was built from and with, for `npucc --version` (bug reports name it):
// fixed when npucc is built. ONNX Runtime, loaded at run time, is runtime/library_location.h's.
namespace npucc::util {

struct BuildInfo {
  std::string commit;        // 12 hex digits, or "unknown" (not built from a git checkout)
  bool commit_modified;      // tracked files differed from the commit when it was built
  std::string build_type;    // CMAKE_BUILD_TYPE: Release, RelWithDebInfo, Debug, ...
  std::string onnx;          // the ONNX library's version it was built against
  std::string protobuf;      // the protobuf library's version it was built against
  std::string cxx_compiler;  // the compiler that built it ("GCC 12.2.0")
};

const BuildInfo& build_info();

} // namespace npucc::util
