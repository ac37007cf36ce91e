#include "util/build_info.h"

#include "npucc_commit.h" // generated at every build (cmake/build_commit.cmake)

namespace npucc::util {

// NPUCC_BUILD_TYPE, NPUCC_ONNX_VERSION and NPUCC_PROTOBUF_VERSION are set for this file
// alone (src/CMakeLists.txt), from what CMake found.
const BuildInfo& build_info() {
  static const BuildInfo info{NPUCC_COMMIT,       NPUCC_COMMIT_MODIFIED != 0,
                              NPUCC_BUILD_TYPE,   NPUCC_ONNX_VERSION,
                              NPUCC_PROTOBUF_VERSION,
#if defined(__clang__)
                              "Clang " __clang_version__
#elif defined(__GNUC__)
                              "GCC " __VERSION__
#else
                              "unknown"
#endif
  };
  return info;
}

} // namespace npucc::util
