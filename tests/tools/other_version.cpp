// The one file that differs in npucc_other_version (tests/CMakeLists.txt): npucc's own
// objects with this compiler version, so that test_cache_versions.sh has two versions
// sharing a cache without building npucc twice.
#include "npucc/version.h"

namespace npucc {

const char* const k_version = "9.9.9";

} // namespace npucc
