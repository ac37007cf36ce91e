#pragma once

#include "npucc/compile.h"

namespace npucc::accuracy {

// Whether a compile checks accuracy: asked for, or implied by a target. The one predicate
// the compile, the key and the cached compile share (Python may set a target alone).
inline bool is_checked(const CompileOptions& options) {
  return options.check_accuracy || !options.accuracy_target.empty();
}

} // namespace npucc::accuracy
