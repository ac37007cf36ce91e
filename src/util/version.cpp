#include "npucc/version.h"

namespace npucc {

// NPUCC_VERSION_STRING is set for this file alone (src/CMakeLists.txt): a new version
// recompiles one file.
const char* const k_version = NPUCC_VERSION_STRING;

} // namespace npucc
